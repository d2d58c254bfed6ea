"""Replacing an absent entrant: the `replace` action gives every station of
an entrant who has not come to another participant, one of the entrants
list who holds no station or a new entry (its id, name, members and
eligibility given with the action).  Rule set 001 (the Czech association):
"The organizer may assign a spot to another participant if a competitor
doesn't arrive within 10 minutes after the round starts" -- the format's
`entrants.no_show_after`; a format without it lets no station go (000, 003
and 004 say nothing of it).  Pure.

What a replacement is in the fold of the log (competition.py):
- from its time on (`at`, else when it was recorded) a press on one of the
  stations is the new entrant's; one made before it stays the absent
  entrant's (the new one was not seated yet: a stray touch, or the entrant
  was there after all), who is DNS from the replacement on: never ranked
  for the new one;
- the new entrant's time runs from the round's start, as everyone's: the
  rule gives away the spot, not a new start;
- a stored replacement that cannot apply (the absent entrant holds no
  station, the new one holds one already, a new entry's fields wrong) is
  flagged, never raised (`ReplacementBook.scan`).

Before one is recorded: `check` (refused: the format has no window, the
round has not started or is over for the station, ...) and the
consequences the desk confirms (consequences.py: the entrant's time to
arrive is not up yet, calls on the station).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping, cast

from ..folder.event_folder import NO, YES, YES_NO_WORDS
from ..log.rows import RowKind, kind_of
from .station_index import StationIndex
from ...rules.facts import Entrant, Member
from ...rules.format_model import Format
from ...rules.timetext import fmt_clock

NEW_ENTRY = ("name", "members", "eligible")   # the fields of a new entrant (not in the entrants list)


@dataclass(frozen=True)
class Replacement:
    row: int                                  # its log row
    absent: str                               # the entrant who did not come (DNS from it on)
    entrant: str                              # who takes the station(s)
    at_ms: int                                # presses from this hub time on are the entrant's
    stations: tuple[tuple[str, int], ...]     # (board, button) given
    who: str
    why: str
    new_entry: bool                           # the entrant was not in the entrants list


def new_entrant(fmt: Format, p: dict) -> Entrant:
    """The entrant a replacement's new entry describes (ValueError, in an
    operator's words, as entrants.csv's checks say it)."""
    eid = p["entrant"]
    name = (p.get("name") or "").strip()
    if not name:
        raise ValueError(f"replace: {eid!r} is not in the entrants list: give the new entrant's name "
                         "(name=...), or the id of a listed entrant")
    names = [m.strip() for m in (p.get("members") or "").split("|") if m.strip()]
    if fmt.kind == "team" and names and not fmt.min_members <= len(names) <= fmt.max_members:
        raise ValueError(f"replace: {len(names)} members; a team has {fmt.min_members}-{fmt.max_members} "
                         "(members=A|B|...)")
    if fmt.kind == "pair" and names and len(names) != 2:
        raise ValueError(f"replace: a pair has 2 members (members=A|B), not {len(names)}")
    if fmt.kind == "individual" and names:
        raise ValueError("replace: an individual has no members (give name=... only)")
    text = p.get("eligible")
    if text is None:
        if fmt.eligible_members_min > 0:
            raise ValueError(f"replace: eligible=yes or no is needed: the format gives prizes only to "
                             f"eligible entrants{f' ({fmt.eligibility})' if fmt.eligibility else ''}"
                             + (" (one per member: eligible=yes|no|...)" if names else ""))
        return Entrant(eid, name, tuple(Member(m) for m in names), True)
    words = [w.strip().lower() for w in text.split("|")]
    if any(w not in YES and w not in NO for w in words) or any(not w for w in words):
        raise ValueError(f"replace: eligible must be {YES_NO_WORDS} (one per member: yes|no|...), not {text!r}")
    if len(words) > 1:
        if len(words) != len(names):
            raise ValueError(f"replace: eligible has {len(words)} values for {len(names)} members")
        return Entrant(eid, name, tuple(Member(m, w in YES) for m, w in zip(names, words)), True)
    eligible = words[0] in YES
    return Entrant(eid, name, tuple(Member(m, eligible) for m in names), eligible)


def problem(fmt: Format, index: StationIndex, book: "ReplacementBook", p: dict) -> str | None:
    """Why a replacement (its shape checked) cannot apply to the stations as
    they are (None: it can): what the fold of a stored one checks too."""
    absent, eid = p["absent"], p["entrant"]
    if absent not in index.entrant_ids:
        return f"replace: no entrant {absent!r} (absent: the entrant who did not come)"
    gone = book.of_absent(absent)
    if gone is not None:
        return f"replace: {absent}'s station went to {gone.entrant} already (log row #{gone.row})"
    if not any(s.entrant == absent for s in index.stations):
        return f"replace: {absent} holds no station (stations.csv): there is no station to give"
    if eid in index.entrant_ids:
        extra = [k for k in NEW_ENTRY if p.get(k) is not None]
        if extra:
            return (f"replace: {eid} is in the entrants list already: leave out {', '.join(extra)} "
                    "(they describe a new entrant)")
        st = next((s for s in index.stations if s.entrant == eid), None)
        if st is not None:
            return f"replace: {eid} is at a station already ({st.table}: {st.board} button {st.button})"
        return None
    try:
        new_entrant(fmt, p)
    except ValueError as e:
        return str(e)
    return None


def check(fmt: Format, index: StationIndex, book: "ReplacementBook", action: str, p: dict,
          start_ms: int | None, end_ms: int | None, out: Mapping[str, str], now_ms: int | None) -> None:
    """ValueError unless the replacement (its shape checked) may be
    recorded: the format allows it, the stations and entrants are as it
    says, and its time lies in the round (start_ms..end_ms: the absent
    entrant's time-up), not after the hub's time now.  That the absent
    entrant's time to arrive is not up yet is a consequence the desk
    confirms (consequences.py), not a refusal.  A reinstatement of an
    entrant whose station went to another is refused (no station)."""
    if action == "reinstate":
        r = book.of_absent(p["entrant"])
        if r is not None:
            raise ValueError(f"reinstate: {p['entrant']}'s station went to {r.entrant} (log row #{r.row}): "
                             f"to seat {p['entrant']} there again, `replace absent={r.entrant} "
                             f"entrant={p['entrant']}`")
        return
    if fmt.no_show_after_ms is None:
        raise ValueError(f"replace: the format {fmt.name} gives no absent entrant's station to another "
                         "(entrants.no_show_after is not set: how long after the start an absent entrant's "
                         'station may go; set it in the event\'s format.toml, e.g. no_show_after = "10:00", '
                         "to allow it)")
    why = problem(fmt, index, book, p)
    if why is not None:
        raise ValueError(why)
    for k in ("absent", "entrant"):
        if out.get(p[k]) == "dq":
            raise ValueError(f"replace: {p[k]} is disqualified" + (": the station is not an absent entrant's"
                                                                     if k == "absent" else ""))
    if start_ms is None:
        raise ValueError("replace: the round has not started: an entrant is absent only once it has "
                         "(before the start, give the station to another entrant in stations.csv)")
    at = p["at"] if p.get("at") is not None else now_ms
    if at is None:
        return
    if at < start_ms:
        raise ValueError(f"replace: at ({fmt_clock(at)}) is before the round's start ({fmt_clock(start_ms)})")
    if now_ms is not None and at > now_ms:
        raise ValueError(f"replace: at ({fmt_clock(at)}) is after the hub's time now ({fmt_clock(now_ms)}): "
                         "record it when the new participant takes the station, or after")
    if end_ms is not None and at >= end_ms:
        raise ValueError(f"replace: {p['absent']}'s time was up at {fmt_clock(end_ms)}: no station to give")
    last = book.last_on(s for s in index.stations if s.entrant == p["absent"])
    if last is not None and at < last.at_ms:
        raise ValueError(f"replace: at ({fmt_clock(at)}) is before the station's last replacement "
                         f"(log row #{last.row}, {fmt_clock(last.at_ms)})")


class ReplacementBook:
    """The log's replacements, in log order, as the fold applied them to the
    stations (StationIndex.give)."""

    def __init__(self) -> None:
        self._clear()

    def _clear(self) -> None:
        self.done: list[Replacement] = []
        self.rows: dict[int, Replacement] = {}
        self._absent: dict[str, Replacement] = {}
        self._on: dict[tuple[str, int], list[Replacement]] = {}

    def scan(self, fmt: Format, index: StationIndex, rows: Iterable[dict], skip: Mapping[int, str]) -> dict[int, str]:
        """Take every replacement back, then give the stations of each
        replacement row (log order, but those in skip) that can apply;
        the others' problems by row id (flagged)."""
        index.take_back()
        self._clear()
        flags: dict[int, str] = {}
        for row in rows:
            if kind_of(row) is not RowKind.OP_REPLACE or row["id"] in skip:
                continue
            p = row["payload"]
            at = p["at"] if p.get("at") is not None else row.get("received_ms")
            why = problem(fmt, index, self, p)
            if why is None and not (isinstance(at, int) and not isinstance(at, bool)):
                why = "replace: no time (neither at nor the time it was recorded)"
            if why is not None:
                flags[row["id"]] = why
                continue
            new = None if p["entrant"] in index.entrant_ids else new_entrant(fmt, p)
            moved = index.give(p["absent"], p["entrant"], new)
            r = Replacement(row["id"], p["absent"], p["entrant"], cast(int, at), moved,   # at: checked above
                            p.get("who") or "operator", p.get("why") or "", new is not None)
            self.done.append(r)
            self.rows[r.row] = r
            self._absent[r.absent] = r
            self._absent.pop(r.entrant, None)      # back at a station (a replacement undone)
            for bs in moved:
                self._on.setdefault(bs, []).append(r)
        return flags

    def of_absent(self, entrant: str) -> Replacement | None:
        """The replacement that gave the entrant's station away (None: none,
        or the entrant is back at a station since)."""
        return self._absent.get(entrant)

    def last_on(self, stations) -> Replacement | None:
        """The latest replacement on any of these stations (None: none)."""
        rs = [self._on[(s.board, s.button)][-1] for s in stations if (s.board, s.button) in self._on]
        return max(rs, key=lambda r: r.row, default=None)

    @staticmethod
    def reason(r: Replacement, entrants: Iterable[Entrant]) -> str:
        """The absent entrant's DNS in the standings' words: "absent: the
        station went to Jana Nová (R1)"."""
        name = next((e.name for e in entrants if e.id == r.entrant), "") or r.entrant
        return f"absent: the station went to {name if name == r.entrant else f'{name} ({r.entrant})'}"

    def entrant_at(self, board: str, button: int, at_ms: int, entrant: str) -> str:
        """Whose a press at at_ms on a station is: `entrant` (the station's
        now), or the one it timed before a replacement made after at_ms."""
        for r in reversed(self._on.get((board, button), ())):
            if at_ms >= r.at_ms:
                break
            entrant = r.absent
        return entrant


