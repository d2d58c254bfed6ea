"""The demo event: simulated boards playing a round of a preset, so a
newcomer sees the whole system work without hardware or set-up."""

from __future__ import annotations

import math

from .event_folder import Station
from ...rules.format_model import MAX_ROUND_MS
from ...rules.formats import Format, load_format
from ...rules.speed import faster
from ...rules.standings import Entrant


def sim_board_id(i: int) -> str:
    return f"sim{i + 1:02d}"


def demo_minutes(minutes: float | None, what: str, speed: float = 1) -> int | None:
    """A demo's round limit or warning given in minutes (divided by speed),
    as ms (None or 0: none given): ValueError for one no round has (a round
    lasts at most MAX_ROUND_MS), before anything starts."""
    if not minutes:
        return None
    ms = minutes * 60_000 / speed
    if not (math.isfinite(ms) and 1 <= ms <= MAX_ROUND_MS):
        raise ValueError(f"{what} {minutes:g}: minutes{f' (at --speed {speed:g})' if speed != 1 else ''} within"
                         f" a round, which lasts at most {MAX_ROUND_MS // 60_000}")
    return int(ms)


def demo_event(preset: str, boards: int, stations: int,
               speed: float = 1) -> tuple[Format, list[Entrant], list[Station]]:
    """Every station of every simulated board is one entrant (individuals
    and pairs); for team formats each board is one team (relay formats: one
    station per puzzle, the relay's and the later parts')."""
    fmt = faster(load_format(preset), speed)
    entrants: list[Entrant] = []
    table: list[Station] = []
    for i in range(boards):
        b = sim_board_id(i)
        if fmt.kind == "team":
            eid = f"team{i + 1:02d}"
            entrants.append(Entrant(eid, f"Team {i + 1}"))
            if fmt.relay is not None:
                table += [Station(b, n, f"Table {i + 1}", eid, n) for n in range(1, len(fmt.puzzles) + 1)]
            else:
                table.append(Station(b, 1, f"Table {i + 1}", eid, None))
        else:
            for st in range(1, stations + 1):
                eid = f"{b}/{st}"
                entrants.append(Entrant(eid, f"Puzzler {i + 1}.{st}"))
                table.append(Station(b, st, f"Table {i + 1}", eid, 1 if len(fmt.puzzles) == 1 else None))
    return fmt, entrants, table
