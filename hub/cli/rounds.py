"""`tabletimer round add DIR NAME --format PRESET` and `round list DIR`: the
rounds of an event folder (a competition day: one hall of boards, several
categories one after another; hub/event/folder/rounds.py); `round add-wjpc
DIR --groups N --semis 2|0`: the rounds of the WJPC's shape, each later one
with its [advancement] table (rules/event_shape.py)."""

from __future__ import annotations

import sys

from ..event.folder import event_folder, rounds
from ..rules.event_shape import ShapeError, wjpc_rounds
from ..rules.formats import FormatError, load_format


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


def cmd_round_add_wjpc(args) -> int:
    """Every round of the shape, or none: the names are checked free and
    the format loaded before the first is made."""
    try:
        shape = wjpc_rounds(args.groups, args.semis, args.per_group, args.final)
        have = set(rounds.names(args.dir))
        taken = [r.name for r in shape if r.name in have or (rounds.round_dir(args.dir, r.name)).exists()]
        if taken:
            raise ShapeError(f"{args.dir} has the rounds {', '.join(taken)} already: the shape's rounds are "
                             f"{', '.join(r.name for r in shape)}; use another event folder, or add the rounds "
                             f"one by one (`tabletimer round add`)")
        load_format(args.format)
    except (ShapeError, FormatError) as e:
        print(f"error: {e}; nothing was written", file=sys.stderr)
        return 2
    for i, r in enumerate(shape):
        try:
            d = event_folder.add_round(args.dir, r.name, args.format, args.title if i == 0 else None)
            if r.rule is not None:
                with open(d / "format.toml", "a", encoding="utf-8") as f:
                    f.write(r.toml())
                load_format(d / "format.toml")
            else:           # an example with the country column the rule reads
                (d / "entrants.csv").write_text("id,name,country\n1,Anna Example,CZE\n2,Ben Example,NOR\n",
                                                encoding="utf-8")
        except (event_folder.EventFolderError, FormatError, OSError) as e:
            print(f"error: round {r.name}: {e}", file=sys.stderr)
            return 2
        rule = r.advancement
        print(f"round {r.name:8} " + (f"its entrants advance {rule.describe()}" if rule else
                                      "a first-round group: its entrants.csv as you write it (with a country "
                                      "column)"))
    first, last = shape[0].name, shape[-1].name
    print(f"{len(shape)} rounds in {args.dir}. Next: each group's entrants.csv (id,name,country) and the hall "
          f"({args.dir}/hall.csv), `tabletimer seat {args.dir} --round {first} --by random`, run the groups; "
          f"make their results official (`tabletimer results {args.dir} --round NAME --official`); then "
          f"`tabletimer advance {args.dir} --round NAME` for each later round, up to {last}; "
          f"`tabletimer results {args.dir} --day` shows the whole event")
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
    w = rsub.add_parser("add-wjpc", help="add the rounds of a World Jigsaw Puzzle Championship: first-round "
                                         "groups, two semi-finals (or none) and a final, each later round "
                                         "with its [advancement] rule (the best of each country, then the "
                                         "next best)")
    w.add_argument("dir", help="the event folder (made if it does not exist)")
    w.add_argument("--groups", type=int, default=6, help="first-round groups, group-a ... (default 6)")
    w.add_argument("--semis", type=int, default=2, choices=(0, 2),
                   help="2: two semi-finals (semi-1 the first half of the groups, semi-2 the rest); 0: the groups "
                        "feed the final (default 2)")
    w.add_argument("--per-group", type=int, default=60, help="a semi-final's places for each of its groups "
                                                             "(default 60)")
    w.add_argument("--final", type=int, default=180, help="the final's size (default 180)")
    w.add_argument("--format", default="wjpc-individuals", help="every round's format (preset name or file; "
                                                                "default wjpc-individuals)")
    w.add_argument("--title", help="the event's title, for a new folder (DIR/title)")
    w.set_defaults(func=cmd_round_add_wjpc)
    ls = rsub.add_parser("list", help="the event's rounds, the live one marked")
    ls.add_argument("dir", help="the event folder")
    ls.set_defaults(func=cmd_round_list)
