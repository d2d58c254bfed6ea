"""The facts the standings engine folds (hub/rules/standings.py has what each means) and
the entrants they are about.  Facts are small dataclasses, each with an explicit `kind` (a
Literal: a checker narrows the union `Fact` by isinstance or by kind), in log order; times are
integer milliseconds on one clock."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Union

from .format_model import Format


@dataclass(slots=True)
class RoundStart:
    kind: Literal["round_start"] = field(default="round_start", init=False)
    at_ms: int = 0
    limit_ms: int | None = None       # this round's own time limit (None: the format's)


@dataclass(slots=True)
class StartOffset:
    """The entrant's own start is round start + offset_ms (the limit runs
    from it when the format says offset_extends_limit)."""
    kind: Literal["start_offset"] = field(default="start_offset", init=False)
    entrant: str = ""
    offset_ms: int = 0


@dataclass(slots=True)
class Press:
    """A finish call (raised hand, button) for one puzzle/station, numbered
    1.. through the round as in the format."""
    kind: Literal["press"] = field(default="press", init=False)
    entrant: str = ""
    puzzle: int = 1
    at_ms: int = 0
    press_id: str = ""


@dataclass(slots=True)
class Void:
    kind: Literal["void"] = field(default="void", init=False)
    press_id: str = ""


@dataclass(slots=True)
class Confirm:
    """The referee's check of a finished puzzle.  Names the press by
    press_id, or by entrant + puzzle (then it confirms that puzzle's current
    finish when the fact is applied).  Missing pieces fall in three disjoint
    groups: found (an ordinary missing piece; Norwegian: found within
    reasonable time), lost (gone altogether) and adjacent (part of a group of
    2+ missing pieces that sit next to each other: a production fault)."""
    kind: Literal["confirm"] = field(default="confirm", init=False)
    entrant: str = ""
    puzzle: int = 0
    press_id: str = ""
    missing_found: int = 0
    missing_lost: int = 0
    missing_adjacent: int = 0


@dataclass(slots=True)
class Count:
    """Pieces at time-up on an unfinished puzzle (groups >= min_group only),
    as placed or as remaining (placed = pieces - remaining)."""
    kind: Literal["count"] = field(default="count", init=False)
    entrant: str = ""
    puzzle: int = 1
    placed: int | None = None
    remaining: int | None = None


@dataclass(slots=True)
class Swap:
    """One-at-a-time rounds: the entrant packed the unfinished puzzle
    `packed` into its box and opened `opened`."""
    kind: Literal["swap"] = field(default="swap", init=False)
    entrant: str = ""
    at_ms: int = 0
    packed: int = 0
    opened: int = 0


@dataclass(slots=True)
class DidNotStart:
    """reason: why, when the standings say it (an absent entrant whose
    station went to another: hub/event/fold/replacements.py)."""
    kind: Literal["dns"] = field(default="dns", init=False)
    entrant: str = ""
    reason: str = ""


@dataclass(slots=True)
class Disqualified:
    kind: Literal["dq"] = field(default="dq", init=False)
    entrant: str = ""
    reason: str = ""


@dataclass(slots=True)
class Reinstated:
    """Undoes a dns or dq."""
    kind: Literal["reinstate"] = field(default="reinstate", init=False)
    entrant: str = ""


Fact = Union[RoundStart, StartOffset, Press, Void, Confirm, Count, Swap, DidNotStart,
             Disqualified, Reinstated]


FactKind = Literal["round_start", "start_offset", "press", "void", "confirm", "count", "swap", "dns",
                   "dq", "reinstate"]

# each kind's type, by its name in the log (an operator row's type)
FACT_KINDS: dict[FactKind, type[Fact]] = {c().kind: c for c in (RoundStart, StartOffset, Press, Void, Confirm,
                                                           Count, Swap, DidNotStart, Disqualified, Reinstated)}


@dataclass(slots=True)
class Member:
    name: str
    eligible: bool = True


@dataclass(slots=True)
class Entrant:
    """An individual, pair or team.  Official (may take an award place) when
    the format needs no eligibility, else when at least
    format.eligible_members_min members are eligible, or - without a member
    list - when `eligible` is true."""
    id: str
    name: str = ""
    members: tuple[Member, ...] = ()
    eligible: bool = True


def is_official(fmt: Format, e: Entrant) -> bool:
    k = fmt.eligible_members_min
    if k == 0:
        return True
    if e.members:
        return sum(1 for m in e.members if m.eligible) >= k
    return e.eligible
