"""The finish calls as the facts leave them, kept by the fold
(competition.py hands it each fact as it adds it): every press, which are
open, voided, confirmed, the current call of each entrant's puzzle, the
piece counts recorded and who is out (DNS / DQ).  The stations' states, the
referees' pages and the desk's consequences read these instead of walking
the facts again.  Pure: no I/O.

A press is the current call of its (entrant, puzzle) until it is voided
(the one before it is current again); a confirmation by entrant and puzzle
confirms the current call when it is added.
"""

from __future__ import annotations

from typing import Literal

from ...rules.facts import (Confirm, Count, DidNotStart, Disqualified, Fact, Press, Reinstated,
                            Void)

Out = Literal["dns", "dq"]


class CallBook:
    def __init__(self) -> None:
        self._presses: dict[str, Press] = {}            # press id -> press, in fact order
        self._all_presses: list[Press] = []             # every press fact, in fact order
        self._open: dict[str, Press] = {}               # neither confirmed nor voided, log order
        self._closed: set[str] = set()                  # press ids confirmed or voided
        self._voided: set[str] = set()                  # press ids voided
        self._confirms: dict[str, list[Confirm]] = {}   # press id ("" by entrant + puzzle) -> its confirmations
        self._named: set[str] = set()                   # press ids a confirmation names
        self._current: dict[tuple[str, int], list[str]] = {}   # (entrant, puzzle) -> unvoided calls, oldest first
        self._confirmed: dict[str, int] = {}            # press id -> missing pieces, while confirmed
        self._counts: dict[str, dict[int, Count]] = {}  # entrant -> puzzle -> the count recorded last
        self._out: dict[str, Out] = {}                  # entrant -> dns | dq (the latest of dns, dq, reinstate)
        self._called: dict[str, None] = {}              # the entrants with a press, in fact order

    def add(self, f: Fact) -> None:
        """Fold one fact (the competition's _add, in fact order)."""
        if isinstance(f, Press):
            self._presses[f.press_id] = f
            self._all_presses.append(f)
            if f.press_id not in self._closed:
                self._open[f.press_id] = f
            self._current.setdefault((f.entrant, f.puzzle), []).append(f.press_id)
            self._called.setdefault(f.entrant, None)
        elif isinstance(f, Void):
            self._close(f.press_id)
            self._voided.add(f.press_id)
            p = self._presses.get(f.press_id)
            if p is not None:
                calls = self._current.get((p.entrant, p.puzzle), [])
                if f.press_id in calls:
                    calls.remove(f.press_id)
            self._confirmed.pop(f.press_id, None)
        elif isinstance(f, Confirm):
            self._confirms.setdefault(f.press_id, []).append(f)
            pid = f.press_id
            if pid:
                self._named.add(pid)
            else:
                calls = self._current.get((f.entrant, f.puzzle), [])
                pid = calls[-1] if calls else ""
            # a confirmation by entrant and puzzle closes the call it confirms, as one by press id
            # (it was left waiting: `results --official` refused a round the standings showed confirmed)
            self._close(pid or f.press_id)
            if pid in self._presses:
                self._confirmed[pid] = f.missing_found + f.missing_lost + f.missing_adjacent
        elif isinstance(f, Count):
            self._counts.setdefault(f.entrant, {})[f.puzzle] = f
        elif isinstance(f, DidNotStart):
            self._out[f.entrant] = "dns"
        elif isinstance(f, Disqualified):
            self._out[f.entrant] = "dq"
        elif isinstance(f, Reinstated):
            self._out.pop(f.entrant, None)

    def _close(self, pid: str) -> None:
        self._closed.add(pid)
        self._open.pop(pid, None)

    # ------------------------------------------------------------ queries
    def press(self, pid: str) -> Press | None:
        """The press a press id names, or None."""
        return self._presses.get(pid)

    def presses(self) -> list[Press]:
        """Every finish call recorded (voided ones too), in fact order."""
        return list(self._all_presses)

    def open_presses(self) -> list[Press]:
        """The calls neither confirmed nor voided, in fact order."""
        return list(self._open.values())

    def is_closed(self, pid: str) -> bool:
        """Confirmed or voided (a decision recorded on it)."""
        return pid in self._closed

    def is_voided(self, pid: str) -> bool:
        return pid in self._voided

    def named_by_confirmation(self, pid: str) -> bool:
        """A confirmation names this press id (by press id, not by entrant
        and puzzle): a confirmed finish, for the desk's consequences."""
        return pid in self._named

    def confirmations(self, pid: str) -> list[Confirm]:
        """The confirmations of a press id ("": those by entrant and puzzle)."""
        return list(self._confirms.get(pid, ()))

    def current_call(self, entrant: str, puzzle: int) -> str | None:
        """The press id of an entrant's puzzle's current call (its latest
        not voided; None: none)."""
        calls = self._current.get((entrant, puzzle))
        return calls[-1] if calls else None

    def standing_calls(self, entrant: str, puzzle: int) -> list[Press]:
        """An entrant's puzzle's calls not voided, in fact order."""
        return [self._presses[pid] for pid in self._current.get((entrant, puzzle), ()) if pid not in self._voided]

    def called_entrants(self) -> list[str]:
        """The entrants with a finish call (voided ones too), in fact order."""
        return list(self._called)

    def confirmed_missing(self, pid: str) -> int | None:
        """The missing pieces (all kinds) of a confirmed call; None while
        it is not confirmed (or was voided since)."""
        return self._confirmed.get(pid)

    def recorded_count(self, entrant: str, puzzle: int) -> Count | None:
        """The piece count recorded last for an entrant's puzzle."""
        return self._counts.get(entrant, {}).get(puzzle)

    def recorded_counts(self, entrant: str) -> dict[int, Count]:
        """puzzle -> the piece count recorded last, of an entrant's puzzles."""
        return dict(self._counts.get(entrant, {}))

    def out(self, entrant: str) -> Out | None:
        """dns or dq when the facts say the entrant is out, else None."""
        return self._out.get(entrant)
