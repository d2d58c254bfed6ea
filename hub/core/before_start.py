"""The team draw and the seating of a round before its start, for every desk
that makes them (`tabletimer draw`/`seat`, the organizer console): the
round's files read (registrations.csv, hall.csv, entrants.csv: event/folder/
seat_files.py), the teams or the seat plan made (rules/team_draw.py,
rules/seating.py), recorded in the round's log as an operator row (`draw`,
`seat`: who, the seed, what was made) through a HubService on that log, and
only then the round's entrants.csv or stations.csv written.

Refused (`Refused`, its text an operator's: what is wrong and what to do)
with nothing written: bad input, a round whose start is recorded (the
fold's check, the same words from every desk), a round a hub runs on (it
read the round's entrants and stations when it started).  What is printed
of it (the CLI's lines, the console's dialog) is the caller's."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from ..event.fold.competition import Competition
from ..event.folder import event_folder, rounds
from ..event.folder.event_folder import EventFolder, EventFolderError, Station
from ..event.folder.seat_files import (REGISTRATIONS, entrants_text, load_hall, load_registrations,
                                       stations_text, write_whole)
from ..event.log.store import EventStore
from ..protocol.keys import BoardKeys
from ..rules.advancement import Candidate, ranks_across, result_key
from ..rules.formats import Format, FormatError, load_format
from ..rules.seating import ORDERS, Seat, SeatingError, name_key, seat_plan, seating_order
from ..rules.standings import Entrant, Member
from ..rules.team_draw import Draw, DrawError, draw_teams
from .service import HubService

LOG = "events.sqlite"


class Refused(ValueError):
    """A draw or a seating refused; the text says why and what to do."""


@dataclass(frozen=True)
class DrawMade:
    round: str
    folder: Path               # the round's folder (its entrants.csv written)
    draw: Draw
    registered: int
    row: int                   # the log row that records it


@dataclass(frozen=True)
class SeatMade:
    round: str
    folder: Path
    format: Format
    by: str
    rank_of: tuple[str, ...]   # the earlier rounds of rank-of (none: ())
    seed: int | None
    seats: list[Seat]
    entrants: list[Entrant]
    seated: int
    source: str                # the hall the tables came from (hall.csv, or the round's stations.csv)
    row: int

    @property
    def stations(self) -> list[Station]:
        return [Station(s.board, s.button, s.table, s.entrant, s.puzzle) for s in self.seats]


def new_seed() -> int:
    """A draw's number when none is given: six digits, easy to read out and type again."""
    return secrets.SystemRandom().randrange(100_000, 1_000_000)


def round_of(hall: str | Path, name: str | None) -> tuple[str, Path, Format]:
    try:
        got, p = rounds.resolve(hall, name)
    except rounds.RoundError as e:
        raise EventFolderError(str(e)) from None
    return got, p, load_format(p / "format.toml")


def folder_of_log(log: Path) -> tuple[Path, str] | None:
    """(the event folder, the round's name) whose log `log` is, or None:
    not a round's log in an event folder (a remote console's mirror)."""
    d = Path(log).resolve().parent
    if not (d / "format.toml").exists() or Path(log).name != LOG:
        return None
    if d.parent.name == rounds.ROUNDS and rounds.round_dir(d.parent.parent, d.name) == d \
            and d.name in rounds.names(d.parent.parent):
        return d.parent.parent, d.name
    return d, rounds.MAIN


def hub_on(folder: Path) -> bool:
    """Does a hub run on the round (its log's lock held by a live process here)?"""
    from ..event.folder.folder_lock import hub_running

    db = folder / LOG
    return bool(db.exists() and hub_running(db))


def service_on(ev: EventFolder, store: EventStore) -> HubService:
    from ..protocol.hub_secret import SecretError, read_secret

    try:
        secret = read_secret(ev.path)
    except SecretError:
        secret = None
    return HubService(store, BoardKeys(ev.keys_file), Competition(ev.format, ev.entrants, ev.stations),
                      secret=secret)


def earlier_ranks(hall: str | Path, earlier: str | Sequence[str], entrants: list[tuple[str, str]],
                  across: str = "place") -> dict[str, int]:
    """The places (id -> place) in one or more earlier rounds of the ones
    of `entrants` ((id, name)) who have one there: by the same id and name,
    else by the same name.  Several rounds (groups into a final) are taken
    together as an advancement rule compares them (rules/advancement.py
    ranks_across: by place, then result; or by result): every group's
    winner first, then the seconds, each by their result."""
    names = [earlier] if isinstance(earlier, str) else list(earlier)
    return ranks_across([_candidates(hall, r, entrants) for r in names], across)


