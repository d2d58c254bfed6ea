"""The hall network is hostile (issue #15): the attacks of the issue tried
against a running hall -- a real hub with its login, real boards (the
firmware in micropython processes) with theirs -- on each broker as an event
runs it: the embedded broker with the event's logins, and Mosquitto with
the configuration `tabletimer broker config` writes.  An attacker is a
paho client: anonymous, or with a board's own login (read off the air).
Each attack must fail to harm: the hub still hears every board, the
standings are the same, and what the desk sees says what happened."""

from __future__ import annotations

import subprocess
import threading

import paho.mqtt.client as mqtt
import pytest

from brokers import free_port, require_mosquitto, wait_port
from hall import acked_all
from rig import Rig, synced
from waiting import until
from tabletimer.hub.broker.broker import BrokerLogins, EmbeddedBroker
from tabletimer.hub.protocol.hub_protocol import HUB_STATUS, MAX_PACKET, hub_status
from tabletimer.hub.protocol.keys import mqtt_password
from tabletimer.hub.broker.mosquitto_config import write_mosquitto_config
from tabletimer.hub.rules.standings import row_dict
from tabletimer.shared import protocol as P
from tabletimer.shared.auth import Signer

HUB_USER, HUB_PASSWORD = "hub", "a long hub password"
BOARDS = ("H1", "H2")
ATTACKER = "H3"      # a board of the event's that is not running: its login read off the air


class Hall:
    """A broker with the event's logins on 127.0.0.1, and a Rig on it."""

    def __init__(self, kind: str, tmp) -> None:
        self.kind = kind
        self.host, self.port = "127.0.0.1", free_port()
        self.rig = Rig(tmp, self)
        for b in BOARDS + (ATTACKER,):
            self.rig.keys.ensure(b)
        self.proc = self.embedded = None
        if kind == "embedded":
            pw = tmp / "hub-password"
            pw.write_text(HUB_PASSWORD)
            self.embedded = EmbeddedBroker(tmp / "broker", port=self.port,
                                           logins=BrokerLogins(self.rig.keys.path, HUB_USER, pw)).start()
        else:
            conf = write_mosquitto_config(tmp / "mqtt", self.rig.keys, HUB_USER, HUB_PASSWORD,
                                          listen_host="127.0.0.1", port=self.port)
            self.proc = subprocess.Popen([require_mosquitto(), "-c", str(conf)],
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            wait_port(self.host, self.port, 10, self.proc)

    def board(self, b: str):
        return self.rig.board(b, stations=2, broker_user=b, broker_password=mqtt_password(self.rig.keys.key(b)))

    def close(self) -> None:
        self.rig.close()
        if self.embedded:
            self.embedded.stop()
        if self.proc:
            self.proc.terminate()
            self.proc.wait(10)


@pytest.fixture(params=["embedded", "mosquitto"])
def hall(request, tmp_path):
    h = Hall(request.param, tmp_path)
    try:
        yield h
    finally:
        h.close()


def client(hall: Hall, user: str | None, client_id: str):
    """(a connected paho client or None, its CONNACK) for user (a board id,
    the hub, or None: anonymous)."""
    got: list = []
    gone = threading.Event()
    c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=client_id, reconnect_on_failure=False)
    if user is not None:
        key = hall.rig.keys.key(user)
        c.username_pw_set(user, HUB_PASSWORD if user == HUB_USER else mqtt_password(key) if key else "wrong")
    c.on_connect = lambda cl, u, f, rc, p: got.append(rc)
    c.on_disconnect = lambda *a: gone.set()
    c.connect(hall.host, hall.port)
    c.loop_start()
    until(lambda: got, f"the CONNACK to {user}/{client_id}")
    c.gone = gone
    return c, got[0]


def drop(c) -> None:
    c.loop_stop()
    c.disconnect()


