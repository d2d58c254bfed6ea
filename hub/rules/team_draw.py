"""The team draw (seed 000: "Each competitor registers individually. Team
composition is determined randomly by the organizer"): individually
registered competitors drawn into teams, repeatably.  Pure: the caller reads
the registrations and writes the teams (cli/draw.py).

- **Repeatable**: `random.Random(seed)` only (never the global generator), and
  the registrations taken in the order of their ids, so the same seed and the
  same registrations (in any row order) give the same teams; "draw again" is
  another seed.
- **Sizes** (`team_sizes`): teams of `size`; a count that does not divide
  makes the last teams one smaller (never a team of one member short of
  the format's lower limit), else, when the format allows bigger teams, one
  bigger; else it is refused, saying how many to add or leave out.
- **Keep apart** (`apart`: a group for each competitor, e.g. their club or
  family; "" for none): no two of a group in one team.  A group with more
  members than there are teams is refused, naming the group.
- **Balance** (`ranks`: a place in an earlier round for each competitor who
  has one): competitors in the order of their places (the unranked after,
  in a random order) go to the teams in snake order (1..n, n..1, 1..n, ...),
  so each team gets one of the best n, one of the next n, ...  A
  competitor whose group already sits in the next team goes to the next
  team in that order that has room and none of the group.  Without it each
  group (the biggest first; a competitor of no group is a group of one)
  goes to as many teams, those with the most room left, ties drawn.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Mapping, Sequence


class DrawError(ValueError):
    """A draw that cannot be made as asked; the text says what to do."""


@dataclass(frozen=True)
class Person:
    id: str
    name: str
    group: str = ""            # the keep-apart column's value ("" : none)
    eligible: bool = True


@dataclass(frozen=True)
class Team:
    id: str
    name: str
    members: tuple[Person, ...]


@dataclass(frozen=True)
class Draw:
    seed: int
    size: int
    teams: tuple[Team, ...]
    how: str                   # how the count was split ("10 teams of 4", "8 teams of 4 and 3 of 3")


def team_sizes(count: int, size: int, lo: int, hi: int) -> list[int]:
    """The sizes of the teams `count` competitors make in teams of `size`,
    within the format's lo..hi members (DrawError, saying what to do, when
    they cannot be made)."""
    if not lo <= size <= hi:
        limits = str(lo) if lo == hi else f"{lo}-{hi}"
        raise DrawError(f"teams of {size}: the round's format has teams of {limits} members")
    if count < size:
        raise DrawError(f"{count} registered: a team of {size} needs {size}; register more, or draw "
                        f"smaller teams (--teams-of)")
    if count % size == 0:
        return [size] * (count // size)
    n = -(-count // size)              # one team more, some of them one smaller
    if count // n >= lo:
        return _even(count, n)
    n = count // size                  # as many teams, some of them one bigger
    if -(-count // n) <= hi:
        return _even(count, n)
    more, less = size - count % size, count % size
    raise DrawError(f"{count} registered do not make teams of {size} (the format's teams have "
                    f"{lo if lo == hi else f'{lo}-{hi}'} members): register {more} more, or leave "
                    f"{less} out (take them off the registrations), then draw again")


def _even(count: int, n: int) -> list[int]:
    base, extra = divmod(count, n)
    return [base + 1] * extra + [base] * (n - extra)


def sizes_text(sizes: Sequence[int]) -> str:
    """"10 teams of 4", "8 teams of 4 and 3 of 3"."""
    out: list[str] = []
    for s in sorted(set(sizes), reverse=True):
        k = sizes.count(s)
        out.append(f"{k} {'team' if k == 1 else 'teams'} of {s}" if not out else f"{k} of {s}")
    return " and ".join(out)


def check_people(people: Sequence[Person]) -> None:
    """DrawError for registrations a draw cannot tell apart: an id or a
    name twice."""
    ids: dict[str, Person] = {}
    names: dict[str, Person] = {}
    for p in people:
        if p.id in ids:
            raise DrawError(f"id {p.id!r} is registered twice ({ids[p.id].name!r} and {p.name!r}): "
                            f"give each registration its own id")
        key = " ".join(p.name.split()).casefold()
        if key in names:
            raise DrawError(f"two registrations named {names[key].name!r} (ids {names[key].id} and {p.id}): the "
                            f"teams and the tables could not tell them apart; add what tells them apart "
                            f"to one name (e.g. \"{names[key].name} (2)\" or the town), or remove a double registration")
        ids[p.id] = names[key] = p


def team_ids(n: int) -> list[tuple[str, str]]:
    """(id, name) of n drawn teams: T01 "Team 1", ... (T001 from 100 teams)."""
    width = max(2, len(str(n)))
    return [(f"T{i:0{width}d}", f"Team {i}") for i in range(1, n + 1)]


def draw_teams(people: Sequence[Person], size: int, seed: int, lo: int, hi: int,
               ranks: Mapping[str, int] | None = None) -> Draw:
    """The teams of a draw (the module docstring); DrawError, saying what to
    do, for one that cannot be made.  ranks: balance by these places
    (person id -> place; None: no balance)."""
    check_people(people)
    sizes = team_sizes(len(people), size, lo, hi)
    n = len(sizes)
    groups: dict[str, list[Person]] = {}
    for p in people:
        if p.group.strip():
            groups.setdefault(_group_key(p.group), []).append(p)
    for members in sorted(groups.values(), key=len, reverse=True):
        if len(members) > n:
            raise DrawError(f"{members[0].group!r} has {len(members)} registered, more than the {n} teams: "
                            f"they cannot all be kept apart; draw bigger teams, or without --apart-by, or "
                            f"keep apart by another column")
    rng = random.Random(seed)
    order = sorted(people, key=lambda p: p.id)
    rng.shuffle(order)
    if ranks is None:
        teams = _spread(order, sizes, rng)
    else:
        ranked = sorted((p for p in order if p.id in ranks), key=lambda p: ranks[p.id])
        teams = _snaked(ranked + [p for p in order if p.id not in ranks], sizes)
    names = team_ids(n)
    return Draw(seed, size, tuple(Team(tid, tname, tuple(m)) for (tid, tname), m in zip(names, teams)),
                sizes_text(sizes))


def _spread(order: list[Person], sizes: list[int], rng: random.Random) -> list[list[Person]]:
    """Each group (a competitor without one: a group of one), the biggest
    first, into as many teams, those with the most room left (ties drawn):
    a group fits whenever it has no more members than there are teams."""
    n = len(sizes)
    groups: dict[str, list[Person]] = {}
    for i, p in enumerate(order):
        groups.setdefault(_group_key(p.group) or f"\0{i}", []).append(p)
    teams: list[list[Person]] = [[] for _ in range(n)]
    for members in sorted(groups.values(), key=len, reverse=True):
        room = sorted(range(n), key=lambda t: (len(teams[t]) - sizes[t], rng.random()))
        chosen = [t for t in room if len(teams[t]) < sizes[t]][:len(members)]
        if len(chosen) < len(members):
            raise DrawError(f"{members[0].group!r} cannot be kept apart: too few teams have room left; "
                            f"draw again with another seed, or keep apart by another column")
        for p, t in zip(members, chosen):
            teams[t].append(p)
    for team in teams:
        rng.shuffle(team)
    return teams


def _snaked(order: list[Person], sizes: list[int]) -> list[list[Person]]:
    """The competitors in order into the teams in snake order, each into the
    next team in that order with room and none of its group."""
    turns = _snake(len(sizes))
    teams: list[list[Person]] = [[] for _ in sizes]
    at = 0
    for p in order:
        place = _place(p, teams, sizes, turns, at)
        teams[turns[place]].append(p)
        at = place + 1
    return teams


def _group_key(group: str) -> str:
    return " ".join(group.split()).casefold()


def _snake(n: int) -> list[int]:
    """One turn of the snake: teams 1..n, then n..1."""
    return list(range(n)) + list(range(n - 1, -1, -1))


def _place(p: Person, teams: list[list[Person]], sizes: list[int], turns: list[int], at: int) -> int:
    """The position in `turns` (from `at` on, round and round) of the first
    team with room and none of p's group."""
    key = _group_key(p.group)
    for k in range(len(turns)):
        i = (at + k) % len(turns)
        t = turns[i]
        if len(teams[t]) < sizes[t] and not (key and any(_group_key(m.group) == key for m in teams[t])):
            return i
    raise DrawError(f"{p.name!r} ({p.group!r}) cannot be placed: every team with room has one of "
                    f"{p.group!r} already; draw again with another seed, or keep apart by another column")
