"""The puzzle on an entrant's table, as the fold of the log (competition.py)
follows it for 'next puzzle' stations (one station counts through the
entrant's puzzles, one at a time): the entrant's standing finish calls and
its swaps (rule set 001's teams choose their order: the phone's "Pack 1,
open 2").  A press on such a station is a finish of the puzzle on the table
when it was pressed; the table page shows that puzzle, and the count at
time-up is for it.

A swap is known from the whole log before the fold (`scan`): one the phone
sent after a press it came before (it waited for the WiFi) moves that press
too; the fold folds again when one lands after such a press
(`moves_a_press`).  The rule itself is rules/parts.puzzle_on_table.  Pure."""

from __future__ import annotations

from ..log.rows import RowKind, kind_of
from ...rules.facts import Swap
from ...rules.parts import puzzle_on_table


def swap_of(payload: dict) -> Swap:
    """The swap fact of a stored `swap` action's payload."""
    return Swap(entrant=payload["entrant"], at_ms=payload["at"], packed=payload["packed"],
                opened=payload["opened"])


class OnTable:
    def __init__(self) -> None:
        self._swaps: dict[str, dict[int, Swap]] = {}            # entrant -> log row id -> its swap
        self._finishes: dict[str, dict[str, tuple[int, int]]] = {}   # entrant -> press id -> (at, puzzle)
        self._entrant_of: dict[str, str] = {}                   # press id -> entrant
        self._latest: dict[str, int] = {}                       # entrant -> its latest call's time (voided too)

    def reset(self) -> None:
        """Before the fold folds the log again: the calls are folded again
        (the swaps stay: `scan` reads them again)."""
        self._finishes, self._entrant_of, self._latest = {}, {}, {}

    def scan(self, rows: list[dict], flagged: dict[int, str]) -> None:
        """Every stored swap of the log (but the flagged), before the fold."""
        self._swaps = {}
        for row in rows:
            p = row["payload"]
            if kind_of(row) is RowKind.OP_SWAP and row["id"] not in flagged and \
                    all(type(p.get(k)) is int for k in ("at", "packed", "opened")):
                self.swap(row["id"], p)

    def swap(self, row_id: int, payload: dict) -> Swap:
        w = swap_of(payload)
        self._swaps.setdefault(w.entrant, {})[row_id] = w
        return w

    def moves_a_press(self, payload: dict) -> bool:
        """A swap that came before a call already folded (its time at or
        before that press's, a voided one too): the call may be of another
        puzzle."""
        latest = self._latest.get(payload["entrant"])
        return latest is not None and latest >= payload["at"]

    def called(self, entrant: str, pid: str, at: int, puzzle: int) -> None:
        """A finish call (a press fact) of the entrant."""
        self._finishes.setdefault(entrant, {})[pid] = (at, puzzle)
        self._entrant_of[pid] = entrant
        if at > self._latest.get(entrant, at - 1):
            self._latest[entrant] = at

    def voided(self, pid: str) -> None:
        """A void: that call finished nothing (its puzzle is on the table again)."""
        e = self._entrant_of.pop(pid, None)
        if e is not None:
            self._finishes[e].pop(pid, None)

    def puzzle(self, entrant: str, free: tuple[int, ...], at: int | None = None) -> int:
        """The puzzle on the entrant's table at hub time `at` (None: now,
        after everything folded), of the puzzles `free` it counts through."""
        return puzzle_on_table(free, list(self._finishes.get(entrant, {}).values()),
                               list(self._swaps.get(entrant, {}).values()), at)
