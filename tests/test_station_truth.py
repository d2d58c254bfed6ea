"""One truth for every station (issue 13): the desk's decisions reach the
board, a board's decision on a call already decided is a visible conflict,
and per-station end times reach the boards.  Real micropython boards, a
real broker and the real hub, as an organizer meets them:
1. a void at the desk puts the station back to running: the competitor's
   next press is a finish call again, not a missing-piece count;
2. a confirmation at the desk makes the station done: a later hold at the
   table no longer replaces the desk's decision;
4. a new start time (taped bag) moves that station's end on the board: a
   finish after the round's end but within the entrant's own time counts.
(3 and 5 -- a second round start, results before time-up -- are the
command's: tests/test_operator_actions.py, tests/test_results.py.)"""

from __future__ import annotations

import pytest

from rig import Rig, ready
from tabletimer.hub.competition import Competition
from tabletimer.hub.event_folder import Station
from tabletimer.hub.formats import load_format
from tabletimer.hub.standings import Entrant

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


def follows(sim, want: list[str], start: int = 0, timeout: float = 10.0) -> None:
    sim.wait_for(lambda r: r.get("stations") == want, start=start, timeout=timeout)


def test_a_void_at_the_desk_puts_the_station_back_to_running(rig):
    hub = start_hub(rig, "czjpa-individuals")
    sim = rig.board("T1", stations=2, timings=FAST)
    hub.start_round()
    ready(sim)
    tap(sim, 1)
    sim.wait_for(lambda r: r.get("acked") == [1, 1])
    follows(sim, ["called", "running"])
    k = len(sim.records)
    hub.act("void", {"press_id": "T1/1/1"}, who="desk", why="knocked the button")
    follows(sim, ["running", "running"], start=k)
    # the competitor's next press is a finish call again (journaled as a press)
    k = len(sim.records)
    tap(sim, 1)
    rec = sim.wait_for(lambda r: "journaled" in r, start=k)
    assert rec["type"] == "press"
    follows(sim, ["called", "running"], start=k)
    a = next(r for r in hub.standings() if r.entrant == "A")
    assert a.status == "finished" and a.provisional
    assert [c[1] for c in hub.competition.open_calls()] == ["T1/1/2"]


def test_a_confirmation_at_the_desk_makes_the_station_done_and_a_later_hold_cannot_replace_it(rig):
    hub = start_hub(rig, "czjpa-individuals")
    sim = rig.board("T1", stations=2, timings=FAST)
    hub.start_round()
    ready(sim)
    tap(sim, 2)
    sim.wait_for(lambda r: r.get("acked") == [1, 1])
    follows(sim, ["running", "called"])
    k = len(sim.records)
    hub.act("confirm", {"press_id": "T1/1/1", "missing_found": 2}, who="desk")
    follows(sim, ["running", "done"], start=k)
    sim.wait_for(lambda r: r.get("sim") == "buzz" and r["freq"] > 0, start=k)      # the confirmed sound
    bob = next(r for r in hub.standings() if r.entrant == "B")
    assert (bob.status, bob.provisional, bob.penalty_ms) == ("finished", False, 20_000)
    # a referee's hold on that button: the board no longer holds a call, so
    # it is a stray, not a confirmation with 0 missing
    k = len(sim.records)
    tap(sim, 2, 900)
    rec = sim.wait_for(lambda r: "journaled" in r, start=k)
    assert rec["type"] == "stray"
    rig.wait_event(lambda ev: ev["type"] == "stray")
    bob = next(r for r in hub.standings() if r.entrant == "B")
    assert (bob.status, bob.provisional, bob.penalty_ms) == ("finished", False, 20_000)
    assert hub.competition.conflicts == []


def test_a_board_decision_on_a_call_the_desk_decided_is_a_conflict_not_a_replacement(rig):
    """The board confirms while the hub is away; meanwhile the desk (another
    process: `act`) confirmed the same call with 2 missing.  The board's
    confirmation is stored and acked, never applied; the alert names both;
    the board then follows the desk's decision."""
    hub = start_hub(rig, "czjpa-individuals")
    sim = rig.board("T1", stations=2, timings=FAST)
    hub.start_round()
    ready(sim)
    tap(sim, 1)
    sim.wait_for(lambda r: r.get("acked") == [1, 1])
    follows(sim, ["called", "running"])
    rig.stop_hub()                                   # the hub is away ...
    from tabletimer.hub.service import HubService
    from tabletimer.hub.store import EventStore
    desk = HubService(EventStore(rig.db), rig.keys, rig.competition())
    desk.act("confirm", {"press_id": "T1/1/1", "missing_found": 2}, who="desk")   # ... the desk decides
    desk.store.close()
    sim.press(1, 900)                                # ... and the table decides too, with 0 missing
    sim.wait_for(lambda r: r.get("journaled", [0, 0])[1] == 2 and r["type"] == "confirm")
    k = len(sim.records)
    hub = rig.start_hub()
    sim.wait_for(lambda r: r.get("acked") == [1, 2], timeout=20)
    follows(sim, ["done", "running"], start=k, timeout=20)
    (c,) = hub.competition.conflicts
    assert (c.board, c.station, c.press_id, c.kind, c.missing) == ("T1", 1, "T1/1/1", "confirm", 0)
    assert c.recorded is not None and (c.recorded.who, c.recorded.kind, c.recorded.missing) == ("desk", "confirm", 2)
    assert any(a.startswith("CONFLICT at board T1 button 1") and "desk had confirmed it with 2 missing" in a
               for a in hub.alerts()), hub.alerts()
    alice = next(r for r in hub.standings() if r.entrant == "A")
    assert (alice.status, alice.provisional, alice.penalty_ms) == ("finished", False, 20_000)


def test_a_new_start_time_moves_the_stations_end_on_the_board(rig):
    """Rogaland: a referee cut a taped bag, Bob starts 4 s later and his
    limit runs from his own start.  After the round's end his station still
    takes his finish; Alice's is stopped (a stray)."""
    hub = start_hub(rig, "rogaland-individuals")
    sim = rig.board("T1", stations=2, timings=FAST)
    now = hub.clock.now_ms()
    start = now + 1500
    hub.act("round_start", {"at": start, "duration": 4000, "warnings": []}, who="desk")
    ready(sim)
    k = len(sim.records)
    hub.act("start_offset", {"entrant": "B", "offset_ms": 4000}, who="desk", why="taped bag")
    rec = sim.wait_for(lambda r: "stations" in r, start=k)
    assert rec["stations"] in (["idle", "idle"], ["running", "running"])
    # after the round's end (start + 4 s), before Bob's (start + 8 s)
    sim.wait_for(lambda r: r.get("signal") == "time_up", timeout=15)
    k = len(sim.records)
    tap(sim, 1)
    tap(sim, 2)
    got: dict[int, str] = {}

    def both(r: dict) -> bool:
        if "journaled" in r:
            got[r["journaled"][1]] = r["type"]
        return len(got) == 2
    sim.wait_for(both, start=k)
    types = sorted(got.values())
    assert types == ["press", "stray"], got
    presses = [e for e in hub.store.events() if e["type"] in ("press", "stray")]
    rig.wait_event(lambda ev: ev["type"] == "press")
    (p,) = [e for e in hub.store.events() if e["type"] == "press"]
    assert p["payload"]["station"] == 2 and start + 4000 <= p["payload"]["at"] < start + 8000, presses
