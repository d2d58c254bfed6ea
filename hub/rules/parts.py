"""Multi-part and one-at-a-time rounds (docs/formats.md): the laps of a
round's parts, the finishes a fixed order does not allow (never credited: a
conflict for the referee), the notes on finishes a part's order does not
allow, the puzzles packed away by swaps and the one puzzle on the table at
time-up.  Pure; used by the scoring of one entrant (scoring.py), and by the
fold and the desk's checks for the fixed order (hub/event/fold/order_book.py)."""

from __future__ import annotations

from typing import Iterable, Mapping

from .facts import Swap
from .durations import fmt_duration
from .score_model import Config


def laps(cfg: Config, fin: dict[int, int], swaps: list[Swap] | None, estart: int) -> dict[int, int]:
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


def out_of_fixed_order(parts: Iterable[tuple[str, int, int]], finish_at: Mapping[int, int]) -> dict[int, int]:
    """The finishes a fixed order does not allow (seed 003: "i den
    fastsatte rækkefølge, ét ad gangen ... ikke tilladt at springe et
    puslespil over"): puzzle -> the earlier puzzle of its part that is not
    finished before it.  parts: (work, a, b) as Config.parts (puzzles
    a+1..b); finish_at: puzzle -> its finish time (any one clock).  A fixed
    part's finishes that count are its first puzzles, each finished at or
    after the one before it; every other finish of the part is out of order
    (a later puzzle while an earlier one is not finished, or finished
    before the one before it)."""
    out: dict[int, int] = {}
    for work, a, b in parts:
        if work != "fixed":
            continue
        blocker = 0                 # the first puzzle of the part whose finish does not count
        prev: int | None = None
        for pz in range(a + 1, b + 1):
            t = finish_at.get(pz)
            if t is None:
                blocker = blocker or pz
            elif blocker:
                out[pz] = blocker
            elif prev is not None and t < prev:
                out[pz], blocker = pz - 1, pz
            else:
                prev = t
    return out


def order_notes(cfg: Config, fin: dict[int, int], notes: list[str]) -> None:
    """Notes for finishes the format's parts do not allow (a referee
    should look): a later part before an earlier one is complete.  (A fixed
    order's finishes out of order are never credited: out_of_fixed_order.)"""
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
        if not all(done) and not incomplete_before:
            incomplete_before = a + done.index(False) + 1


def packed_away(cfg: Config, fin: dict[int, int], swaps: list[Swap], estart: int,
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


def one_on_table(cfg: Config, fin: dict[int, int], placed: dict[int, int], packed,
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


def puzzle_on_table(free: tuple[int, ...], finishes: list[tuple[int, int]], swaps: list[Swap],
                    at: int | None) -> int:
    """The puzzle an entrant's 'next puzzle' station times at hub time `at`
    (None: after everything known): the first of `free` (the puzzles it
    counts through) until a swap opens another; after a finish, the first
    of them not finished (a puzzle packed by a swap is opened again then).
    finishes: (press time, puzzle) of the entrant's standing finish calls;
    swaps: the entrant's swaps (their `at_ms`: when the team swapped, so
    a swap recorded after a press it came before still moves that press).
    Every puzzle finished: the one finished last (a further call is a
    second call for it; its first stands)."""
    events = sorted([(t, 0, pz) for t, pz in finishes] +
                    [(w.at_ms, 1, w.opened) for w in swaps if w.opened in free])
    table, done = free[0], set()
    for t, kind, pz in events:
        if at is not None and t > at:
            break
        if kind == 1:
            table = pz
            continue
        done.add(pz)
        if pz == table:
            table = next((n for n in free if n not in done), pz)
    return table
