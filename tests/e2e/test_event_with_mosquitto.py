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
from tabletimer.hub.event import event_folder
from tabletimer.hub.boards.keys import BoardKeys, mqtt_password
from tabletimer.tools.simulator import SimBoard

TT = str(Path(sys.executable).parent / "tabletimer")


def test_board_press_through_a_configured_mosquitto(tmp_path):
    mosquitto = require_mosquitto()
    ev = event_folder.init(tmp_path / "event", "rogaland-individuals")
    (ev / "entrants.csv").write_text("id,name,eligible\n1,Åse,yes\n2,Bjørn,no\n")
    (ev / "stations.csv").write_text("board,button,table,entrant\nT01,1,Bord 1,1\nT01,2,Bord 1,2\n")
    keys = BoardKeys(ev / "board-keys.json")
    key = keys.ensure("T01")
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
        sim.wait_for(lambda r: "sched" in r, timeout=20)
        synced(sim)
        sim.press(2)
        sim.wait_for(lambda r: r.get("acked") == [1, 1])
    finally:
        for s in sims:
            s.kill()
        if hub:
            hub.terminate()
            hub.communicate(timeout=30)
        broker.terminate()
        broker.wait(10)
    rows = json.loads(subprocess.run([TT, "replay", str(ev), "--json"], capture_output=True, text=True,
                                     check=True).stdout)["standings"]
    by = {r["entrant"]: r for r in rows}
    assert by["2"]["status"] == "finished" and by["2"]["place"] == 1
    assert by["2"]["award_place"] is None and not by["2"]["official"]   # not from Rogaland
    assert by["1"]["status"] == "unfinished"
