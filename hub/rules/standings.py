"""The ranking engine: a pure function from (format, entrants, recorded facts)
to standings.  No I/O.

Facts (facts.py) are small dataclasses, each with an explicit `kind`, in log
order (the order the hub stored them).  Times are integer milliseconds on one clock (hub
time; scenarios use the time since the round start, with the round start at 0).

    round_start(at_ms, limit_ms)                the organizer's start cue (and the round's own limit)
    start_offset(entrant, offset_ms)            a new start time for one entrant
                                                (Norwegian rule: a referee cut a taped bag)
    press(entrant, puzzle, at_ms, press_id)     a finish call for one puzzle (station);
                                                provisional until confirmed
    void(press_id)                              a press that was not a finish
    confirm(press_id | entrant+puzzle, missing_found, missing_lost, missing_adjacent)
                                                the referee checked the finished puzzle
    count(entrant, puzzle, placed | remaining)  the referee's count at time-up (pieces
                                                in groups >= format.min_group)
    swap(entrant, at_ms, packed, opened)        one-at-a-time rounds: the unfinished
                                                puzzle `packed` went back into its box
    dns(entrant) / dq(entrant, reason) / reinstate(entrant)

How each fact is used (the rules of docs/formats.md):
- A puzzle's finish is the earliest non-voided press for it at or after the
  entrant's start; it counts when its time, truncated to the format's
  resolution, is within the time limit.  Later facts of the same kind for the
  same thing supersede earlier ones (confirm, count, start_offset).
- A confirmation by entrant + puzzle confirms that puzzle's finish at the
  moment it is applied; by press id, that press (one that is not in the log
  yet is waited for).  If a different press becomes the finish (a void, an
  earlier press delivered late), the finish is unconfirmed again.
- Times are truncated to `format.resolution_ms` (default whole seconds, as the
  referees record them) before anything is compared or added: elapsed =
  (press - entrant start) // resolution * resolution.  Penalties are added to
  the truncated time.
- Equal compared results share a place (1, 2, 2, 4).  The award place counts
  official entrants only and is given to award places <= format.awards.
- An entrant still within its time (a live view) has no place and takes
  none: the format ranks an unfinished entrant by its count at time-up.
"""

from __future__ import annotations

import gc
from operator import itemgetter
from typing import Any, Iterable, NamedTuple, Sequence

from .facts import (FACT_KINDS, Confirm, Count, DidNotStart, Disqualified, Entrant, Fact, Member, Press,
                    Reinstated, RoundStart, StartOffset, Swap, Void, is_official)
from .format_model import Format
from .score_model import Config, PuzzleSplit
from .scoring import EntrantState, evaluate, splits

# the facts are in facts.py, a puzzle's split in scoring.py; their names here too, for those
# who rank them
__all__ = ["FACT_KINDS", "Confirm", "Count", "DidNotStart", "Disqualified", "Entrant", "Fact", "Member",
           "Press", "Reinstated", "RoundStart", "StartOffset", "Swap", "Void", "is_official", "STATUSES",
           "PuzzleSplit", "StandingRow", "Standings", "desk_notes", "rank", "row_dict"]


# --- standings --------------------------------------------------------------------------------

STATUSES = ("finished", "unfinished", "running", "waiting", "dns", "dq")


class StandingRow(NamedTuple):
    """place: overall place (None for dns, dq, waiting and running: an
    entrant whose time is not up has no result to rank yet; waiting: the
    round not started, or, in a live view, its armed start still ahead); award_place:
    place among official entrants when within the awards (else None).  time_ms:
    the finish of the last puzzle (finishers) - in pieces-first formats, and
    with the last-complete-puzzle tie-break, the finish of the last whole
    puzzle; net_time_ms = time_ms + penalty_ms for finishers.  pieces: the
    counted piece total (finished puzzles credited, unfinished ones as
    counted).  provisional: a finish is not yet confirmed, a count is still
    missing, or the entrant is still running.  `splits` (per puzzle) are
    built when read."""
    place: int | None
    award_place: int | None
    entrant: str
    name: str
    official: bool
    status: str
    reason: str
    time_ms: int | None
    penalty_ms: int
    net_time_ms: int | None
    pieces: int
    deducted_pieces: int
    provisional: bool
    notes: tuple[str, ...]
    detail: Any = None

    @property
    def splits(self) -> tuple[PuzzleSplit, ...]:
        return splits(self.detail) if self.detail is not None else ()


