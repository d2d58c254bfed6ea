"""`tabletimer rehearse DIR` and `tabletimer press DIR/rehearsal BOARD BUTTON`: an event
walked through before the day without hardware.  The rehearsal runs on a
copy of the folder's definition (each round's format.toml, entrants.csv,
stations.csv) in DIR/rehearsal, an event folder of its own laid out as the
event is (a round added by `round add` in DIR/rehearsal/rounds/NAME), with
its own logs and keys: the event's logs and keys are never touched.  The hub
runs it as `tabletimer run` does, with one simulated board (the real
firmware in a micropython process) for each board of its stations.csv,
given a key and a login as `board flash` would give a real one; from
another terminal `tabletimer press` presses their buttons, as competitors
and referees would.

An event of several rounds, rehearsed without --round, is a rehearsed day:
its rounds in order on the same simulated boards, never restarted between
rounds.  `tabletimer rehearse DIR --next` moves it to the next round as the
organizer moves the hall: the hub of the round stops (its final standings
printed) and the next round's hub starts on the same broker address; the
boards reconnect and take the new round's schedule by themselves."""

from __future__ import annotations

import json
import os
import queue
import shutil
import sys
import threading
from pathlib import Path

from ..broker.broker import BrokerAddress
from ..protocol.keys import BoardKeys, KeyFileError, mqtt_password
from ..event.folder import rounds
from ..rules.speed import faster
from ..event.folder.event_folder import REHEARSING, SPEED_FILE, rehearsing
from .common import open_event
from .rehearse_drill import KILL, TAKEOVER

FOLDER = "rehearsal"          # in the event folder: an event folder of its own, the boards' flash, the presses
DEFINITION = ("format.toml", "entrants.csv", "stations.csv")
LOG_FILES = ("events.sqlite", "events.sqlite-wal", "events.sqlite-shm")
BOARDS = "boards"              # in the rehearsal folder: the simulated boards' flash, a folder each
PRESSES = "presses.jsonl"     # a line per press (and per `--next`), from `tabletimer press` / `rehearse --next`
RUNNING = REHEARSING          # the rehearsing hub's pid, and "day", "round" or "drill", while it runs
OLD_ROUND = "round"           # an earlier layout: which round the rehearsal's one log was of

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
    return p if p.name == FOLDER and rounds.names(p) and rounds.names(p.parent) else p / FOLDER


def cmd_rehearse(args) -> int:
    """Everything checked and the rehearsal folder's lock taken before the
    first write: a refused rehearsal changes nothing of a running one."""
    from ..event.folder.folder_lock import hub_running
    from .event import claim_folder

    if getattr(args, "next", False):
        return _ask_next(args)
    for ask in (KILL, TAKEOVER):
        if getattr(args, ask.replace("-", "_"), False):
            return _ask_drill(args, ask)
    asked = getattr(args, "round", None)
    day = asked is None and len(rounds.names(args.dir)) > 1
    if day and getattr(args, "standby", False):
        print(f"error: the standby drill rehearses one round: add --round NAME (one of "
              f"{', '.join(rounds.names(args.dir))})", file=sys.stderr)
        return 2
    sources = []
    for name in (rounds.names(args.dir) if day else [asked]):
        opened = open_event(args.dir, name)       # the event's own files, checked as `run` checks them
        if opened is None:
            return 2
        note = opened[0].without_station_note()
        if note:
            print(f"note: {note}", file=sys.stderr)
        sources.append(opened[0])
    folder = rehearsal_folder(args.dir)
    event_dir = folder.parent
    speed = getattr(args, "speed", 1.0)
    if speed != 1 and getattr(args, "standby", False):
        print("error: the standby drill runs in real time (its standby's copy plays the event's limits): "
              "leave out --speed", file=sys.stderr)
        return 2
    for source in sources:
        try:
            faster(source.format, speed, "rehearsed")
        except ValueError as e:
            print(f"error: round {source.round}: {e}", file=sys.stderr)
            return 2
        if not boards_of(source.stations):
            print(f"error: {source.files / 'stations.csv'} names no board: nothing to rehearse",
                  file=sys.stderr)
            return 2
    try:
        BoardKeys(folder / "board-keys.json")        # the rehearsal's own keys, readable
    except KeyFileError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    lock = claim_folder(args, folder / "events.sqlite")     # it makes the folder; one rehearsal at a time
    if lock is None:
        running = hub_running(folder / "events.sqlite")
        print(f"Nothing in {folder} was changed" + (
              ": the running rehearsal goes on with the files it started with. To rehearse the event's "
              f"files as they are now, stop it, then `tabletimer rehearse {event_dir}` again." if running
              else "."), file=sys.stderr)
        return 2
    try:
        _mirror(event_dir, folder, sources, args.fresh, speed)
        if getattr(args, "standby", False):
            return _drill(args, folder, lock, sources[0])
        return _rehearse(args, folder, lock, sources, day)
    finally:
        lock.release()


