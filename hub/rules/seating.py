"""Seating: who sits at which table and button of the hall (`tabletimer
seat`).  Pure: the caller reads the hall and the entrants and writes
stations.csv (cli/draw.py).

The hall is its tables in the order they are numbered and walked, each with
its boards' buttons.  An entrant takes one button (its station), or in a
relay format one button per puzzle of the round, all at one table.  A table
seats as many entrants as its buttons allow, or, when the format has
`entrants.table_share_above` (seed 004: "two participants may share a table
when there are more than 30"), one while the round has at most that many
entrants and two above it.  Tables are filled in the hall's order, the
entrants taken in the order asked for:

- `random`: shuffled with `random.Random(seed)` (the same seed, the same plan),
- `rank-of`: by their place in an earlier round (the unranked after, by name),
- `name`: alphabetically,
- `registration`: in the order of entrants.csv.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Mapping, Sequence

ORDERS = ("random", "rank-of", "name", "registration")


class SeatingError(ValueError):
    """A seat plan that cannot be made; the text says what to do."""


@dataclass(frozen=True)
class Table:
    name: str
    buttons: tuple[tuple[str, int], ...]      # (board, button), in order


@dataclass(frozen=True)
class Seat:
    table: str
    board: str
    button: int
    entrant: str
    puzzle: int | None         # a relay station's puzzle; None: the entrant's puzzles in order


def name_key(name: str) -> str:
    """The alphabetical order of names, as a list is read (case and spacing aside)."""
    return " ".join(name.split()).casefold()


def seating_order(entrants: Sequence[tuple[str, str]], by: str, seed: int | None = None,
                  ranks: Mapping[str, int] | None = None) -> list[str]:
    """Entrant ids ((id, name) in registration order) in the order they are
    seated."""
    if by not in ORDERS:
        raise SeatingError(f"seat by {by!r}: one of {', '.join(ORDERS)}")
    ids = [e for e, _ in entrants]
    if by == "registration":
        return ids
    names = dict(entrants)
    by_name = sorted(ids, key=lambda e: (name_key(names[e]), e))
    if by == "name":
        return by_name
    if by == "rank-of":
        if ranks is None:
            raise SeatingError("seat by rank-of: name the earlier round (--by rank-of ROUND)")
        return sorted((e for e in by_name if e in ranks), key=lambda e: ranks[e]) + \
            [e for e in by_name if e not in ranks]
    if seed is None:
        raise SeatingError("seat by random: a seed is needed")
    order = sorted(ids)
    random.Random(seed).shuffle(order)
    return order


def per_table(count: int, share_above: int | None) -> int | None:
    """How many entrants a table seats: None (as many as its buttons
    allow) without the format's table_share_above, else 1 up to it, 2 above."""
    if share_above is None:
        return None
    return 1 if count <= share_above else 2


def seat_plan(tables: Sequence[Table], order: Sequence[str], puzzles: Sequence[int | None],
              share_above: int | None = None) -> list[Seat]:
    """The seats of the entrants (in `order`) at the hall's tables: each
    entrant one button per entry of `puzzles` ([None] for a station that
    counts its puzzles in order; a relay's puzzle numbers), at one table.
    SeatingError, saying what to do, when the hall has too few."""
    need = len(puzzles)
    most = per_table(len(order), share_above)
    seats: list[Seat] = []
    left = list(order)
    room = 0
    for t in tables:
        fits = len(t.buttons) // need
        if most is not None:
            fits = min(fits, most)
        room += fits
        for k in range(fits):
            if not left:
                break
            e = left.pop(0)
            for j, puzzle in enumerate(puzzles):
                board, button = t.buttons[k * need + j]
                seats.append(Seat(t.name, board, button, e, puzzle))
    if left:
        each = "" if most is None else (" (one entrant a table" if most == 1 else " (two entrants a table")
        each += f" above {share_above} entrants)" if most == 2 else (f" up to {share_above} entrants)" if most else "")
        stations = f"{need} buttons each" if need > 1 else "a button each"
        raise SeatingError(f"{len(order)} entrants, {stations}: the hall's {len(tables)} tables seat {room}"
                           f"{each}; add {len(order) - room} more seats to the hall (hall.csv: table,board,"
                           f"buttons), or move {len(order) - room} entrants to another round")
    return seats
