"""Issue 29, item 1, end to end: `tabletimer boards set` beside the hub run
by `tabletimer run`, the real firmware on simulated boards through
Mosquitto.  A board's broker list changed: it restarts on it, comes back,
commits (exit 0); its buzzer volume, at once (no restart); a broker port nobody listens on: the board goes back by
itself, the hub says so (exit 1); a change asked while the round runs:
refused at the desk before anything is stored or sent (exit 2)."""

from __future__ import annotations

import json
import subprocess

from brokers import require_mosquitto
from rig import synced
from tabletimer.hub.broker.broker import free_port
from tabletimer.hub.protocol.keys import BoardKeys
from tabletimer.hub.event.folder import event_folder
from tabletimer.hub.event.log.store import EventStore
from tabletimer.hub.fleet.simulator import SimBoard
from tabletimer.tools.testing.local_mosquitto import LocalMosquitto
from waiting import Output

from hall import TT


def _set(ev, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([TT, "boards", "set", str(ev), *args], capture_output=True, text=True, timeout=120)


def test_boards_set_changes_a_broker_list_rolls_back_a_bad_broker_and_refuses_during_the_round(tmp_path):
    require_mosquitto()
    ev = event_folder.init(tmp_path / "event", "czjpa-individuals", "Settings")
    (ev / "entrants.csv").write_text("id,name,eligible\nI1,Entrant 1,yes\nI2,Entrant 2,yes\n")
    (ev / "stations.csv").write_text("board,button,table,entrant\nS1,1,Table A,I1\nS2,1,Table B,I2\n")
    keys = BoardKeys(ev / "board-keys.json")
    mosq = LocalMosquitto().start()
    sims = {b: SimBoard(b, "127.0.0.1", mosq.port, tmp_path / "boards", key=keys.ensure(b)) for b in ("S1", "S2")}
    sims["S1"].config["buzzer"] = {"pin": 25}                 # a passive buzzer, as flashed
    hub = None
    try:
        hub = subprocess.Popen([TT, "run", str(ev), "--broker", f"mqtt://127.0.0.1:{mosq.port}", "--web-listen",
                                "off"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        out = Output(hub.stdout)
        out.wait_for(lambda ln: ln.startswith("broker:"), "the hub")
        for s in sims.values():
            s.reboots = True                     # the chip boots again after machine.reset()
            s.start()
        for b, s in sims.items():
            out.wait_for(lambda ln: ln.startswith(f"board {b} online"), f"board {b} online")
            synced(s)

        # a value the board's checks refuse: refused at the desk, nothing stored
        bad = _set(ev, "S1", "broker.port=70000")
        assert bad.returncode == 2 and "'broker.port' must be 1..65535" in bad.stderr, bad

        # S1: a broker list (the hub, then a standby's address); a password never printed
        # (the simulator models no access point here: any WiFi joins)
        ok = _set(ev, "S1", "broker.host=127.0.0.1,127.0.0.2", "wifi.ssid=hall", "wifi.password=s3cret",
                  "--trial", "30")
        assert ok.returncode == 0, ok.stdout + ok.stderr
        lines = ok.stdout.splitlines()
        assert lines[0].startswith("S1: sent (log row #") and "wifi.password=<secret>" in lines[0], lines
        assert "S1: staged" in lines and "S1: committed" in lines, lines
        assert "1/1 board(s) on the new settings" in lines[-1]
        assert "s3cret" not in ok.stdout + ok.stderr
        cfg = json.loads((sims["S1"].dir / "config.json").read_text())
        assert cfg["broker"]["host"] == ["127.0.0.1", "127.0.0.2"] and cfg["wifi"]["password"] == "s3cret"
        assert any(r.get("sim") == "reboot" for r in sims["S1"].records)

        # S1's buzzer quieter: applied at once, no restart (committed with no staged)
        reboots = sum(r.get("sim") == "reboot" for r in sims["S1"].records)
        quiet = _set(ev, "S1", "buzzer.volume=40")
        assert quiet.returncode == 0, quiet.stdout + quiet.stderr
        lines = quiet.stdout.splitlines()
        assert "S1: committed" in lines and "S1: staged" not in lines, lines
        sims["S1"].wait_for(lambda r: r.get("sim") == "volume" and r["volume"] == 40, timeout=10)
        assert sum(r.get("sim") == "reboot" for r in sims["S1"].records) == reboots

        # S2: a port nobody listens on: it goes back by itself within the trial; the hub says so
        back = _set(ev, "S2", f"broker.port={free_port()}", "--trial", "10")
        assert back.returncode == 1, back.stdout + back.stderr
        assert any(ln.startswith("S2: rolled back: no broker answered within 10 s")
                   for ln in back.stdout.splitlines()), back.stdout
        out.wait_for(lambda ln: ln.startswith("board S2 online: settings rolled back: no broker answered"), "the hub's line")
        assert json.loads((sims["S2"].dir / "config.json").read_text())["broker"]["port"] == mosq.port

        # during the round: refused before anything is stored or sent
        started = subprocess.run([TT, "act", str(ev), "round_start"], capture_output=True, text=True, timeout=60)
        assert started.returncode == 0, started.stderr
        during = _set(ev, "--all", "led=2")
        assert during.returncode == 2, during.stdout + during.stderr
        assert "the round runs" in during.stderr and "nothing was sent" in during.stderr, during.stderr
    finally:
        if hub is not None:
            hub.terminate()
            hub.wait(30)
        for s in sims.values():
            s.stop()
        mosq.stop()
    out.wait_closed()
    store = EventStore(ev / "events.sqlite") if (ev / "events.sqlite").exists() else None
    if store is not None:
        try:
            rows = store.events()
            requests = [r for r in rows if r["type"] == "settings"]
            assert [r["payload"]["board"] for r in requests] == ["S1", "S1", "S2"]  # none during the round
            assert "s3cret" not in json.dumps(rows)                                 # sealed in the log
        finally:
            store.close()
