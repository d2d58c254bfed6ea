"""What the referees' pages show, as plain data (JSON for the page): one
table's stations, every call waiting in the hall, and what the event's
format asks a referee for (its missing-piece categories, its count form).
Pure: the competition as it is at hub time now, no I/O (the caller holds the
service's state still: HubService.read).

The page draws these and computes nothing the hub decides: the penalty it
shows before a confirmation is `preview`'s arithmetic, the same as
scoring.credit's, passed down as numbers (penalty per piece, which
categories are penalised).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..event.fold.station_state import station_states
from ..rules.format_model import Format

from ..i18n.catalogue import N_

if TYPE_CHECKING:
    from ..event.fold.competition import Competition

# the missing-piece categories a referee is asked for, by what the format exempts
# (the labels in English, marked for the catalogue: the page shows them in its language)
_ORDINARY = ("missing_found", N_("missing pieces"))
_FOUND = ("missing_found", N_("missing, found beside the table"))
_LOST = ("missing_lost", N_("missing, lost (not found)"))
_ADJACENT = ("missing_adjacent", N_("missing side by side (2+ adjacent: production fault)"))


def missing_categories(fmt: Format) -> list[dict]:
    """The fields a referee fills in at a finish, in the format's words:
    one "missing pieces" unless the format tells found from lost pieces
    (a lost one is exempt, Norwegian rules) or ordinary from adjacent ones
    (a production fault, Danish rules)."""
    cats = [_FOUND, _LOST] if "lost" in fmt.exempt else [_ORDINARY]
    if "adjacent" in fmt.exempt:
        cats.append(_ADJACENT)
    return [{"field": f, "label": label, "penalised": not _exempt(fmt, f)} for f, label in cats]


def _exempt(fmt: Format, field: str) -> bool:
    return (field == "missing_lost" and "lost" in fmt.exempt) or \
        (field == "missing_adjacent" and "adjacent" in fmt.exempt)


def count_words(fmt: Format) -> dict:
    """The count form's words at time-up, matching what is counted (the
    format's count_entry): the pieces joined in groups of min_group or more
    (placed), or those not in such a group, loose pieces and pairs, in piles
    of 10 (remaining, Norwegian rules).  {"hint", "label", "g"}: the texts
    in English with {g} for the group's size, which the page puts through its
    language's catalogue; the puzzle and its pieces are the page's to add."""
    g = fmt.min_group
    if fmt.count_entry == "remaining":
        return {"hint": N_("Time up: count the pieces remaining, those not joined in a group of {g} or more "
                           "(loose pieces and pairs), in piles of 10") if g == 3 else
                N_("Time up: count the pieces remaining, those not joined in a group of {g} or more, in piles of 10"),
                "label": N_("pieces remaining (not in groups of {g}+)"), "g": g}
    return {"hint": N_("Time up: count the pieces placed, joined correctly in groups of {g} or more"),
            "label": N_("pieces placed (in groups of {g}+)"), "g": g}


def format_spec(fmt: Format) -> dict:
    """What the table page's forms need of the format."""
    return {"title": fmt.title, "kind": fmt.kind, "puzzles": list(fmt.puzzles),
            "missing": missing_categories(fmt), "missing_action": fmt.missing_action,
            "penalty_ms": fmt.penalty_per_piece_ms, "count_entry": fmt.count_entry,
            "count_words": count_words(fmt),
            "min_group": fmt.min_group, "start_offsets": fmt.start_offsets,
            "chosen": any(p.work == "chosen" for p in fmt.parts), "resolution_ms": fmt.resolution_ms}


def preview(fmt: Format, time_ms: int, missing: dict[str, int]) -> dict:
    """A confirmation's result before it is recorded: the penalty and net
    time (formats that add time) or the pieces deducted (formats that
    subtract them), as scoring.credit reckons them."""
    counted = sum(n for f, n in missing.items() if not _exempt(fmt, f))
    if fmt.missing_action == "subtract":
        return {"penalty_ms": 0, "net_ms": time_ms, "deducted": counted}
    penalty = counted * fmt.penalty_per_piece_ms
    return {"penalty_ms": penalty, "net_ms": time_ms + penalty, "deducted": 0}


def tables(comp: Competition) -> list[str]:
    """The event's tables, in stations.csv order."""
    return list(dict.fromkeys(s.table for s in comp.stations))


def _names(comp: Competition, ids: set[str] | None = None) -> dict[str, tuple[str, list[str]]]:
    return {e.id: (e.name or e.id, [m.name for m in e.members]) for e in comp.entrants
            if ids is None or e.id in ids}


def recorded_counts(comp: Competition, ids: set[str]) -> dict[tuple[str, int], dict]:
    """(entrant, puzzle) -> the piece count recorded last, for these entrants."""
    book = comp.call_book()
    out: dict[tuple[str, int], dict] = {}
    for e in ids:
        for pz, c in book.recorded_counts(e).items():
            out[(e, pz)] = {"placed": c.placed, "remaining": c.remaining}
    return out


