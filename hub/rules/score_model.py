"""What a score is made of (the scoring of scoring.py and the multi-part
rules of parts.py read it): everything derived once from the format
(`Config`), one puzzle of one entrant's result (`PuzzleSplit`) and the span
of the integer sort keys.  Pure."""

from __future__ import annotations

from typing import NamedTuple

from .format_model import Format

TIE_SPAN = 1 << 42             # tie-break times (ms) below this; beyond = no whole puzzle
NEVER = TIE_SPAN - 1


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


def part_spans(fmt: Format) -> list[tuple[str, int, int]]:
    """(work, a, b) of each part of a format: its puzzles are a+1..b."""
    return [(p.work, p.first - 1, p.first - 1 + len(p.puzzles)) for p in fmt.parts]


class Config:
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
        self.parts = part_spans(fmt)
        self.one_at_a_time = any(w in ("fixed", "chosen") for w, _, _ in self.parts)
        self.fixed = any(w == "fixed" for w, _, _ in self.parts)       # parts.out_of_fixed_order applies
        self.check_order = len(self.parts) > 1 or self.one_at_a_time
        self.valid = frozenset(range(1, self.n + 1))          # puzzle numbers
        self.pz_pieces = (0,) + tuple(self.pieces)             # puzzle number -> pieces
        self.untouched = tuple(PuzzleSplit(i + 1, n, "unfinished", None, None, False, None, 0, 0, 0,
                                           0, 0, 0) for i, n in enumerate(self.pieces))
        # integer sort keys: equal keys <=> equal compared results
        self.unfinished_base = TIE_SPAN if self.time_order else 0
        self.waiting_key = self.unfinished_base + (self.maxp + 1) * TIE_SPAN
