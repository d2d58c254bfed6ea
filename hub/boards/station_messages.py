"""A board's station states as the signed `stations` message carries them."""

from __future__ import annotations

from ..event.competition import Competition
from ..event.station_state import StationState
from .hub_protocol import STATION_CODES


def station_entries(comp: Competition, board: str, mine: dict[int, StationState]) -> list[list]:
    """One entry per button from 1 ([state code, the open call's [boot, seq]
    when it is this board's, the station's end, confirmed]); a button
    without a station is idle."""
    entries: list[list] = []
    for n in range(1, max(mine) + 1):
        s = mine.get(n)
        if s is None:
            entries.append([0, None, None, 0])
            continue
        call = None
        if s.call is not None and comp.station_of(s.call) == (board, n):
            _b, boot, seq = s.call.split("/")
            call = [int(boot), int(seq)]
        entries.append([STATION_CODES[s.state], call, s.end_ms, s.confirmed])
    return entries
