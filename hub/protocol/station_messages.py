"""A board's station states as the signed `stations` message carries them."""

from __future__ import annotations

from ..event.fold.competition import Competition
from ..event.fold.station_state import StationState
from .hub_protocol import STATION_CODES


def station_entries(comp: Competition, board: str, mine: dict[int, StationState]) -> list[list]:
    """One entry per button from 1 ([state code, call, the station's end,
    confirmed]); a button without a station is idle.  call: [boot, seq] of
    the open call when it is this board's (None: the desk's); not called,
    of the station's latest call, which the hub closed (confirmed or
    voided): a board still holding that call follows the hub's decision."""
    entries: list[list] = []
    for n in range(1, max(mine) + 1):
        s = mine.get(n)
        if s is None:
            entries.append([0, None, None, 0])
            continue
        call = None
        pid = s.call if s.state == "called" else comp.last_call_at(board, n)
        if pid is not None and comp.station_of(pid) == (board, n):
            _b, boot, seq = pid.split("/")
            call = [int(boot), int(seq)]
        entries.append([STATION_CODES[s.state], call, s.end_ms, s.confirmed])
    return entries
