"""Every station's state as the event log makes it: the one truth that
the boards, the consoles and the pages show.  Pure: no I/O.

A station (a board's button) times one entrant: one puzzle, or the
entrant's puzzles one after the other ("next puzzle" stations).  Its state:

    idle     before the round starts
    running  a press is a finish call
    called   a finish call waits for a referee (call: its press id)
    done     every puzzle it times is confirmed
    stopped  the entrant's time is up, or DNS / DQ (reason says which; DNS / DQ
             whatever the station called or had confirmed before)

The fold keeps the calls (call_book.py): a press is the current call of its
(entrant, puzzle) until it is voided (the one before it is current again)
or confirmed; a confirmation by entrant and puzzle confirms the current
call.  A board's confirmation or void of a call already closed is a
conflict the competition refuses before it gets here (competition.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:                                     # no import cycle at run time
    from .competition import Competition

STATES = ("idle", "running", "called", "done", "stopped")


@dataclass(frozen=True)
class StationState:
    board: str
    button: int
    entrant: str
    puzzle: int | None         # the puzzle it times now (next-puzzle stations: the next one)
    state: str                 # one of STATES
    call: str | None           # the open call's press id (called)
    confirmed: int             # finish calls of this station's puzzles confirmed so far
    calls: int                 # finish calls it makes in all (one per puzzle it times)
    start_ms: int | None       # the entrant's start (hub ms; a new start time moves it)
    end_ms: int | None         # the entrant's time-up (hub ms)
    time_ms: int | None        # the current call's or last confirmed finish's time since the start
    missing: int               # missing pieces of the last confirmation (all kinds)
    reason: str = ""           # stopped: "time up", "dns" or "dq"

    def as_dict(self) -> dict:
        return {"board": self.board, "button": self.button, "entrant": self.entrant, "puzzle": self.puzzle,
                "state": self.state, "call": self.call, "confirmed": self.confirmed, "calls": self.calls,
                "start_ms": self.start_ms, "end_ms": self.end_ms, "time_ms": self.time_ms,
                "missing": self.missing, "reason": self.reason}


def station_states(comp: "Competition", now_ms: int | None,
                   boards: set[str] | None = None) -> list[StationState]:
    """The state of every station at hub time now_ms (None: after the
    round, everything that is not done is stopped), by board and button;
    only those of `boards` if given (the hub answers one board's event:
    the other entrants' presses are not looked at)."""
    stations = comp.stations if boards is None else comp.stations_on(boards)
    book = comp.call_book()
    start = comp.start_ms
    end = comp.round_end_ms()
    n_puzzles = len(comp.format.puzzles)
    out = []
    for s in sorted(stations, key=lambda s: (s.board, s.button)):
        own = [s.puzzle] if s.puzzle is not None else comp.free_puzzles(s.entrant)
        offset = comp.offset_of(s.entrant) if comp.format.start_offsets else 0
        e_start = start + offset if start is not None else None
        e_end = None
        if start is not None and end is not None:
            e_end = start + (comp.round_limit_ms() or 0) + (offset if comp.format.offset_extends_limit else 0)
        open_call, done_n, last_time, missing, next_puzzle = None, 0, None, 0, None
        for pz in own:
            if not 1 <= pz <= n_puzzles:
                continue
            pid = book.current_call(s.entrant, pz)
            call = book.press(pid) if pid is not None else None
            done = book.confirmed_missing(pid) if pid is not None else None
            if call is not None and done is not None:
                done_n += 1
                last_time, missing = call.at_ms, done
            elif call is not None and open_call is None:
                open_call, last_time = pid, call.at_ms
                next_puzzle = pz
            elif next_puzzle is None:
                next_puzzle = pz
        if s.puzzle is None and open_call is None and done_n < len(own):
            next_puzzle = comp.puzzle_on_table(s.entrant)     # on the table (after a swap: the one opened)
        time_ms = last_time - e_start if last_time is not None and e_start is not None else None
        reason = ""
        out_status = book.out(s.entrant)
        if out_status is not None:
            # DNS / DQ first: the log says the entrant is out, whatever it pressed or had
            # confirmed before (a DNS entrant's station showed "confirmed")
            state, reason = "stopped", out_status
        elif open_call is not None:
            state = "called"
        elif done_n >= len(own):
            state = "done"
        elif start is None or (now_ms is not None and now_ms < start):
            state = "idle"
        elif now_ms is None or (e_end is not None and now_ms >= e_end):
            state, reason = "stopped", "time up"
        else:
            state = "running"
        out.append(StationState(s.board, s.button, s.entrant, next_puzzle if s.puzzle is None else s.puzzle,
                                state, open_call, done_n, len(own), e_start, e_end, time_ms, missing, reason))
    return out
