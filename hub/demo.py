"""The demo event: simulated boards playing a round of a preset, so a
newcomer sees the whole system work without hardware or set-up."""

from __future__ import annotations

from .event_folder import Station
from .formats import Format, load_format
from .standings import Entrant


def sim_board_id(i: int) -> str:
    return f"sim{i + 1:02d}"


def demo_event(preset: str, boards: int, stations: int) -> tuple[Format, list[Entrant], list[Station]]:
    """Every station of every simulated board is one entrant (individuals
    and pairs); for team formats each board is one team (relay formats: one
    station per relay puzzle)."""
    fmt = load_format(preset)
    entrants: list[Entrant] = []
    table: list[Station] = []
    for i in range(boards):
        b = sim_board_id(i)
        if fmt.kind == "team":
            eid = f"team{i + 1:02d}"
            entrants.append(Entrant(eid, f"Team {i + 1}"))
            relay = fmt.relay
            if relay is not None:
                table += [Station(b, k + 1, f"Table {i + 1}", eid, n) for k, n in enumerate(relay.numbers)]
            else:
                table.append(Station(b, 1, f"Table {i + 1}", eid, None))
        else:
            for st in range(1, stations + 1):
                eid = f"{b}/{st}"
                entrants.append(Entrant(eid, f"Puzzler {i + 1}.{st}"))
                table.append(Station(b, st, f"Table {i + 1}", eid, 1 if len(fmt.puzzles) == 1 else None))
    return fmt, entrants, table