def _candidates(hall: str | Path, round: str, entrants: list[tuple[str, str]]) -> list[Candidate]:
    """An earlier round's ranked rows as advancement candidates, under the
    ids of `entrants` they match (by id and name, else by name)."""
    ev = event_folder.load(str(hall), round)
    if not ev.db.exists():
        raise EventFolderError(f"round {round!r} has no event log ({ev.db}): it has not run, so it ranks nobody")
    store = EventStore(ev.db)
    try:
        ranked = [r for r in service_on(ev, store).standings(final=True) if r.place is not None]
    finally:
        store.close()
    by_id = {r.entrant: r for r in ranked}
    by_name = {name_key(r.name): r for r in ranked}
    out = []
    for eid, name in entrants:
        same = by_id.get(eid)
        r = same if same is not None and name_key(same.name) == name_key(name) else by_name.get(name_key(name))
        if r is not None:
            out.append(Candidate(eid, name, round, r.place, r.status, r.net_time_ms, r.pieces,
                                 result=result_key(r.status, r.net_time_ms, r.pieces, ev.format.order)))
    return out


def record(hall: Path, name: str, p: Path, fmt: Format, entrants: list[Entrant], action: str, payload: dict,
           who: str, why: str) -> int:
    """The draw or seating recorded in the round's log (its row id);
    Refused (nothing written) when it may not be."""
    from ..event.log.log_health import DamagedLog, LogWriteFailed, STORE_ERRORS

    db = p / LOG
    if hub_on(p):
        raise Refused(f"a hub runs on round {name!r}: it read the round's entrants and stations when it "
                      f"started; stop it (Ctrl-C), {action} again, then start it: nothing was written")
    ev = EventFolder(hall, fmt, entrants, [], [], name, None if p == hall else p)
    try:
        store = EventStore(db)
        try:
            svc = service_on(ev, store)
            svc.check_action(action, payload, who=who, why=why)
            return int(svc.act(action, payload, who=who, why=why)["id"])
        finally:
            store.close()
    except (LogWriteFailed, DamagedLog, *STORE_ERRORS) as e:
        raise Refused(f"the round's log {db}: {e}. Nothing was written.") from None
    except ValueError as e:
        raise Refused(str(e)) from None


def _teams_as_entrants(draw: Draw) -> list[Entrant]:
    return [Entrant(t.id, t.name, tuple(Member(m.name, m.eligible) for m in t.members)) for t in draw.teams]


def draw_round(hall: str | Path, name: str | None, teams_of: int, seed: int | None = None,
               apart_by: str | None = None, balance_by: str | None = None, who: str = "organizer",
               why: str = "") -> DrawMade:
    """The team draw of a round (a new seed when none is given), recorded,
    then its entrants.csv written; Refused with nothing written."""
    try:
        got, p, fmt = round_of(hall, name)
        if fmt.kind == "individual":
            raise EventFolderError(f"round {got!r} is for individuals ({fmt.name}): a draw makes teams; "
                                   f"name a team or pair round with --round")
        if not (p / REGISTRATIONS).exists():
            raise EventFolderError(f"{p / REGISTRATIONS} does not exist: export the individually registered "
                                   f"competitors there (id,name and any column to keep apart by, e.g. club; "
                                   f"eligible yes/no when the format needs it)")
        people, with_eligible = load_registrations(p / REGISTRATIONS, apart_by, fmt.eligible_members_min > 0)
        ranks = earlier_ranks(hall, balance_by, [(x.id, x.name) for x in people]) if balance_by else None
        seed = new_seed() if seed is None else seed
        if not 0 <= seed < 2 ** 53:
            raise DrawError(f"--seed {seed}: a whole number from 0 to {2 ** 53 - 1}")
        draw = draw_teams(people, teams_of, seed, fmt.min_members, fmt.max_members, ranks)
        text = entrants_text(fmt, draw, with_eligible)
    except (EventFolderError, FormatError, DrawError) as e:
        raise Refused(str(e)) from None
    payload = {"seed": seed, "size": teams_of, "registered": len(people),
               "teams": [{"id": t.id, "name": t.name, "members": [m.name for m in t.members]} for t in draw.teams],
               "apart_by": apart_by or "", "balance_by": balance_by or ""}
    row = record(Path(hall), got, p, fmt, _teams_as_entrants(draw), "draw", payload, who, why)
    try:
        write_whole(p / "entrants.csv", text)
    except OSError as e:
        raise Refused(f"{p / 'entrants.csv'}: {e.strerror or e}: the draw is recorded (log row #{row}) but its "
                      f"teams are not written; draw again with --seed {seed} for the same teams") from None
    return DrawMade(got, p, draw, len(people), row)


