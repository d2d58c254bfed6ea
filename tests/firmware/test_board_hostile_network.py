"""The board on a hall network shared with anyone (issue #15), with the real
firmware in a real micropython process against a real hub: the hub's status
reaches a board signed and numbered on its own command topic; the unsigned
broadcast status is nobody's to toggle any more (100 unsigned online/offline
toggles made two boards send 210 sync requests)."""

from __future__ import annotations

import paho.mqtt.client as mqtt
import pytest

from rig import Rig, synced
from tabletimer.hub.boards.hub_protocol import HUB_STATUS, hub_status
from tabletimer.shared import protocol as P
from tabletimer.tools.bench_firmware_heap import FAST


@pytest.fixture
def rig(tmp_path, embedded_broker):
    r = Rig(tmp_path, embedded_broker)
    yield r
    r.close()


def syncs(sim, start: int) -> int:
    return sum("sync" in r for r in sim.records[start:])


def test_unsigned_hub_status_toggles_start_no_sync_storm(rig):
    rig.start_hub()
    sim = rig.board("h1", stations=1, timings=FAST)
    synced(sim, 6)                             # the burst after connecting is over
    start = len(sim.records)
    attacker = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="someone")
    attacker.connect(rig.broker.host, rig.broker.port)
    attacker.loop_start()
    try:
        for i in range(100):
            state = P.OFFLINE if i % 2 == 0 else P.ONLINE
            attacker.publish(HUB_STATUS, P.encode(hub_status(state)), qos=1).wait_for_publish(5)
    finally:
        attacker.loop_stop()
        attacker.disconnect()
    # a press's ack comes after the toggles, on the same broker: once it is
    # in, the board has had every toggle it would have had
    sim.press(1)
    sim.wait_for(lambda r: r.get("acked") == [1, 1], start=start)
    # before: a burst of 6 sync requests for each offline -> online (300)
    assert syncs(sim, start) <= 6


def test_the_hubs_signed_status_on_the_boards_topic_starts_a_sync_burst_once(rig):
    hub = rig.start_hub()
    sim = rig.board("h2", stations=1, timings=FAST)
    synced(sim, 6)
    start = len(sim.records)
    (online,) = [o for o in hub.hub_online() if o.topic == P.board_topic("h2", P.CMD)]
    hub.publish([online])
    sim.wait_for(lambda r: syncs(sim, start) >= 5, timeout=15)   # a burst: the hub (re)connected
    again = len(sim.records)
    hub.publish([online])                                          # the same message, replayed
    sim.wait_for(lambda r: "replayed" in str(r.get("log", "")), start=again)
    forged = online._replace(payload=online.payload[:-1] + (b"0" if online.payload[-1:] != b"0" else b"1"))
    hub.publish([forged])
    sim.wait_for(lambda r: "bad signature" in str(r.get("log", "")), start=again)
    sim.press(1)
    sim.wait_for(lambda r: r.get("acked") == [1, 1], start=again)
    assert syncs(sim, again) <= 2             # no second burst: only the periodic syncs