def test_attacks_on_a_running_hall_fail_to_harm(hall):
    rig = hall.rig
    hub = rig.start_hub(user=HUB_USER, password=HUB_PASSWORD)
    hub.start_round()
    h1, h2 = (hall.board(b) for b in BOARDS)
    for sim in (h1, h2):
        synced(sim)
    h1.press(1)
    acked_all(h1, 1)
    standings = [row_dict(r) for r in hub.standings(final=True)]
    events = rig.service.store.events()
    connections = rig.mqtt.connections

    # 1. anonymous, and a wrong password, with the hub's client id and the boards': refused
    for user in (None, "nobody"):
        for cid in ("tabletimer-hub", HUB_USER, "tt-H1", "H1"):
            c, rc = client(hall, user, cid)
            assert rc.is_failure, (user, cid)
            drop(c)
    # 2. a board's own login as the hub's client id: its own connection, not the hub's
    c, rc = client(hall, ATTACKER, "tabletimer-hub")
    assert not rc.is_failure
    # 3. ... publishing as the other board, as the hub, retained junk, 64 KB
    topic = P.board_topic("H1", P.EVENT)
    fake = Signer(rig.keys.key(ATTACKER)).sign(topic, P.encode(P.stamp(P.event(P.T_PRESS, 1, 9, 2, 1), 99, 1)))
    for t, payload in ((topic, fake), (P.board_topic("H1", P.CMD), b"forged ack"),
                       (P.board_topic("H1", P.SCHED), b"forged schedule"),
                       (HUB_STATUS, P.encode(hub_status(P.OFFLINE)))):
        c.publish(t, payload, qos=1, retain=True).wait_for_publish(5)
    for i in range(20):                                       # unsigned hub-status toggles
        c.publish(HUB_STATUS, P.encode(hub_status(P.ONLINE if i % 2 else P.OFFLINE)), qos=1)
    c.publish(P.board_topic(ATTACKER, P.EVENT), b"junk " * 100, qos=1, retain=True).wait_for_publish(5)
    assert not c.gone.is_set()
    c.publish(P.board_topic(ATTACKER, P.STATUS), b"x" * (2 * MAX_PACKET), qos=1)
    assert c.gone.wait(10), "the broker kept a connection that sent a packet over the limit"
    drop(c)

    # the hub still hears every board; no forged event is stored; nothing ranks otherwise
    assert rig.mqtt.connections == connections, "the hub was pushed off the broker"
    # what got through the broker: the junk on the attacker's own topic, an attack, counted once
    until(lambda: dict(hub.counts.rejected) == {"forged": 1}, "the junk rejected", seen=lambda: dict(hub.counts.rejected))
    h2.press(2)
    acked_all(h2, 1)
    h1.press(2)
    acked_all(h1, 2)
    new = rig.service.store.events()[len(events):]
    assert sorted((e["board"], e["payload"]["station"]) for e in new if e["type"] == "press") == [
        ("H1", 2), ("H2", 2)]
    def results(rows) -> dict:
        return {r["entrant"]: (r["status"], r["time_ms"]) for r in rows if r["entrant"] not in ("H1/2", "H2/2")}
    assert results(row_dict(r) for r in hub.standings(final=True)) == results(standings)
    # the junk the attacker retained on its own topic: cleared at the next hub
    # start, and shown; no attack counted twice, no sync storm from the toggles
    rig.mqtt.stop()
    rig.mqtt.stop = lambda: None          # (Rig.close stops the new one)
    from tabletimer.hub.link.mqtt_adapter import HubMqtt
    again = HubMqtt(hub, hall.host, hall.port, HUB_USER, HUB_PASSWORD)
    again.start()
    rig.mqtt = again
    until(lambda: hub.counts.retained_junk == 1, "the retained junk cleared", seen=lambda: list(hub.activity)[-3:])
    assert any("cleared from the broker" in a for a in hub.alerts())
    assert dict(hub.counts.rejected) == {"forged": 1}, dict(hub.counts.rejected)      # not counted again
    assert not [a for a in hub.alerts() if "probe" in a or "acks are not reaching" in a]
    assert sum("sync" in r for r in h1.records) < 40
    for sim in (h1, h2):
        assert sim.alive and not [r for r in sim.records if "Error" in str(r.get("log", ""))]