def draw_lines(made: DrawMade, apart_by: str | None, balance_by: str | None) -> list[str]:
    """What a desk shows of a draw made: its number, how, each team, where it went."""
    how = []
    if apart_by:
        how.append(f"{apart_by} kept apart")
    if balance_by:
        how.append(f"balanced by the places of round {balance_by}")
    draw = made.draw
    return ([f"draw number (seed): {draw.seed}",
             f"{made.registered} registered: {draw.how}" + (f"; {', '.join(how)}" if how else "")]
            + [f"  {t.id} {t.name}: " + ", ".join(m.name + (f" ({m.group})" if apart_by and m.group else "")
                                                   for m in t.members) for t in draw.teams]
            + [f"recorded in the log (row #{made.row}) and written to {made.folder / 'entrants.csv'}; the same "
               f"seed with the same registrations gives the same teams (--seed {draw.seed}); draw again: a new "
               f"seed, recorded too"])


def default_round(hall: Path, own: str) -> str:
    """The round a console's draw or seating is for unless it names one:
    its own, unless a hub runs on it (then the next round of the event)."""
    if not hub_on(rounds.round_dir(hall, own)):
        return own
    names = rounds.names(hall)
    later = names[names.index(own) + 1:] if own in names else []
    return later[0] if later else own


def seat_order(words: list[str], what: str = "--by") -> tuple[str, tuple[str, ...]]:
    """(order, the earlier rounds of rank-of) from `random`, `rank-of ROUND
    [ROUND ...]` (several: groups into a final; commas work too), `name`,
    `registration`."""
    if not words:
        raise Refused(f"{what}: one of {', '.join(ORDERS)} (rank-of ROUND [ROUND ...])")
    by = words[0]
    if by not in ORDERS:
        raise Refused(f"{what} {by}: one of {', '.join(ORDERS)} (rank-of ROUND [ROUND ...])")
    if by == "rank-of":
        earlier = tuple(dict.fromkeys(n for w in words[1:] for n in w.split(",") if n))
        if not earlier:
            raise Refused(f"{what} rank-of ROUND: name the earlier round")
        return by, earlier
    if len(words) != 1:
        raise Refused(f"{what} {by} takes nothing after it")
    return by, ()


def seats_in_hall(hall: str | Path, p: Path, fmt: Format, order: Sequence[str]) -> tuple[list[Seat], str]:
    """The seats of the entrants (ids, in seating order) at the hall's
    tables (hall.csv, else the round's stations.csv as it is: load_hall),
    and where the tables came from: the one way a round is seated (`seat`,
    `advance --apply`).  EventFolderError or SeatingError saying what to do."""
    tables, source = load_hall(Path(hall), p / "stations.csv")
    puzzles = list(range(1, len(fmt.puzzles) + 1)) if fmt.relay is not None else [None]
    return seat_plan(tables, order, puzzles, fmt.table_share_above), source


def seat_round(hall: str | Path, name: str | None, by: str, rank_of: Sequence[str] | None = None,
               seed: int | None = None, who: str = "organizer", why: str = "", warn=lambda text: None) -> SeatMade:
    """A round's entrants seated at the hall's tables (a new seed for `random`
    when none is given), recorded, then its stations.csv written; Refused
    with nothing written.  rank_of: the earlier rounds of `rank-of`, taken
    together as the round's [advancement] compares them (its `across`;
    by place then result without one).  warn(text): what entrants.csv warns of."""
    earlier = tuple(rank_of or ())
    try:
        got, p, fmt = round_of(hall, name)
        entrants, warnings = event_folder.load_entrants(p / "entrants.csv", fmt)
        for w in warnings:
            warn(w)
        pairs = [(e.id, e.name) for e in entrants]
        across = fmt.advancement.across if fmt.advancement is not None else "place"
        ranks = earlier_ranks(hall, earlier, pairs, across) if earlier else None
        seed = (new_seed() if seed is None else seed) if by == "random" else None
        order = seating_order(pairs, by, seed, ranks)
        seats, source = seats_in_hall(hall, p, fmt, order)
    except (EventFolderError, FormatError, SeatingError) as e:
        raise Refused(str(e)) from None
    payload: dict = {"by": by, "seated": len(order)}
    if seed is not None:
        payload["seed"] = seed
    if earlier:
        payload["rank_of"] = ", ".join(earlier)
    row = record(Path(hall), got, p, fmt, entrants, "seat", payload, who, why)
    try:
        write_whole(p / "stations.csv", stations_text(seats))
    except OSError as e:
        raise Refused(f"{p / 'stations.csv'}: {e.strerror or e}: the seating is recorded (log row #{row}) but "
                      f"not written; seat again") from None
    return SeatMade(got, p, fmt, by, earlier, seed, seats, entrants, len(order), source, row)
