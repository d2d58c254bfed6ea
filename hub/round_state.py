"""The state of the running round as a deterministic fold of the event log.

`RoundState.apply` takes stored event rows (see store.py) in log order; the
hub applies each row as it is committed, and a restarted hub replays the whole
log, so both arrive at the same state.  Pure: no I/O.
"""

from __future__ import annotations

from .ranking import Standing, rank_single_round


def entrant_id(board: str, station: int) -> str:
    """Until entrants are registered, each station of each board is one
    individual entrant, named board/station."""
    return f"{board}/{station}"


class RoundState:
    def __init__(self) -> None:
        self.start_ms: int | None = None
        self.entrants: set[str] = set()
        self.finishes: dict[str, int] = {}
        self.early: list[dict] = []     # presses before the start
        self.untimed: list[dict] = []   # presses whose board had no clock sync

    def apply(self, ev: dict) -> None:
        p = ev["payload"]
        if ev["source"] == "operator" and ev["type"] == "round_start":
            self.start_ms = p["at"]
            self.finishes.clear()
        elif ev["source"] == "board" and ev["type"] == "status" and p["state"] == "online":
            for st in range(1, p["stations"] + 1):
                self.entrants.add(entrant_id(ev["board"], st))
        elif ev["source"] == "board" and ev["type"] == "press":
            e = entrant_id(ev["board"], p["station"])
            self.entrants.add(e)
            at = p["at"]
            if at is None:
                self.untimed.append(ev)
            elif self.start_ms is None or at < self.start_ms:
                self.early.append(ev)
            else:
                # the earliest press counts, whatever order they arrive in
                self.finishes[e] = min(at, self.finishes.get(e, at))

    def standings(self) -> list[Standing]:
        return rank_single_round(self.start_ms, sorted(self.entrants), self.finishes)
