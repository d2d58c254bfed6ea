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
"""

from __future__ import annotations

import gc
from operator import attrgetter, itemgetter
from typing import Any, Iterable, NamedTuple, Sequence

from .facts import (FACT_KINDS, Confirm, Count, DidNotStart, Disqualified, Entrant, Fact, Member, Press,
                    Reinstated, RoundStart, StartOffset, Swap, Void, is_official)
from .formats import Format, fmt_duration

# the facts are in facts.py; their names here too, for those who rank them
__all__ = ["FACT_KINDS", "Confirm", "Count", "DidNotStart", "Disqualified", "Entrant", "Fact", "Member",
           "Press", "Reinstated", "RoundStart", "StartOffset", "Swap", "Void", "is_official", "STATUSES",
           "PuzzleSplit", "StandingRow", "Standings", "rank", "row_dict"]


# --- standings --------------------------------------------------------------------------------

STATUSES = ("finished", "unfinished", "running", "waiting", "dns", "dq")


class PuzzleSplit(NamedTuple):
    """One puzzle of one entrant.  status: finished | unfinished | packed
    (in its box after a swap, at time-up).  time_ms: the finish, since the
    entrant's start, at the format's resolution.  lap_ms: since the puzzle
    could be worked (its part's start; in one-at-a-time parts the previous
    finish or swap).  credited: the pieces it adds to the entrant's total."""
    puzzle: int
    pieces: int
    status: str
    time_ms: int | None
    lap_ms: int | None
    confirmed: bool
    press_id: str | None
    missing_found: int
    missing_lost: int
    missing_adjacent: int
    penalty_ms: int
    deducted: int
    credited: int


