"""The `tabletimer` command: its parser, and each command group's module (docs/architecture.md).

A command imports only its own module, when it runs: the parser of the
command asked for is the only one built (all of them for --help or a
mistyped command).  `tabletimer act` so took 0.17 s of CPU, not 0.39 s
(2026-12-04): an operator's command answers at once, and the suite's
hundreds of commands cost half."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from importlib import import_module
from typing import Callable

from ..event.log.action_rows import FIELDS as OPERATOR_ACTIONS
from ..event.log.log_health import DamagedLog
from .options import LOG_FAILED, ROUND_HELP, serve_options


def _lazy(module: str, name: str) -> Callable:
    """The command `name` of the module `module` (of this package),
    imported when the command runs."""
    def run(args):
        return getattr(import_module(module, __package__), name)(args)
    return run


# ------------------------------------------------------------------ parser

def _bench(argv: list[str]) -> int:
    from tabletimer.tools.bench import hall as bench
    return bench.main(argv)


def _demo(sub) -> None:
    d = sub.add_parser("demo", help="the hub with its broker and simulated boards playing a round")
    d.add_argument("--data", default="data", help="folder for the demo's event log and boards (default: ./data)")
    d.add_argument("--preset", default="cz-championship-individuals", help="competition format preset")
    d.add_argument("--boards", type=int, default=4, help="simulated boards")
    d.add_argument("--stations", type=int, default=2, help="stations (buttons) per board (individual formats)")
    d.add_argument("--speed", type=float, default=60.0,
                   help="play the format this many times faster (time limit, relay rotations; default 60)")
    d.add_argument("--press-window", type=float, default=None,
                   help="simulated finishes happen within this many seconds of the start "
                        "(default: most of the sped-up time limit)")
    d.add_argument("--seed", type=int, default=None, help="random seed for the simulation")
    d.add_argument("--limit", type=float, default=None,
                   help="round time limit in minutes (default: the format's)")
    d.add_argument("--warn", type=float, nargs="*", default=[10.0, 1.0],
                   help="warnings, in the format's minutes before the limit (sped up like it; default: 10 1)")
    serve_options(d)
    d.set_defaults(func=_lazy(".demo", "cmd_demo"), demo_referee=True)   # prints a sign-in for the pages


def _run(sub) -> None:
    r = sub.add_parser("run", help="run an event from its folder (see `tabletimer init`)")
    r.add_argument("dir", help="the event folder")
    serve_options(r)
    r.add_argument("--round", help=ROUND_HELP)
    r.set_defaults(func=_lazy(".event", "cmd_run"))


def _rehearse(sub) -> None:
    rh = sub.add_parser("rehearse", help="run an event from its folder with a simulated board for each "
                                         "board of its stations.csv (a rehearsal without hardware)")
    rh.add_argument("dir", help="the event folder (the rehearsal runs on a copy of it in DIR/rehearsal)")
    rh.add_argument("--fresh", action="store_true", help="start the rehearsal's log (each rehearsed round's) "
                                                         "afresh")
    serve_options(rh)
    rh.add_argument("--speed", type=float, default=1.0,
                    help="play the rounds this many times faster (time limit, warnings, relay rotations, "
                         "replacement window; penalties stay the rules'): a 2-hour round at 30 plays in "
                         "4 minutes (default 1: real time)")
    rh.add_argument("--round", help="the round to rehearse (default: an event of several rounds is "
                                    "rehearsed as a day, its rounds in order on the same simulated boards)")
    rh.add_argument("--next", action="store_true",
                    help="move the running rehearsed day to its next round (from another terminal)")
    rh.add_argument("--standby", action="store_true",
                    help="rehearse the hub laptop's death: a primary and a standby hub, the boards knowing "
                         "both (one round; Linux, or macOS with 127.0.0.2 aliased)")
    rh.add_argument("--kill-primary", action="store_true",
                    help="in a running --standby drill: the hub laptop dies (from another terminal)")
    rh.add_argument("--takeover", action="store_true",
                    help="in a running --standby drill: the standby takes over (from another terminal)")
    rh.set_defaults(func=_lazy(".rehearse", "cmd_rehearse"), demo_referee=True)


def _press(sub) -> None:
    pr = sub.add_parser("press", help="press a button of a simulated board of a running rehearsal")
    pr.add_argument("dir", help="the rehearsal's folder, DIR/rehearsal, as for every command on the rehearsal "
                                "(the event folder DIR is taken too)")
    pr.add_argument("board", help="the board's id (stations.csv)")
    pr.add_argument("button", type=int, help="the button (station), from 1")
    how = pr.add_mutually_exclusive_group()
    how.add_argument("--missing", type=int, metavar="N",
                     help="N short presses: a referee counting N missing pieces of a call")
    how.add_argument("--confirm", action="store_true", help="a 2.5 s hold: the referee confirms the call")
    how.add_argument("--void", action="store_true", help="a 6.5 s hold: the referee voids the call")
    how.add_argument("--hold", type=int, metavar="MS", help="a press this long (default 80 ms: a finish call)")
    pr.set_defaults(func=_lazy(".rehearse", "cmd_press"))


def _hall_check(sub) -> None:
    from .hall_check import add_parser
    add_parser(sub, ROUND_HELP)


def _boards(sub) -> None:
    from .board_firmware import add_parser as add_update
    from .board_settings import add_parser as add_settings
    from .provision import add_parser as add_provision
    boards = add_settings(sub)
    add_provision(boards)
    add_update(boards)


def _standby(sub) -> None:
    from .standby import add_parser
    add_parser(sub, serve_options, ROUND_HELP)


def _takeover(sub) -> None:
    from .takeover import add_parser
    add_parser(sub, serve_options, ROUND_HELP)


def _redo(sub) -> None:
    from .redo import add_parser
    add_parser(sub, ROUND_HELP)


def _console(sub) -> None:
    cs = sub.add_parser("console", help="open the organizer console on an event the hub is running "
                                        "(a second screen: the event folder on this machine, or the "
                                        "hub's address from another laptop)")
    cs.add_argument("dir", metavar="DIR|URL",
                    help="the event folder, or the hub's console address http://HOST:PORT "
                         "(the hub prints it when it starts)")
    token = cs.add_mutually_exclusive_group()
    token.add_argument("--token-file", metavar="PATH",
                       help="with a URL: a file with the hub's console token (the event folder's "
                            "console-token, or a copy of it; the hub prints its path)")
    token.add_argument("--token", default=os.environ.get("TABLETIMER_CONSOLE_TOKEN"),
                       help="with a URL: the hub's console token itself (default: "
                            "$TABLETIMER_CONSOLE_TOKEN; on the command line it is in the shell's "
                            "history: prefer --token-file)")
    cs.add_argument("--round", help=ROUND_HELP)
    cs.set_defaults(func=_lazy(".event", "cmd_console"))


def _init(sub) -> None:
    i = sub.add_parser("init", help="create an event folder from a format preset")
    i.add_argument("dir")
    i.add_argument("--format", required=True, help="preset name (see `tabletimer formats`)")
    i.add_argument("--title", help="the event's title on the projector, table cards, badges and results "
                                   "(saved in DIR/title; asked for at a terminal; default: the folder's name)")
    i.add_argument("--language", help="the event's language on the projector, the hall's pages and the "
                                      "sheets: en, cs, da or nb (saved in DIR/language; default en); "
                                      "change it later with `tabletimer language DIR CODE`")
    i.set_defaults(func=_lazy(".event", "cmd_init"))


def _language(sub) -> None:
    lg = sub.add_parser("language", help="show or change the event's language (the projector, the hall's "
                                         "pages, the sheets; a phone may choose its own)")
    lg.add_argument("dir", help="the event folder")
    lg.add_argument("code", nargs="?", help="en, cs, da or nb (none: show the event's)")
    lg.set_defaults(func=_lazy(".event", "cmd_language"))


def _act(sub) -> None:
    a = sub.add_parser("act", help="record an operator action in an event's log "
                                   "(a running hub applies it at once)")
    a.add_argument("dir", help="the event folder")
    a.add_argument("action", choices=sorted(OPERATOR_ACTIONS))
    a.add_argument("fields", nargs="*", help="key=value, e.g. entrant=12 placed=311; at= as h:mm:ss since "
                                             "the round start (round_start: a clock time HH:MM) or hub ms; "
                                             "round_start warns at 10 and 1 min left unless warnings=10:00,1:00")
    a.add_argument("--who", default="operator", help="who acts (recorded)")
    a.add_argument("--why", default="", help="the reason (recorded)")
    a.add_argument("--force", action="store_true",
                   help="record an action that replaces or discards a recorded result, or a round "
                        "start typed as a clock time far in the past or ahead, without asking")
    a.add_argument("--objection", metavar="REASON",
                   help="a change (void, correct, confirm, count) of a time or count the competitor agreed "
                        "to: the head referee's decision on an objection, with its reason (--who: the head "
                        "referee); --force alone is not enough")
    a.add_argument("--round", help=ROUND_HELP)
    a.set_defaults(func=_lazy(".log", "cmd_act"))


def _check_in(sub) -> None:
    from .check_in import add_parser
    add_parser(sub)


def _replay(sub) -> None:
    rp = sub.add_parser("replay", help="rebuild the standings offline from an event's log")
    rp.add_argument("dir")
    rp.add_argument("--json", action="store_true")
    rp.add_argument("--round", help=ROUND_HELP)
    rp.set_defaults(func=_lazy(".log", "cmd_replay"))


def _log(sub) -> None:
    lg = sub.add_parser("log", help="an event's log: check it, recover what of a damaged one reads")
    lgsub = lg.add_subparsers(dest="log_cmd", required=True)
    lc = lgsub.add_parser("check", help="read the log row by row, without writing it: what reads, what is "
                                        "damaged (exit 0: sound, 3: damaged)")
    lc.add_argument("dir", help="the event folder (or the log file itself)")
    lc.add_argument("--round", help=ROUND_HELP)
    lc.set_defaults(func=_lazy(".log", "cmd_log_check"))
    lr = lgsub.add_parser("recover", help="copy every readable row of a damaged log into a new log in its "
                                          "place, under the same ids; the damaged file is kept beside it "
                                          "(events.sqlite.damaged-DATE-TIME) and what was lost is said")
    lr.add_argument("dir", help="the event folder (or the log file itself); no hub may be running on it")
    lr.add_argument("--round", help=ROUND_HELP)
    lr.set_defaults(func=_lazy(".log", "cmd_log_recover"))


def _board(sub) -> None:
    from .boards import add_config_options
    b = sub.add_parser("board", help="board tools")
    bsub = b.add_subparsers(dest="board_cmd", required=True)
    f = bsub.add_parser("flash", help="copy the firmware and a generated configuration to a board (mpremote)")
    f.add_argument("device", help="serial port of the board, e.g. /dev/ttyUSB0")
    f.add_argument("--id", help="the board's id, e.g. T07 (letters, digits, - and _)")
    add_config_options(f)
    f.add_argument("--keys", default="data/board-keys.json",
                   help="the hub's board keys file (an event's: DIR/board-keys.json)")
    f.add_argument("--dry-run", action="store_true",
                   help="check the configuration and print the mpremote command; no key is stored")
    f.set_defaults(func=_lazy(".boards", "cmd_board_flash"))
    c = bsub.add_parser("check", help="compile the firmware with mpy-cross and type-check it "
                                      "against the ESP32 stubs")
    c.add_argument("-v", "--verbose", action="store_true")
    c.set_defaults(func=_lazy(".boards", "cmd_board_check"))


def _broker(sub) -> None:
    bk = sub.add_parser("broker", help="broker tools")
    bksub = bk.add_subparsers(dest="broker_cmd", required=True)
    bc = bksub.add_parser("config", help="write a Mosquitto configuration for an event "
                                         "(logins per board, ACL, persistence)")
    bc.add_argument("dir", help="the event folder")
    bc.add_argument("--listen", default="0.0.0.0", help="address Mosquitto listens on (default 0.0.0.0)")
    bc.add_argument("--port", type=int, help="the boards' port (default 1883; 8883 with --tls)")
    bc.add_argument("--tls", action="store_true",
                    help="boards connect with TLS only (an event CA and a broker certificate are made); "
                         "the hub connects without it on 127.0.0.1:--hub-port")
    bc.add_argument("--tls-host", action="append", default=[],
                    help="with --tls: an address boards connect to (their --broker-host: the laptop's "
                         "IP address or name); repeat for several")
    bc.add_argument("--hub-port", type=int, default=1883,
                    help="with --tls: the hub's listener on 127.0.0.1 (default 1883)")
    bc.set_defaults(func=_lazy(".boards", "cmd_broker_config"))


def _bench_parser(sub) -> None:
    bn = sub.add_parser("bench", add_help=False,
                        help="hall-scale benchmarks: press latency, timing error, signal skew, ingest, "
                             "restart, ranking, heap, firmware timing (see `tabletimer bench --help`)")
    bn.set_defaults(func=lambda a: _bench([]))


def _formats(sub) -> None:
    from .formats import add_subcommands
    add_subcommands(sub)


def _outputs(sub) -> None:
    from .outputs import add_subcommands
    add_subcommands(sub)


def _draw(sub) -> None:
    from .draw import add_subcommands
    add_subcommands(sub)


def _referees(sub) -> None:
    from .referees import add_subcommands
    add_subcommands(sub)


def _rounds(sub) -> None:
    from .rounds import add_subcommands
    add_subcommands(sub)


def _advance(sub) -> None:
    from .advance import add_subcommands
    add_subcommands(sub)


def _publish(sub) -> None:
    from .publish import add_parser
    add_parser(sub)


def _entrants(sub) -> None:
    from .entrants import add_subcommands
    add_subcommands(sub)


# every command: the names it adds, and what adds its parser; in the order --help lists them
COMMANDS: list[tuple[tuple[str, ...], Callable]] = [
    (("demo",), _demo), (("run",), _run), (("rehearse",), _rehearse), (("press",), _press),
    (("check-hall",), _hall_check), (("boards",), _boards), (("standby",), _standby),
    (("takeover",), _takeover), (("redo",), _redo), (("console",), _console), (("init",), _init), (("language",), _language), (("act",), _act),
    (("absent", "check-in-list"), _check_in), (("replay",), _replay), (("log",), _log), (("board",), _board), (("broker",), _broker),
    (("bench",), _bench_parser), (("formats", "dry-run"), _formats), (("results", "cards"), _outputs),
    (("draw", "seat"), _draw), (("referees",), _referees), (("round",), _rounds), (("advance",), _advance),
    (("publish",), _publish),
    (("entrants",), _entrants),
]


def parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser: with only `command`'s parser in it when
    it is one of COMMANDS, else with every command's."""
    p = argparse.ArgumentParser(prog="tabletimer", description="Timing and ranking for jigsaw-puzzle "
                                "speed competitions.")
    sub = p.add_subparsers(dest="cmd", required=True)
    known = [build for names, build in COMMANDS if command in names]
    for build in known or [build for _, build in COMMANDS]:
        build(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["bench"]:            # its own options (argparse would take them for ours)
        return _bench(argv[1:])
    args = parser(argv[0] if argv else None).parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        return args.func(args)
    except DamagedLog as e:        # every command that reads the log: the advice, no traceback
        print(f"error: {e}", file=sys.stderr)
        return LOG_FAILED


if __name__ == "__main__":
    sys.exit(main())
