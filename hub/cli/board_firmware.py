"""`tabletimer boards update DIR [BOARD...|--all]`: firmware over the air
(fleet/firmware_update.py), beside the running hub.  The package is built
from this installation's firmware (hub/fleet/firmware_build.package; or
--package, one built before) into the log's folder (firmware/<version>-
<family>-<sha>/), where the running hub reads it.  Every board's request is
checked first (a key, no round running on it, a version not older than the
board's unless --allow-older); if one fails nothing is stored or sent.
Then one `firmware` row per board goes into the log; the running hub
updates them a few at a time, and this follows the log: a line
per board as its state changes (sent, receiving with its progress, staged,
on trial, committed; refused, failed or rolled back, with the reason) and
the hall's progress (a bar under the lines on a terminal; off one, a text
bar line at every tenth), until every board is done or --timeout, then a
line per board: its version, state, error.  Exit 0: every board committed; 1: one did not; 2: nothing
was sent."""

from __future__ import annotations

import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from ..fleet.firmware_update import TRIES, load_package
from ..event.log.rows import FW_ROWS, RowKind, kind_of
from ..protocol.hub_protocol import FW_ROLLED_BACK
from .common import boards_of_a_running_hub, every_board_checked, on_log, open_event, service_for

POLL_S = 0.25
TRIAL_S = 120          # the board's default (firmware/firmware_update.py's _LIMIT_S)


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
        kind = kind_of(row)
        if kind in FW_ROWS and p.get("id") == s.request:
            st = p.get("state")
            if st in ("receiving", "at"):
                s.state = "receiving"
                if p.get("of"):
                    s.pct = 100 * p.get("got", 0) // p["of"]
            else:
                s.state, s.why = st, p.get("why") or ""
                if st == "committed":
                    s.running = p.get("fw") or s.running
        elif kind is RowKind.BOARD_STATUS and p.get("state") == "online":
            s.running = p.get("fw") or s.running
            m = FW_ROLLED_BACK.match(str(p.get("fault") or ""))
            if s.state in ("staged", "on trial") and m and m.group(1) == s.version:
                s.state, s.why = "rolled back", str(p["fault"])[m.end():]
            elif s.state == "staged" and p.get("fw") == s.version:
                s.state = "on trial"          # booted on it, not committed yet


def hall_progress(states: dict[str, BoardUpdate]) -> tuple[int, str]:
    """The hall's update as a whole: (percent of it done, the counts).  A
    board's share: the transfer 90 % of it (what it received), staged 90,
    on trial 95 (the restart and the trial take seconds, the transfer the
    time), 100 once final, whatever the outcome."""
    n = len(states) or 1
    share = {"staged": 90, "on trial": 95}
    got = sum(100 if s.final else share.get(s.state, 9 * s.pct // 10 if s.state == "receiving" else 0)
              for s in states.values())
    counts: dict[str, int] = {}
    for s in states.values():
        counts[s.state] = counts.get(s.state, 0) + 1
    order = ("committed", "on trial", "staged", "receiving", "sent", "refused", "failed", "rolled back")
    done = sum(s.final for s in states.values())
    return got // n, f"{done}/{len(states)} done: " + ", ".join(f"{counts[k]} {k}" for k in order if counts.get(k))


def text_bar(pct: int, width: int = 30) -> str:
    full = width * max(0, min(100, pct)) // 100
    return "[" + "#" * full + "." * (width - full) + "]"


class ProgressShown:
    """The hall's progress where the operator looks: on a terminal a Rich
    progress bar, the boards' lines printed above it; off one (a log, a
    pipe) a text bar line each time another tenth is done.  console: a
    Rich console to draw on (a test's); by default stdout, if a terminal."""

    def __init__(self, console=None) -> None:
        self.tenth = -1
        self.last: tuple[str, str] = ("", "")     # (off a terminal) the last line shown, the last asked for
        self.bar = None
        if console is not None or sys.stdout.isatty():
            from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

            self.bar = Progress(TextColumn("hall"), BarColumn(), TextColumn("{task.percentage:>3.0f} %"),
                                TimeElapsedColumn(), TextColumn("{task.description}"), console=console)
            self.task = self.bar.add_task("", total=100)
            self.bar.start()

    def line(self, text: str) -> None:
        if self.bar is not None:
            self.bar.console.print(text, markup=False, highlight=False, soft_wrap=True)
        else:
            print(text, flush=True)

    def show(self, pct: int, counts: str) -> None:
        if self.bar is not None:
            self.bar.update(self.task, completed=pct, description=counts)
        else:
            text = f"hall {text_bar(pct)} {pct:3d} %  {counts}"
            self.last = (self.last[0], text)
            if pct // 10 > self.tenth:
                self.tenth = pct // 10
                self.last = (text, text)
                print(text, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
        elif self.last[1] != self.last[0]:
            print(self.last[1], flush=True)       # where it ended, if not said yet


def cmd_boards_update(args) -> int:
    from ..fleet import firmware_build

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
    svc.send_nothing()           # this process sends nothing: the running hub does, as it applies the rows
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
        if args.allow_older:
            payloads[b]["older"] = 1           # into the signed begin: the board takes an older version
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
    progress = ProgressShown()
    try:
        seen = first
        progress.show(*hall_progress(states))
        while not all(s.final for s in states.values()) and time.monotonic() < deadline:
            time.sleep(POLL_S)
            for row in store.events(after=seen):
                seen = row["id"]
                follow(states, [row])        # row by row: every change a line, however fast they came
                for b, s in states.items():
                    # a line per change of state, and of quarter while it receives
                    if shown[b] != (s.state, s.why) or s.state == "receiving" and s.pct // 25 > quarter[b]:
                        shown[b], quarter[b] = (s.state, s.why), s.pct // 25
                        progress.line(s.line())
            progress.show(*hall_progress(states))
    except KeyboardInterrupt:
        progress.line("stopped: the boards go on by themselves (a new version not heard by the hub goes back)")
    finally:
        progress.close()
    ok = sum(s.state == "committed" for s in states.values())
    print(f"-- {ok}/{len(states)} board(s) on firmware {pkg.version} ({time.monotonic() - t0:.0f} s)", flush=True)
    for s in states.values():
        state = s.state if s.final else f"no final answer yet ({s.state})"
        print(f"{s.board}  {s.running or '?':<12} {state}" + (f"  {s.why}" if s.why else ""), flush=True)
    return 0 if ok == len(states) else 1


def add_parser(bsub) -> None:
    from ..fleet.firmware_build import FAMILIES

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
                   help="a package built before (hub/fleet/firmware_build.package), instead of building one")
    u.add_argument("--round", help="which of the event's rounds (default: its only one, or the one `run` ran last)")
    u.add_argument("--trial", type=int, default=None, metavar="S",
                   help=f"how long a board tries the new firmware before it goes back (10..3600 s; default {TRIAL_S})")
    u.add_argument("--allow-older", action="store_true",
                   help="put on a version older than a board's (refused otherwise, at the desk and by the board)")
    u.add_argument("--timeout", type=float, default=None, metavar="S", help="stop following after this many seconds")
    u.add_argument("--who", default="operator", help="who asks (in the log)")
    u.add_argument("--why", default="", help="why (in the log)")
    u.set_defaults(func=cmd_boards_update)
