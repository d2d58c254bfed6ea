"""`tabletimer rehearse DIR` and `tabletimer press DIR BOARD BUTTON`: an event
walked through before the day without hardware.  The rehearsal runs on a
copy of the folder's definition (format.toml, entrants.csv, stations.csv) in
DIR/rehearsal, an event folder of its own with its own log and keys: the
event's log and keys are never touched.  The hub runs it as `tabletimer run`
does, with one simulated board (the real firmware in a micropython process)
for each board of its stations.csv, given a key and a login as `board flash`
would give a real one; from another terminal `tabletimer press` presses
their buttons, as competitors and referees would."""

from __future__ import annotations

import json
import os
import queue
import shutil
import sys
import threading
from pathlib import Path

from ..boards.broker import BrokerAddress
from ..boards.keys import BoardKeys, KeyFileError, mqtt_password
from ..event import rounds
from .common import open_event

FOLDER = "rehearsal"          # in the event folder: an event folder of its own, the boards' flash, the presses
DEFINITION = ("format.toml", "entrants.csv", "stations.csv")
PRESSES = "presses.jsonl"     # a line per press, from `tabletimer press`
RUNNING = "running"           # the rehearsing hub's pid, while it runs
ROUND = "round"               # which of the event's rounds the rehearsal's log is of

# the firmware's gestures, default timings (docs/firmware.md, "Station states and gestures")
HOLD = {"call": 80, "confirm": 2500, "void": 6500}


def boards_of(stations) -> dict[str, int]:
    """Board id -> its number of buttons (the highest in stations.csv)."""
    out: dict[str, int] = {}
    for s in stations:
        out[s.board] = max(out.get(s.board, 0), s.button)
    return out


def rehearsal_folder(path: str | Path) -> Path:
    """DIR/rehearsal for an event folder DIR (DIR itself if it is one)."""
    p = Path(path)
    return p if p.name == FOLDER and (p / "format.toml").exists() and rounds.names(p.parent) \
        else p / FOLDER


def cmd_rehearse(args) -> int:
    """Everything checked and the rehearsal folder's lock taken before the
    first write: a refused rehearsal changes nothing of a running one."""
    from ..event.folder_lock import hub_running
    from .event import claim_folder

    opened = open_event(args.dir, getattr(args, "round", None))   # the event's own files, checked as `run` checks them
    if opened is None:
        return 2
    source, _ = opened
    folder = rehearsal_folder(args.dir)
    event_dir = folder.parent
    if not boards_of(source.stations):
        print(f"error: {source.files / 'stations.csv'} names no board: nothing to rehearse", file=sys.stderr)
        return 2
    try:
        BoardKeys(folder / "board-keys.json")        # the rehearsal's own keys, readable
    except KeyFileError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    lock = claim_folder(args, folder / "events.sqlite")     # it makes the folder
    if lock is None:
        running = hub_running(folder / "events.sqlite")
        print(f"Nothing in {folder} was changed" + (
              ": the running rehearsal goes on with the files it started with. To rehearse the event's "
              f"files as they are now, stop it, then `tabletimer rehearse {event_dir}` again." if running
              else "."), file=sys.stderr)
        return 2
    try:
        return _rehearse(args, folder, lock, source)
    finally:
        lock.release()


def _rehearse(args, folder: Path, lock, source) -> int:
    from .event import run_folder

    event_dir = folder.parent
    rehearsed = folder / ROUND                 # the round whose log the rehearsal holds
    before = rehearsed.read_text().strip() if rehearsed.exists() else None
    fresh = args.fresh or (before is not None and before != source.round)
    if fresh:
        for old in ("events.sqlite", "events.sqlite-wal", "events.sqlite-shm"):
            (folder / old).unlink(missing_ok=True)
        if not args.fresh:
            print(f"rehearsing round {source.round} (the rehearsal held round {before}'s log: "
                  f"a new one)", flush=True)
    rehearsed.write_text(source.round + "\n")
    for name in DEFINITION:                  # the event (the round) as it is now
        shutil.copyfile(source.files / name, folder / name)
    opened = open_event(str(folder))
    if opened is None:
        return 2
    ev, keys = opened
    boards = boards_of(ev.stations)
    for b in boards:
        keys.ensure(b)           # as `board flash --keys` would, in the rehearsal's own keys file
    print(f"rehearsing in {folder} (a copy of the event's format, entrants and stations, with a log of "
          f"its own: the event's is not touched); operator actions: tabletimer act {folder} ...", flush=True)

    def start_sims(address: BrokerAddress, stop: threading.Event):
        from tabletimer.tools.simulator import SimBoard

        sims = []
        for b, buttons in sorted(boards.items()):
            key = keys.key(b) or ""
            sims.append(SimBoard(b, address.host, address.port, folder / "boards", key=key, stations=buttons,
                                 broker_user=b, broker_password=mqtt_password(key)).start())
        presses, running = folder / PRESSES, folder / RUNNING
        start = presses.stat().st_size if presses.exists() else 0    # before `press` may write: none missed
        running.write_text(str(os.getpid()))
        threading.Thread(target=_follow_presses, args=(presses, start, sims, stop, running),
                         name="rehearsal-presses", daemon=True).start()
        first = sorted(boards)[0]
        d = event_dir
        print(f"rehearsal: {len(sims)} simulated board(s) ({', '.join(sorted(boards))}); press their buttons "
              f"from another terminal:\n  tabletimer press {d} {first} 1              # a finish call\n"
              f"  tabletimer press {d} {first} 1 --missing 2  # a referee counts 2 missing pieces\n"
              f"  tabletimer press {d} {first} 1 --confirm    # ... and confirms\n"
              f"  tabletimer press {d} {first} 1 --void       # or voids the call", flush=True)
        return sims

    return run_folder(args, ev, keys, start_sims, lock)


