"""`tabletimer draw` and `seat`: before the start, the team draw (the round's
entrants.csv from its registrations.csv: rules/team_draw.py) and the seating
(its stations.csv from the hall: rules/seating.py), each recorded in the
round's log as an operator row (`draw`, `seat`: who, the seed, what was made),
and each refused once a round start is recorded, or while a hub runs on the
round (it read the files when it started), with nothing written."""

from __future__ import annotations

import secrets
import sys
from pathlib import Path

from ..event.folder import event_folder, rounds
from ..event.folder.event_folder import EventFolder, EventFolderError, Station
from ..event.folder.seat_files import (REGISTRATIONS, entrants_text, load_hall, load_registrations,
                                       stations_text, write_whole)
from ..rules.formats import Format, FormatError, load_format
from ..rules.seating import ORDERS, SeatingError, name_key, seat_plan, seating_order
from ..rules.standings import Entrant, Member
from ..rules.team_draw import Draw, DrawError, draw_teams
from .options import ROUND_HELP


def _round(args) -> tuple[str, Path, Format]:
    try:
        name, p = rounds.resolve(args.dir, args.round)
    except rounds.RoundError as e:
        raise EventFolderError(str(e)) from None
    return name, p, load_format(p / "format.toml")


def new_seed() -> int:
    """A draw's number when none is given: six digits, easy to read out and type again."""
    return secrets.SystemRandom().randrange(100_000, 1_000_000)


def earlier_ranks(hall: str, round: str, entrants: list[tuple[str, str]]) -> dict[str, int]:
    """The places (id -> place) in an earlier round of the ones of
    `entrants` ((id, name)) who have one there: by the same id and name,
    else by the same name."""
    from ..event.log.store import EventStore
    from ..protocol.keys import BoardKeys
    from .common import service_for

    ev = event_folder.load(hall, round)
    if not ev.db.exists():
        raise EventFolderError(f"round {round!r} has no event log ({ev.db}): it has not run, so it ranks nobody")
    store = EventStore(ev.db)
    try:
        rows = service_for(ev, BoardKeys(ev.keys_file), store).standings(final=True)
    finally:
        store.close()
    by_id = {r.entrant: (name_key(r.name), r.place) for r in rows if r.place is not None}
    by_name = {name_key(r.name): r.place for r in rows if r.place is not None}
    out = {}
    for eid, name in entrants:
        same = by_id.get(eid)
        place = same[1] if same is not None and same[0] == name_key(name) else by_name.get(name_key(name))
        if place is not None:
            out[eid] = place
    return out


def _record(hall: Path, name: str, p: Path, fmt: Format, entrants: list[Entrant], action: str, payload: dict,
            who: str, why: str) -> int | None:
    """The draw or seating recorded in the round's log (its row id); None
    after saying why it is refused (nothing written)."""
    from ..event.folder.folder_lock import hub_running
    from ..event.log.log_health import DamagedLog, LogWriteFailed, STORE_ERRORS
    from ..event.log.store import EventStore
    from ..protocol.keys import BoardKeys
    from .common import service_for

    db = p / "events.sqlite"
    if db.exists() and hub_running(db):
        print(f"error: a hub runs on round {name!r}: it read the round's entrants and stations when it "
              f"started; stop it (Ctrl-C), {action} again, then start it: nothing was written", file=sys.stderr)
        return None
    ev = EventFolder(hall, fmt, entrants, [], [], name, None if p == hall else p)
    try:
        store = EventStore(db)
        try:
            svc = service_for(ev, BoardKeys(ev.keys_file), store)
            svc.check_action(action, payload, who=who, why=why)
            return int(svc.act(action, payload, who=who, why=why)["id"])
        finally:
            store.close()
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
    except (LogWriteFailed, DamagedLog, *STORE_ERRORS) as e:
        print(f"error: the round's log {db}: {e}. Nothing was written.", file=sys.stderr)
    return None


def _teams_as_entrants(draw: Draw) -> list[Entrant]:
    return [Entrant(t.id, t.name, tuple(Member(m.name, m.eligible) for m in t.members)) for t in draw.teams]


