"""The short press ids an operator reads aloud and types: "T07-5", the
board's 5th press in this event's log (every install of the board id, in
the log's order: a number never changes once given).  Long press ids
(board_events.py: "T07/3/5", "T07.2/1/4") stay the record; both forms name
the same press wherever a press id is taken.  Pure."""

from __future__ import annotations

from ..log.board_events import short_press_id
from ..log.rows import RowKind, kind_of


def is_board_press(row: dict) -> bool:
    return kind_of(row) is RowKind.BOARD_PRESS


class PressNumbers:
    def __init__(self) -> None:
        self._number: dict[int, int] = {}     # a board press's row id -> its number on its board
        self._count: dict[str, int] = {}      # board -> its presses numbered
        self.forget_names()

    def numbered(self, row: dict, rows: list[dict], last: bool, skipped: dict[int, str]) -> None:
        """A board press row entered the log (rows: all of them, in log
        order, skipped: those never folded): the next number of its board
        for a row after all the others (always, for the rows of one hub);
        all of them again for one that lands among them."""
        if last:
            n = self._count[row["board"]] = self._count.get(row["board"], 0) + 1
            self._number[row["id"]] = n
            return
        self._number, self._count = {}, {}
        for r in rows:
            if is_board_press(r) and r["id"] not in skipped:
                self.numbered(r, rows, True, skipped)

    def forget_names(self) -> None:
        """A new fold names the presses again (their long ids come from it)."""
        self._short: dict[str, str] = {}          # long press id -> short form
        self._long: dict[str, str] = {}           # short form -> long press id
        self._long_ci: dict[str, str | None] = {}   # short form, lower case -> long id (None: two)

    def named(self, row: dict, pid: str) -> None:
        """The fold gave the board press row its long press id."""
        n = self._number.get(row["id"])
        if n is None:
            return
        short = short_press_id(row["board"], n)
        self._short[pid], self._long[short] = short, pid
        low = short.lower()
        self._long_ci[low] = pid if low not in self._long_ci else None

    def short(self, pid: str) -> str:
        return self._short.get(pid, pid)

    def canonical(self, text: str) -> str:
        got = self._long.get(text) or self._long_ci.get(text.lower())
        return got if got is not None else text