def _mirror(event_dir: Path, folder: Path, sources, fresh: bool, speed: float = 1.0) -> None:
    """The rehearsal folder laid out as the event: its rounds (the same
    names, in the same order), the files of the rounds rehearsed copied as
    they are now; the logs of those rounds, and the simulated boards' flash
    (fresh boards: no schedule, no journal, no hub term seen), removed when
    fresh; its speed (event_folder.SPEED_FILE: every command on the
    rehearsal reads its rounds at it) as this `rehearse` says."""
    old = folder / OLD_ROUND            # an earlier layout kept any round's log in the folder itself
    if old.exists():
        was = old.read_text().strip()
        if was != rounds.MAIN:
            for name in LOG_FILES:
                (folder / name).unlink(missing_ok=True)
            print(f"the rehearsal's log of round {was} was in {folder} itself, where round "
                  f"{rounds.MAIN}'s belongs: removed", flush=True)
        old.unlink()
    have = rounds.names(event_dir)
    if rounds.MAIN not in have:         # the event has no round in its folder itself: neither has the rehearsal
        for name in DEFINITION:
            (folder / name).unlink(missing_ok=True)
    if fresh:
        shutil.rmtree(folder / BOARDS, ignore_errors=True)
    _mirror_referees(event_dir, folder)
    if speed == 1:
        (folder / SPEED_FILE).unlink(missing_ok=True)
    else:
        (folder / SPEED_FILE).write_text(f"{speed:g}\n")
    listed = [n for n in have if n != rounds.MAIN]
    if listed:
        (folder / rounds.ROUNDS).mkdir(exist_ok=True)
        (folder / rounds.ROUNDS / rounds.ORDER).write_text("".join(n + "\n" for n in listed))
    for source in sources:
        into = rounds.round_dir(folder, source.round)
        into.mkdir(parents=True, exist_ok=True)
        if fresh:
            for name in LOG_FILES:
                (into / name).unlink(missing_ok=True)
        for name in DEFINITION:               # the round as it is now
            shutil.copyfile(source.files / name, into / name)


def _mirror_referees(event_dir: Path, folder: Path) -> None:
    """The rehearsal's referees: the event's (its referees.json as it is
    now, copied readable by its owner only), so that a printed badge signs
    a phone in to the rehearsal's pages; the rehearsal's Demo referee is
    added to the copy at its start, never to the event's."""
    from ..event.folder.private_file import write_private
    from ..web.referees import FILE

    try:
        text = (event_dir / FILE).read_text()
    except FileNotFoundError:
        (folder / FILE).unlink(missing_ok=True)       # the event has none (any more): nor has its rehearsal
        return
    write_private(folder / FILE, text)


def referees_line(event_dir: Path) -> str:
    """What the rehearsal says of its referees' badges."""
    from ..web.referees import RefereeBook

    active = sum(1 for r in RefereeBook(event_dir).referees() if r[1])
    return (f"referees: the event's badges sign in to the rehearsal's pages too ({active} active in "
            f"{event_dir / 'referees.json'}, as it was at this `rehearse`; one added or revoked since: "
            "rehearse again), and the rehearsal's own Demo referee (below)")