class StandingRow(NamedTuple):
    """place: overall place (None for dns, dq, waiting); award_place: place
    among official entrants when within the awards (else None).  time_ms:
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
        return _splits(self.detail) if self.detail is not None else ()


def rank(fmt: Format, entrants: Sequence[Entrant], facts: Iterable[Fact],
         now_ms: int | None = None) -> list[StandingRow]:
    """The standings: ranked rows in place order (equal places in entrant
    order), then dq, then dns rows.  now_ms: the moment of a live view
    (entrants whose time is not up are "running"); None: the round is over."""
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


_TIE_SPAN = 1 << 42             # tie-break times (ms) below this; beyond = no whole puzzle
_NEVER = _TIE_SPAN - 1
_new = tuple.__new__
_at_ms = attrgetter("at_ms")
_first = itemgetter(0)


class _Config:
    """Everything derived once from the format."""

    def __init__(self, fmt: Format):
        self.fmt = fmt
        self.pieces = fmt.puzzles
        self.n = len(self.pieces)
        self.maxp = sum(self.pieces)
        self.res = fmt.resolution_ms
        self.limit = fmt.time_limit_ms
        self.extends = fmt.offset_extends_limit
        self.offsets = fmt.start_offsets
        self.per_piece = fmt.penalty_per_piece_ms
        self.subtract = fmt.missing_action == "subtract"
        self.pen_lost = "lost" not in fmt.exempt
        self.pen_adj = "adjacent" not in fmt.exempt
        self.credit_full = fmt.finished_puzzle_credit == "full"
        self.time_order = fmt.order == "time"
        self.tie_last = fmt.tie_break == "last_complete_puzzle"
        self.parts = [(p.work, p.first - 1, p.first - 1 + len(p.puzzles)) for p in fmt.parts]
        self.one_at_a_time = any(w in ("fixed", "chosen") for w, _, _ in self.parts)
        self.check_order = len(self.parts) > 1 or self.one_at_a_time
        self.valid = frozenset(range(1, self.n + 1))          # puzzle numbers
        self.pz_pieces = (0,) + tuple(self.pieces)             # puzzle number -> pieces
        self.untouched = tuple(PuzzleSplit(i + 1, n, "unfinished", None, None, False, None, 0, 0, 0,
                                           0, 0, 0) for i, n in enumerate(self.pieces))
        # integer sort keys: equal keys <=> equal compared results
        self.unfinished_base = _TIE_SPAN if self.time_order else 0
        self.waiting_key = self.unfinished_base + (self.maxp + 1) * _TIE_SPAN


class _State:
    """One entrant's folded facts.  Rarely used attributes default to the
    class values (cheap to create 5,000 of these)."""
    counts: dict[int, Count] | None = None     # puzzle -> latest count (dict order: last counted last)
    swaps: list[Swap] | None = None
    offset = 0
    out: str | None = None                     # "dns" | "dq"
    reason = ""
    notes: list[str] | None = None             # notes found while folding
    scan_notes: list[str] | None = None        # notes of the last rebuild

    def __init__(self, index: int, entrant: Entrant, official: bool):
        self.index = index
        self.entrant = entrant
        self.official = official
        self.summary: tuple | None = None          # cached evaluation; None = to do
        self.facts: list[Press | Confirm] = []               # presses and confirmations, log order
        self.best: dict[int, Press] = {}                     # puzzle -> its finish (_rebuild)
        self.conf: dict[int, tuple[Press, Confirm]] = {}     # puzzle -> (press, its confirmation)


class Standings:
    """The standings as an incremental fold of facts: `apply`/`extend` in
    log order, `rows()` whenever needed.  Only entrants whose facts changed
    since the last `rows()` are evaluated again, so a live hub that applies
    each stored event re-ranks cheaply.  `rank()` is this from scratch: the
    same code path.

    `extend` only hands each fact to its entrant; the rules (a puzzle's
    finish is its earliest press that is not voided and not before the
    entrant's start; a confirmation goes with the press it names, or with the
    puzzle's finish at the moment it is applied) are `_rebuild`, the one fold
    of an entrant's facts, run whenever the entrant is evaluated again."""

    def __init__(self, fmt: Format, entrants: Iterable[Entrant]):
        self.fmt = fmt
        self.cfg = _Config(fmt)
        if fmt.eligible_members_min == 0:
            self._states = [_State(i, e, True) for i, e in enumerate(entrants)]
        else:
            self._states = [_State(i, e, is_official(fmt, e)) for i, e in enumerate(entrants)]
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
        then evaluated again, `_rebuild` first); a confirmation of a press not
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

    def _entrant_fact(self, s: _State, f: Fact, t: type) -> None:
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
            s.out, s.reason = "dns", ""
        elif t is Disqualified:
            s.out, s.reason = "dq", f.reason    # type: ignore[union-attr]
        elif t is Reinstated:
            s.out, s.reason = None, ""

    def rows(self, now_ms: int | None = None) -> list[StandingRow]:
        ranked: list[tuple] = []
        outs: list[_State] = []
        evaluate = self._evaluate
        for s in self._states:
            sm = s.summary
            if sm is None:
                sm = s.summary = evaluate(s)
            if sm[0] is None:
                outs.append(s)
            else:
                ranked.append(sm)
        ranked.sort(key=_first)         # stable: equal keys in entrant order
        awards = self.fmt.awards
        result: list[StandingRow] = []
        append = result.append
        place = 0
        prev_key = award_rank = -1
        prev_official = -1
        official_seen = 0
        states = self._states
        for i, (key, si, status, time_ms, pen, net, pieces, ded, provisional, counted, deadline,
                notes, detail) in enumerate(ranked):
            s = states[si]
            if key != prev_key:
                place = i + 1
                prev_key = key
            award = None
            if s.official:
                official_seen += 1
                if key != prev_official:
                    award_rank = official_seen
                    prev_official = key
                if award_rank <= awards:
                    award = award_rank
            if status == "unfinished":
                if now_ms is not None and now_ms < deadline:
                    status, provisional = "running", True
                elif not counted:
                    provisional = True
                    notes = notes + ("no piece count yet",)
            elif status == "waiting":
                place = award = None    # type: ignore[assignment]
            e = s.entrant
            append(_new(StandingRow, (place, award, e.id, e.name, s.official, status, "", time_ms,
                                      pen, net, pieces, ded, provisional, notes, detail)))
        outs.sort(key=lambda s: (s.out != "dq", s.entrant.id))
        for s in outs:
            e = s.entrant
            append(StandingRow(None, None, e.id, e.name, s.official, s.out, s.reason,  # type: ignore[arg-type]
                               None, 0, None, 0, 0, False, tuple(s.notes or ()), None))
        return result

    # -- one entrant --

    def _rebuild(self, s: _State, estart: int, start: int) -> None:
        """The finishes and confirmations from the entrant's facts: a
        puzzle's finish is its earliest press that is not voided and not
        before the entrant's start; a confirmation goes with the press it
        names, or with the puzzle's finish at the moment it is applied."""
        voided, press = self._voided, self._press
        eid = s.entrant.id
        best: dict[int, Press] = {}
        conf: dict[int, tuple[Press, Confirm]] = {}
        notes: list[str] = []
        f: Any
        for f in s.facts:
            if type(f) is Press:
                if f.press_id and f.press_id in voided:
                    continue
                if f.at_ms < estart:
                    notes.append(f"press for puzzle {f.puzzle} at {fmt_duration(f.at_ms - start)}"
                                 f" ignored: before the entrant's start")
                    continue
                b = best.get(f.puzzle)
                if b is None or f.at_ms < b.at_ms:
                    best[f.puzzle] = f
            else:
                if f.press_id:
                    p = press.get(f.press_id)
                    if p is not None and (p.entrant != eid or p.at_ms < estart or f.press_id in voided):
                        p = None
                else:
                    p = best.get(f.puzzle)
                if p is None:
                    what = f"press {f.press_id}" if f.press_id else f"puzzle {f.puzzle}"
                    notes.append(f"confirmation of {what} has no finish to confirm")
                else:
                    conf[p.puzzle] = (p, f)
        s.best, s.conf, s.scan_notes = best, conf, notes or None

    def _evaluate(self, s: _State) -> tuple:
        """(sort key, entrant index, status, time, penalty, net, pieces, deducted,
        provisional, counted, deadline, notes, detail); sort key None for
        dns/dq."""
        if s.out is not None:
            return (None,)
        cfg = self.cfg
        start = self._start
        if start is None:
            waiting = list(s.notes or ())
            if s.facts:
                waiting.append("presses before the round start are not timed")
            return (cfg.waiting_key, s.index, "waiting", None, 0, None, 0, 0, True, False, 0,
                    tuple(waiting), None)
        estart = start + s.offset
        self._rebuild(s, estart, start)
        notes: list[str] | None = None
        if s.notes or s.scan_notes:
            notes = (s.notes or []) + (s.scan_notes or [])
        best, conf = s.best, s.conf
        n, res, pieces = cfg.n, cfg.res, cfg.pieces
        limit = self._limit or cfg.limit
        deadline = limit if cfg.extends else limit - s.offset
        penalty = deducted = total = nfin = 0
        last = -1
        unconfirmed = False
        subtract, pen_lost, pen_adj, credit_full = cfg.subtract, cfg.pen_lost, cfg.pen_adj, cfg.credit_full
        todo: Any = best.items()
        if best:
            ats = list(map(_at_ms, best.values()))   # none before estart: _rebuild left them out
            last = (max(ats) - estart) // res * res
            if last <= deadline and cfg.valid.issuperset(best):
                # the usual case, the same sums as the loop below: every press counts
                nfin = len(best)
                total = cfg.maxp if nfin == n else sum(map(cfg.pz_pieces.__getitem__, best))
                matched = 0
                get = best.get
                for pz, (p, c) in conf.items():
                    if get(pz) is not p:
                        continue
                    matched += 1
                    mf, ml, ma = c.missing_found, c.missing_lost, c.missing_adjacent
                    if not (mf or ml or ma):
                        continue
                    m = mf + (ml if pen_lost else 0) + (ma if pen_adj else 0)
                    if subtract:
                        deducted += m
                    else:
                        penalty += m
                        if credit_full:
                            continue
                        m = mf + ml + ma
                    k = pieces[pz - 1]
                    k2 = k - m
                    total += (k2 if k2 > 0 else 0) - k
                unconfirmed = matched != nfin
                todo = ()               # done
            else:
                last = -1
        for pz, p in todo:
            if not 0 < pz <= n:
                if notes is None:
                    notes = []
                notes.append(f"press for puzzle {pz} ignored: the format has puzzles 1-{n}")
                continue
            t = (p.at_ms - estart) // res * res
            if t > deadline:
                if notes is None:
                    notes = []
                notes.append(f"press for puzzle {pz} at {fmt_duration(t, res)} ignored: after time-up")
                continue
            nfin += 1
            if t > last:
                last = t
            k = pieces[pz - 1]
            pc = conf.get(pz)
            if pc is None or pc[0] is not p:
                unconfirmed = True
                total += k
                continue
            c = pc[1]
            m = c.missing_found + (c.missing_lost if pen_lost else 0) + \
                (c.missing_adjacent if pen_adj else 0)
            if subtract:
                deducted += m
                k -= m
            else:
                penalty += m
                if not credit_full:
                    k -= c.missing_found + c.missing_lost + c.missing_adjacent
            total += k if k > 0 else 0
        penalty *= cfg.per_piece
        all_done = nfin == n
        placed: dict[int, int] = {}
        packed: set[int] | tuple = ()
        if not all_done and (s.counts or s.swaps or cfg.check_order):
            fin = _finishes(best, estart, res, deadline, n)
            if notes is None:
                notes = []
            if cfg.one_at_a_time and s.swaps:
                packed = _packed(cfg, fin, s.swaps, estart, notes)
            if s.counts:
                for pz, c2 in s.counts.items():
                    if pz in fin:
                        notes.append(f"count for puzzle {pz} ignored: it is finished")
                    elif 0 < pz <= n:
                        k = pieces[pz - 1]
                        v = c2.placed if c2.placed is not None else k - (c2.remaining or 0)
                        if v < 0 or v > k:
                            notes.append(f"count for puzzle {pz} ({v} placed) is outside 0-{k}; clamped")
                            v = 0 if v < 0 else k
                        placed[pz] = v
                if cfg.one_at_a_time and placed:
                    placed = _one_on_table(cfg, fin, placed, packed, notes)
                for v in placed.values():
                    total += v
            if cfg.check_order:
                _order_notes(cfg, fin, notes)
        elif s.counts:
            if notes is None:
                notes = []
            notes.extend(f"count for puzzle {pz} ignored: it is finished" for pz in s.counts)

        tie = (last if last >= 0 else _NEVER) if cfg.tie_last else 0
        lt = last if last >= 0 else None
        net: int | None
        if cfg.time_order and all_done:
            net = last + penalty
            key = net if net < _TIE_SPAN else _NEVER
            time_ms = lt
        else:
            net = last + penalty if all_done else None
            if not all_done:
                penalty = 0         # only added to a finisher's time
            key = cfg.unfinished_base + (cfg.maxp - total) * _TIE_SPAN + tie
            time_ms = lt if (cfg.tie_last or not cfg.time_order) else None
        return (key, s.index, "finished" if all_done else "unfinished", time_ms, penalty, net, total,
                deducted, unconfirmed, bool(placed), estart + deadline,
                tuple(notes) if notes else (),
                (cfg, best, conf, placed, packed, s.swaps, estart, deadline))


