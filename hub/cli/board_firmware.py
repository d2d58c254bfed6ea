"""`tabletimer boards update DIR [BOARD...|--all]`: firmware over the air
(boards/firmware_update.py), beside the running hub.  The package is built
from this installation's firmware (tools/firmware_build.package; or
--package, one built before) into the log's folder (firmware/<version>-
<family>-<sha>/), where the running hub reads it.  Every board's request is
checked first (a key, no round running on it); if one fails nothing is
stored or sent.  Then one `firmware` row per board goes into the log; the
running hub updates them a few at a time, and this follows the log: a line
per board as its state changes (sent, receiving with its progress, staged,
on trial, committed; refused, failed or rolled back, with the reason) until
every board is done or --timeout, then a line per board: its version,
state, error.  Exit 0: every board committed; 1: one did not; 2: nothing
was sent."""

from __future__ import annotations

import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from ..boards.firmware_update import TRIES, load_package
from ..boards.hub_protocol import FW_ROLLED_BACK
from .common import boards_of_a_running_hub, every_board_checked, on_log, open_event, service_for

POLL_S = 0.25
TRIAL_S = 120          # the board's default (fwupdate._LIMIT_S)


@dataclass
class BoardUpdate:
    board: str
    request: int
    version: str
    state: str = "sent"          # sent, receiving, staged, on trial, committed; refused, failed, rolled back
    why: str = ""
    pct: int = 0
    running: str = ""            # the version its last birth said

    @property
    def final(self) -> bool:
        return self.state in ("refused", "failed", "committed", "rolled back")

    def line(self) -> str:
        pct = f" {self.pct}%" if self.state == "receiving" else ""
        return f"{self.board}: {self.state}{pct}" + (f": {self.why}" if self.why else "")


def follow(states: dict[str, BoardUpdate], rows: Iterable[dict]) -> None:
    """The boards' states of their updates, from the rows stored after the
    requests: their answers (board rows `fw`, a hub row `fw` failed), their
    births (on trial; a roll-back said in the fault)."""
    for row in rows:
        s = states.get(row.get("board") or "")
        if s is None:
            continue
        p = row["payload"]
        if row["type"] == "fw" and p.get("id") == s.request:
            st = p.get("state")
            if st in ("receiving", "at"):
                s.state = "receiving"
                if p.get("of"):
                    s.pct = 100 * p.get("got", 0) // p["of"]
            else:
                s.state, s.why = st, p.get("why") or ""
                if st == "committed":
                    s.running = p.get("fw") or s.running
        elif row["type"] == "status" and row.get("source") == "board" and p.get("state") == "online":
            s.running = p.get("fw") or s.running
            m = FW_ROLLED_BACK.match(str(p.get("fault") or ""))
            if s.state in ("staged", "on trial") and m and m.group(1) == s.version:
                s.state, s.why = "rolled back", str(p["fault"])[m.end():]
            elif s.state == "staged" and p.get("fw") == s.version:
                s.state = "on trial"          # booted on it, not committed yet


