"""What the fold of the log (competition.py) keeps beside the facts, for
the operator: who decided a call (`Decision`), a board's decision on a call
already decided (`Conflict`), a board event no station places
(`Unassigned`) and a board press whose time cannot be a finish
(`Refused`).  Pure data."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Decision:
    """Who closed a call, how and when (row: its log row)."""
    row: int
    kind: str                   # confirm | void | correct
    who: str                    # "board B1" or the operator's name
    at_ms: int | None           # when the hub received it
    missing: int | None


@dataclass(frozen=True)
class Conflict:
    """A board's decision (confirm or void) on a call that was already
    decided: stored, acknowledged, never applied; the recorded decision
    stands until an operator corrects it."""
    row: int
    board: str
    station: int
    press_id: str
    kind: str
    missing: int | None
    at_ms: int | None
    recorded: Decision | None

    def text(self) -> str:
        mine = f"{self.kind}" + (f" with {self.missing} missing" if self.kind == "confirm" else "")
        rec = self.recorded
        done = {"confirm": "confirmed", "void": "voided", "correct": "corrected"}
        theirs = "it was already decided"
        if rec is not None:
            theirs = (f"{rec.who} had {done.get(rec.kind, rec.kind)} it"
                      + (f" with {rec.missing} missing" if rec.kind == "confirm" and rec.missing is not None else "")
                      + f" (log row #{rec.row})")
        return (f"CONFLICT at board {self.board} button {self.station}: {mine} of call {self.press_id} refused, "
                f"{theirs}; the recorded decision stands (change it with `act confirm/void/correct ... --force`, "
                f"or keep it: `act resolve conflict={self.row} why=...`)")


@dataclass
class Unassigned:
    """A board event the stations table does not place (unknown board or
    button): kept for the operator, never ranked."""
    board: str
    station: int
    type: str
    at: int | None


@dataclass
class Refused:
    """A board press whose time cannot be a finish (kept, never ranked)."""
    row: dict
    press_id: str
    why: str
