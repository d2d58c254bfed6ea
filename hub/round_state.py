"""The state of the running round as a deterministic fold of the event log.

`RoundState.apply` takes stored event rows (see store.py) in log order; the
hub applies each row as it is committed, and a restarted hub replays the whole
log, so both arrive at the same state.  Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass

from .ranking import Standing, rank_single_round


def entrant_id(board: str, station: int) -> str:
    """Until entrants are registered, each station of each board is one
    individual entrant, named board/station."""
    return f"{board}/{station}"


@dataclass
class Call:
    """A finish call (press) and what referees did with it."""
    entrant: str
    at: int
    confirmed: bool = False
    missing: int = 0
    voided: bool = False


class RoundState:
    def __init__(self) -> None:
        self.start_ms: int | None = None
        self.schedule: tuple | None = None   # (id, start, end, signals) for the boards
        self.entrants: set[str] = set()
        self.calls: dict[tuple[str, int, int], Call] = {}   # (board, boot, seq) -> call
        self.early: list[dict] = []     # calls before the start
        self.untimed: list[dict] = []   # calls whose board had no clock sync
        self.strays: list[dict] = []    # presses while a station was not running

    def apply(self, ev: dict) -> None:
        p = ev["payload"]
        if ev["source"] == "operator" and ev["type"] == "round_start":
            self.start_ms = p["at"]
            self.calls.clear()
            end = p["at"] + p["duration"] if p.get("duration") else None
            signals = [[p["at"], "start"]]
            if end is not None:
                signals += [[end - w, "warn"] for w in p.get("warnings", ()) if 0 < w < p["duration"]]
                signals.append([end, "time_up"])
            self.schedule = (ev["id"], p["at"], end, signals)
            return
        if ev["source"] != "board":
            return
        if ev["type"] == "status" and p["state"] == "online":
            for st in range(1, p["stations"] + 1):
                self.entrants.add(entrant_id(ev["board"], st))
        elif ev["type"] == "press":
            e = entrant_id(ev["board"], p["station"])
            self.entrants.add(e)
            if p["at"] is None:
                self.untimed.append(ev)
            elif self.start_ms is None or p["at"] < self.start_ms:
                self.early.append(ev)
            else:
                self.calls[(ev["board"], p["boot"], p["seq"])] = Call(e, p["at"])
        elif ev["type"] in ("confirm", "void"):
            call = self.calls.get((ev["board"], p["call"][0], p["call"][1]))
            if call is not None:
                if ev["type"] == "void":
                    call.voided = True
                else:
                    call.confirmed, call.missing = True, p["missing"]
        elif ev["type"] == "stray":
            self.strays.append(ev)

    def finishes(self) -> dict[str, Call]:
        """Per entrant, the earliest call not voided, whatever order the
        calls arrived in."""
        best: dict[str, Call] = {}
        for c in self.calls.values():
            if not c.voided and (c.entrant not in best or c.at < best[c.entrant].at):
                best[c.entrant] = c
        return best

    def standings(self) -> list[Standing]:
        fin = self.finishes()
        return rank_single_round(self.start_ms, sorted(self.entrants),
                                 {e: c.at for e, c in fin.items()},
                                 confirmed={e for e, c in fin.items() if c.confirmed})
