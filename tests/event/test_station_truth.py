"""One truth for every station (issue 13), with real micropython boards, a
real broker and the real hub: a board's decision on a call the desk had
already decided is a visible conflict, never a replacement; the hub's state
of the station is the desk's decision, and the board follows it: a void or
a confirmation at the desk reaches the table; an entrant's own end (a new
start time) reaches its station."""

from __future__ import annotations



from rig import FAST_GESTURES, Rig, ready, synced
from tabletimer.hub.event.fold.competition import Competition
from tabletimer.hub.event.folder.event_folder import Station
from tabletimer.hub.rules.formats import load_format
from tabletimer.hub.rules.standings import Entrant

FAST = FAST_GESTURES


def start_hub(rig: Rig, preset: str, stations: int = 2):
    """Entrants A, B on board T1's buttons 1 and 2."""
    fmt = load_format(preset)
    entrants = [Entrant("A", "Alice"), Entrant("B", "Bob")][:stations]
    st = [Station("T1", n + 1, "Table 1", e.id, 1) for n, e in enumerate(entrants)]
    rig.competition = lambda preset=preset: Competition(fmt, entrants, st)     # type: ignore[method-assign]
    return rig.start_hub(preset)


def followed(rec: dict) -> int | None:
    """The station a board record says followed the hub's state."""
    return rec.get("station") if "sound" in rec and "sim" not in rec else None


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
    from tabletimer.hub.core.service import HubService
    from tabletimer.hub.event.log.store import EventStore
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


def test_a_void_and_a_confirmation_at_the_desk_reach_the_board(rig):
    """Issue 13, items 1 and 2: the desk voids one call and confirms another
    with 2 missing; the board follows both, with their sounds.  The voided
    station's next press is a finish call again (it was taken as a
    missing-piece count); a referee's hold on the confirmed one is a stray
    at a done station (it confirmed again with 0 missing and replaced the
    desk's decision)."""
    hub = start_hub(rig, "czjpa-individuals")
    sim = rig.board("T1", stations=2, timings=FAST)
    hub.start_round()
    ready(sim)
    tap(sim, 1)
    tap(sim, 2)
    sim.wait_for(lambda r: r.get("acked") == [1, 2])
    k = len(sim.records)
    hub.act("void", {"press_id": "T1/1/1"}, who="desk", why="pressed by mistake")
    sim.wait_for(lambda r: followed(r) == 1, start=k)
    hub.act("confirm", {"press_id": "T1/1/2", "missing_found": 2}, who="desk")
    sim.wait_for(lambda r: followed(r) == 2, start=k)
    assert [(followed(r), r["sound"]) for r in sim.records[k:] if followed(r)] == [
        (1, "voided"), (2, "confirmed")]
    tap(sim, 1)                                      # Alice finishes after all
    again = rig.wait_event(lambda ev: ev["type"] == "press" and ev["payload"]["seq"] == 3)
    assert again["payload"]["station"] == 1
    sim.press(2, 900)                                # a referee's hold on Bob's station
    stray = rig.wait_event(lambda ev: ev["type"] == "stray")
    assert (stray["payload"]["station"], stray["payload"]["state"]) == (2, "done")
    assert not [e for e in hub.store.events() if e["source"] == "board" and e["type"] in ("confirm", "void")]
    st = {r.entrant: r for r in hub.standings()}
    assert (st["A"].status, st["A"].provisional) == ("finished", True)
    assert (st["B"].status, st["B"].provisional, st["B"].penalty_ms) == ("finished", False, 20_000)
    states = {(s.board, s.button): s for s in hub.station_states()}
    assert (states["T1", 1].state, states["T1", 1].call) == ("called", "T1/1/3")
    assert (states["T1", 2].state, states["T1", 2].missing) == ("done", 2)
    assert not hub.competition.conflicts


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
