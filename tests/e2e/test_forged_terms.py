"""Issue 44, item 3, as the issue found it: one status message signed with
one board's key (read from the board's config.json with a USB cable) and
carrying "term": 999 made `tabletimer run` exit 4 ("FENCED") in half a
second; `run` again exited 4 (the row in the log, the message retained by
the broker), and `takeover --force` recorded term 2 and exited 4.  Now a
term is a hub's only with its proof (hub/protocol/hub_secret.py): the forged
one is an alert and the hub carries on, started again too; and a hub fenced
by a proven term has a way back (docs/operations.md, "A fence that was
wrong"): `takeover --force` on its folder records a term above every proven
one in its log, with its proof, and runs.  The real `tabletimer` commands,
the embedded broker, a paho client with the board's own login."""

from __future__ import annotations

import subprocess
import time

import paho.mqtt.client as mqtt

from brokers import free_port
from hall import TT, Hub, act
from tabletimer.hub.protocol.hub_secret import TermProofs, ensure_secret
from tabletimer.hub.protocol.keys import BoardKeys, mqtt_password
from tabletimer.hub.event.folder import event_folder
from tabletimer.hub.event.log.store import EventStore
from tabletimer.shared import protocol as P
from tabletimer.shared.auth import Signer
from waiting import until


def event(tmp_path):
    ev = event_folder.init(tmp_path / "hall", "czjpa-individuals", "Forged terms")
    (ev / "entrants.csv").write_text("id,name,eligible\n1,Anna,yes\n2,Ben,yes\n")
    (ev / "stations.csv").write_text("board,button,table,entrant\nT07,1,Table 7,1\nT08,1,Table 8,2\n")
    keys = BoardKeys(ev / "board-keys.json")
    return ev, keys.ensure("T07"), keys.ensure("T08")


def forged_birth(key: str, term: int) -> bytes:
    """What a key holder publishes: a birth, validly signed, saying term."""
    msg = P.stamp(P.status_online(9, "0.3.0", 1, term=term), 1_000, 9)
    topic = P.board_topic("T07", P.STATUS)
    return Signer(key).sign(topic, P.encode(msg))


def publish_retained(port: int, key: str, payload: bytes) -> None:
    """Published with the board's own MQTT login, retained, as the issue did."""
    done: list = []
    c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="forger")
    c.username_pw_set("T07", mqtt_password(key))
    c.on_publish = lambda *a: done.append(1)
    c.connect("127.0.0.1", port)
    c.loop_start()
    try:
        c.publish(P.board_topic("T07", P.STATUS), payload, qos=1, retain=True)
        until(lambda: done, "the broker's PUBACK of the forged birth", timeout=15)
    finally:
        c.disconnect()
        c.loop_stop()


def run_briefly(ev, port: int, *extra: str, cmd: str = "run") -> subprocess.CompletedProcess:
    return subprocess.run([TT, cmd, str(ev), "--broker-kind", "embedded", "--port", str(port), "--web-listen",
                           "off", "--hall-pages", "off", "--duration", "2", *extra],
                          capture_output=True, text=True, timeout=90)


def test_a_forged_higher_term_is_an_alert_and_the_hub_carries_on(tmp_path):
    ev, key, _ = event(tmp_path)
    port = free_port()
    hub = Hub(ev, None, "--broker-kind", "embedded", "--port", str(port))
    try:
        act(ev, "round_start")
        publish_retained(port, key, forged_birth(key, 999))
        until(lambda: any("board T07 reports hub term 999 without a hub's proof" in ln for ln in hub.lines),
              "the hub's alert of the forged term", timeout=30, seen=lambda: hub.lines[-5:])
        act(ev, "dns", entrant="2")                  # the hub goes on: it picks the desk's action up
        until(lambda: any("operator dns" in ln for ln in hub.lines), "the hub's line for the desk's DNS",
              timeout=30, seen=lambda: hub.lines[-5:])
        assert hub.proc.poll() is None, hub.said()
    finally:
        said = hub.stop()
    assert hub.proc.returncode == 0 and "FENCED" not in said, said[-2000:]
    # started again: the row in its log, the forged birth retained by its broker: it runs
    again = run_briefly(ev, free_port())
    assert again.returncode == 0 and "FENCED" not in again.stdout + again.stderr, again.stdout + again.stderr
    store = EventStore(ev / "events.sqlite")
    try:
        rows = store.events()
    finally:
        store.close()
    assert [r for r in rows if r["type"] == "status" and r["payload"].get("term") == 999]   # kept, as it came
    assert not [r for r in rows if r["type"] == "takeover"]


def test_a_hub_fenced_by_a_proven_term_has_a_way_back(tmp_path):
    """The log of an old primary that a board told of term 2 (proven) and
    that a key holder told of term 999 (not): `run` stops, FENCED by the
    proven one; `takeover --force` on it records term 3 (one above every
    proven term, the forged 999 not counted) with its proof, and runs."""
    ev, key7, key8 = event(tmp_path)
    secret, _ = ensure_secret(ev)
    store = EventStore(ev / "events.sqlite")
    try:
        proofs = TermProofs(secret, store.event_id)
        now = int(time.time() * 1000)
        store.append("board", "status", dict(P.status_online(4, "0.3.0", 1, term=999), ctr=5, bt=4), now,
                     board="T07")
        store.append("board", "status", dict(P.status_online(3, "0.3.0", 1, term=2), hash=proofs.proof(2),
                                             ctr=5, bt=3), now, board="T08")
    finally:
        store.close()
    fenced = run_briefly(ev, free_port())
    assert fenced.returncode == 4, fenced.stdout + fenced.stderr
    assert "FENCED: board T08 has seen hub term 2, this hub's is 1" in fenced.stdout, fenced.stdout
    back = run_briefly(ev, free_port(), "--primary", f"http://127.0.0.1:{free_port()}", "--force",
                       cmd="takeover")
    assert back.returncode == 0, back.stdout + back.stderr
    assert "this laptop is the hub now (term 3" in back.stdout, back.stdout
    store = EventStore(ev / "events.sqlite")
    try:
        (took,) = [r for r in store.events() if r["type"] == "takeover"]
    finally:
        store.close()
    assert took["payload"]["term"] == 3 and took["payload"]["hash"] == proofs.proof(3)
