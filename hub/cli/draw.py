"""`tabletimer draw` and `seat`: before the start, the team draw (the round's
entrants.csv from its registrations.csv: rules/team_draw.py) and the seating
(its stations.csv from the hall: rules/seating.py), each recorded in the
round's log as an operator row (`draw`, `seat`: who, the seed, what was made),
and each refused once a round start is recorded, or while a hub runs on the
round (it read the files when it started), with nothing written: core/
before_start.py does it (the console's too); this prints it, with the
table cards and the find-your-table list of a seating."""

from __future__ import annotations

import sys
from pathlib import Path

from ..core.before_start import DrawMade, Refused, draw_lines, draw_round, seat_order, seat_round
from ..event.folder import event_folder
from ..event.folder.event_folder import Station
from ..rules.formats import Format
from ..rules.standings import Entrant
from .options import ROUND_HELP


def cmd_draw(args) -> int:
    try:
        made = draw_round(args.dir, args.round, args.teams_of, args.seed, args.apart_by, args.balance_by,
                          args.who, args.why)
    except Refused as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    _print_draw(made, args)
    return 0


def _print_draw(made: DrawMade, args) -> None:
    print("\n".join(draw_lines(made, args.apart_by, args.balance_by)))
    print(f"next: seat the teams, `tabletimer seat {args.dir} --round {args.round or 'ROUND'} --by random`")


def cmd_seat(args) -> int:
    from ..web import public_url as hub_url

    try:
        if getattr(args, "public_url", None):      # checked before anything is written
            hub_url.normalize(args.public_url)
    except ValueError as e:
        print(f"error: --public-url: {e}; nothing seated", file=sys.stderr)
        return 2
    try:
        by, rank_of = seat_order(args.by)
        made = seat_round(args.dir, args.round, by, rank_of, args.seed, args.who, args.why,
                          warn=lambda w: print(f"warning: {w}", file=sys.stderr))
    except Refused as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"seated {made.seated} by {by}" + (f" {' '.join(rank_of)}" if rank_of else "")
          + (f", seed {made.seed}" if made.seed is not None else "")
          + f" at {len({s.table for s in made.seats})} tables of "
          f"{made.source}; recorded in the log (row #{made.row}) and written to {made.folder / 'stations.csv'}")
    return _seat_outputs(args, made.round, made.folder, made.format, made.entrants, made.stations)


def _seat_outputs(args, name: str, p: Path, fmt: Format, entrants: list[Entrant], stations: list[Station]) -> int:
    """The table cards and the "find your table" list (files), the list printed."""
    from ..outputs.find_table import find_table_html, find_table_text, lines
    from ..outputs.table_cards import cards_html
    from ..web import public_url as hub_url

    from .outputs import sheet_language

    title = event_folder.event_title(args.dir)
    lang = sheet_language(args.dir)
    found = lines(entrants, stations)
    cards = Path(args.cards) if args.cards else p / "table-cards.html"
    listed = Path(args.list) if args.list else p / "find-your-table.html"
    try:
        url, saved = hub_url.resolve(args.dir, getattr(args, "public_url", None))
        if saved:
            print(f"saved the public URL {url} in {hub_url.path(args.dir)}", file=sys.stderr)
        cards.write_text(cards_html(Path(args.dir).resolve().name, fmt, entrants, stations, title=title,
                                    public_url=url, lang=lang), encoding="utf-8")
        listed.write_text(find_table_html(title, name, found, public_url=url, lang=lang), encoding="utf-8")
    except (OSError, ValueError) as e:
        print(f"error: writing the cards and the list: {e}", file=sys.stderr)
        return 2
    print(f"table cards: {cards}; find your table: {listed}"
          + (f" (a check-in code per name, opening {url}/checkin?entrant=...)" if url else ""))
    print("find your table:")
    sys.stdout.write(find_table_text(found))
    return 0


def add_subcommands(sub) -> None:
    d = sub.add_parser("draw", help="draw a team round's teams from its individually registered competitors "
                                    "(registrations.csv), repeatably by a seed; recorded in the log",
                       description="The team draw: the round's registrations.csv (id,name, and any column to "
                                   "keep apart by) drawn into teams, written to its entrants.csv and recorded in "
                                   "its log with the seed. Refused once the round's start is recorded.")
    d.add_argument("dir", help="the event folder")
    d.add_argument("--round", help=ROUND_HELP)
    d.add_argument("--teams-of", type=int, required=True, help="members a team (the last teams one fewer, or "
                                                               "one more, when the count does not divide)")
    d.add_argument("--seed", type=int, help="the draw's number (default: a new one, printed): the same number "
                                            "gives the same teams")
    d.add_argument("--apart-by", metavar="COLUMN", help="a column of registrations.csv (club, family): no two "
                                                        "with the same value in one team")
    d.add_argument("--balance-by", metavar="ROUND", help="balance the teams by the places of an earlier round "
                                                         "(snake order)")
    d.add_argument("--who", default="organizer", help="who draws (recorded)")
    d.add_argument("--why", default="", help="recorded with it (e.g. why drawn again)")
    d.set_defaults(func=cmd_draw)

    s = sub.add_parser("seat", help="seat a round's entrants at the hall's tables (stations.csv), with table "
                                    "cards and a \"find your table\" list; recorded in the log",
                       description="Seating: the round's entrants at the tables of the hall (DIR/hall.csv: "
                                   "table,board,buttons; else the round's stations.csv as it is), written to "
                                   "its stations.csv, with table cards and a find-your-table list. Refused once "
                                   "the round's start is recorded.")
    s.add_argument("dir", help="the event folder")
    s.add_argument("--round", help=ROUND_HELP)
    s.add_argument("--by", nargs="+", required=True, metavar="ORDER",
                   help="random | rank-of ROUND [ROUND ...] (several: taken together, by place then "
                        "result) | name | registration")
    s.add_argument("--seed", type=int, help="--by random: its number (default: a new one, printed)")
    s.add_argument("--cards", metavar="FILE", help="the table cards (default: the round's table-cards.html)")
    s.add_argument("--list", metavar="FILE", help="find your table (default: the round's find-your-table.html)")
    s.add_argument("--public-url", metavar="URL", help="the hub's address as phones reach it (saved; default: "
                                                        "the saved one): the cards' and the list's QR codes")
    s.add_argument("--who", default="organizer", help="who seats (recorded)")
    s.add_argument("--why", default="", help="recorded with it")
    s.set_defaults(func=cmd_seat)
