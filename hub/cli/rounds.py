"""`tabletimer round add DIR NAME --format PRESET` and `round list DIR`: the
rounds of an event folder (a competition day: one hall of boards, several
categories one after another; hub/event/folder/rounds.py)."""

from __future__ import annotations

import sys

from ..event.folder import event_folder, rounds
from ..rules.formats import FormatError


def cmd_round_add(args) -> int:
    try:
        d = event_folder.add_round(args.dir, args.name, args.format, args.title)
    except (event_folder.EventFolderError, FormatError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    have = rounds.names(args.dir)
    print(f"round {args.name} in {d} ({', '.join(have)}: {len(have)} round(s) in {args.dir}): edit its "
          f"entrants.csv and stations.csv (who sits where in this round), then "
          f"`tabletimer run {args.dir} --round {args.name}`; the boards, their keys and the referees are "
          f"the event's, for every round")
    return 0


def cmd_round_list(args) -> int:
    have = rounds.names(args.dir)
    if not have:
        print(f"error: {args.dir} has no rounds: `tabletimer round add {args.dir} NAME --format PRESET`",
              file=sys.stderr)
        return 2
    live = rounds.live(args.dir) or (have[0] if len(have) == 1 else None)
    for name in have:
        try:
            ev = event_folder.load(args.dir, name)
            what = (f"{ev.format.title}: {len(ev.entrants)} entrant(s), {len(ev.stations)} station(s), "
                    + ("a log" if ev.db.exists() else "no log yet"))
        except (event_folder.EventFolderError, FormatError) as e:
            what = f"cannot be loaded: {e}"
        print(f"{'*' if name == live else ' '} {name:12} {rounds.round_dir(args.dir, name)}  {what}")
    if live:
        print("(* the live round: what `results`, `act`, `console` mean without --round)")
    return 0


def add_subcommands(sub) -> None:
    """Register `round` on the subparsers object of the `tabletimer` command."""
    r = sub.add_parser("round", help="the event's rounds (a competition day: categories one after another "
                                     "on the same boards)")
    rsub = r.add_subparsers(dest="round_cmd", required=True)
    a = rsub.add_parser("add", help="add a round: its own format, entrants, stations and log "
                                    "(DIR/rounds/NAME); the hall's boards, keys and referees stay the event's")
    a.add_argument("dir", help="the event folder (made if it does not exist)")
    a.add_argument("name", help="the round's name, e.g. pairs (letters, digits, - and _)")
    a.add_argument("--format", required=True, help="preset name (see `tabletimer formats`)")
    a.add_argument("--title", help="the event's title, for a new folder (DIR/title)")
    a.set_defaults(func=cmd_round_add)
    ls = rsub.add_parser("list", help="the event's rounds, the live one marked")
    ls.add_argument("dir", help="the event folder")
    ls.set_defaults(func=cmd_round_list)
