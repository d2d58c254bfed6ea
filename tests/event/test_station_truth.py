"""One truth for every station (issue 13), with real micropython boards, a
real broker and the real hub: a board's decision on a call the desk had
already decided is a visible conflict, never a replacement; the hub's state
of the station is the desk's decision; an entrant's own end (a new start
time) reaches its station.  (The board following the hub's station states
-- a desk void or confirmation reaching the table -- is not in this
firmware yet: its 64 KB heap; see docs/firmware.md.)"""

from __future__ import annotations


import pytest

from rig import Rig, ready, synced
from tabletimer.hub.event.competition import Competition
from tabletimer.hub.event.event_folder import Station
from tabletimer.hub.rules.formats import load_format
from tabletimer.hub.rules.standings import Entrant

FAST = {"debounce_ms": 30, "confirm_ms": 600, "void_ms": 1500}


@pytest.fixture
def rig(tmp_path, embedded_broker):
    r = Rig(tmp_path, embedded_broker)
    yield r
    r.close()


def start_hub(rig: Rig, preset: str, stations: int = 2):
    """Entrants A, B on board T1's buttons 1 and 2."""
    fmt = load_format(preset)
    entrants = [Entrant("A", "Alice"), Entrant("B", "Bob")][:stations]
    st = [Station("T1", n + 1, "Table 1", e.id, 1) for n, e in enumerate(entrants)]
    rig.competition = lambda preset=preset: Competition(fmt, entrants, st)     # type: ignore[method-assign]
    return rig.start_hub(preset)


def tap(sim, station: int, hold: int = 80) -> int:
    """A press held `hold` ms, once the board has seen its release; returns
    the record index before it."""
    k = len(sim.records)
    sim.press(station, hold)
    sim.wait_for(lambda r: r.get("input") == [station, 0], start=k)
    return k


def test_a_board_decision_on_a_call_the_desk_decided_is_a_conflict_not_a_replacement(rig):
    """The board confirms while the hub is away; meanwhile the desk (another
    process: `act`) confirmed the same call with 2 missing.  The board's
    confirmation is stored and acked, never applied; the alert names both;
    the hub's state of the station is the desk's decision."""
    hub = start_hub(rig, "czjpa-individuals")
    sim = rig.board("T1", stations=2, timings=FAST)
    hub.start_round()
    ready(sim)
    tap(sim, 1)
    sim.wait_for(lambda r: r.get("acked") == [1, 1])
    rig.stop_hub()                                   # the hub is away ...
    from tabletimer.hub.boards.service import HubService
    from tabletimer.hub.event.store import EventStore
    desk = HubService(EventStore(rig.db), rig.keys, rig.competition())
    desk.act("confirm", {"press_id": "T1/1/1", "missing_found": 2}, who="desk")   # ... the desk decides
    desk.store.close()
    sim.press(1, 900)                                # ... and the table decides too, with 0 missing
    sim.wait_for(lambda r: r.get("journaled", [0, 0])[1] == 2 and r["type"] == "confirm")
    hub = rig.start_hub()
    sim.wait_for(lambda r: r.get("acked") == [1, 2], timeout=20)     # stored and acknowledged
    (c,) = hub.competition.conflicts
    assert (c.board, c.station, c.press_id, c.kind, c.missing) == ("T1", 1, "T1/1/1", "confirm", 0)
    assert c.recorded is not None and (c.recorded.who, c.recorded.kind, c.recorded.missing) == ("desk", "confirm", 2)
    assert any(a.startswith("CONFLICT at board T1 button 1") and "desk had confirmed it with 2 missing" in a
               for a in hub.alerts()), hub.alerts()
    alice = next(r for r in hub.standings() if r.entrant == "A")
    assert (alice.status, alice.provisional, alice.penalty_ms) == ("finished", False, 20_000)
    st = {(s.board, s.button): s for s in hub.station_states()}
    assert (st["T1", 1].state, st["T1", 1].missing, st["T1", 2].state) == ("done", 2, "running")


def test_an_entrant_with_a_new_start_time_finishes_after_the_rounds_end(rig):
    """A referee cut a taped bag: the Norwegian rules give that participant
    a new start time, and so a later end (issue 13, item 4).  The board
    gets the station's own end in its schedule: after the round's time-up
    the neighbour's press is a stray ('stopped'), this entrant's a finish
    call, ranked from its own start."""
    limit = offset = 5000
    hub = start_hub(rig, "rogaland-individuals")
    sim = rig.board("T1", stations=2, timings=FAST)
    synced(sim)
    hub.act("start_offset", {"entrant": "B", "offset_ms": offset}, who="desk", why="taped bag")
    hub.start_round(duration_ms=limit)
    start = hub.competition.start_ms
    ready(sim)
    sim.wait_for(lambda r: r.get("signal") == "time_up", timeout=20)   # the round's end, for the hall
    tap(sim, 1)
    tap(sim, 2)                                      # within B's own 5 s after it
    stray = rig.wait_event(lambda ev: ev["type"] == "stray")
    press = rig.wait_event(lambda ev: ev["type"] == "press")
    assert (stray["payload"]["station"], stray["payload"]["state"]) == (1, "stopped")
    assert press["payload"]["station"] == 2
    assert limit < press["payload"]["at"] - start < limit + offset, press
    st = {r.entrant: r for r in hub.standings()}
    assert st["B"].status == "finished" and st["A"].status != "finished", st
    assert 0 <= st["B"].time_ms <= press["payload"]["at"] - start - offset, st["B"]
    states = {(s.board, s.button): s for s in hub.station_states()}
    assert states["T1", 1].state == "stopped" and states["T1", 2].state == "called"
    assert states["T1", 2].end_ms == start + limit + offset
