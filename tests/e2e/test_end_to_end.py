"""End to end: the real firmware in real `micropython` processes (simulated
hardware), a real broker on a free 127.0.0.1 port, the real hub.  The core
paths run against both the embedded broker and Mosquitto."""

from __future__ import annotations

import pytest

from rig import HOUR, Rig, ready, synced, within_stated_error
from tabletimer.hub.core.service import HubService
from tabletimer.hub.rules.standings import row_dict
from tabletimer.hub.event.log.store import EventStore


@pytest.fixture
def rig(tmp_path, broker):
    r = Rig(tmp_path, broker)
    yield r
    r.close()


def test_press_becomes_ranked_finish(rig):
    hub = rig.start_hub()
    hub.start_round()
    # the board's clock is hours away from the hub's and runs 40 ppm fast
    sim = rig.board("e2e01", stations=2, clock_offset_ms=-3 * HOUR + 12_345, drift_ppm=40)
    ready(sim)
    sim.press(2)
    true_ms = sim.wait_for(lambda r: r.get("sim") == "press")["true"]
    sim.wait_for(lambda r: r.get("acked") == [1, 1])
    sim.wait_for(lambda r: r.get("sim") == "buzz" and r["freq"] > 0)

    at = rig.pressed_at("e2e01", 1)
    assert within_stated_error(rig.press_event("e2e01", 1), true_ms)
    standings = {s.entrant: s for s in hub.standings(final=True)}
    won = standings["e2e01/2"]
    assert won.status == "finished" and won.place == 1 and won.provisional   # not yet confirmed
    assert won.time_ms == (at - hub.competition.start_ms) // 1000 * 1000   # whole seconds
    assert standings["e2e01/1"].status == "unfinished" and standings["e2e01/1"].place == 2
    assert hub.registry.boards["e2e01"].online
    # the press is durable: a hub rebuilt from the file ranks the same
    again = HubService(EventStore(rig.db), rig.keys, rig.competition())
    assert [row_dict(r) for r in again.standings(final=True)] == [row_dict(r) for r in hub.standings(final=True)]


def test_press_survives_hub_outage_and_board_power_loss(rig):
    """Press while the hub is down; the board loses power before anyone
    acknowledged it; after both come back the press is ranked, once, with
    its original time."""
    hub = rig.start_hub()
    hub.start_round()
    sim = rig.board("e2e02", clock_offset_ms=5 * HOUR)
    ready(sim)
    rig.stop_hub()

    sim.press(1)
    true_ms = sim.wait_for(lambda r: r.get("sim") == "press")["true"]
    sim.wait_for(lambda r: r.get("journaled") == [1, 1])
    sim.kill()                                   # power loss, nothing acked
    assert not any("acked" in r for r in sim.records)

    hub = rig.start_hub()
    sim2 = rig.board("e2e02", clock_offset_ms=5 * HOUR)
    sim2.wait_for(lambda r: r.get("acked") == [1, 1])   # boot 1's event, resent by boot 2
    finished = [s for s in hub.standings() if s.status == "finished"]
    assert [s.entrant for s in finished] == ["e2e02/1"]
    assert within_stated_error(rig.press_event("e2e02", 1), true_ms)
    assert len([e for e in hub.store.events() if e["type"] == "press"]) == 1
    assert hub.registry.boards["e2e02"].boot == 2


def test_press_during_broker_outage_reaches_the_hub_once(rig):
    hub = rig.start_hub()
    hub.start_round()
    sim = rig.board("e2e04", clock_offset_ms=-7 * HOUR, drift_ppm=-30)
    ready(sim)
    rig.broker.stop()
    sim.press(1)
    true_ms = sim.wait_for(lambda r: r.get("sim") == "press")["true"]
    sim.wait_for(lambda r: r.get("journaled") == [1, 1])
    rig.broker.start()                           # same port: hub and board reconnect
    sim.wait_for(lambda r: r.get("acked") == [1, 1], timeout=30)
    presses = [e for e in hub.store.events() if e["type"] == "press"]
    assert len(presses) == 1
    assert within_stated_error(presses[0], true_ms)


def test_board_goes_offline_by_last_will(rig):
    hub = rig.start_hub()
    sim = rig.board("e2e03")
    synced(sim)
    assert hub.registry.boards["e2e03"].online
    sim.kill()
    rig.wait_event(lambda ev: ev["type"] == "status" and ev["board"] == "e2e03"
                   and ev["payload"]["state"] == "offline", timeout=30)
    assert not hub.registry.boards["e2e03"].online


def test_a_hub_reconnect_counts_no_boards_retained_status_as_an_attack(rig):
    """Issue 15, item 6: the hub's link to the broker goes and comes back
    (here: its MQTT client replaced, the same hub); the broker sends it each
    board's retained status again, which it has had.  The rejected counter
    stays at 0: it means attacks."""
    from waiting import until
    from tabletimer.hub.link.mqtt_adapter import HubMqtt
    hub = rig.start_hub()
    sims = [rig.board(f"rs{i}") for i in range(2)]
    until(lambda: all(hub.registry.boards.get(s.board_id) and hub.registry.boards[s.board_id].online
                      for s in sims), "both boards online at the hub")
    for _ in range(2):
        before = hub.counts.retained_again
        rig.mqtt.stop()
        rig.mqtt = HubMqtt(hub, rig.broker.host, rig.broker.port)
        rig.mqtt.start()
        until(lambda: hub.counts.retained_again >= before + 2, "both retained statuses sent again")
    assert dict(hub.counts.rejected) == {}, (dict(hub.counts.rejected), hub.activity[-5:])


def test_retained_junk_on_a_boards_topic_is_cleared_once_not_counted_at_every_restart(rig):
    """Issue 15, item 3: junk kept by the broker on a board's topic came back
    at every hub start (a 64 MB one held 231 MB of the hub's RAM each
    time).  The hub clears it the first time it gets it retained: the next
    hub start gets nothing."""
    import paho.mqtt.client as mqtt
    from waiting import until
    from tabletimer.hub.link.mqtt_adapter import HubMqtt
    from tabletimer.shared import protocol as P

    hub = rig.start_hub()
    rig.mqtt.stop()
    junk = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="junk")
    junk.connect(rig.broker.host, rig.broker.port)
    junk.loop_start()
    try:
        for kind in (P.EVENT, P.STATUS):
            junk.publish(P.board_topic("j1", kind), b"junk " * 300, qos=1, retain=True).wait_for_publish(5)
    finally:
        junk.loop_stop()
        junk.disconnect()
    rig.mqtt = HubMqtt(hub, rig.broker.host, rig.broker.port)
    rig.mqtt.start()
    until(lambda: hub.counts.retained_junk == 2, "both retained junk messages cleared", seen=lambda: hub.activity[-3:])
    assert dict(hub.counts.rejected) == {}
    sim = rig.board("j2")                       # a marker: once its birth is in, a clear came back
    until(lambda: hub.registry.boards.get("j2") and hub.registry.boards["j2"].online, "j2 online")
    for _ in range(2):                          # later starts: nothing retained on those topics
        rig.mqtt.stop()
        rig.mqtt = HubMqtt(hub, rig.broker.host, rig.broker.port)
        before = hub.counts.retained_again
        rig.mqtt.start()
        until(lambda: hub.counts.retained_again > before, "the board's own retained status again")
    assert hub.counts.retained_junk == 2 and dict(hub.counts.rejected) == {}
    assert sim.alive
