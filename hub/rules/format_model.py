"""A competition format as the engine reads it: the `Format` and its
`Part`s, the values each key may take, and `FormatError`.  Reading and
checking the TOML files is formats.py; the keys are described in
docs/formats.md.  Pure."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .advancement_rule import AdvancementRule
from .durations import fmt_duration, fmt_resolution

ENTRANT_KINDS = ("individual", "pair", "team")
WORK_MODES = ("single", "parallel", "relay", "fixed", "chosen")
MISSING_ACTIONS = ("time", "subtract")
MISSING_CATEGORIES = ("lost", "adjacent")      # categories that may be exempt
COUNT_ENTRIES = ("placed", "remaining")
FINISHED_PUZZLE_CREDIT = ("present", "full")
ORDERS = ("time", "pieces")
TIE_BREAKS = ("none", "last_complete_puzzle")
OFFICIAL_MOMENTS = ("checks", "prize-giving")    # results.official_at (event/fold/official.py)
DEFAULT_WARNINGS_MS = (600_000, 60_000)        # a round start's signals unless it names its own

# The limits of every value a format holds (docs/formats.md, "Limits"): far beyond any real
# event, and within what the rest of the hub carries -- a board's schedule (shared/protocol.py:
# times below 2**53 ms, at most 200 relay rotations, a 'next puzzle' button calling at most 99
# puzzles), the operator actions' fields (event/log/action_rows.py takes its limits from here).  A value
# over its limit is an error when the file is loaded, before anything is stored.
MAX_ROUND_MS = 3 * 86_400_000   # a round's time limit (and a round start's own): 72 hours
MAX_PUZZLES = 99                # puzzles in a round
MAX_PIECES = 100_000            # a puzzle's pieces (and any count of them: min_group, a count)
MAX_MEMBERS = 50                # an entrant's members (a team's size)
MAX_ENTRANTS = 10_000           # capacity, awards, max_at_table, table_share_above
MAX_PENALTY_S = 3600            # missing_pieces.seconds_per_piece
MIN_ROTATION_MS = 1000          # a relay's rotation_interval, at least 1 s ...
MAX_ROTATIONS = 200             # ... and at most 200 rotations within the round's limit
MAX_LINE = 200                  # a one-line text: format.title, a part's name and workers
MAX_PARAGRAPH = 5000            # a longer text: format.summary, source, notes, prizes.eligibility


class FormatError(ValueError):
    """A competition format file is not valid: the message names the file,
    the dotted key and what was expected."""


@dataclass(frozen=True)
class Part:
    """Consecutive part of a round: its puzzles and how they are worked.
    work: single (one puzzle) | parallel (each puzzle by its own group, no
    moving) | relay (one member per station, clockwise rotation every
    rotation_interval_ms among unfinished puzzles) | fixed (one at a time in
    the listed order) | chosen (one at a time, entrant's order, swap only by
    packing the unfinished one away)."""
    name: str
    work: str
    puzzles: tuple[int, ...]          # piece counts
    first: int                        # round-wide number of its first puzzle (1-based)
    workers: str = ""                 # who works a puzzle (informational): individuals, pairs, team
    rotation_interval_ms: int | None = None
    rotation: str | None = None       # "clockwise" (relay only)

    @property
    def numbers(self) -> range:
        """The round-wide puzzle (station) numbers of this part."""
        return range(self.first, self.first + len(self.puzzles))


@dataclass(frozen=True)
class Format:
    name: str
    title: str
    summary: str
    source: str                       # where the rules come from (seed file, section)
    notes: str
    path: str                         # the file this was read from
    # entrants
    kind: str                         # individual | pair | team
    min_members: int
    max_members: int
    capacity: int | None
    # round
    time_limit_ms: int
    resolution_ms: int
    parts: tuple[Part, ...]
    start_offsets: bool               # per-entrant new start time allowed
    offset_extends_limit: bool        # the limit runs from the entrant's own start
    # missing pieces at a finish
    missing_action: str               # time | subtract
    penalty_per_piece_ms: int
    exempt: frozenset[str]            # subset of {"lost", "adjacent"}
    # unfinished
    min_group: int
    count_entry: str                  # placed | remaining (the referee's default form)
    finished_puzzle_credit: str       # present | full
    # ranking
    order: str                        # time | pieces
    tie_break: str                    # none | last_complete_puzzle
    # prizes
    awards: int
    eligible_members_min: int         # official when >= this many members are eligible
    eligibility: str
    # entrants.no_show_after: how long after the round's start an absent entrant's
    # station may be given to another participant (`replace`); None: never
    no_show_after_ms: int | None = None
    # entrants.table_share_above: seating (rules/seating.py) puts one entrant at a table while the
    # round has at most this many, two at a table above it (seed 004); None: every station a seat
    table_share_above: int | None = None
    # results.official_at: when the round's results are made official (event/fold/official.py):
    # "checks" (after time-up and every check) or "prize-giving" (003: objections until then)
    official_at: str = "checks"
    info: dict[str, Any] = field(default_factory=dict)   # informational keys, by dotted name
    # played this many times faster (a demo's --speed, a rehearsal's): its limits divided by it
    # (event/folder/demo.py: faster), and the default warnings with them
    speed: float = 1
    # [advancement]: the round's entrants come from earlier rounds (advancement_rule.py); None: from
    # its own entrants.csv, as the organizer writes it
    advancement: AdvancementRule | None = None

    @property
    def puzzles(self) -> tuple[int, ...]:
        """Piece counts of all puzzles of the round, numbered 1.. in order."""
        return tuple(p for part in self.parts for p in part.puzzles)

    @property
    def relay(self) -> Part | None:
        return next((p for p in self.parts if p.work == "relay"), None)

    def default_warnings_ms(self, limit_ms: int | None = None) -> list[int]:
        """The warnings (ms before the end) of a round start that names none:
        10 and 1 minutes left (divided by its speed), those within its limit
        (default the format's).
        Every path that starts a round (the console, `act`, a remote
        console) takes these for a blank."""
        limit = limit_ms or self.time_limit_ms
        return [int(w / self.speed) for w in DEFAULT_WARNINGS_MS if int(w / self.speed) < limit]

    def puzzles_text(self) -> str:
        """"500", "1000 + 500 (chosen order)", "4x500 relay | 2x500 | 500 | 1000"."""
        def one(part: Part) -> str:
            counts: list[str] = []
            for n in dict.fromkeys(part.puzzles):
                k = part.puzzles.count(n)
                counts.append(f"{k}x{n}" if k > 1 else str(n))
            text = " + ".join(counts) if part.work in ("fixed", "chosen") else ", ".join(counts)
            if part.work in ("fixed", "chosen", "relay"):
                text += {"fixed": " (fixed order)", "chosen": " (chosen order)",
                         "relay": " relay"}[part.work]
            return text
        return " | ".join(one(p) for p in self.parts)

    def kind_text(self) -> str:
        if self.kind == "team":
            m = (str(self.min_members) if self.min_members == self.max_members
                 else f"{self.min_members}-{self.max_members}")
            return f"team of {m}"
        return self.kind


def describe(fmt: Format) -> str:
    """A few lines that say what the format does (for `formats show`)."""
    lines = [f"{fmt.name}: {fmt.title}", f"  {fmt.summary}"]
    cap = f", at most {fmt.capacity}" if fmt.capacity else ""
    lines.append(f"  entrants: {fmt.kind_text()}{cap}")
    if fmt.no_show_after_ms is not None:
        lines.append(f"  an entrant absent {fmt_duration(fmt.no_show_after_ms)} after the start may have"
                     f" the station given to another participant (`act replace`)")
    if fmt.table_share_above is not None:
        lines.append(f"  seating: one entrant a table up to {fmt.table_share_above} entrants, two a table"
                     f" above that (`tabletimer seat`)")
    lines.append(f"  time limit {fmt_duration(fmt.time_limit_ms)}, times recorded and compared in"
                 f" {fmt_resolution(fmt.resolution_ms)} (truncated)")
    for part in fmt.parts:
        nums = f"{part.first}" if len(part.puzzles) == 1 else f"{part.first}-{part.numbers[-1]}"
        extra = (f", rotate {part.rotation} every {fmt_duration(part.rotation_interval_ms)}"
                 if part.work == "relay" else "")
        lines.append(f"  {part.name}: puzzle {nums} = {list(part.puzzles)}, work {part.work}{extra}")
    if fmt.advancement is not None:
        lines.append(f"  its entrants advance {fmt.advancement.describe()} (`tabletimer advance`)")
    return "\n".join(lines)