def _follow_presses(path: Path, pos: int, sims, stop: threading.Event, running: Path) -> None:
    """Press what `tabletimer press` appends to path after byte pos (what
    an earlier rehearsal appended is history), until stop.  Each button has
    its own queue: its gestures one after another, as one hand makes them;
    the buttons of a board are other hands (a referee's 2.5 s hold at one
    station and a competitor's call at the next happen together: a board-wide
    queue stamped the call when the hold ended)."""
    by_id = {sim.board_id: sim for sim in sims}
    queues: dict[tuple[str, int], queue.Queue] = {}

    def queue_of(board: str, button: int) -> queue.Queue:
        q = queues.get((board, button))
        if q is None:
            q = queues[board, button] = queue.Queue()
            threading.Thread(target=_presser, args=(by_id[board], q, stop),
                             name=f"rehearsal-{board}-{button}", daemon=True).start()
        return q
    buf = b""
    try:
        while not stop.wait(0.1):
            try:
                with open(path, "rb") as f:
                    f.seek(pos)
                    more = f.read()
            except FileNotFoundError:
                continue
            pos += len(more)
            buf += more
            *lines, buf = buf.split(b"\n")
            for line in lines:
                try:
                    p = json.loads(line)
                    queue_of(p["board"], int(p["button"])).put((int(p["button"]), int(p["hold"]),
                                                                int(p.get("times", 1))))
                except (ValueError, KeyError, TypeError) as e:
                    print(f"rehearsal: a press line not understood ({e!r}): {line[:80]!r}", file=sys.stderr)
    finally:
        try:
            running.unlink()
        except OSError:
            pass


def _presser(sim, q: queue.Queue, stop: threading.Event) -> None:
    while not stop.is_set():
        try:
            button, hold, times = q.get(timeout=0.5)
        except queue.Empty:
            continue
        for _ in range(times):
            sim.press(button, hold)
            if stop.wait((hold + 300) / 1000):       # the press lasts, then a hand's pause
                return


def cmd_press(args) -> int:
    folder = rehearsal_folder(args.dir)
    if not _rehearsing(folder / RUNNING):
        print(f"error: no rehearsal runs on {args.dir}: start one with `tabletimer rehearse {args.dir}`",
              file=sys.stderr)
        return 2
    opened = open_event(str(folder))
    if opened is None:
        return 2
    ev, _keys = opened
    boards = boards_of(ev.stations)
    if args.board not in boards:
        print(f"error: no board {args.board!r} in {ev.path / 'stations.csv'} (it has "
              f"{', '.join(sorted(boards)) or 'none'})", file=sys.stderr)
        return 2
    if not 1 <= args.button <= boards[args.board]:
        print(f"error: board {args.board} has buttons 1..{boards[args.board]} in stations.csv, not {args.button}",
              file=sys.stderr)
        return 2
    if (args.missing is not None and not 1 <= args.missing <= 99) or (args.hold is not None and not 1 <= args.hold <= 60000):
        print("error: --missing takes 1..99 presses, --hold 1..60000 ms", file=sys.stderr)
        return 2
    gesture = "confirm" if args.confirm else "void" if args.void else "call"
    line = {"board": args.board, "button": args.button, "hold": args.hold or HOLD[gesture]}
    if args.missing:
        line.update(hold=HOLD["call"], times=args.missing)
    with open(folder / PRESSES, "a") as f:
        f.write(json.dumps(line) + "\n")
    what = (f"{args.missing} short press(es) (missing pieces)" if args.missing else
            f"a {line['hold']} ms press ({gesture})")
    print(f"{args.board} button {args.button}: {what}, played now (after the gesture before it on this "
          f"button, if one is still playing: one hand; another button's gestures do not wait for it)")
    return 0


def _rehearsing(running: Path) -> bool:
    try:
        pid = int(running.read_text())
        os.kill(pid, 0)
    except (OSError, ValueError):
        return False
    return True