def _rehearse(args, folder: Path, lock, sources, day: bool) -> int:
    from .event import run_folder

    event_dir = folder.parent
    boards: dict[str, int] = {}
    for source in sources:                   # the hall's boards: every round's, each with its most buttons
        for b, n in boards_of(source.stations).items():
            boards[b] = max(boards.get(b, 0), n)
    keys = BoardKeys(folder / "board-keys.json")
    for b in boards:
        keys.ensure(b)           # as `board flash --keys` would, in the rehearsal's own keys file
    names = [s.round for s in sources]
    print(f"rehearsing in {folder} (a copy of the event's format, entrants and stations, with a log of "
          f"its own: the event's is not touched); operator actions: tabletimer act {folder} ...", flush=True)
    print(referees_line(event_dir), flush=True)
    speed = getattr(args, "speed", 1.0)
    if speed != 1:
        from ..rules.formats import fmt_duration
        limits = ", ".join(f"{s.round} {fmt_duration(s.format.time_limit_ms)} -> "
                           f"{fmt_duration(int(s.format.time_limit_ms / speed))}" for s in sources)
        print(f"rehearsed at {speed:g}x: time limits, warnings, relay rotations and replacement windows "
              f"{speed:g} times shorter ({limits}); penalties as the rules say; a `round_start duration=` "
              f"is this round's own limit, as typed (not sped up)", flush=True)
    if day:
        print(f"a rehearsed day: the rounds {', '.join(names)} in this order, on the same simulated "
              f"boards; the next round: `tabletimer rehearse {event_dir} --next`", flush=True)
    day_stop = threading.Event()      # the rehearsal's end: its boards and their presses stop
    sims: list = []
    now = {"stop": None, "next": False, "round": names[0]}

    def next_round() -> None:
        i = names.index(now["round"])
        if i + 1 >= len(names):
            print(f"rehearsal: round {now['round']} is the day's last: nothing after it", flush=True)
            return
        now["next"] = True
        now["stop"].set()

    def start_sims(address: BrokerAddress, stop: threading.Event):
        if sims:                         # a rehearsed day's next round: the same boards, still running
            return sims
        from tabletimer.hub.fleet.simulator import SimBoard

        for b, buttons in sorted(boards.items()):
            key = keys.key(b) or ""
            sim = SimBoard(b, address.host, address.port, folder / BOARDS, key=key, stations=buttons,
                           broker_user=b, broker_password=mqtt_password(key))
            sim.reboots = True       # boots again after its reset, as a board does (`boards set`, `boards update`)
            sims.append(sim.start())
        if not args.broker:
            args.port = address.port     # every round's broker where the boards look for it
        presses, running = folder / PRESSES, folder / RUNNING
        start = presses.stat().st_size if presses.exists() else 0    # before `press` may write: none missed
        running.write_text(f"{os.getpid()}\n{'day' if day else 'round'}\n")
        threading.Thread(target=_follow_presses, args=(presses, start, sims, day_stop, running,
                                                       next_round if day else None),
                         name="rehearsal-presses", daemon=True).start()
        first = sorted(boards)[0]
        d = folder             # every command on the rehearsal takes its folder (`press` also the event's)
        print(f"rehearsal: {len(sims)} simulated board(s) ({', '.join(sorted(boards))}); press their buttons "
              f"from another terminal:\n  tabletimer press {d} {first} 1              # a finish call\n"
              f"  tabletimer press {d} {first} 1 --missing 2  # a referee counts 2 missing pieces (5 s after the call's two beeps)\n"
              f"  tabletimer press {d} {first} 1 --confirm    # ... and confirms\n"
              f"  tabletimer press {d} {first} 1 --void       # or voids the call", flush=True)
        return sims

    try:
        for i, name in enumerate(names):
            opened = open_event(str(folder), name)
            if opened is None:
                return 2
            ev, _ = opened
            if day:
                print(f"rehearsal: round {i + 1} of {len(names)}, {name}", flush=True)
            now.update(stop=threading.Event(), next=False, round=name)
            root = ev.db == folder / "events.sqlite"     # the lock taken is this log's
            rc = run_folder(args, ev, keys, start_sims, lock if root else None,
                            stop=now["stop"], boards_stay=day)
            if rc != 0 or not now["next"]:
                return rc                  # stopped (Ctrl-C, SIGTERM, --duration) or failed
            args.demo_referee = False      # the phones signed in keep their sign-in for the next round
        return 0
    finally:
        day_stop.set()
        for sim in sims:
            sim.stop()