def _finishes(best: dict[int, Press], estart: int, res: int, deadline: int, n: int) -> dict[int, int]:
    """puzzle -> finish time (since the entrant's start, at the resolution) of the counted finishes."""
    fin: dict[int, int] = {}
    for pz, p in best.items():
        t = (p.at_ms - estart) // res * res
        if 0 < pz <= n and t <= deadline:
            fin[pz] = t
    return fin


def _splits(detail: tuple) -> tuple[PuzzleSplit, ...]:
    cfg, best, conf, placed, packed, swaps, estart, deadline = detail
    fin = _finishes(best, estart, cfg.res, deadline, cfg.n)
    laps = _laps(cfg, fin, swaps, estart)
    out: list[PuzzleSplit] = []
    for i, pieces in enumerate(cfg.pieces):
        pz = i + 1
        t = fin.get(pz)
        if t is not None:
            p = best[pz]
            pc = conf.get(pz)
            c = pc[1] if pc is not None and pc[0] is p else None
            mf, ml, ma, pen, ded, cred = _credit(cfg, pieces, c)
            out.append(PuzzleSplit(pz, pieces, "finished", t, laps.get(pz), c is not None,
                                   p.press_id or None, mf, ml, ma, pen, ded, cred))
        elif pz in placed:
            out.append(PuzzleSplit(pz, pieces, "unfinished", None, None, False, None, 0, 0, 0, 0, 0,
                                   placed[pz]))
        elif pz in packed:
            out.append(PuzzleSplit(pz, pieces, "packed", None, None, False, None, 0, 0, 0, 0, 0, 0))
        else:
            out.append(cfg.untouched[i])
    return tuple(out)


