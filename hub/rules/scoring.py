"""The scoring of one entrant (the rules of docs/formats.md, as the
standings engine in standings.py applies them): everything derived once from
the format (`Config`, score_model.py), an entrant's folded facts (`EntrantState`), its
finishes and confirmations (`rebuild`), its result and sort key
(`evaluate`) and its per-puzzle splits (`splits`).  Pure."""

from __future__ import annotations

from operator import attrgetter
from typing import Any

from .facts import Confirm, Count, Entrant, Press, Swap
from .durations import fmt_duration
from .parts import laps, one_on_table, order_notes, out_of_fixed_order, packed_away
from .score_model import NEVER, TIE_SPAN, Config, PuzzleSplit

_at_ms = attrgetter("at_ms")


class EntrantState:
    """One entrant's folded facts.  Rarely used attributes default to the
    class values (cheap to create 5,000 of these)."""
    counts: dict[int, Count] | None = None     # puzzle -> latest count (dict order: last counted last)
    swaps: list[Swap] | None = None
    offset = 0
    out: str | None = None                     # "dns" | "dq"
    reason = ""
    notes: list[str] | None = None             # notes found while folding
    scan_notes: list[str] | None = None        # notes of the last rebuild
    out_of_order: tuple[Press, ...] = ()       # finishes a fixed order does not allow (the last rebuild)

    def __init__(self, index: int, entrant: Entrant, official: bool):
        self.index = index
        self.entrant = entrant
        self.official = official
        self.summary: tuple | None = None          # cached evaluation; None = to do
        self.facts: list[Press | Confirm] = []               # presses and confirmations, log order
        self.best: dict[int, Press] = {}                     # puzzle -> its finish (rebuild)
        self.conf: dict[int, tuple[Press, Confirm]] = {}     # puzzle -> (press, its confirmation)


def rebuild(cfg: Config, s: EntrantState, estart: int, start: int, voided: set[str],
            press: dict[str, Press]) -> None:
    """The finishes and confirmations from the entrant's facts: a
    puzzle's finish is its earliest press that is not voided and not
    before the entrant's start; a confirmation goes with the press it
    names, or with the puzzle's finish at the moment it is applied.  In a
    fixed order a finish before an earlier puzzle's is no finish: never
    credited, kept in `out_of_order` (a conflict for the referee, who voids
    it or records the earlier puzzle: parts.out_of_fixed_order)."""
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
    out_of_order: tuple[Press, ...] = ()
    if cfg.fixed and len(best) > 0:
        breaks = out_of_fixed_order(cfg.parts, {pz: p.at_ms for pz, p in best.items()})
        out_of_order = tuple(best.pop(pz) for pz in breaks)
        for p, before in zip(out_of_order, breaks.values()):
            t = (p.at_ms - estart) // cfg.res * cfg.res
            notes.append(f"press for puzzle {p.puzzle} at {fmt_duration(t, cfg.res)} not credited: "
                         f"puzzle {before} is not finished before it (fixed order, none skipped): "
                         f"a conflict for the referee")
    s.best, s.conf, s.scan_notes, s.out_of_order = best, conf, notes or None, out_of_order


