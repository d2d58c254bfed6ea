"""What a row changed, as the catalogue's named notifications (changes.py):
derived in this one place, right after the fold applied the row (the
state's apply, hub_state.py), and told in log order after RowApplied.

`notes_for` is pure: the row, its kind, and what the fold left around it
(`Around`: the facts folded on top by the row, the open conflicts before
and after, whether the fold flagged it).  `mark` and `notes` take those from the
competition, cheaply (this runs for every row at hall scale, replays
included): a mark of the facts before, the facts folded since, and the
open conflicts only when the fold has any.  A row that makes the fold be
done again (a late row, a round start moving the window, a replacement)
says StandingsChanged and its conflicts, not its calls (CallOpened,
CallDecided come from facts folded on top).  Nobody subscribed to any of
them: nothing is read.  Pure but for mark and notes reading the competition.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..event.fold.competition import Competition
from ..event.log.rows import RowKind
from ..rules.facts import Confirm, Fact, Press, Void
from .changes import (BoardHealthChanged, CallDecided, CallOpened, ConflictOpened, ConflictResolved,
                      RoundMoved, StandingsChanged)

Note = CallOpened | CallDecided | StandingsChanged | BoardHealthChanged | RoundMoved | ConflictOpened | ConflictResolved


@dataclass(frozen=True)
class Around:
    """What the fold left around one row."""
    flagged: bool                       # kept in the log, never folded
    facts: list[Fact] | None            # folded on top by the row (None: the fold is done again)
    conflicts_before: frozenset[int]
    conflicts_after: frozenset[int]


def _by(row: dict, kind: RowKind) -> str:
    if kind.from_board:
        return f"board {row.get('board')}"
    return str(row["payload"].get("who") or "operator")


def notes_for(row: dict, kind: RowKind, around: Around) -> list[Note]:
    """The named notifications of one applied row, in the order told."""
    if around.flagged:
        return []
    rid = row["id"]
    p = row["payload"]
    notes: list[Note] = []
    for f in around.facts or ():
        if isinstance(f, Press):
            board_press = kind is RowKind.BOARD_PRESS
            notes.append(CallOpened(rid, f.press_id, f.entrant, f.puzzle, row.get("board") if board_press else None,
                                    p.get("station") if board_press else None))
        elif isinstance(f, Confirm):
            notes.append(CallDecided(rid, f.press_id, "confirmed", _by(row, kind)))
        elif isinstance(f, Void):
            notes.append(CallDecided(rid, f.press_id, "voided", _by(row, kind)))
    if around.facts is None or around.facts:
        notes.append(StandingsChanged(rid))
    notes += [ConflictOpened(c) for c in sorted(around.conflicts_after - around.conflicts_before)]
    notes += [ConflictResolved(c) for c in sorted(around.conflicts_before - around.conflicts_after)]
    if kind is RowKind.BOARD_STATUS:
        notes.append(BoardHealthChanged(rid, row["board"], p.get("state")))
    elif kind is RowKind.OP_ROUND_START:
        notes.append(RoundMoved(rid, "round_start"))
    elif kind is RowKind.OP_HALL_CHECK:
        notes.append(RoundMoved(rid, "hall_check_begin" if p.get("phase") == "begin" else "hall_check_verdict"))
    return notes


Mark = tuple[tuple[list[Fact] | None, int], frozenset[int]]


def mark(comp: Competition) -> Mark:
    """What the fold holds before a row's apply: its facts' mark, the open
    conflicts (nothing to read when it has none)."""
    return comp.fold_mark(), comp.open_conflict_ids()


def notes(comp: Competition, row: dict, kind: RowKind, before: Mark) -> list[Note]:
    """The notes of a row the competition applied since `mark`."""
    flagged = row["id"] in comp.flagged
    facts = comp.folded_since(before[0])
    after = before[1] if flagged else comp.open_conflict_ids()
    return notes_for(row, kind, Around(flagged, facts, before[1], after))