def cmd_draw(args) -> int:
    try:
        name, p, fmt = _round(args)
        if fmt.kind == "individual":
            raise EventFolderError(f"round {name!r} is for individuals ({fmt.name}): a draw makes teams; "
                                   f"name a team or pair round with --round")
        if not (p / REGISTRATIONS).exists():
            raise EventFolderError(f"{p / REGISTRATIONS} does not exist: export the individually registered "
                                   f"competitors there (id,name and any column to keep apart by, e.g. club; "
                                   f"eligible yes/no when the format needs it)")
        people, with_eligible = load_registrations(p / REGISTRATIONS, args.apart_by, fmt.eligible_members_min > 0)
        ranks = (earlier_ranks(args.dir, args.balance_by, [(x.id, x.name) for x in people])
                 if args.balance_by else None)
        seed = new_seed() if args.seed is None else args.seed
        if not 0 <= seed < 2 ** 53:
            raise DrawError(f"--seed {seed}: a whole number from 0 to {2 ** 53 - 1}")
        draw = draw_teams(people, args.teams_of, seed, fmt.min_members, fmt.max_members, ranks)
        text = entrants_text(fmt, draw, with_eligible)
    except (EventFolderError, FormatError, DrawError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    payload = {"seed": seed, "size": args.teams_of, "registered": len(people),
               "teams": [{"id": t.id, "name": t.name, "members": [m.name for m in t.members]} for t in draw.teams],
               "apart_by": args.apart_by or "", "balance_by": args.balance_by or ""}
    row = _record(Path(args.dir), name, p, fmt, _teams_as_entrants(draw), "draw", payload, args.who, args.why)
    if row is None:
        return 2
    try:
        write_whole(p / "entrants.csv", text)
    except OSError as e:
        print(f"error: {p / 'entrants.csv'}: {e.strerror or e}: the draw is recorded (log row #{row}) but its "
              f"teams are not written; draw again with --seed {seed} for the same teams", file=sys.stderr)
        return 2
    _print_draw(draw, len(people), args, row, p)
    return 0


def _print_draw(draw: Draw, registered: int, args, row: int, p: Path) -> None:
    how = []
    if args.apart_by:
        how.append(f"{args.apart_by} kept apart")
    if args.balance_by:
        how.append(f"balanced by the places of round {args.balance_by}")
    print(f"draw number (seed): {draw.seed}")
    print(f"{registered} registered: {draw.how}" + (f"; {', '.join(how)}" if how else ""))
    for t in draw.teams:
        print(f"  {t.id} {t.name}: " + ", ".join(m.name + (f" ({m.group})" if args.apart_by and m.group else "")
                                                   for m in t.members))
    print(f"recorded in the log (row #{row}) and written to {p / 'entrants.csv'}; the same seed with the same "
          f"registrations gives the same teams (--seed {draw.seed}); draw again: a new seed, recorded too")
    print(f"next: seat the teams, `tabletimer seat {args.dir} --round {args.round or 'ROUND'} --by random`")


def _order(args) -> tuple[str, str | None]:
    by = args.by[0]
    if by not in ORDERS:
        raise SeatingError(f"--by {by}: one of {', '.join(ORDERS)} (rank-of ROUND)")
    if by == "rank-of":
        if len(args.by) != 2:
            raise SeatingError("--by rank-of ROUND: name the earlier round")
        return by, args.by[1]
    if len(args.by) != 1:
        raise SeatingError(f"--by {by} takes nothing after it")
    return by, None


def cmd_seat(args) -> int:
    try:
        by, rank_of = _order(args)
        name, p, fmt = _round(args)
        entrants, warnings = event_folder.load_entrants(p / "entrants.csv", fmt)
        for w in warnings:
            print(f"warning: {w}", file=sys.stderr)
        tables, source = load_hall(Path(args.dir), p / "stations.csv")
        pairs = [(e.id, e.name) for e in entrants]
        ranks = earlier_ranks(args.dir, rank_of, pairs) if rank_of else None
        seed = (new_seed() if args.seed is None else args.seed) if by == "random" else None
        order = seating_order(pairs, by, seed, ranks)
        puzzles = list(range(1, len(fmt.puzzles) + 1)) if fmt.relay is not None else [None]
        seats = seat_plan(tables, order, puzzles, fmt.table_share_above)
    except (EventFolderError, FormatError, SeatingError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    stations = [Station(s.board, s.button, s.table, s.entrant, s.puzzle) for s in seats]
    payload = {"by": by, "seated": len(order)}
    if seed is not None:
        payload["seed"] = seed
    if rank_of:
        payload["rank_of"] = rank_of
    row = _record(Path(args.dir), name, p, fmt, entrants, "seat", payload, args.who, args.why)
    if row is None:
        return 2
    try:
        write_whole(p / "stations.csv", stations_text(seats))
    except OSError as e:
        print(f"error: {p / 'stations.csv'}: {e.strerror or e}: the seating is recorded (log row #{row}) but "
              f"not written; seat again", file=sys.stderr)
        return 2
    print(f"seated {len(order)} by {by}" + (f" {rank_of}" if rank_of else "")
          + (f", seed {seed}" if seed is not None else "") + f" at {len({s.table for s in seats})} tables of "
          f"{source}; recorded in the log (row #{row}) and written to {p / 'stations.csv'}")
    return _seat_outputs(args, name, p, fmt, entrants, stations)


def _seat_outputs(args, name: str, p: Path, fmt: Format, entrants: list[Entrant], stations: list[Station]) -> int:
    """The table cards and the "find your table" list (files), the list printed."""
    from ..outputs.find_table import find_table_html, find_table_text, lines
    from ..outputs.table_cards import cards_html
    from ..web import public_url as hub_url

    title = event_folder.event_title(args.dir)
    found = lines(entrants, stations)
    cards = Path(args.cards) if args.cards else p / "table-cards.html"
    listed = Path(args.list) if args.list else p / "find-your-table.html"
    try:
        url = hub_url.saved(args.dir)
        cards.write_text(cards_html(Path(args.dir).resolve().name, fmt, entrants, stations, title=title,
                                    public_url=url), encoding="utf-8")
        listed.write_text(find_table_html(title, name, found), encoding="utf-8")
    except (OSError, ValueError) as e:
        print(f"error: writing the cards and the list: {e}", file=sys.stderr)
        return 2
    print(f"table cards: {cards}; find your table: {listed}")
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
                   help="random | rank-of ROUND | name | registration")
    s.add_argument("--seed", type=int, help="--by random: its number (default: a new one, printed)")
    s.add_argument("--cards", metavar="FILE", help="the table cards (default: the round's table-cards.html)")
    s.add_argument("--list", metavar="FILE", help="find your table (default: the round's find-your-table.html)")
    s.add_argument("--who", default="organizer", help="who seats (recorded)")
    s.add_argument("--why", default="", help="recorded with it")
    s.set_defaults(func=cmd_seat)
