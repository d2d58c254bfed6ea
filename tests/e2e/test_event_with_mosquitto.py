"""An event run the production way: `tabletimer broker config` writes the
Mosquitto configuration (board logins, ACL), the real mosquitto runs it,
`tabletimer run DIR --broker ...` is the hub, a board logs in with the
credentials `board flash` would give it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from brokers import free_port, require_mosquitto, wait_port
from rig import synced
from tabletimer.hub.event.folder import event_folder
from tabletimer.hub.protocol.keys import BoardKeys, mqtt_password
from tabletimer.hub.fleet.simulator import SimBoard

TT = str(Path(sys.executable).parent / "tabletimer")


def stop(sims, hub, broker) -> None:
    """Boards, then the hub (a clean stop), then Mosquitto."""
    for s in sims:
        s.kill()
    if hub:
        hub.terminate()
        hub.communicate(timeout=30)
    broker.terminate()
    broker.wait(10)


def event_with_one_board(tmp_path: Path) -> tuple[Path, str]:
    """An event folder of two entrants at board T01 (buttons 1, 2), and
    T01's key (made as `board flash --keys` makes it)."""
    ev = event_folder.init(tmp_path / "event", "rogaland-individuals")
    (ev / "entrants.csv").write_text("id,name,eligible\n1,Åse,yes\n2,Bjørn,no\n")
    (ev / "stations.csv").write_text("board,button,table,entrant\nT01,1,Bord 1,1\nT01,2,Bord 1,2\n")
    return ev, BoardKeys(ev / "board-keys.json").ensure("T01")


def finish_at_button_2(sim: SimBoard) -> None:
    """The board takes the round's schedule and its clock, then entrant 2
    calls a finish, which the hub acknowledges."""
    sim.wait_for(lambda r: "sched" in r, timeout=20)
    synced(sim)
    sim.press(2)
    sim.wait_for(lambda r: r.get("acked") == [1, 1])


def standings(ev: Path) -> list[dict]:
    return json.loads(subprocess.run([TT, "replay", str(ev), "--json"], capture_output=True, text=True,
                                     check=True).stdout)["standings"]


def test_board_press_through_a_configured_mosquitto(tmp_path):
    mosquitto = require_mosquitto()
    ev, key = event_with_one_board(tmp_path)
    port = free_port()
    out = subprocess.run([TT, "broker", "config", str(ev), "--listen", "127.0.0.1", "--port", str(port)],
                         capture_output=True, text=True, check=True).stdout
    assert "mosquitto -c" in out
    broker = subprocess.Popen([mosquitto, "-c", str(ev / "mosquitto" / "mosquitto.conf")],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    hub = None
    sims = []
    try:
        wait_port("127.0.0.1", port, 10, broker)
        subprocess.run([TT, "act", str(ev), "round_start"], check=True, capture_output=True)
        hub = subprocess.Popen([TT, "run", str(ev), "--broker", f"mqtt://127.0.0.1:{port}"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        # a board with a wrong password gets nowhere; the right one works
        bad = SimBoard("T01", "127.0.0.1", port, tmp_path / "bad", key=key, stations=2,
                       broker_user="T01", broker_password="wrong").start()
        sims.append(bad)
        bad.wait_for(lambda r: "refused" in str(r.get("log", "")) or "rc=5" in str(r.get("log", "")))
        bad.kill()
        sim = SimBoard("T01", "127.0.0.1", port, tmp_path, key=key, stations=2,
                       broker_user="T01", broker_password=mqtt_password(key)).start()
        sims.append(sim)
        finish_at_button_2(sim)
    finally:
        stop(sims, hub, broker)
    rows = standings(ev)
    by = {r["entrant"]: r for r in rows}
    assert by["2"]["status"] == "finished" and by["2"]["place"] == 1
    assert by["2"]["award_place"] is None and not by["2"]["official"]   # not from Rogaland
    assert by["1"]["status"] == "unfinished"


def test_boards_over_tls_accept_only_the_events_broker(tmp_path):
    """Issue #15, item 4: MQTT logins travelled in clear.  `broker config
    --tls` makes the event's CA and the broker's certificate; Mosquitto takes
    TLS only on the boards' port (the hub connects on 127.0.0.1 without);
    a board flashed with the CA (`board flash --broker-ca`) connects and is
    acknowledged; one with another CA, one dialling a name the certificate
    does not have, and a plain MQTT client get nowhere."""
    import paho.mqtt.client as mqtt
    from tabletimer.hub.broker.tls_certs import board_ca, make_ca

    mosquitto = require_mosquitto()
    ev, key = event_with_one_board(tmp_path)
    port, hub_port = free_port(), free_port()
    out = subprocess.run([TT, "broker", "config", str(ev), "--listen", "127.0.0.1", "--port", str(port),
                          "--tls", "--tls-host", "127.0.0.1", "--hub-port", str(hub_port)],
                         capture_output=True, text=True, check=True).stdout
    assert f"--broker-ca {ev / 'mosquitto' / 'ca.crt'}" in out
    assert (ev / "mosquitto" / "ca.key").stat().st_mode & 0o077 == 0
    assert (ev / "mosquitto" / "server.key").stat().st_mode & 0o077 == 0
    broker = subprocess.Popen([mosquitto, "-c", str(ev / "mosquitto" / "mosquitto.conf")],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    hub = None
    sims = []
    login = dict(broker_user="T01", broker_password=mqtt_password(key))
    try:
        wait_port("127.0.0.1", hub_port, 10, broker)
        wait_port("127.0.0.1", port, 10, broker)
        subprocess.run([TT, "act", str(ev), "round_start"], check=True, capture_output=True)
        hub = subprocess.Popen([TT, "run", str(ev), "--broker", f"mqtt://127.0.0.1:{hub_port}"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for name, host, ca in (("other CA", "127.0.0.1", board_ca(make_ca().cert)),
                               ("other name", "localhost", board_ca((ev / "mosquitto" / "ca.crt").read_bytes()))):
            bad = SimBoard("T01", host, port, tmp_path / name, key=key, stations=2, broker_ca=ca, **login).start()
            sims.append(bad)
            bad.wait_for(lambda r: "mqtt: " in str(r.get("log", "")) and "reconnect" not in r["log"])
            assert not any("sched" in r for r in bad.records)
            bad.kill()
        plain = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="plain")
        plain.username_pw_set("T01", mqtt_password(key))
        try:
            plain.connect("127.0.0.1", port, keepalive=5)
            rc = plain.loop(timeout=5)                # the TLS listener cannot read a CONNECT
            assert rc != mqtt.MQTT_ERR_SUCCESS or not plain.is_connected()
        except OSError:
            pass
        finally:
            plain.disconnect()
        sim = SimBoard("T01", "127.0.0.1", port, tmp_path, key=key, stations=2,
                       broker_ca=board_ca((ev / "mosquitto" / "ca.crt").read_bytes()), **login).start()
        sims.append(sim)
        finish_at_button_2(sim)
    finally:
        stop(sims, hub, broker)
    rows = standings(ev)
    assert {r["entrant"]: r["status"] for r in rows} == {"1": "unfinished", "2": "finished"}
