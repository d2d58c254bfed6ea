"""The board on a hall network shared with anyone (issue #15), with the real
firmware in a real micropython process against a real hub: the hub's status
reaches a board signed and numbered on its own command topic; the unsigned
broadcast status is nobody's to toggle any more (100 unsigned online/offline
toggles made two boards send 210 sync requests); a command numbered far
ahead (issue #33, item 6) is refused, told to the hub, and locks nobody out;
nor does a command captured in an earlier boot replayed as the first of a
new one (issue 44, item 6)."""

from __future__ import annotations

import threading

import paho.mqtt.client as mqtt
import pytest

from rig import HOUR, Rig, synced
from tabletimer.hub.event.time.clock import HubClock
from tabletimer.hub.protocol.hub_protocol import HUB_STATUS, hub_status, identify
from tabletimer.hub.core.hub_state import Outgoing
from tabletimer.shared import protocol as P
from tabletimer.tools.bench.firmware_heap import FAST
from waiting import until


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
    hub.state.publish([online])
    sim.wait_for(lambda r: syncs(sim, start) >= 5, timeout=15)   # a burst: the hub (re)connected
    again = len(sim.records)
    hub.state.publish([online])                                          # the same message, replayed
    sim.wait_for(lambda r: "replayed" in str(r.get("log", "")), start=again)
    forged = online._replace(payload=online.payload[:-1] + (b"0" if online.payload[-1:] != b"0" else b"1"))
    hub.state.publish([forged])
    sim.wait_for(lambda r: "bad signature" in str(r.get("log", "")), start=again)
    sim.press(1)
    sim.wait_for(lambda r: r.get("acked") == [1, 1], start=again)
    assert syncs(sim, again) <= 2             # no second burst: only the periodic syncs


def test_a_command_numbered_far_ahead_is_refused_and_the_hubs_acks_still_taken(rig):
    """A command signed with the board's key (someone who has it, or the
    hub's keys file) with a counter 27 h ahead of the hub's was taken, and
    every later command of the real hub refused as a replay, its acks too.
    Now the hub's counter (which follows its clock's ms) may run ahead of
    the board's clock by at most a few minutes more than when the board
    first heard the hub this boot: the command is refused (a log line), the
    board's next clock-sync request reports it (a network alert at the hub:
    a counter this hub never numbered), and the real hub's acks are taken."""
    hub = rig.start_hub()
    hub.start_round()
    sim = rig.board("h3", stations=1, timings=FAST)
    boot = sim.wait_for(lambda r: "booted" in r)["booted"]
    synced(sim, 6)
    start = len(sim.records)
    topic = P.board_topic("h3", P.CMD)
    ahead = hub.commands.next_ctr() + 27 * HOUR
    forged = P.stamp(identify(hub.clock.now_ms() + 10_000), ahead, boot, sim.install)   # for this boot
    hub.state.publish([Outgoing(topic, hub.keys.signer("h3").sign(topic, P.encode(forged)), 1, False)])
    sim.press(1)
    sim.wait_for(lambda r: r.get("acked") == [boot, 1], start=start)      # the real hub's ack: taken
    assert [r for r in sim.records[start:] if f"counter jump ({ahead})" in str(r.get("log", ""))]
    # the sync requests after it say so (the hub's signed 'online' starts a burst of them)
    (online,) = [o for o in hub.hub_online() if o.topic == topic]
    hub.state.publish([online])
    until(lambda: [a for a in hub.network_alerts() if a.startswith(f"board h3 refused a command numbered {ahead}")
                   and "not this hub's" in a], "the board's report, an alert at the hub",
          timeout=15, seen=hub.network_alerts)
    assert not [r for r in sim.records[start:] if "replayed" in str(r.get("log", ""))]


class BehindClock(HubClock):
    """The hub's clock behind this machine's by behind_ms: what it signs now
    is what it signed behind_ms ago (a capture that old)."""

    def __init__(self, behind_ms: int) -> None:
        super().__init__()
        self.behind_ms = behind_ms

    def now_ms(self) -> int:
        return super().now_ms() - self.behind_ms


def test_a_command_captured_in_an_earlier_boot_replayed_first_locks_nobody_out(rig):
    """Issue 44, item 6: one captured command more than 5 minutes old,
    replayed as the first command of a boot, set that boot's counter base;
    the board then refused every real command of the hub as a counter jump
    (21 of 21: no ack, no clock sync, a press left unacknowledged).  Now a
    command names the boot it is for: the captured one (boot 1) is refused
    in boot 2 without touching a counter, and the real hub's clock replies
    and acks are taken.  The capture: an eavesdropper on the hall's broker
    records what a hub whose clock is 10 minutes behind sends the board
    (so its counters are those of 10 minutes ago)."""
    captured: list[tuple[str, bytes]] = []
    births: list[bytes] = []
    heard = threading.Event()
    spy = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="eavesdropper")

    def on_message(client, userdata, m) -> None:
        if m.topic.endswith("/cmd"):
            captured.append((m.topic, m.payload))
        elif m.payload:
            births.append(m.payload)
            heard.set()
    spy.on_message = on_message
    spy.connect(rig.broker.host, rig.broker.port)
    spy.subscribe([(P.board_topic("r1", P.CMD), 1), (P.board_topic("r1", P.STATUS), 1)])
    spy.loop_start()
    try:
        rig.start_hub(clock=BehindClock(10 * 60_000))
        sim = rig.board("r1", stations=1, timings=FAST)
        synced(sim, 2)
        sim.press(1)
        sim.wait_for(lambda r: r.get("acked") == [1, 1], timeout=20)
        # the eavesdropper's copy of the ack arrives on its own connection, maybe after the board's
        until(lambda: any(b'"type":"ack"' in c[1] for c in captured), "the eavesdropper's copy of the ack",
              timeout=20)
        ack = next(c for c in captured if b'"type":"ack"' in c[1])
        rig.stop_hub()
        sim.stop()
        # boot 2, the hub not there yet: the captured ack is the boot's first command
        heard.clear()
        mark = len(sim.records)
        sim.start(flash=False)
        assert sim.wait_for(lambda r: "booted" in r, start=mark)["booted"] == 2
        assert heard.wait(20)
        until(lambda: any(b'"boot":2' in b for b in births), "the board's birth of boot 2", timeout=20)
        spy.publish(ack[0], ack[1], qos=1).wait_for_publish(5)
        # then a forged one, which every firmware logs: once it is, the capture was handled
        spy.publish(ack[0], ack[1][:-1] + (b"0" if ack[1][-1:] != b"0" else b"1"), qos=1).wait_for_publish(5)
        sim.wait_for(lambda r: "bad signature" in str(r.get("log", "")), start=mark)
        # the real hub, its clock right: its sync replies and its ack are taken
        rig.start_hub()
        synced(sim, 2)
        sim.press(1)
        sim.wait_for(lambda r: r.get("acked") == [2, 1], start=mark, timeout=20)
        logs = [str(r.get("log", "")) for r in sim.records[mark:]]
        assert not [t for t in logs if "counter jump" in t], logs
        assert [t for t in logs if "rejected message on tt/v1/b/r1/cmd: for boot 1 of" in t
                and ", this is 2 of " in t], logs
    finally:
        spy.loop_stop()
        spy.disconnect()