def evaluate(cfg: Config, s: EntrantState, start: int | None, round_limit: int | None,
             voided: set[str], press: dict[str, Press]) -> tuple:
    """(sort key, entrant index, status, time, penalty, net, pieces, deducted,
    provisional, counted, deadline, notes, detail); sort key None for
    dns/dq."""
    if s.out is not None:
        return (None,)
    if start is None:
        waiting = list(s.notes or ())
        if s.facts:
            waiting.append("presses before the round start are not timed")
        return (cfg.waiting_key, s.index, "waiting", None, 0, None, 0, 0, True, False, 0,
                tuple(waiting), None)
    estart = start + s.offset
    rebuild(cfg, s, estart, start, voided, press)
    notes: list[str] | None = None
    if s.notes or s.scan_notes:
        notes = (s.notes or []) + (s.scan_notes or [])
    best, conf = s.best, s.conf
    n, res, pieces = cfg.n, cfg.res, cfg.pieces
    limit = round_limit or cfg.limit
    deadline = limit if cfg.extends else limit - s.offset
    penalty = deducted = total = nfin = 0
    last = -1
    unconfirmed = False
    subtract, pen_lost, pen_adj, credit_full = cfg.subtract, cfg.pen_lost, cfg.pen_adj, cfg.credit_full
    todo: Any = best.items()
    if best:
        ats = list(map(_at_ms, best.values()))   # none before estart: rebuild left them out
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
    if s.out_of_order:
        unconfirmed = True      # a conflict open: the referee decides
    penalty *= cfg.per_piece
    all_done = nfin == n
    placed: dict[int, int] = {}
    packed: set[int] | tuple = ()
    if not all_done and (s.counts or s.swaps or cfg.check_order):
        fin = finishes(best, estart, res, deadline, n)
        if notes is None:
            notes = []
        if cfg.one_at_a_time and s.swaps:
            packed = packed_away(cfg, fin, s.swaps, estart, notes)
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
                placed = one_on_table(cfg, fin, placed, packed, notes)
            for v in placed.values():
                total += v
        if cfg.check_order:
            order_notes(cfg, fin, notes)
    elif s.counts:
        if notes is None:
            notes = []
        notes.extend(f"count for puzzle {pz} ignored: it is finished" for pz in s.counts)

    tie = (last if last >= 0 else NEVER) if cfg.tie_last else 0
    lt = last if last >= 0 else None
    net: int | None
    if cfg.time_order and all_done:
        net = last + penalty
        key = net if net < TIE_SPAN else NEVER
        time_ms = lt
    else:
        net = last + penalty if all_done else None
        if not all_done:
            penalty = 0         # only added to a finisher's time
        key = cfg.unfinished_base + (cfg.maxp - total) * TIE_SPAN + tie
        time_ms = lt if (cfg.tie_last or not cfg.time_order) else None
    return (key, s.index, "finished" if all_done else "unfinished", time_ms, penalty, net, total,
            deducted, unconfirmed, bool(placed), estart + deadline,
            tuple(notes) if notes else (),
            (cfg, best, conf, placed, packed, s.swaps, estart, deadline))


def finishes(best: dict[int, Press], estart: int, res: int, deadline: int, n: int) -> dict[int, int]:
    """puzzle -> finish time (since the entrant's start, at the resolution) of the counted finishes."""
    fin: dict[int, int] = {}
    for pz, p in best.items():
        t = (p.at_ms - estart) // res * res
        if 0 < pz <= n and t <= deadline:
            fin[pz] = t
    return fin


def splits(detail: tuple) -> tuple[PuzzleSplit, ...]:
    cfg, best, conf, placed, packed, swaps, estart, deadline = detail
    fin = finishes(best, estart, cfg.res, deadline, cfg.n)
    lap_of = laps(cfg, fin, swaps, estart)
    out: list[PuzzleSplit] = []
    for i, pieces in enumerate(cfg.pieces):
        pz = i + 1
        t = fin.get(pz)
        if t is not None:
            p = best[pz]
            pc = conf.get(pz)
            c = pc[1] if pc is not None and pc[0] is p else None
            mf, ml, ma, pen, ded, cred = credit(cfg, pieces, c)
            out.append(PuzzleSplit(pz, pieces, "finished", t, lap_of.get(pz), c is not None,
                                   p.press_id or None, mf, ml, ma, pen, ded, cred))
        elif pz in placed:
            out.append(PuzzleSplit(pz, pieces, "unfinished", None, None, False, None, 0, 0, 0, 0, 0,
                                   placed[pz]))
        elif pz in packed:
            out.append(PuzzleSplit(pz, pieces, "packed", None, None, False, None, 0, 0, 0, 0, 0, 0))
        else:
            out.append(cfg.untouched[i])
    return tuple(out)


def credit(cfg: Config, pieces: int, c: Confirm | None) -> tuple[int, int, int, int, int, int]:
    """(found, lost, adjacent, penalty ms, deducted pieces, credited pieces)
    of a finished puzzle with this confirmation (the same arithmetic as
    evaluate)."""
    if c is None:
        return 0, 0, 0, 0, 0, pieces
    mf, ml, ma = c.missing_found, c.missing_lost, c.missing_adjacent
    m = mf + (ml if cfg.pen_lost else 0) + (ma if cfg.pen_adj else 0)
    if cfg.subtract:
        cred = pieces - m
        return mf, ml, ma, 0, m, cred if cred > 0 else 0
    cred = pieces if cfg.credit_full else pieces - mf - ml - ma
    return mf, ml, ma, m * cfg.per_piece, 0, cred if cred > 0 else 0