def cmd_boards_update(args) -> int:
    from ...tools import firmware_build

    opened = open_event(args.dir, getattr(args, "round", None))
    if opened is None:
        return 2
    ev, keys = opened
    if not boards_of_a_running_hub(ev, args.boards, args.all, "firmware"):
        return 2
    try:
        if args.package:
            pkg = load_package(Path(args.package))
        else:
            tmp = ev.files / "firmware" / ".building"
            pkg = load_package(firmware_build.package(tmp, args.family, args.version))
    except (ValueError, RuntimeError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    name = f"{pkg.version}-{pkg.family}-{pkg.sha[:12]}"
    folder = ev.files / "firmware" / name
    if not folder.exists():
        src = Path(args.package) if args.package else ev.files / "firmware" / ".building"
        shutil.copytree(src, folder)
    shutil.rmtree(ev.files / "firmware" / ".building", ignore_errors=True)
    return on_log(ev, lambda store: _update(args, ev, keys, store, pkg, name))


def _update(args, ev, keys, store, pkg, name: str) -> int:
    svc = service_for(ev, keys, store)
    svc.live = False             # this process sends nothing: the running hub does, as it applies the rows
    svc.catch_up()
    boards = args.boards or sorted(({s.board for s in ev.stations} | set(svc.registry.boards)) & set(keys.boards()))
    if not boards:
        print("error: no board with a key in this event", file=sys.stderr)
        return 2
    payloads = {}
    for b in boards:
        payloads[b] = {"board": b, "fw": pkg.version, "pkg": name, "sha": pkg.sha}
        if args.trial is not None:
            payloads[b]["trial"] = args.trial
    if not every_board_checked(svc, "firmware", payloads, args.who):   # before anything is stored
        return 2
    print(f"firmware {pkg.version} for {pkg.family} boards: {len(pkg.files)} files, {pkg.size} bytes "
          f"(log folder firmware/{name})", flush=True)
    states: dict[str, BoardUpdate] = {}
    first = None
    for b in boards:
        row = svc.act("firmware", payloads[b], who=args.who, why=args.why or "")
        first = row["id"] if first is None else first
        states[b] = BoardUpdate(b, row["id"], pkg.version, running=svc.registry.get(b).fw or "")
        print(f"{b}: sent (log row #{row['id']})", flush=True)
    trial = args.trial or TRIAL_S
    timeout = args.timeout if args.timeout is not None else 60 + trial + 30 * len(boards) + 2 * TRIES
    deadline = time.monotonic() + timeout
    shown = {b: (s.state, s.why) for b, s in states.items()}
    quarter = {b: 0 for b in states}
    t0 = time.monotonic()
    try:
        seen = first
        while not all(s.final for s in states.values()) and time.monotonic() < deadline:
            time.sleep(POLL_S)
            for row in store.events(after=seen):
                seen = row["id"]
                follow(states, [row])        # row by row: every change a line, however fast they came
                for b, s in states.items():
                    # a line per change of state, and of quarter while it receives
                    if shown[b] != (s.state, s.why) or s.state == "receiving" and s.pct // 25 > quarter[b]:
                        shown[b], quarter[b] = (s.state, s.why), s.pct // 25
                        print(s.line(), flush=True)
            done = sum(s.final for s in states.values())
            if sys.stdout.isatty():
                print(f"\r{done}/{len(states)} done", end="", flush=True)
    except KeyboardInterrupt:
        print("stopped: the boards go on by themselves (a new version not heard by the hub goes back)")
    ok = sum(s.state == "committed" for s in states.values())
    print(f"-- {ok}/{len(states)} board(s) on firmware {pkg.version} ({time.monotonic() - t0:.0f} s)", flush=True)
    for s in states.values():
        state = s.state if s.final else f"no final answer yet ({s.state})"
        print(f"{s.board}  {s.running or '?':<12} {state}" + (f"  {s.why}" if s.why else ""), flush=True)
    return 0 if ok == len(states) else 1


def add_parser(bsub) -> None:
    from ...tools.firmware_build import FAMILIES

    u = bsub.add_parser("update", help="send the boards a new firmware: each checks it, restarts on it, and "
                                       "goes back to the version before by itself if it does not reach the hub",
                        description="The firmware of this installation (or --package), sent to the boards by the "
                                    "running hub a few at a time; refused while a round runs.")
    u.add_argument("dir", help="the event folder (its hub running)")
    u.add_argument("boards", nargs="*", metavar="BOARD", help="the boards (or --all)")
    u.add_argument("--all", action="store_true", help="every board of the event with a key")
    u.add_argument("--family", choices=sorted(FAMILIES), default="esp32",
                   help="the boards' kind: esp32 (default), sim (simulated boards)")
    u.add_argument("--version", default=None, help="the version the firmware says (default: app.py's)")
    u.add_argument("--package", default=None, metavar="FOLDER",
                   help="a package built before (tools/firmware_build.package), instead of building one")
    u.add_argument("--round", help="which of the event's rounds (default: its only one, or the one `run` ran last)")
    u.add_argument("--trial", type=int, default=None, metavar="S",
                   help=f"how long a board tries the new firmware before it goes back (10..3600 s; default {TRIAL_S})")
    u.add_argument("--timeout", type=float, default=None, metavar="S", help="stop following after this many seconds")
    u.add_argument("--who", default="operator", help="who asks (in the log)")
    u.add_argument("--why", default="", help="why (in the log)")
    u.set_defaults(func=cmd_boards_update)