def _drill(args, folder: Path, lock, source) -> int:
    """`rehearse DIR --standby` (rehearse_drill.py): the standby drill on
    the round's folder, `tabletimer press` followed as in any rehearsal."""
    from .rehearse_drill import drill

    keys = BoardKeys(folder / "board-keys.json")
    boards = boards_of(source.stations)
    for b in boards:
        keys.ensure(b)           # as `board flash --keys` would, in the rehearsal's own keys file

    def follow(sims, stop: threading.Event, asked) -> None:
        presses, running = folder / PRESSES, folder / RUNNING
        start = presses.stat().st_size if presses.exists() else 0    # before `press` may write: none missed
        running.write_text(f"{os.getpid()}\ndrill\n")
        threading.Thread(target=_follow_presses, args=(presses, start, sims, stop, running),
                         kwargs={"drill": asked}, name="rehearsal-presses", daemon=True).start()
    return drill(args, folder, lock, source, keys, boards, follow)


def _follow_presses(path: Path, pos: int, sims, stop: threading.Event, running: Path,
                    next_round=None, drill=None) -> None:
    """Press what `tabletimer press` appends to path after byte pos (what
    an earlier rehearsal appended is history), until stop; a `--next` line
    calls next_round (None: not a day), a drill's ask (`--kill-primary`,
    `--takeover`) drill(what) (None: not a drill).  Each button has
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
                    if p.get("drill"):
                        if drill is not None:
                            drill(p["drill"])
                        continue
                    if p.get("next"):
                        if next_round is not None:
                            next_round()
                        continue
                    queue_of(p["board"], int(p["button"])).put((int(p["button"]), int(p["hold"]),
                                                                int(p.get("times", 1))))
                except (ValueError, KeyError, TypeError, AttributeError) as e:
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


def _ask_next(args) -> int:
    """`rehearse DIR --next`: the running rehearsed day to its next round."""
    folder = rehearsal_folder(args.dir)
    kind = rehearsing(folder)
    if kind is None:
        print(f"error: no rehearsal runs on {args.dir}: start one with `tabletimer rehearse {args.dir}`",
              file=sys.stderr)
        return 2
    live = rounds.live(folder)
    if kind != "day":
        print(f"error: the running rehearsal is of round {live} only (started with --round): stop it, "
              f"then `tabletimer rehearse {folder.parent} --round NEXT`, or rehearse the whole day with "
              f"`tabletimer rehearse {folder.parent}`", file=sys.stderr)
        return 2
    names = rounds.names(folder)
    if live not in names or names.index(live) + 1 >= len(names):
        print(f"error: round {live} is the day's last ({', '.join(names)}): there is no next one; "
              "stop the rehearsal with Ctrl-C", file=sys.stderr)
        return 2
    after = names[names.index(live) + 1]
    with open(folder / PRESSES, "a") as f:
        f.write(json.dumps({"next": True}) + "\n")
    print(f"the rehearsal moves from round {live} to round {after}: round {live}'s hub stops (its standings "
          f"printed), round {after}'s starts; the simulated boards stay on and follow")
    return 0


def _ask_drill(args, ask: str) -> int:
    """`rehearse DIR --kill-primary` / `--takeover`: a step of the running drill."""
    folder = rehearsal_folder(args.dir)
    if rehearsing(folder) != "drill":
        print(f"error: no standby drill runs on {args.dir}: start one with `tabletimer rehearse {args.dir} "
              "--standby`", file=sys.stderr)
        return 2
    with open(folder / PRESSES, "a") as f:
        f.write(json.dumps({"drill": ask}) + "\n")
    print({KILL: "the hub laptop dies (the drill's primary is SIGKILLed): watch the standby's PRIMARY SILENT",
           TAKEOVER: "the standby stops and `tabletimer takeover` starts on its copy: watch the boards move "
                     "to it"}[ask])
    return 0


def cmd_press(args) -> int:
    """`tabletimer press DIR/rehearsal BOARD BUTTON` (or DIR, the event
    folder, as every version took)."""
    folder = rehearsal_folder(args.dir)
    if rehearsing(folder) is None:
        print(f"error: no rehearsal runs on {args.dir}: start one with `tabletimer rehearse {folder.parent}`",
              file=sys.stderr)
        return 2
    opened = open_event(str(folder))        # the round it rehearses now
    if opened is None:
        return 2
    ev, _keys = opened
    boards = boards_of(ev.stations)
    if args.board not in boards:
        print(f"error: no board {args.board!r} in {ev.files / 'stations.csv'} (it has "
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
