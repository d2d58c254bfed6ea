"""One read-only view of the competition for the consoles (the local one and a remote one,
which is the same console over a mirrored log): `HubService.snapshot()` reads the state under
its message lock, then ranks after letting it go, so a ranking never delays an ack.  The
standings come from a fold of its own (`Ranker`), fed the facts that are new since the last
snapshot."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Mapping

from .alerts import POOR_SYNC_MS
from .changes import StatusLine
from .registry import BoardRegistry
from ..event.fold.competition import Competition
from ..event.fold.schedule import board_schedule
from ..event.fold.station_state import station_states
from ..rules.standings import Fact, Standings, StandingRow


@dataclass
class HallRow:
    board: str
    button: int | None
    table: str
    entrant: str
    name: str
    state: str
    sync: str


@dataclass
class Snapshot:
    """Everything a console shows, read at once (the standings ranked just
    after): read-only for those who get it."""
    now: int
    start: int | None
    end: int | None
    next_signal: tuple[int, str] | None
    online: int
    boards_total: int
    rejected: int
    duplicates: int
    standings: list[StandingRow]
    calls: list[tuple[int, str, str, int, str]]
    hall: list[HallRow]
    alerts: list[str]
    activity: list[str]
    names: dict[str, str] = field(default_factory=dict)
    short_ids: dict[str, str] = field(default_factory=dict)   # a call's press id -> its short form
    blind: str | None = None        # why the boards' state shown may be out of date (None: live)
    official: str | None = None     # the results are official: who made them so, when (event/fold/official.py)
    status: list[StatusLine] = field(default_factory=list)   # the parts' status lines (the public site's)


def _official_text(comp: Competition) -> str | None:
    done = comp.official_book().official()
    return done.text() if done is not None else None


def _round_end(comp: Competition) -> int | None:
    row = comp.round_start_row()
    if row is None:
        return None
    p = row["payload"]
    return p["at"] + (p.get("duration") or comp.format.time_limit_ms)


def _next_signal(comp: Competition, now: int) -> tuple[int, str] | None:
    """The next start/warning/time-up/rotation any board will sound."""
    boards = sorted({s.board for s in comp.stations}) or [""]
    if comp.format.relay is None:
        boards = boards[:1]               # the same signals on every board
    best: tuple[int, str] | None = None
    for b in boards:
        sched = board_schedule(comp, b, now)
        if sched is None:
            return None
        _start, end, signals, rot, _calls = sched
        cands = [(at, kind) for at, kind in signals if at > now]
        if rot is not None:
            nxt, interval, rend = rot
            if nxt <= now and interval:
                nxt += ((now - nxt) // interval + 1) * interval
            if nxt < rend:
                cands.append((nxt, "rotation"))
        for c in cands:
            if best is None or c < best:
                best = c
    return best


_SHOWN = {"called": "called", "done": "confirmed", "running": "running", "idle": "idle"}


def _hall(comp: Competition, registry: BoardRegistry, now: int) -> list[HallRow]:
    """Every station as the hub's state of it (the one the boards are sent),
    with its board's link and clock."""
    reg = registry.boards
    names = {e.id: e.name or e.id for e in comp.entrants}
    tables = {(s.board, s.button): s.table for s in comp.stations}
    out: list[HallRow] = []
    seen_boards = set()
    for s in station_states(comp, now):
        seen_boards.add(s.board)
        info = reg.get(s.board)
        sync = "-"
        states: list[str] = []
        if info is None or not info.online:
            states.append("offline" if info is not None else "not seen")
        elif info.sync_err_ms is not None:
            sync = f"±{info.sync_err_ms}"
        if s.state == "stopped":
            states.append("unfinished" if s.reason == "time up" else s.reason.upper())
        else:
            states.append(_SHOWN[s.state] + (f" {s.confirmed}/{s.calls}" if s.calls > 1 and s.state != "done"
                                              and s.confirmed else ""))
        if info is not None and info.online and info.sync_err_ms is not None and info.sync_err_ms > POOR_SYNC_MS:
            states.append("poor sync")
        if info is not None:
            states += registry.state(info, now)      # acks lost, silent
        out.append(HallRow(s.board, s.button, tables.get((s.board, s.button), s.board), s.entrant,
                           names.get(s.entrant, s.entrant), ", ".join(states), sync))
    for b in sorted(set(reg) - seen_boards):       # boards the stations table does not know
        info = reg[b]
        states = ["online" if info.online else "offline", "no station"] + registry.state(info, now)
        out.append(HallRow(b, None, "-", "-", "-", ", ".join(states),
                           f"±{info.sync_err_ms}" if info.sync_err_ms is not None else "-"))
    return out


class Ranker:
    """The consoles' standings: a fold of the competition's facts of its own,
    extended by the facts that are new since the last snapshot (folded again
    from the start when the competition folded its log again, or an entrant
    appeared).  The competition's fact list only grows until it is replaced,
    so the facts up to a length read under the service's lock are those
    facts after it is let go."""

    def __init__(self) -> None:
        self._lock = threading.Lock()          # one snapshot's ranking at a time
        self._facts: list[Fact] | None = None  # the list folded from, and how far
        self._n = 0
        self._entrants = 0
        self._standings: Standings | None = None

    def rank(self, work: tuple, now_ms: int) -> list[StandingRow]:
        fmt, facts, n, entrants, e = work
        with self._lock:
            st = self._standings
            if st is None or facts is not self._facts or n < self._n or e != self._entrants:
                st = self._standings = Standings(fmt, entrants[:e])
                self._facts, self._n, self._entrants = facts, 0, e
            st.extend(facts[self._n:n])
            self._n = n
            return st.rows(now_ms)


def read(comp: Competition, registry: BoardRegistry, now: int, *, rejected: Mapping[str, int],
         duplicates: int, alerts: list[str], activity: list[str],
         blind: str | None) -> tuple[Snapshot, tuple]:
    """Everything but the standings, and what ranking them takes; the
    caller holds the service's message lock (alerts, activity and blind are
    the service's, read under it)."""
    facts = comp.facts()
    reg = registry.boards
    calls = comp.open_calls()
    snap = Snapshot(
        now=now, start=comp.start_ms, end=_round_end(comp), next_signal=_next_signal(comp, now),
        online=sum(1 for b in reg.values() if b.online), boards_total=len(reg),
        rejected=sum(rejected.values()), duplicates=duplicates,
        standings=[], calls=calls, hall=_hall(comp, registry, now),
        alerts=alerts, activity=activity,
        names={e.id: e.name or e.id for e in comp.entrants}, blind=blind,
        short_ids={c[1]: comp.short_press_id(c[1]) for c in calls},
        official=_official_text(comp))
    ranked = comp.ranked_entrants()         # (a reserve without a station is not in the round)
    return snap, (comp.format, facts, len(facts), ranked, len(ranked))