def _credit(cfg: _Config, pieces: int, c: Confirm | None) -> tuple[int, int, int, int, int, int]:
    """(found, lost, adjacent, penalty ms, deducted pieces, credited pieces)
    of a finished puzzle with this confirmation (the same arithmetic as
    Standings._evaluate)."""
    if c is None:
        return 0, 0, 0, 0, 0, pieces
    mf, ml, ma = c.missing_found, c.missing_lost, c.missing_adjacent
    m = mf + (ml if cfg.pen_lost else 0) + (ma if cfg.pen_adj else 0)
    if cfg.subtract:
        cred = pieces - m
        return mf, ml, ma, 0, m, cred if cred > 0 else 0
    cred = pieces if cfg.credit_full else pieces - mf - ml - ma
    return mf, ml, ma, m * cfg.per_piece, 0, cred if cred > 0 else 0


# -- multi-part and one-at-a-time rounds --

def _laps(cfg: _Config, fin: dict[int, int], swaps: list[Swap] | None, estart: int) -> dict[int, int]:
    """Lap of each finished puzzle: since its part's start (parallel work),
    or since the previous finish or swap of its part (one at a time).  A
    part starts when the previous one is complete."""
    laps: dict[int, int] = {}
    part_start: int | None = 0
    for work, a, b in cfg.parts:
        ts = [fin[pz] for pz in range(a + 1, b + 1) if pz in fin]
        if part_start is not None:
            if work in ("single", "parallel", "relay"):
                for pz in range(a + 1, b + 1):
                    if pz in fin:
                        laps[pz] = fin[pz] - part_start
            else:
                marks = sorted(ts + [(w.at_ms - estart) // cfg.res * cfg.res for w in swaps or ()
                                     if a < w.opened <= b or a < w.packed <= b])
                for pz in range(a + 1, b + 1):
                    if pz not in fin:
                        continue
                    t = fin[pz]
                    prev = part_start
                    for m in marks:
                        if prev < m < t:
                            prev = m
                    laps[pz] = t - prev
        part_start = max(ts) if part_start is not None and len(ts) == b - a else None
    return laps


