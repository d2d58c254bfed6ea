"""A format's fixed order as the fold keeps it (seed 003: "Puslespillene
skal lægges i den fastsatte rækkefølge, ét ad gangen.  Det er ikke
tilladt at springe et puslespil over"): a finish call of a later puzzle
while an earlier one is not finished is a conflict for the referee, never a
credited finish (the rule: rules/parts.py `out_of_fixed_order`, which the
standings apply too), and what the desk and the phones may record: no
finish, confirmation or count of a puzzle before the earlier ones are
finished.  Pure: the fold (competition.py) hands over its call book.

A conflict stays open while the call stands out of order: the referee
voids it (the team skipped a puzzle, or pressed the wrong button) or
records the earlier puzzle's finish (it was missed); a `resolve` alone
would leave it as it is, and is refused."""

from __future__ import annotations

from typing import Callable

from .call_book import CallBook
from .conflict_book import OpenConflict
from ...rules.durations import fmt_duration
from ...rules.facts import Fact, Press, Void
from ...rules.format_model import Format
from ...rules.parts import out_of_fixed_order
from ...rules.score_model import part_spans

Short = Callable[[str], str]          # a press id as the desk reads it


class FixedOrder:
    """The fixed parts of a format (none: every method answers nothing)."""

    def __init__(self, fmt: Format) -> None:
        self.spans = [s for s in part_spans(fmt) if s[0] == "fixed"]
        self.active = bool(self.spans)
        self.res = fmt.resolution_ms
        # the conflicts as last found: (the fold's facts, how many, entrant -> its conflicts)
        self._seen: tuple[list[Fact] | None, int, dict[str, list[OpenConflict]]] = (None, 0, {})

    def finishes(self, calls: CallBook, entrant: str, without: str = "") -> dict[int, Press]:
        """puzzle -> an entrant's finish as the standings take it: its
        earliest standing (not voided) call (without: leave that press
        out, one a correction replaces)."""
        out: dict[int, Press] = {}
        for _, a, b in self.spans:
            for pz in range(a + 1, b + 1):
                standing = [p for p in calls.standing_calls(entrant, pz) if p.press_id != without]
                if standing:
                    out[pz] = min(standing, key=lambda p: p.at_ms)
        return out

    def breaks(self, calls: CallBook, entrant: str) -> dict[int, tuple[Press, int]]:
        """puzzle -> (its call, the earlier puzzle not finished before it),
        of an entrant's calls out of the fixed order."""
        fin = self.finishes(calls, entrant)
        got = out_of_fixed_order(self.spans, {pz: p.at_ms for pz, p in fin.items()})
        return {pz: (fin[pz], before) for pz, before in got.items()}

    def conflicts(self, calls: CallBook, facts: list[Fact], row_of: Callable[[str], int],
                  where: Callable[[str], str], short: Short, start: int | None) -> list[OpenConflict]:
        """Every call out of the fixed order, in log order, as the desk's
        CONFLICT line (row: the call's log row).  facts: the fold's (the
        entrants of the facts added since the last time are looked at
        again; a new list: every entrant); row_of, where, short: a press
        id's log row, its table, its short form; start: the round's start
        (hub ms)."""
        if not self.active:
            return []
        seen, n, by = self._seen
        if seen is not facts:
            touched, by = calls.called_entrants(), {}
        else:
            touched = list(dict.fromkeys(e for e in map(lambda f: _entrant_of(calls, f), facts[n:]) if e))
        for entrant in touched:
            got = [OpenConflict(row_of(p.press_id), conflict_text(p, before, where(p.press_id),
                                                                  short(p.press_id), start, self.res))
                   for p, before in self.breaks(calls, entrant).values()]
            if got:
                by[entrant] = got
            else:
                by.pop(entrant, None)
        self._seen = (facts, len(facts), by)
        return sorted((c for got in by.values() for c in got), key=lambda c: c.row)

    def blocker(self, calls: CallBook, entrant: str, puzzle: int, at: int | None,
                without: str = "") -> tuple[int, Press | None] | None:
        """Why a finish of an entrant's puzzle at `at` (None: a count of
        it, the puzzle on the table) would be out of the fixed order: (the
        earlier puzzle not finished before it, that puzzle's standing call
        if it has one); None: in order."""
        fin = self.finishes(calls, entrant, without)
        times = {pz: p.at_ms for pz, p in fin.items()}
        if at is None:
            times.pop(puzzle, None)
            for work, a, b in self.spans:
                if a < puzzle <= b:
                    wrong = out_of_fixed_order([(work, a, puzzle - 1)], times)
                    gap = next((pz for pz in range(a + 1, puzzle) if pz not in times or pz in wrong), None)
                    return None if gap is None else (gap, fin.get(gap))
            return None
        times[puzzle] = min(at, times.get(puzzle, at))
        before = out_of_fixed_order(self.spans, times).get(puzzle)
        return None if before is None else (before, fin.get(before))

    def check(self, calls: CallBook, action: str, p: dict, press: Press | None, start: int | None,
              short: Short) -> None:
        """ValueError, in an operator's words, unless the action keeps the
        fixed order: a finish by hand (press), a correction's new time
        (correct), a confirmation (confirm: of the call it names, or of the
        entrant's puzzle's finish) or a count (count) of a puzzle whose
        earlier puzzles are not all finished before it.  press: the call a
        press id names (confirm, correct)."""
        if not self.active or action not in ("press", "correct", "confirm", "count"):
            return
        named = press if action in ("confirm", "correct") else None
        entrant = named.entrant if named is not None else p.get("entrant")
        puzzle = named.puzzle if named is not None else p.get("puzzle") or 1
        if not isinstance(entrant, str) or not isinstance(puzzle, int):
            return
        at: int | None = None
        if action in ("press", "correct"):
            at = p.get("at")
        elif action == "confirm":
            mine = press if press is not None else self.finishes(calls, entrant).get(puzzle)
            if mine is None:
                return                  # nothing to confirm: the standings' note says so
            at = mine.at_ms
        if action != "count" and not isinstance(at, int):
            return
        without = press.press_id if action == "correct" and press is not None else ""
        got = self.blocker(calls, entrant, puzzle, at, without)
        if got is not None:
            raise ValueError(refusal(action, entrant, puzzle, at, got, press, start, short, self.res))


