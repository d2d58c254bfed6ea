"""`tabletimer boards set DIR [BOARD...|--all] KEY=VALUE...`: settings over
the air (fleet/board_settings.py), beside the running hub.  Every board's
request is checked first (the keys, the values with the board's own checks,
no round running on it); if one fails nothing is stored or sent.  Then one
`settings` row per board goes into the log, the running hub sends each as
it applies it, and this follows the log: a line per board as its state
changes (sent, staged, on trial, committed -- or sent, committed for the
buzzer volume, applied at once; refused or rolled back, with the reason) until every board is done or --timeout.  Passwords are never
printed, and sealed with the board's key in the log.  Exit 0: every board
committed; 1: one did not (refused, rolled back, no answer); 2: nothing was
sent."""

from __future__ import annotations

import sys
import time

from ..fleet import board_settings
from .common import boards_of_a_running_hub, every_board_checked, on_log, open_event, service_for

POLL_S = 0.25


def cmd_boards_set(args) -> int:
    opened = open_event(args.dir, getattr(args, "round", None))
    if opened is None:
        return 2
    ev, keys = opened
    names = [a for a in args.items if "=" not in a]
    pairs = [a for a in args.items if "=" in a]
    try:
        changes = board_settings.parse(pairs)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if not changes:
        print("error: give the settings to change as KEY=VALUE (keys: "
              + ", ".join(board_settings.keys()) + ")", file=sys.stderr)
        return 2
    if not boards_of_a_running_hub(ev, names, args.all, "settings"):
        return 2
    return on_log(ev, lambda store: _set(args, ev, keys, store, names, changes))


def _set(args, ev, keys, store, names, changes) -> int:
    svc = service_for(ev, keys, store)
    svc.send_nothing()           # this process sends nothing: the running hub does, as it applies the rows
    svc.catch_up()
    boards = names or sorted(({s.board for s in ev.stations} | set(svc.registry.boards)) & set(keys.boards()))
    if not boards:
        print("error: no board with a key in this event", file=sys.stderr)
        return 2
    payloads = {}
    for b in boards:
        key = keys.key(b)
        payloads[b] = {"board": b, "set": board_settings.seal(changes, key) if key else changes}
        if args.trial is not None:
            payloads[b]["trial"] = args.trial
    if not every_board_checked(svc, "settings", payloads, args.who):   # before anything is stored
        return 2
    states: dict[str, board_settings.BoardState] = {}
    first = None
    for b in boards:
        row = svc.act("settings", payloads[b], who=args.who, why=args.why or "")
        first = row["id"] if first is None else first
        states[b] = board_settings.BoardState(b, row["id"])
        print(f"{b}: sent (log row #{row['id']}): {board_settings.shown(changes)}", flush=True)
    trial = args.trial or board_settings.TRIAL_S
    deadline = time.monotonic() + (args.timeout if args.timeout is not None else trial + 60)
    shown = {b: s.line() for b, s in states.items()}
    try:
        seen = first
        while not all(s.final for s in states.values()) and time.monotonic() < deadline:
            time.sleep(POLL_S)
            for row in store.events(after=seen):
                seen = row["id"]
                board_settings.follow(states, [row])     # row by row: every change a line
                for b, s in states.items():
                    if shown[b] != s.line():
                        shown[b] = s.line()
                        print(shown[b], flush=True)
    except KeyboardInterrupt:
        print("stopped: the boards go on by themselves (a board not heard on its new settings goes back)")
    done = sum(s.state == "committed" for s in states.values())
    for s in states.values():
        if not s.final:
            print(f"{s.board}: no final answer yet ({s.state}); see the console's alerts", flush=True)
    print(f"{done}/{len(states)} board(s) on the new settings", flush=True)
    return 0 if done == len(states) else 1


def add_parser(sub):
    """The `boards` group with its `set`; the group's subcommands returned,
    for the other `boards` commands (provision.py's)."""
    bs = sub.add_parser("boards", help="the boards of a running event, over the air")
    bsub = bs.add_subparsers(dest="boards_cmd", required=True)
    s = bsub.add_parser("set", help="change boards' settings (WiFi, brokers, buzzer, LED): each board "
                                    "checks them, restarts on them and goes back by itself if it "
                                    "cannot reach the hub on them (the buzzer volume alone: at once)",
                        description="KEY=VALUE, KEY one of: " + ", ".join(board_settings.keys())
                                    + " (broker.host: a list, comma-separated; null removes an optional one)")
    s.add_argument("dir", help="the event folder (its hub running)")
    s.add_argument("items", nargs="+", metavar="BOARD|KEY=VALUE", help="the boards (or --all), then the settings")
    s.add_argument("--all", action="store_true", help="every board of the event with a key")
    s.add_argument("--round", help="which of the event's rounds (default: its only one, or the one `run` ran last)")
    s.add_argument("--trial", type=int, default=None, metavar="S",
                   help=f"how long a board tries the new settings before it goes back (10..3600 s; "
                        f"default {board_settings.TRIAL_S})")
    s.add_argument("--timeout", type=float, default=None, metavar="S",
                   help="stop following after this many seconds (default: the trial's time + 60)")
    s.add_argument("--who", default="operator", help="who asks (in the log)")
    s.add_argument("--why", default="", help="why (in the log)")
    s.set_defaults(func=cmd_boards_set)
    return bsub