def table_view(comp: Competition, table: str, now: int) -> dict | None:
    """One table as its referee sees it (None: no such table)."""
    mine = [s for s in comp.stations if s.table == table]
    if not mine:
        return None
    where = {(s.board, s.button) for s in mine}
    ids = {s.entrant for s in mine}
    names = _names(comp, ids)
    counts = recorded_counts(comp, ids)
    fmt = comp.format
    confirmed = _confirmed_splits(comp, ids, now)
    book = comp.official_book()
    stations = []
    for st in station_states(comp, now, {s.board for s in mine}):
        if (st.board, st.button) not in where:
            continue
        name, members = names.get(st.entrant, (st.entrant, []))
        call_at = comp.press_at(st.call) if st.call else None
        pz = st.puzzle
        # the confirmed call a done station shows: what the competitor agrees to
        shown = None
        if st.state == "done":
            shown = (comp.call_book().current_call(st.entrant, pz) if pz is not None
                     else comp.last_call_at(st.board, st.button))
            shown = shown if shown is not None and comp.call_book().confirmed_missing(shown) is not None else None
        stations.append({
            "board": st.board, "button": st.button, "entrant": st.entrant, "name": name,
            "members": members, "puzzle": pz,
            "pieces": fmt.puzzles[pz - 1] if pz is not None and 1 <= pz <= len(fmt.puzzles) else None,
            "state": st.state, "reason": st.reason, "call": st.call, "call_at": call_at,
            "call_short": comp.short_press_id(st.call) if st.call else None,
            "waiting_ms": now - call_at if call_at is not None else None,
            "time_ms": st.time_ms, "start_ms": st.start_ms, "end_ms": st.end_ms,
            "confirmed": st.confirmed, "calls": st.calls, "missing": st.missing,
            "count": counts.get((st.entrant, pz)) if pz is not None else None,
            # the competitor saw the confirmed time (the count) and agreed to it (event/fold/official.py)
            "done_call": shown, "agreed": book.call_agreed(shown) if shown is not None else False,
            "count_agreed": book.count_agreed(st.entrant, pz) if pz is not None else False,
            "overridden": _overridden(comp, st.board, st.button),
            # a confirmed finish as the standings reckon it (shown after confirming): its
            # penalty and net time, or the pieces deducted
            "result": confirmed.get((st.entrant, pz)) if st.state == "done" else None,
            "at_board": at_the_board(comp, st.board, st.button, call_at) if call_at is not None else None,
        })
    return {"table": table, "now": now, "row": comp.last_row_id(), "start": comp.start_ms,
            "end": comp.round_end_ms(), "stations": stations, "format": format_spec(fmt),
            "official": book.official() is not None}


def _confirmed_splits(comp: Competition, ids: set[str], now: int) -> dict[tuple[str, int | None], dict]:
    """(entrant, puzzle) -> {"penalty_ms", "net_ms", "deducted"} of each
    confirmed finish of these entrants, from the standings (scoring.credit's
    arithmetic: what the confirmation recorded); (entrant, None): its last
    confirmed finish (a station that times every puzzle of its entrant)."""
    out: dict[tuple[str, int | None], dict] = {}
    latest: dict[str, int] = {}             # entrant -> its latest confirmed finish's time
    for row in comp.standings(now):
        if row.entrant not in ids:
            continue
        for sp in row.splits:
            if sp.status == "finished" and sp.confirmed and sp.time_ms is not None:
                # the entrant's last finish: its net time in the standings (every puzzle's penalty)
                last = row.status == "finished" and row.net_time_ms is not None and sp.time_ms == row.time_ms
                out[(row.entrant, sp.puzzle)] = done = {
                    "penalty_ms": sp.penalty_ms, "deducted": sp.deducted,
                    "net_ms": row.net_time_ms if last else sp.time_ms + sp.penalty_ms}
                if sp.time_ms >= latest.get(row.entrant, -1):
                    latest[row.entrant] = sp.time_ms
                    out[(row.entrant, None)] = done
    return out
def at_the_board(comp: Competition, board: str, button: int, call_at: int) -> dict:
    """The short presses at a station since its open call (the board
    reports each, firmware/board.py): the competitor's repeat calls (a
    nervous second press: never a missing piece) and the referee's count
    so far, which a confirm at the board records (0: none counted)."""
    repeats = missing = 0
    for row in comp.strays:
        p = row["payload"]
        if row["board"] != board or p["station"] != button or p["state"] != "called" or \
                (p.get("at") is not None and p["at"] < call_at):
            continue
        if p.get("missing"):
            missing = max(missing, p["missing"])
        else:
            repeats += 1
    return {"repeats": repeats, "missing": missing}


def _overridden(comp: Competition, board: str, button: int) -> dict | None:
    """The station's latest call, when its decision replaced another
    person's ("voided by desk after Anna's confirmation"): the card says so,
    and the phone that stored the replaced one tells its referee."""
    pid = comp.last_call_at(board, button)
    return comp.overridden(pid) if pid is not None else None


def calls_view(comp: Competition, now: int) -> dict:
    """Every finish call waiting for a referee, oldest first, with its
    table (for the hall page: one tap opens the table)."""
    names = _names(comp)
    entrant_table: dict[str, str] = {}
    for s in comp.stations:
        entrant_table.setdefault(s.entrant, s.table)
    calls = []
    for at, pid, entrant, puzzle, _label in comp.open_calls():
        station = comp.station_of(pid)
        st = comp.station_at(*station) if station else None
        # a finish recorded by hand has no station: the entrant's table
        calls.append({"press_id": pid, "short": comp.short_press_id(pid), "at": at, "waiting_ms": now - at,
                      "entrant": entrant,
                      "name": names.get(entrant, (entrant, []))[0], "puzzle": puzzle,
                      "table": st.table if st else entrant_table.get(entrant),
                      "button": station[1] if station else None})
    conflicts = [{"row": c.row, "text": c.text} for c in comp.open_conflicts()]
    return {"now": now, "row": comp.last_row_id(), "calls": calls, "tables": tables(comp), "conflicts": conflicts}
