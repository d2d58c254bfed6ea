"""`tabletimer demo`: the hub with its broker (Mosquitto or the embedded one) and simulated boards playing a round."""

from __future__ import annotations

import random
import sys
import threading
import time
from pathlib import Path

from ..broker.broker import BrokerAddress
from ..protocol.keys import BoardKeys, KeyFileError, mqtt_password
from ..core.service import HubService
from ..event.fold.competition import Competition
from ..rules.formats import FormatError
from .common import writable_log
from .options import LOG_FAILED
from .serve import serve


def cmd_demo(args) -> int:
    """Hub + broker + simulated boards playing a round: its options checked,
    then the folder's lock and the broker's port, then the first write."""
    from ..web.console_api import demo_description
    from ..event.folder.demo import demo_event, demo_minutes
    from ..rules.formats import format_text
    from .event import claim_folder

    data = Path(args.data)
    try:
        fmt, entrants, stations = demo_event(args.preset, args.boards, args.stations, args.speed)
        args.limit_ms = demo_minutes(args.limit, "--limit")          # checked before anything starts
        args.warn_ms = tuple(demo_minutes(w, "--warn", args.speed) or 0 for w in args.warn)
        competition = Competition(fmt, entrants, stations)
        keys = BoardKeys(data / "board-keys.json")
        event = demo_description(Path(fmt.path).name, format_text(args.preset), args.boards,
                                 args.stations, args.speed)     # for remote consoles
    except (FormatError, KeyFileError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    lock = claim_folder(args, data / "events.sqlite")     # it makes the folder
    if lock is None:
        return 2
    try:
        return _demo(args, data, competition, keys, event)
    finally:
        lock.release()


def _demo(args, data: Path, competition: Competition, keys: BoardKeys, event: dict) -> int:
    from ..event.folder.demo import sim_board_id

    stations = competition.stations
    for i in range(args.boards):
        keys.ensure(sim_board_id(i))
    kept = keep_earlier_run(data / "events.sqlite")
    if kept is not None:
        print(f"demo: the previous run's log is kept as {kept}; this run has a log (an event) of its own",
              flush=True)
    opened = writable_log(data / "events.sqlite", lambda store: HubService(store, keys, competition))
    if opened is None:
        return LOG_FAILED
    store, service = opened

    def start_sims(address: BrokerAddress, stop: threading.Event):
        service.start_round(duration_ms=args.limit_ms, warnings_ms=args.warn_ms)
        return _start_sims(args, address, data, service, stations, stop)

    try:
        return serve(args, service, data, start_sims, event)
    finally:
        store.close()


EARLIER = "earlier-runs"      # the demo folder's logs of earlier runs


def keep_earlier_run(log: Path) -> Path | None:
    """A demo run on a folder that holds a log of an earlier run: that log
    moved to DATA/earlier-runs/ (its path returned), so that this run is an
    event of its own.  The same log again was the same event: the boards
    kept their stations "done" from the first run, each finish of the
    second was a stray, and nobody finished."""
    if not log.exists():
        return None
    dest = log.parent / EARLIER / time.strftime("events-%Y%m%d-%H%M%S.sqlite")
    n = 1
    while dest.exists():
        n += 1
        dest = dest.with_name(time.strftime("events-%Y%m%d-%H%M%S") + f"-{n}.sqlite")
    dest.parent.mkdir(exist_ok=True)
    for suffix in ("", "-wal", "-shm"):          # SQLite's files move together
        part = log.with_name(log.name + suffix)
        if part.exists():
            part.rename(dest.with_name(dest.name + suffix))
    return dest


def _start_sims(args, address: BrokerAddress, data: Path, service: HubService, stations, stop):
    from tabletimer.hub.fleet.simulator import SimBoard

    from ..event.folder.demo import sim_board_id

    rng = random.Random(args.seed)
    per_board: dict[str, int] = {}
    for s in stations:
        per_board[s.board] = max(per_board.get(s.board, 0), s.button)
    sims = []
    for i in range(args.boards):
        b = sim_board_id(i)
        key = service.keys.ensure(b)
        sim = SimBoard(b, address.host, address.port, data / "sim-boards", key=key,
                       broker_user=b, broker_password=mqtt_password(key),
                       stations=per_board.get(b, 1),
                       clock_offset_ms=rng.randint(-5, 5) * 3_600_000 + rng.randint(0, 3_599_999),
                       drift_ppm=rng.randint(-50, 50),
                       # the demo's referee counts missing pieces a second after the call, not 5 s
                       # (the board's quiet time after the hub has the call: docs/firmware.md)
                       timings={"quiet_ms": 500})
        sims.append(sim.start())

    comp = service.competition
    window = args.press_window or comp.format.time_limit_ms / 1000 * 0.8

    def presser() -> None:
        # every entrant works through its puzzles in order within the window:
        # a finish call, a referee a few seconds later (short presses count
        # missing pieces, a 2.5 s hold confirms); an entrant that runs out of
        # time stays unfinished
        plan = []
        by_entrant: dict[str, list] = {}
        for s in stations:
            by_entrant.setdefault(s.entrant, []).append(s)
        for sts in by_entrant.values():
            calls = [(s, k) for s in sorted(sts, key=lambda s: s.puzzle or 0) for k in range(comp.calls_of(s))]
            at = min(3.0, window / 4)               # the boards sync first
            step = (window - at) / (len(calls) + rng.uniform(0, 1.5))
            for s, _ in calls:
                at += rng.uniform(0.4, 1.0) * step
                if at > window:
                    break
                sim = next(x for x in sims if x.board_id == s.board)
                plan.append((at, 0, sim, s.button, 80))
                ref = at + 1 + rng.uniform(0.3, 0.6) * min(step, 6)
                for k in range(rng.choice((0, 0, 0, 1, 2))):
                    plan.append((ref + 0.4 * k, 1, sim, s.button, 100))
                plan.append((ref + 1, 2, sim, s.button, 2500))
                at = ref + 4
        plan.sort(key=lambda p: (p[0], p[1]))
        t0 = time.monotonic()
        for at, _, sim, st, hold in plan:
            if stop.wait(max(0.0, t0 + at - time.monotonic())):
                return
            if sim.alive:
                sim.press(st, hold)

    threading.Thread(target=presser, daemon=True).start()
    return sims
