"""What the hall sees (the projector, spectators' phones): the standings as
public data.  Pure: a Snapshot (HubService.snapshot: read under the
service's lock, ranked after) and the format in, JSON-ready data out.

Public means: names, places, times, penalties, pieces, the round clock and
the next signal, the tables' names; never a board id, a token, an alert or
the operators' event log."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..outputs.sheet_legend import unofficial_parts
from ..rules.format_model import Format
from ..rules.standings import StandingRow

if TYPE_CHECKING:
    from ..core.snapshot import Snapshot
    from ..outputs.advancement_outlook import Outlook

# what the hall is told of an entrant's state
SHOWN_STATUS = {"finished": "finished", "running": "solving", "unfinished": "unfinished",
                "waiting": "waiting", "dns": "DNS", "dq": "DQ"}


def current_part(fmt: Format, row: StandingRow) -> str | None:
    """The part of the round an entrant works now (team rounds of several
    parts: the first part with a puzzle not finished); None for one-part
    rounds and for entrants without splits."""
    if len(fmt.parts) < 2 or row.detail is None:
        return None
    done = {sp.puzzle for sp in row.splits if sp.status == "finished"}
    for part in fmt.parts:
        if any(n not in done for n in part.numbers):
            return part.name
    return None


def round_state(snap: Snapshot) -> str:
    """before (no start, or armed) | running | over (the last entrant's time is up)."""
    if snap.start is None or snap.now < snap.start:
        return "before"
    if snap.end is not None and snap.now >= snap.end:
        return "over"
    return "running"


def standing(fmt: Format, row: StandingRow, tables: dict[str, str], members: dict[str, list[str]],
             advance: str | None = None) -> dict:
    """One entrant's line.  Entrants still solving have no place and no
    award colour until they have a result (the engine gives them none).
    advance: its mark for the round this one feeds (certain, in, out)."""
    line = {"place": row.place, "award": row.award_place,
            "entrant": row.entrant,
            "name": row.name or row.entrant, "members": members.get(row.entrant, []),
            "official": row.official, "status": SHOWN_STATUS.get(row.status, row.status),
            "time_ms": row.time_ms, "penalty_ms": row.penalty_ms, "net_ms": row.net_time_ms,
            "pieces": row.pieces, "deducted": row.deducted_pieces, "provisional": row.provisional,
            "table": tables.get(row.entrant), "part": current_part(fmt, row), "advance": advance}
    # every page is sent every line at every change (300 pages of 300 lines): what is
    # empty, none or zero is left out (the pages read a missing key so)
    return {k: v for k, v in line.items() if k in _ALWAYS or v not in (None, [], False, 0)}


_ALWAYS = ("entrant", "name", "status", "pieces")


def hall_view(snap: Snapshot, fmt: Format, title: str, tables: dict[str, str],
              members: dict[str, list[str]], last_row: int, changed_ms: int | None,
              outlook: Outlook | None = None) -> dict:
    """The standings and the round's clock for the hall.  tables: entrant
    id -> its table's name; changed_ms: when the last stored row was
    received (the results' "last change"); outlook: the marks for the round
    this one feeds (advancement_outlook.py): each row's `advance`, and the
    round's name in `advance_to` (None: it feeds none)."""
    nxt = snap.next_signal
    marks = outlook.marks if outlook is not None else {}
    rows = [standing(fmt, r, tables, members, marks.get(r.entrant)) for r in snap.standings]
    # an entrant who may not take an award place, marked and explained as the results sheet does
    unofficial = unofficial_parts(fmt) if any(not r.official for r in snap.standings) else None
    return {"title": title, "category": fmt.title, "kind": fmt.kind, "order": fmt.order,
            "tie_break": fmt.tie_break, "unofficial": unofficial,
            "resolution_ms": fmt.resolution_ms, "awards": fmt.awards,
            "now": snap.now, "start": snap.start, "end": snap.end, "state": round_state(snap),
            "next_signal": {"at": nxt[0], "kind": nxt[1]} if nxt else None,
            "row": last_row, "changed_ms": changed_ms,
            "provisional": any(r.provisional for r in snap.standings),
            "official": snap.official,          # the results are official (who, when), else None
            "finished": sum(1 for r in rows if r["status"] == "finished"),
            "ranked": sum(1 for r in snap.standings if r.place is not None),
            "solving": sum(1 for r in rows if r["status"] == "solving"),
            "advance_to": outlook.to if outlook is not None else None,
            "rows": rows}
