"""`tabletimer check-hall DIR`: the hall check before the round, beside the
running hub (fleet/hall_check.py).  It writes the check's beginning into
the round's log (from then on a press at a station not running is the
check's), optionally makes every board buzz its identify pattern, then
follows the log and prints what changes (a board ready, a button pressed)
until the hall is ready, the round's start (which ends the check: a press
from then on is a call), --timeout or Ctrl-C, and writes the verdict (the
checklist) into the log.  Exit 0: the hall is ready; 1: not ready; 2: it
could not check."""

from __future__ import annotations

import signal
import sys
import time

from ..fleet.hall_check import CLOCK_LIMIT_MS, RSSI_MIN_DBM, checklist, ended_by_start
from ..event.folder import event_folder
from ..rules.timetext import fmt_clock
from .common import on_log, open_event, service_for

POLL_S = 0.25               # the log is read this often (a running hub applies actions as often)


def firmware_version() -> str | None:
    """The firmware version `tabletimer board flash` writes (firmware/app.py's,
    as fleet/firmware_build reads it); None if this installation has none."""
    from ..fleet.firmware_build import installed_firmware_version

    return installed_firmware_version()


def cmd_check_hall(args) -> int:
    from ..event.folder.folder_lock import hub_running

    opened = open_event(args.dir, getattr(args, "round", None))
    if opened is None:
        return 2
    ev, keys = opened
    if not ev.db.exists() or not hub_running(ev.db):
        print(f"error: no hub runs on {ev.files}: the hall check needs the boards online; start it with "
              f"`tabletimer run {ev.path}`" + (f" --round {ev.round}" if ev.several_rounds else "")
              + ", then check again" + event_folder.rehearsal_hint(ev.path, "check-hall"), file=sys.stderr)
        return 2
    fw = firmware_version()
    signal.signal(signal.SIGTERM, _interrupt)      # kill, a closed terminal: the verdict as it stands, as Ctrl-C
    signal.signal(signal.SIGHUP, _interrupt)
    return on_log(ev, lambda store: _check(args, ev, keys, store, fw))


def _interrupt(*_) -> None:
    raise KeyboardInterrupt


def _check(args, ev, keys, store, fw) -> int:
    svc = service_for(ev, keys, store)
    svc.catch_up()
    try:
        row = svc.act("hall_check", {"phase": "begin", "clock_limit": args.clock_limit, "rssi_min": args.rssi_min},
                      who=args.who)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    title = event_folder.event_title(ev.path) + (f", round {ev.round}" if ev.several_rounds else "")
    print(f"hall check begun (log row #{row['id']}): press every button of every table once; a press now "
          "is the check's, not a call", flush=True)
    if args.buzz:
        for b in sorted({s.board for s in ev.stations}):
            try:
                svc.act("identify", {"board": b}, who=args.who, why="hall check: buzzer test")
            except ValueError as e:
                print(f"warning: no buzzer test for {b}: {e}", file=sys.stderr)
        print("buzzer test: every board plays its identify pattern now; listen at each table", flush=True)
    limits = dict(clock_limit_ms=args.clock_limit, rssi_min=args.rssi_min)
    deadline = time.monotonic() + args.timeout if args.timeout else None
    shown: dict[str, str] = {}
    armed: int | None = None
    check = svc.hall_check(fw, **limits)
    try:
        while True:
            svc.catch_up()
            check = svc.hall_check(fw, **limits)
            end = svc.competition.hall_check_end_ms()
            if end != armed and check.ended_by_start_ms is None and end is not None:
                print(f"the round starts at {fmt_clock(end)}: the check ends then", flush=True)
            armed = end
            for b in check.boards:
                line = (f"{b.board}: ready" if b.ready else f"{b.board}: not ready: {'; '.join(b.reasons)}")
                if shown.get(b.board) != line:
                    shown[b.board] = line
                    print(line, flush=True)
            if check.ended_by_start_ms is not None:
                print(ended_by_start(check.ended_by_start_ms), flush=True)
                break
            if check.ready or (deadline is not None and time.monotonic() > deadline):
                break
            time.sleep(POLL_S)
    except KeyboardInterrupt:
        print("stopped: the verdict as it stands", flush=True)
    report = checklist(check, title)
    svc.catch_up()
    svc.act("hall_check", {"phase": "verdict", "ready": int(check.ready), "report": report[:60_000]},
            who=args.who)
    print(report, flush=True)
    print(f"verdict recorded in {ev.db}", flush=True)
    return 0 if check.ready else 1


def add_parser(sub, round_help: str) -> None:
    ch = sub.add_parser("check-hall", help="the hall check before the round: every button pressed once, "
                                           "every board online with a good clock and WiFi")
    ch.add_argument("dir", help="the event folder (its hub running)")
    ch.add_argument("--round", help=round_help)
    ch.add_argument("--buzz", action="store_true", help="every board plays its identify pattern (buzzer test)")
    ch.add_argument("--timeout", type=float, default=None, metavar="S",
                    help="give the verdict after this many seconds (default: when the hall is ready, or Ctrl-C)")
    ch.add_argument("--clock-limit", type=int, default=CLOCK_LIMIT_MS, metavar="MS",
                    help=f"a board's clock error above this is not ready (default {CLOCK_LIMIT_MS})")
    ch.add_argument("--rssi-min", type=int, default=RSSI_MIN_DBM, metavar="DBM",
                    help=f"a WiFi signal below this is not ready (default {RSSI_MIN_DBM})")
    ch.add_argument("--who", default="hall check", help="who checks (in the log)")
    ch.set_defaults(func=cmd_check_hall)