def _order_notes(cfg: _Config, fin: dict[int, int], notes: list[str]) -> None:
    """Notes for finishes the format's order does not allow (a referee
    should look): a later part before an earlier one is complete; in a fixed
    order, a puzzle before an earlier one."""
    gap = 1
    while gap in fin:
        gap += 1
    if not fin or max(fin) < gap:       # finished puzzles form a prefix: nothing to say
        return
    incomplete_before = 0
    for work, a, b in cfg.parts:
        done = [pz in fin for pz in range(a + 1, b + 1)]
        if incomplete_before and any(done):
            notes.append(f"a puzzle of puzzles {a + 1}-{b} finished before puzzle {incomplete_before}")
            return
        if work == "fixed" and not all(done):
            gap = done.index(False)
            if any(done[gap:]):
                notes.append(f"finished out of the fixed order: puzzle {a + gap + 1} is not finished")
        if not all(done) and not incomplete_before:
            incomplete_before = a + done.index(False) + 1


def _packed(cfg: _Config, fin: dict[int, int], swaps: list[Swap], estart: int,
            notes: list[str]) -> set[int]:
    """Puzzles in their box at time-up after a swap (chosen-order parts):
    packed by a swap and not opened again (by a later swap, or as the only
    unfinished puzzle left after a finish)."""
    packed: set[int] = set()
    for work, a, b in cfg.parts:
        if work != "chosen":
            continue
        events: list[tuple[int, int, int, int]] = []    # (time, 0 finish | 1 swap, puzzle, opened)
        for w in swaps:
            if a < w.packed <= b and a < w.opened <= b:
                events.append(((w.at_ms - estart) // cfg.res * cfg.res, 1, w.packed, w.opened))
        for pz in range(a + 1, b + 1):
            if pz in fin:
                events.append((fin[pz], 0, pz, 0))
        events.sort()
        done: set[int] = set()
        box: set[int] = set()
        for at, kind, x, y in events:
            if kind == 1:
                if x in done:
                    notes.append(f"swap at {fmt_duration(at)} packs puzzle {x}, which is finished")
                else:
                    box.add(x)
                box.discard(y)
            else:
                done.add(x)
                box.discard(x)
                left = [pz for pz in range(a + 1, b + 1) if pz not in done]
                if len(left) == 1:
                    box.discard(left[0])
        packed |= box
    return packed


def _one_on_table(cfg: _Config, fin: dict[int, int], placed: dict[int, int], packed,
                  notes: list[str]) -> dict[int, int]:
    """One-at-a-time parts have one puzzle on the table at time-up: in a
    fixed order the first unfinished one, in a chosen order the one not in
    its box (the last counted, if several are).  Other counts are dropped.
    `placed` is in the order the counts were last entered."""
    keep: dict[int, int] = {}
    for work, a, b in cfg.parts:
        counted = [pz for pz in placed if a < pz <= b]
        if not counted:
            continue
        if work == "fixed":
            first = next(pz for pz in range(a + 1, b + 1) if pz not in fin)
            for pz in counted:
                if pz == first:
                    keep[pz] = placed[pz]
                else:
                    notes.append(f"count for puzzle {pz} ignored: the fixed order puts puzzle {first}"
                                 f" on the table")
        elif work == "chosen":
            on_table = []
            for pz in counted:
                if pz in packed:
                    notes.append(f"count for puzzle {pz} ignored: it was packed away (swap)")
                else:
                    on_table.append(pz)
            if len(on_table) > 1:
                notes.append(f"counts for puzzles {', '.join(map(str, sorted(on_table)))}: only one puzzle"
                             f" is on the table at a time; puzzle {on_table[-1]} (counted last) is used")
                on_table = on_table[-1:]
            for pz in on_table:
                keep[pz] = placed[pz]
        else:
            for pz in counted:
                keep[pz] = placed[pz]
    return keep


# --- presentation -----------------------------------------------------------------------------


def row_dict(row: StandingRow) -> dict:
    """A StandingRow as plain JSON-ready data (times in ms), with its splits."""
    d = row._asdict()
    del d["detail"]
    d["splits"] = [sp._asdict() for sp in row.splits]
    d["notes"] = list(row.notes)
    return d
