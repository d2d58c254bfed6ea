"""Issue 19: `tabletimer run` and `demo` start Mosquitto as a child process
by default when it is installed (hub/broker/mosquitto_child.py,
hub/runtime/brokers.py), with the event's logins; the first line names the
broker; the child stops with the hub; what goes wrong (not installed, the
port taken, the child dying) is said clearly."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from brokers import free_port, require_mosquitto
from hall import TT, Hub, act, stored_presses
from tabletimer.hub.protocol.hub_secret import ensure_secret
from tabletimer.hub.protocol.keys import BoardKeys, mqtt_password
from tabletimer.hub.broker.mosquitto_child import SEARCH_ENV, find_mosquitto, parse_version
from tabletimer.hub.event.folder import event_folder
from tabletimer.hub.fleet.simulator import SimBoard
from waiting import until


def make_event(tmp: Path, boards=("T01",), keyed=None) -> Path:
    ev = event_folder.init(tmp / "event", "czjpa-individuals")
    ensure_secret(ev)           # as `tabletimer init` makes it: the hub's first line is then its broker
    (ev / "entrants.csv").write_text("id,name,eligible\n" + "".join(f"{b},Puzzler {b},yes\n" for b in boards))
    (ev / "stations.csv").write_text("board,button,table,entrant\n" + "".join(
        f"{b},1,Table {b},{b}\n" for b in boards))
    keys = BoardKeys(ev / "board-keys.json")
    for b in boards if keyed is None else keyed:
        keys.ensure(b)
    return ev


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie (exited, not yet reaped by its parent) holds no port
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return True


def listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def broker_pid(line: str) -> int:
    return int(line.split("pid ")[1].split(")")[0])


def first_line(hub: Hub) -> str:
    return next(li for li in hub.lines if li.startswith("broker:"))


def test_run_starts_mosquitto_boards_log_in_a_press_is_stored_and_sigterm_stops_it(tmp_path):
    require_mosquitto()
    ev = make_event(tmp_path)
    act(ev, "round_start", at=int(time.time() * 1000))
    port = free_port()
    hub = Hub(ev, None, "--port", str(port))              # --broker-kind auto: Mosquitto, installed here
    sim = None
    try:
        line = first_line(hub)
        conf = ev / "mosquitto" / "child" / "mosquitto.conf"
        assert line.startswith("broker: Mosquitto 2.") and f"on 127.0.0.1:{port}" in line, line
        assert f"config {conf}" in line, line
        pid = broker_pid(line)
        assert alive(pid)
        text = conf.read_text()
        assert f"listener {port} 127.0.0.1" in text and "set_tcp_nodelay true" in text
        assert f"persistence_location {ev / 'mosquitto' / 'child' / 'persist'}/" in text
        for secret in ("passwd", "acl", "mosquitto.log"):       # the log: client addresses, user names
            assert (conf.parent / secret).stat().st_mode & 0o077 == 0, secret
        key = BoardKeys(ev / "board-keys.json").key("T01")
        sim = SimBoard("T01", "127.0.0.1", port, tmp_path / "boards", key=key,
                       broker_user="T01", broker_password=mqtt_password(key)).start()
        sim.wait_for(lambda r: "sched" in r, timeout=30)
        sim.press(1)
        until(lambda: stored_presses(ev), "the press stored in the event log", timeout=30)
    finally:
        if sim:
            sim.stop()
        out = hub.stop()
    assert hub.proc.returncode == 0, out
    until(lambda: not alive(pid), "the Mosquitto child to exit with the hub", timeout=15)
    assert not listening(port)
    log = (ev / "mosquitto" / "child" / "mosquitto.log").read_text()
    assert "New client connected" in log and "u'T01'" in log, log[-2000:]


def test_a_board_flashed_while_the_hub_runs_logs_in_to_its_mosquitto(tmp_path):
    require_mosquitto()
    ev = make_event(tmp_path, boards=("T01", "T02"), keyed=("T01",))
    port = free_port()
    hub = Hub(ev, None, "--port", str(port), "--broker-kind", "mosquitto")
    sim = None
    try:
        key = BoardKeys(ev / "board-keys.json").ensure("T02")     # as `board flash --keys` does
        until(lambda: any("logins written again and reloaded" in li for li in hub.lines),
              "the hub to reload Mosquitto's logins", timeout=15, seen=lambda: hub.lines[-3:])
        sim = SimBoard("T02", "127.0.0.1", port, tmp_path / "boards", key=key,
                       broker_user="T02", broker_password=mqtt_password(key)).start()
        sim.wait_for(lambda r: "sync" in r, timeout=30)        # logged in: the hub answers its clock sync
    finally:
        if sim:
            sim.stop()
        hub.stop()


def test_a_killed_hub_takes_its_mosquitto_with_it(tmp_path):
    require_mosquitto()
    ev = make_event(tmp_path)
    port = free_port()
    hub = Hub(ev, None, "--port", str(port), "--broker-kind", "mosquitto")
    pid = broker_pid(first_line(hub))
    hub.kill()                                   # SIGKILL: no clean shutdown at all
    until(lambda: not alive(pid), "the Mosquitto child to exit after the hub's SIGKILL", timeout=15)
    until(lambda: not listening(port), "the port to be free", timeout=5)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux only")
def test_a_killed_watchdog_takes_its_mosquitto_with_it(tmp_path):
    """The watchdog itself SIGKILLed (it cannot stop Mosquitto then): the
    kernel tells Mosquitto, which exits (it was left running), and the hub
    says its broker stopped and starts a new one (the port is free again)."""
    require_mosquitto()
    ev = make_event(tmp_path)
    port = free_port()
    hub = Hub(ev, None, "--port", str(port), "--broker-kind", "mosquitto")
    try:
        pid = broker_pid(first_line(hub))
        with open(f"/proc/{pid}/stat") as f:
            watchdog = int(f.read().rsplit(")", 1)[1].split()[1])      # Mosquitto's parent
        assert watchdog != hub.pid
        log = ev / "mosquitto" / "child" / "mosquitto.log"
        until(lambda: "u'hub'" in log.read_text(), "the hub connected to its Mosquitto", timeout=15)
        os.kill(watchdog, signal.SIGKILL)
        until(lambda: not alive(pid), "Mosquitto to exit after its watchdog's SIGKILL", timeout=15)
        until(lambda: any("THE BROKER HAS STOPPED" in li for li in hub.lines),
              "the hub to say its broker stopped", timeout=15, seen=lambda: hub.lines[-5:])
        until(lambda: any(li.startswith("broker: Mosquitto started again") for li in hub.lines),
              "the hub to start it again", timeout=20, seen=lambda: hub.lines[-5:])
    finally:
        hub.stop()


def test_demo_names_its_broker_first_both_kinds(tmp_path):
    require_mosquitto()
    for kind, want in (("auto", "broker: Mosquitto "), ("embedded", "broker: embedded (amqtt) on 127.0.0.1:")):
        p = subprocess.run([TT, "demo", "--data", str(tmp_path / kind), "--port", str(free_port()),
                            "--boards", "1", "--duration", "3", "--web-listen", "off", "--broker-kind", kind],
                           capture_output=True, text=True, timeout=90)
        assert p.returncode == 0, p.stdout + p.stderr
        first = p.stdout.splitlines()[0]
        assert first.startswith(want), p.stdout
        if kind == "embedded":
            assert "measured to serve up to 100 boards (docs/benchmarks.md)" in first
            assert "install Mosquitto for a bigger hall" in first


def test_broker_kind_mosquitto_without_mosquitto_is_a_clear_error(tmp_path):
    ev = make_event(tmp_path)
    env = dict(os.environ, PATH=os.path.dirname(TT), **{SEARCH_ENV: ""})
    assert find_mosquitto(env) is None
    p = subprocess.run([TT, "run", str(ev), "--port", str(free_port()), "--broker-kind", "mosquitto",
                        "--web-listen", "off"], capture_output=True, text=True, env=env, timeout=60)
    assert p.returncode == 2, p.stdout + p.stderr
    out = " ".join((p.stdout + p.stderr).split())
    assert "Mosquitto is not installed" in out and "sudo apt-get install mosquitto" in out, out
    assert "brew install mosquitto" in out and "Traceback" not in out
    # auto without it: the embedded broker, said so
    p = subprocess.run([TT, "run", str(ev), "--port", str(free_port()), "--web-listen", "off",
                        "--duration", "1"], capture_output=True, text=True, env=env, timeout=60)
    assert p.returncode == 0 and p.stdout.startswith("broker: embedded (amqtt)"), p.stdout + p.stderr


def test_broker_url_and_broker_kind_together_are_refused(tmp_path):
    ev = make_event(tmp_path)
    p = subprocess.run([TT, "run", str(ev), "--broker", "mqtt://u:secret@127.0.0.1:1", "--broker-kind",
                        "embedded", "--web-listen", "off"], capture_output=True, text=True, timeout=60)
    out = " ".join((p.stdout + p.stderr).split())
    assert p.returncode == 2 and "not both" in out and "secret" not in out, out


@pytest.mark.parametrize("kind", ["mosquitto", "embedded"])
def test_a_taken_port_is_a_clear_error(tmp_path, kind):
    if kind == "mosquitto":
        require_mosquitto()
    ev = make_event(tmp_path)
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        p = subprocess.run([TT, "run", str(ev), "--port", str(port), "--broker-kind", kind,
                            "--web-listen", "off"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2, p.stdout + p.stderr
    out = " ".join((p.stdout + p.stderr).split())
    assert f"cannot listen on 127.0.0.1:{port}" in out and "Traceback" not in out, out
    if kind == "mosquitto":
        assert "sudo systemctl disable --now mosquitto" in out, out


def test_mosquitto_dying_under_the_hub_is_said_and_started_again(tmp_path):
    require_mosquitto()
    ev = make_event(tmp_path)
    hub = Hub(ev, None, "--port", str(free_port()), "--broker-kind", "mosquitto")
    try:
        pid = broker_pid(first_line(hub))
        log = ev / "mosquitto" / "child" / "mosquitto.log"
        until(lambda: "u'hub'" in log.read_text(), "the hub connected to its Mosquitto", timeout=15)
        os.kill(pid, signal.SIGKILL)
        until(lambda: any("THE BROKER HAS STOPPED" in li for li in hub.lines),
              "the hub to say its broker died", timeout=15, seen=lambda: hub.lines[-5:])
        until(lambda: any(li.startswith("broker: Mosquitto started again (pid ") for li in hub.lines),
              "the hub to start it again", timeout=20, seen=lambda: hub.lines[-5:])
        again = int(next(li for li in hub.lines if "started again (pid " in li).split("pid ")[1].split(")")[0])
        assert again != pid and alive(again)
        # the hub connects to the new one by itself: it logs in again (a second "u'hub'")
        until(lambda: log.read_text().count("u'hub'") >= 2, "the hub connected to the new Mosquitto",
              timeout=20)
    finally:
        hub.stop()


def test_mosquitto_version_is_read_from_its_help():
    assert parse_version("mosquitto version 2.0.11\n\nmosquitto is an MQTT v5.0 broker.") == "2.0.11"
    assert parse_version("something else") is None