def _entrant_of(calls: CallBook, f: Fact) -> str | None:
    """The entrant whose calls a fact changes (a press, a void), else None."""
    if isinstance(f, Press):
        return f.entrant
    if isinstance(f, Void):
        p = calls.press(f.press_id)
        return p.entrant if p is not None else None
    return None


def _since(at: int, start: int | None, res: int) -> str:
    """A time since the round's start, as the standings show it (at the format's resolution)."""
    return fmt_duration((at - start) // res * res, res) if start is not None and at >= start else f"{at} (hub ms)"


def refusal(action: str, entrant: str, puzzle: int, at: int | None, got: tuple[int, Press | None],
            press: Press | None, start: int | None, short: Short, res: int) -> str:
    """The desk's (and a phone's) refusal of an action out of the fixed
    order: what the rule is, what is missing, what to do."""
    before, its = got
    rule = f"this format's puzzles are done in a fixed order, none skipped, and puzzle {before} comes first"
    if its is None:
        state = f"{entrant}'s puzzle {before} has no finish" + (" before it" if at is not None else "")
    elif at is not None and its.at_ms > at:
        state = f"{entrant}'s puzzle {before} is finished only at {_since(its.at_ms, start, res)}, after it"
    else:
        state = (f"{entrant}'s puzzle {before}'s call {short(its.press_id)} is out of the fixed order "
                 f"itself (a CONFLICT to settle first)")
    first = f"record puzzle {before}'s finish first (at the desk: `press entrant={entrant} puzzle={before} at=H:MM:SS`)"
    if action == "count" or at is None:
        return (f"count: {entrant}'s puzzle {puzzle} is not on the table: {rule}, and {state}; count "
                f"puzzle {before} instead (`count entrant={entrant} puzzle={before} placed=N`), or {first}")
    if action == "confirm":
        name = short(press.press_id) if press is not None else None
        call = f"call {name}" if name else f"the call of puzzle {puzzle}"
        return (f"confirm: {call} ({entrant}'s puzzle {puzzle} at {_since(at, start, res)}) is no finish: "
                f"{rule}, and {state}; void it (`void press_id={name or '...'} why=...`) if puzzle "
                f"{before} was skipped or the wrong button pressed, or {first}")
    return (f"{action}: {entrant}'s puzzle {puzzle} at {_since(at, start, res)} would be a finish out of order: "
            f"{rule}, and {state}; {first}")


def conflict_text(p: Press, before: int, where: str, short: str, start: int | None, res: int) -> str:
    """A call out of the fixed order as the desk's CONFLICT line."""
    return (f"CONFLICT at {where} ({p.entrant}): call {short} is puzzle {p.puzzle} at {_since(p.at_ms, start, res)}, "
            f"but puzzle {before} is not finished before it (fixed order, none skipped): not a finish, "
            f"not credited; if puzzle {before} was skipped or the wrong button pressed, void it "
            f"(`tabletimer act DIR void press_id={short} why=...`); if puzzle {before}'s finish was "
            f"missed, record it (`tabletimer act DIR press entrant={p.entrant} puzzle={before} "
            f"at=H:MM:SS`) and this call counts")


def resolve_refusal(row: int) -> str:
    """A `resolve` of a call out of the fixed order: refused."""
    return (f"resolve: log row #{row} is a finish call out of the fixed order, which a note does not "
            f"settle: void the call, or record the earlier puzzle's finish (its CONFLICT line says how)")