def rank(fmt: Format, entrants: Sequence[Entrant], facts: Iterable[Fact],
         now_ms: int | None = None) -> list[StandingRow]:
    """The standings: ranked rows in place order (equal places in entrant
    order), then running rows (no place yet, in their current order), then
    dq, then dns rows.  now_ms: the moment of a live view (entrants whose
    time is not up are "running", without a place: the format ranks the
    unfinished by their count at time-up; before an armed start they are
    "waiting"); None: the round is over."""
    # Ranking a big round allocates ~10^5 short-lived objects; the cyclic
    # garbage collector would walk the caller's facts again and again meanwhile
    # (a quarter of the time).  Nothing here needs it: reference counting
    # frees everything, so it pauses for the call.
    paused = gc.isenabled()
    gc.disable()
    try:
        st = Standings(fmt, entrants)
        st.extend(facts)
        return st.rows(now_ms)
    finally:
        if paused:
            gc.enable()


_new = tuple.__new__
_first = itemgetter(0)


class Standings:
    """The standings as an incremental fold of facts: `apply`/`extend` in
    log order, `rows()` whenever needed.  Only entrants whose facts changed
    since the last `rows()` are evaluated again, so a live hub that applies
    each stored event re-ranks cheaply.  `rank()` is this from scratch: the
    same code path.

    `extend` only hands each fact to its entrant; the rules (a puzzle's
    finish is its earliest press that is not voided and not before the
    entrant's start; a confirmation goes with the press it names, or with the
    puzzle's finish at the moment it is applied) are `scoring.rebuild`, the
    one fold of an entrant's facts, run whenever the entrant is evaluated
    again (`scoring.evaluate`)."""

    def __init__(self, fmt: Format, entrants: Iterable[Entrant]):
        self.fmt = fmt
        self.cfg = Config(fmt)
        if fmt.eligible_members_min == 0:
            self._states = [EntrantState(i, e, True) for i, e in enumerate(entrants)]
        else:
            self._states = [EntrantState(i, e, is_official(fmt, e)) for i, e in enumerate(entrants)]
        self._by_entrant = {s.entrant.id: s for s in self._states}
        if len(self._by_entrant) != len(self._states):
            raise ValueError("entrant ids must be unique")
        self._start: int | None = None
        self._limit: int | None = None      # the round start's own limit, if it gives one
        self._voided: set[str] = set()
        self._press: dict[str, Press] = {}             # press id -> press
        self._pending: dict[str, list[Confirm]] = {}   # confirmations of presses not seen yet

    def apply(self, fact: Fact) -> None:
        self.extend((fact,))

    def extend(self, facts: Iterable[Fact]) -> None:
        """Fold facts in log order: each goes to its entrant (whose summary is
        then evaluated again, `rebuild` first); a confirmation of a press not
        seen yet waits for it."""
        get = self._by_entrant.get
        press, voided, pending = self._press, self._voided, self._pending
        f: Any                  # dispatched on its exact type below (faster than isinstance)
        for f in facts:
            t = type(f)
            if t is Press:
                s = get(f.entrant)
                if s is None:
                    continue
                s.facts.append(f)
                s.summary = None
                pid = f.press_id
                if pid:
                    press[pid] = f
                    if pending and pid in pending:
                        s.facts.extend(pending.pop(pid))
            elif t is Confirm:
                if f.press_id:
                    p = press.get(f.press_id)
                    if p is None:   # its press is not in yet: the confirmation waits for it
                        pending.setdefault(f.press_id, []).append(f)
                        continue
                    s = get(f.entrant or p.entrant)
                else:
                    s = get(f.entrant)
                if s is None:
                    continue
                s.facts.append(f)
                s.summary = None
            elif t is Void:
                voided.add(f.press_id)
                p = press.get(f.press_id)
                if p is not None:
                    s = get(p.entrant)
                    if s is not None:
                        s.summary = None
            elif t is Count:
                s = get(f.entrant)
                if s is not None:
                    if s.counts is None:
                        s.counts = {}
                    s.counts.pop(f.puzzle, None)
                    s.counts[f.puzzle] = f
                    s.summary = None
            elif t is RoundStart:
                self._start, self._limit = f.at_ms, f.limit_ms
                for s in self._states:
                    s.summary = None
            else:
                s = get(f.entrant)      # type: ignore[union-attr]
                if s is None:
                    continue
                s.summary = None
                self._entrant_fact(s, f, t)

    def _entrant_fact(self, s: EntrantState, f: Fact, t: type) -> None:
        """Start offsets, swaps, DNS, DQ and reinstatements: the same in both
        folds (rare facts, so one call each costs nothing)."""
        if t is StartOffset:
            if self.cfg.offsets:
                s.offset = f.offset_ms          # type: ignore[union-attr]
            else:
                if s.notes is None:
                    s.notes = []
                s.notes.append("start offset ignored: this format has no per-entrant start")
        elif t is Swap:
            if s.swaps is None:
                s.swaps = []
            s.swaps.append(f)                   # type: ignore[arg-type]
        elif t is DidNotStart:
            s.out, s.reason = "dns", f.reason   # type: ignore[union-attr]
        elif t is Disqualified:
            s.out, s.reason = "dq", f.reason    # type: ignore[union-attr]
        elif t is Reinstated:
            s.out, s.reason = None, ""

    def rows(self, now_ms: int | None = None) -> list[StandingRow]:
        ranked: list[tuple] = []
        outs: list[EntrantState] = []
        cfg, start, limit, voided, press = self.cfg, self._start, self._limit, self._voided, self._press
        for s in self._states:
            sm = s.summary
            if sm is None:
                sm = s.summary = evaluate(cfg, s, start, limit, voided, press)
            if sm[0] is None:
                outs.append(s)
            else:
                ranked.append(sm)
        ranked.sort(key=_first)         # stable: equal keys in entrant order
        awards = self.fmt.awards
        result: list[StandingRow] = []
        append = result.append
        running: list[StandingRow] = []     # time not up: no place yet, listed after the placed
        # an armed start still ahead (a live view before it): nobody is solving yet, all wait
        before = now_ms is not None and start is not None and now_ms < start
        place = n = 0
        prev_key = award_rank = -1
        prev_official = -1
        official_seen = 0
        states = self._states
        for (key, si, status, time_ms, pen, net, pieces, ded, provisional, counted, deadline,
             notes, detail) in ranked:
            s = states[si]
            e = s.entrant
            if status == "unfinished" and now_ms is not None and now_ms < deadline:
                # still working: the format ranks an unfinished entrant by its count at
                # time-up, so it has no place (nor award place) before, and takes none
                # from those ranked
                running.append(_new(StandingRow, (None, None, e.id, e.name, s.official,
                                                  "waiting" if before else "running", "",
                                                  time_ms, pen, net, pieces, ded, True, notes, detail)))
                continue
            if status == "waiting":
                append(_new(StandingRow, (None, None, e.id, e.name, s.official, status, "", time_ms,
                                          pen, net, pieces, ded, provisional, notes, detail)))
                continue
            n += 1
            if key != prev_key:
                place = n
                prev_key = key
            award = None
            if s.official:
                official_seen += 1
                if key != prev_official:
                    award_rank = official_seen
                    prev_official = key
                if award_rank <= awards:
                    award = award_rank
            if status == "unfinished" and not counted:
                provisional = True
                notes = notes + ("no piece count yet",)
            append(_new(StandingRow, (place, award, e.id, e.name, s.official, status, "", time_ms,
                                      pen, net, pieces, ded, provisional, notes, detail)))
        result.extend(running)
        outs.sort(key=lambda s: (s.out != "dq", s.entrant.id))
        for s in outs:
            e = s.entrant
            append(StandingRow(None, None, e.id, e.name, s.official, s.out, s.reason,  # type: ignore[arg-type]
                               None, 0, None, 0, 0, False, tuple(s.notes or ()), None))
        return result

    # -- one entrant --


# --- presentation -----------------------------------------------------------------------------


ROUTINE_NOTES = ("no piece count yet",)     # what the provisional mark says already


def desk_notes(rows: Iterable[StandingRow], routine: bool = True) -> list[str]:
    """The ranking's remarks for the desk, "name (id): remark" (a
    confirmation with no finish to confirm, a press ignored, a count
    clamped, ...): for the operators' alerts and terminal, never for the
    results competitors see.  routine=False leaves out those the standings
    show anyway (a piece count still to come: the row is provisional)."""
    out = []
    for r in rows:
        for n in r.notes:
            if routine or n not in ROUTINE_NOTES:
                out.append(f"{r.name or r.entrant} ({r.entrant}): {n}" if r.name and r.name != r.entrant
                           else f"{r.entrant}: {n}")
    return out


def row_dict(row: StandingRow) -> dict:
    """A StandingRow as plain JSON-ready data (times in ms), with its splits."""
    d = row._asdict()
    del d["detail"]
    d["splits"] = [sp._asdict() for sp in row.splits]
    d["notes"] = list(row.notes)
    return d
