"""Check-in at the door (issue 47, item 3): who of a round's entrants has
come, as the log's `check_in` rows say.  Pure: the fold of the log
(competition.py) hands each row over and asks.

- `check_in entrant=ID` (present 1, the default): the entrant is here; its
  latest row counts, so `present=0` undoes a check-in made by mistake (the
  undo is a row of its own: the log keeps both, with who and when).
- A check-in is no fact: it ranks nothing.  The round's start names who of
  the entrants at a station is not checked in (consequences.py), once the
  round uses check-in at all (a check-in recorded); after the format's
  `entrants.no_show_after` the desk makes each of them DNS or gives the
  station to another participant in one step (actions/absentees.py).
- The count staff see ("34 of 41 checked in") is over the entrants holding a
  station now (stations.csv, after any replacement); a replacement's new
  entrant took the station in person and counts as here; an entrant marked
  DNS or DQ is not waited for.

The checks before a row is stored (`check`): the entrant must be in the
round, a check-in of someone already here or an undo of someone not checked
in is refused (a second phone scanned the same badge: nothing is written,
the answer says who checked them in and when)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Collection, Iterable, Mapping

from ...rules.timetext import fmt_clock


@dataclass(frozen=True)
class CheckIn:
    entrant: str
    present: bool          # False: a check-in undone
    row: int               # its log row
    who: str
    at_ms: int | None      # when it was recorded (hub ms)


@dataclass(frozen=True)
class CheckInSummary:
    """Who of the round's entrants at a station is here, in the entrants
    list's order."""
    expected: tuple[str, ...]     # the entrants at a station and not out (DNS, DQ)
    present: tuple[str, ...]      # of those, here: checked in, or seated by a replacement
    absent: tuple[str, ...]       # of those, not checked in
    reserves: tuple[str, ...]     # checked in, holding no station (ready to take an absent one's)
    in_use: bool                  # a check-in recorded in this round (else nobody is waited for)

    def text(self) -> str:
        """"34 of 41 checked in"."""
        return f"{len(self.present)} of {len(self.expected)} checked in"


class CheckInBook:
    """The latest check-in row of each entrant, in log order."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self._latest: dict[str, CheckIn] = {}
        self.rows = 0                             # check-in rows folded

    def record(self, row: dict) -> None:
        """Fold a check_in row (its shape checked: row_checks.row_problem)."""
        p = row["payload"]
        present = p.get("present")
        self._latest[p["entrant"]] = CheckIn(p["entrant"], present is None or present == 1, row["id"],
                                             p.get("who") or "operator", row.get("received_ms"))
        self.rows += 1

    def latest(self, entrant: str) -> CheckIn | None:
        """The entrant's latest check-in row (None: none)."""
        return self._latest.get(entrant)

    def is_present(self, entrant: str) -> bool:
        c = self._latest.get(entrant)
        return c is not None and c.present

    def summary(self, entrants: Iterable[str], seated: Collection[str], out: Collection[str],
                seated_by_replacement: Collection[str]) -> CheckInSummary:
        """entrants: every entrant id in the list's order; seated: those at
        a station now; out: DNS or DQ; seated_by_replacement: the new
        entrants of replacements (here: they took the station)."""
        expected: list[str] = []
        present: list[str] = []
        absent: list[str] = []
        reserves: list[str] = []
        for e in entrants:
            if e not in seated:
                if self.is_present(e):
                    reserves.append(e)
                continue
            if e in out:
                continue
            expected.append(e)
            (present if self.is_present(e) or e in seated_by_replacement else absent).append(e)
        return CheckInSummary(tuple(expected), tuple(present), tuple(absent), tuple(reserves), self.rows > 0)


def not_in_round(entrant: str) -> str:
    """The refusal of a check-in of someone the round does not have."""
    return (f"check_in: no entrant {entrant!r} in this round: nothing was recorded. Search again by "
            "name (or scan the badge or list of this round: another round's code names another "
            "round's entrant); someone registered but not listed is added to the round's "
            "entrants.csv at the desk first")


def check(book: CheckInBook, p: dict, entrant_ids: Collection[str], given_to: Mapping[str, str]) -> None:
    """ValueError, in an operator's words, unless the check-in (its shape
    checked) may be recorded: the entrant is in the round, its station was
    not given to another (given_to: absent entrant -> who took it), and the
    check-in changes something (not here twice, not undone twice)."""
    eid = p["entrant"]
    if eid not in entrant_ids:
        raise ValueError(not_in_round(eid))
    present = p.get("present") is None or p["present"] == 1
    if present and eid in given_to:
        raise ValueError(f"check_in: {eid}'s station went to {given_to[eid]} already: nothing was recorded; "
                         f"to seat {eid} again the desk gives the station back (`replace absent="
                         f"{given_to[eid]} entrant={eid}`)")
    last = book.latest(eid)
    if present and last is not None and last.present:
        raise ValueError(f"check_in: {eid} was checked in already ({_by(last)}): nothing was recorded")
    if not present and (last is None or not last.present):
        raise ValueError(f"check_in: {eid} is not checked in: there is nothing to undo (nothing was recorded)")


def _by(c: CheckIn) -> str:
    when = f" at {fmt_clock(c.at_ms)}" if c.at_ms is not None else ""
    return f"by {c.who}{when}, log row #{c.row}"
