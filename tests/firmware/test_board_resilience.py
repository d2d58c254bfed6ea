"""The board when things go wrong (issue #14, item 8), with the real firmware
in real micropython processes: the watchdog (fed only while the board's
tasks loop); a fatal error (recorded in flash, a reset, reported at the next
boot); the ESP32's soft pin interrupts (a press during a blocking flash write
is stamped when the write ends, as the chip's handler would stamp it) and the
flash work the board puts off while a station runs; a configuration the hardware layer cannot take plays the
configuration error instead of crashing to the REPL -- the ESP32's entry
script with a configuration without 'wifi' (just enough of the ESP32's
machine and network modules stubbed for its hardware layer to be built; the
layer itself is checked against the real stubs by hub/fleet/board_check.py), and
a simulated board with a 'sim' key of the wrong type.

A fault is injected by a test's own entry script (code/sim_main.py beside a
copy of the firmware): the firmware itself has no test hooks."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

from pathlib import Path

import pytest

from rig import Rig, ready, synced, within_stated_error
from waiting import until
from tabletimer import firmware_dir, repo_root
from tabletimer.hub.protocol.hub_protocol import schedule
from tabletimer.shared import protocol as P
from tabletimer.tools.bench.firmware_heap import FAST, exercise
from tabletimer.hub.fleet.simulator import RESET_EXIT, WATCHDOG_EXIT, SimBoard, micropython_binary, micropython_path
from tabletimer.tools.testing.host_pause import stand_still

WATCHDOG = dict(FAST, watchdog_ms=3000)


@pytest.fixture
def rig(tmp_path, embedded_broker):
    r = Rig(tmp_path, embedded_broker)
    yield r
    r.close()


def faulty_code(tmp: Path, fault: str) -> Path:
    """The firmware's sources and an entry script that applies `fault`
    (Python run after `import app`, before the board starts)."""
    code = tmp / "faulty"
    code.mkdir()
    for f in firmware_dir().glob("*.py"):
        shutil.copy(f, code / f.name)
    for n in ("protocol.py", "clocksync.py", "auth.py"):
        shutil.copy(repo_root() / "shared" / n, code / n)
    entry = (code / "sim_main.py").read_text()
    assert entry.endswith("\napp.main(b)\n")          # after `import app` (and its try), as the board starts
    (code / "sim_main.py").write_text(entry[:-len("app.main(b)\n")] + "import asyncio\n" + fault + "\napp.main(b)\n")
    return code


# ------------------------------------------------------------- the watchdog

def test_a_healthy_board_keeps_its_watchdog_fed(rig):
    """Calls, counts, voids, confirmations, clock syncs for longer than the
    watchdog's timeout: it was started, and never runs out."""
    rig.start_hub().start_round()
    sim = rig.board("w0", stations=2, timings=WATCHDOG)
    ready(sim)
    exercise(sim)                                    # 10+ s
    assert sim.watchdog_ms == 3000
    assert sim.alive and not [r for r in sim.records if r.get("sim") == "watchdog_reset"]


def test_a_task_that_stops_looping_starves_the_watchdog(rig, tmp_path):
    """The sound player hangs; the inputs task, which feeds the watchdog,
    goes on -- and so would a naive feeder.  It feeds only while every
    monitored task loops: the board is reset, and boots again."""
    code = faulty_code(tmp_path, "async def hang(self):\n    await asyncio.Event().wait()\n"
                                 "app.App.player = hang")
    rig.start_hub().start_round()
    sim = rig.board("w1", stations=2, timings=WATCHDOG, code_dir=code)
    ready(sim)
    sim.press(1)                                     # the inputs task still works meanwhile
    sim.wait_for(lambda r: r.get("journaled") == [1, 1])
    rec = sim.wait_for(lambda r: r.get("sim") == "watchdog_reset", timeout=10)
    assert rec["unfed"] >= 3000
    assert sim.proc and sim.proc.wait(5) == WATCHDOG_EXIT
    again = rig.board("w1", stations=2, timings=WATCHDOG)          # the next boot
    again.wait_for(lambda r: r.get("fault") == "watchdog reset")
    again.wait_for(lambda r: r.get("booted") == 2)
    ready(again)
    hub = rig.service
    until(lambda: any("board w1 RESET after a fault in boot 1: watchdog reset" in a for a in hub.alerts()),
          "the hub's alert for the watchdog reset")


def test_a_board_stuck_in_a_loop_is_reset(rig, tmp_path):
    """A bug that keeps the VM busy (nothing else runs, not even the
    watchdog's feeder): the watchdog's timer is the chip's, it runs out."""
    code = faulty_code(tmp_path, "def spin(self):\n    while self.hw.edges:\n        pass\n    return 100\n"
                                 "app.App.handle_inputs = spin")
    rig.start_hub()
    sim = rig.board("w2", timings=WATCHDOG, code_dir=code)
    sim.wait_for(lambda r: "sync" in r)
    sim.press(1)                                     # an edge: spin() never returns
    sim.wait_for(lambda r: r.get("sim") == "watchdog_reset", timeout=10)
    assert sim.proc and sim.proc.wait(5) == WATCHDOG_EXIT


def test_a_board_its_watchdog_reset_boots_again_when_it_reboots(rig, tmp_path):
    """A chip boots again after its watchdog's reset as after machine.reset():
    a SimBoard that reboots starts its flash again by itself, whose boot
    reports the watchdog's reset.  (It stayed down: the reset kills the
    process, and only machine.reset()'s exit status 3 was booted again.)"""
    code = faulty_code(tmp_path, "def spin(self):\n    while self.hw.edges:\n        pass\n    return 100\n"
                                 "app.App.handle_inputs = spin")
    sim = rig.board("w3", timings=WATCHDOG, code_dir=code)
    sim.reboots = True
    first = sim.proc
    sim.wait_for(lambda r: r.get("booted") == 1)
    sim.press(1)                                     # an edge: spin() never returns
    sim.wait_for(lambda r: r.get("sim") == "watchdog_reset", timeout=10)
    sim.wait_for(lambda r: r.get("fault") == "watchdog reset", timeout=15)
    sim.wait_for(lambda r: r.get("booted") == 2)
    assert first.wait(5) == WATCHDOG_EXIT and sim.proc is not first and sim.alive
    assert [r["sim"] for r in sim.records if r.get("sim") in ("watchdog_reset", "reboot")] == ["watchdog_reset", "reboot"]


# ------------------------------------------------------------ the host stands still

@pytest.mark.parametrize("stopped", [
    pytest.param("the board", marks=pytest.mark.skipif(not sys.platform.startswith("linux"),
                                                      reason="a stopped process is read in /proc")),
    "the host"])
def test_a_board_the_host_stops_longer_than_its_watchdog_is_not_reset(rig, stopped):
    """The host stands still (a virtual machine paused, the simulator's
    processes stopped): the simulated chip is frozen, its watchdog with it.  Not the firmware failing to feed it: no reset. `the
    board`: its process alone stopped, the simulator's chip thread running;
    `the host`: this process (the simulator, its chip thread and readers)
    and the board's stopped, this one continued first, the board 0.5 s later
    (the worst order: nothing fed it yet when the simulator looks again)."""
    sim = rig.board("h1", timings=WATCHDOG)
    sim.wait_for(lambda r: r.get("booted") == 1)     # its watchdog started just before
    assert sim.watchdog_ms == 3000
    board = sim.proc
    stand_still([board.pid] if stopped == "the board" else [os.getpid(), board.pid], 3.5, lag=0.5)
    sim.press(1)
    sim.wait_for(lambda r: r.get("journaled") == [1, 1], timeout=10)
    sim.command("edges 1 3500:1 3580:0")             # a press a whole watchdog period past the resume
    sim.wait_for(lambda r: r.get("journaled") == [1, 2], timeout=10)
    assert not [r for r in sim.records if r.get("sim") in ("watchdog_reset", "reboot")], sim.records
    assert sim.proc is board and board.poll() is None


# ------------------------------------------------------------ a fatal error

def test_a_fatal_error_is_recorded_reset_and_reported_at_the_next_boot(rig, tmp_path):
    """An exception escaping a task (here the clock-sync task, once the board
    is up) ends the board program: the traceback goes to flash, the board
    resets; the next boot reports it in its birth message, and the hub keeps
    it (registry), alerts and logs it, naming the board and the error.  The
    boot after that, a clean one, reports nothing: the alert goes."""
    code = faulty_code(tmp_path, "async def boom(self):\n    await asyncio.sleep_ms(500)\n"
                                 "    raise RuntimeError('boom')\n"
                                 "app.App.syncer = boom")
    hub = rig.start_hub()
    sim = rig.board("f1", code_dir=code)
    sim.wait_for(lambda r: "booted" in r)
    sim.wait_for(lambda r: r.get("sim") == "reset", timeout=10)
    assert sim.proc and sim.proc.wait(5) == RESET_EXIT
    assert "RuntimeError: boom" in (sim.dir / "fault").read_text()
    again = rig.board("f1")
    rec = again.wait_for(lambda r: "fault" in r)
    assert rec["fault"].startswith("RuntimeError: boom (File "), rec
    again.wait_for(lambda r: "sync" in r)
    until(lambda: hub.registry.boards.get("f1") is not None and hub.registry.boards["f1"].boot == 2,
          "the second boot's birth at the hub")
    assert hub.registry.boards["f1"].fault == rec["fault"]
    alerts = [a for a in hub.alerts() if "f1" in a]
    assert alerts and "RESET after a fault in boot 1: RuntimeError: boom" in alerts[0], alerts
    assert any("board f1 RESET after a fault (boot 1): RuntimeError: boom" in a for a in hub.activity)
    again.stop()
    third = rig.board("f1")
    third.wait_for(lambda r: "sync" in r)
    assert not any("fault" in r for r in third.records)
    until(lambda: hub.registry.boards["f1"].boot == 3, "the third boot's birth at the hub")
    assert hub.registry.boards["f1"].fault is None
    assert not [a for a in hub.alerts() if "f1" in a and "fault" in a]


def test_a_sim_key_the_simulator_cannot_take_plays_the_configuration_error(tmp_path, embedded_broker):
    sim = SimBoard("c2", embedded_broker.host, embedded_broker.port, tmp_path, key="00" * 32)
    sim.config["sim"]["drift_ppm"] = "3"
    sim.start()
    try:
        rec = sim.wait_for(lambda r: "config_error" in r)
        assert "sim.drift_ppm" in rec["config_error"]
        sim.wait_for(lambda r: r.get("sim") == "buzz" and r["freq"] == 500)    # the error pattern
        assert sim.alive and not any("booted" in r for r in sim.records)
    finally:
        sim.kill()


# Just enough of the ESP32's machine and network modules for the ESP32 layer
# to be built (the layer itself is checked against the real stubs by
# hub/fleet/board_check.py).
MACHINE = '''
class Pin:
    IN = 1
    OUT = 3
    PULL_UP = 1
    IRQ_FALLING = 2
    IRQ_RISING = 1
    def __init__(self, n, mode=None, pull=None, value=0):
        self.v = value
    def irq(self, trigger=0, handler=None):
        pass
    def value(self, v=None):
        if v is None:
            return 1
        self.v = v
class PWM:
    def __init__(self, pin, freq=0, duty_u16=0):
        pass
    def freq(self, f):
        pass
    def duty_u16(self, d):
        pass
class WDT:
    def __init__(self, timeout=0):
        pass
    def feed(self):
        pass
WDT_RESET = 3
def reset_cause():
    return 1
def reset():
    raise SystemExit(3)
'''
NETWORK = '''
STA_IF = 0
class WLAN:
    PM_NONE = 0
    def __init__(self, i):
        pass
    def active(self, on=None):
        return True
    def config(self, **kw):
        pass
    def isconnected(self):
        return False
    def connect(self, ssid, password):
        pass
    def status(self, what=None):
        return -60
'''


def test_an_esp32_configuration_without_wifi_plays_the_configuration_error(tmp_path):
    """The ESP32's entry (main.py) with a configuration that has no 'wifi':
    the configuration-error pattern (printed on the serial console, the LED
    blinking), not a traceback at the REPL."""
    code, stubs = tmp_path / "code", tmp_path / "stubs"
    code.mkdir()
    stubs.mkdir()
    for f in firmware_dir().glob("*.py"):
        shutil.copy(f, code / f.name)
    for n in ("protocol.py", "clocksync.py", "auth.py"):
        shutil.copy(repo_root() / "shared" / n, code / n)
    (stubs / "machine.py").write_text(MACHINE)
    (stubs / "network.py").write_text(NETWORK)
    cfg = tmp_path / "config.json"
    cfg.write_text('{"board": "T07", "key": "%s", "broker": {"host": "127.0.0.1"}, "buttons": [4, 5]}'
                   % ("00" * 32))
    main = code / "main.py"
    main.write_text(main.read_text().replace('"/config.json"', repr(str(cfg))))
    p = subprocess.Popen([micropython_binary(), str(main)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, env=dict(os.environ, MICROPYPATH=micropython_path(code) + ":" + str(stubs)))
    try:
        lines: list[str] = []
        assert p.stdout
        for line in p.stdout:
            lines.append(line)
            if "config_error" in line or len(lines) > 50:
                break
        assert any("config_error" in l and "wifi" in l for l in lines), lines
        assert not any("Traceback" in l for l in lines), lines
        assert p.poll() is None                      # still signalling
    finally:
        p.kill()
        p.wait()


# ------------------------------------------------------- soft pin interrupts

def test_a_press_during_a_flash_write_is_stamped_when_the_write_ends(rig):
    """Station 2's call is journaled (a 150 ms write here, then the
    stations' state, another); station 1's press comes 40 ms into the first
    write.  The ESP32's handler would run only as the write returns: that is
    the instant the board stamps, and the hub stores, ~110 ms late -- and the
    300 ms press is not lost."""
    rig.start_hub().start_round()
    sim = SimBoard("i1", rig.broker.host, rig.broker.port, rig.tmp, key=rig.keys.ensure("i1"), stations=2,
                   timings=FAST)
    sim.config["sim"].update(flash_write_ms=150)
    rig.boards.append(sim.start())
    ready(sim)
    synced(sim, 6)
    start = len(sim.records)
    sim.press(2, 60)                      # settles 30 ms later: the journal write begins
    sim.command("edges 1 70:1 370:0")
    two = sim.wait_for(lambda r: r.get("sim") == "press" and r["station"] == 2, start=start)
    one = sim.wait_for(lambda r: r.get("sim") == "press" and r["station"] == 1, start=start)
    assert 80 <= one["delay"] <= 300, one          # the write ended ~180 ms after station 2's press
    assert two["delay"] == 0, two                  # nothing in the way
    sim.wait_for(lambda r: r.get("input") == [1, 0], start=start)
    ev = rig.wait_event(lambda e: e["type"] == "press" and e["payload"]["station"] == 1)
    assert within_stated_error(ev, one["true"] + one["delay"])      # stored as stamped


def test_acknowledged_entries_stay_in_flash_until_ten_minutes_after_the_round(rig):
    """Removing an acknowledged entry is a flash write (and every so often
    a 4 KB erase), and a hub that takes over may lack what the old one
    acknowledged last (issue 28): the board keeps its acknowledged entries
    in flash while a station runs and until 10 minutes after the round's
    end (firmware/app.py, _KEEP_MS), then catches up."""
    hub = rig.start_hub()
    sim = rig.board("d1", stations=2, timings=FAST)
    synced(sim, 6)
    t = hub.clock.now_ms()
    end = t + 4000                        # the round ends 4 s from now
    hub.state.publish([hub.commands.to_board("d1", P.SCHED, schedule(10 ** 9, t - 1000, end, []), 1, True)])
    sim.wait_for(lambda r: r.get("sched") == 10 ** 9)
    start = len(sim.records)
    sim.press(1)
    sim.wait_for(lambda r: r.get("acked") == [1, 1], start=start)
    entry = sim.dir / "journal" / "1_1.json"
    assert entry.exists()                 # acknowledged, but station 2 still runs
    until(lambda: hub.clock.now_ms() >= end + 1500, "the round's end, and a second more", timeout=10)
    assert entry.exists()                 # time is up: kept all the same (the sender looks every 250 ms)
    # the same round as if it had ended 10 minutes ago: now it goes
    t = hub.clock.now_ms()
    hub.state.publish([hub.commands.to_board("d1", P.SCHED, schedule(10 ** 9 + 1, t - 700_000, t - 600_500, []), 1, True)])
    sim.wait_for(lambda r: r.get("sched") == 10 ** 9 + 1)
    until(lambda: not entry.exists(), "the entry removed 10 minutes after the round's end", timeout=10)


def test_an_event_its_flash_did_not_take_is_kept_in_ram_and_sent_beyond_the_window(rig):
    """With the hub away a board keeps 4 unacknowledged entries in RAM and
    the rest in its journal only (docs/firmware.md, "Delivery").  An event
    whose journal write fails (here its temporary file's name is taken by a
    directory, which not even root opens as a file) is kept in RAM all the
    same, beyond the window, and reaches the hub when it is back."""
    hub = rig.start_hub()                # no round: every press a stray
    sim = rig.board("rw01", timings=FAST)
    synced(sim)
    rig.stop_hub()
    (sim.dir / "journal" / "1_5.json.tmp").mkdir()
    for i in range(5):
        s0 = len(sim.records)
        sim.press(1)
        sim.wait_for(lambda r: "journaled" in r or "Error" in str(r.get("log", "")), start=s0)
        sim.wait_for(lambda r: r.get("input", [0, 1])[1] == 0, start=s0)
    assert [r["journaled"][1] for r in sim.records if "journaled" in r] == [1, 2, 3, 4]
    assert any("OSError" in str(r.get("log", "")) for r in sim.records)
    hub = rig.start_hub()
    acked: set[int] = set()

    def all_acked(r: dict) -> bool:
        if "acked" in r:
            acked.add(r["acked"][1])
        return acked == {1, 2, 3, 4, 5}
    sim.wait_for(all_acked, timeout=30)
    assert sorted(e["payload"]["seq"] for e in hub.store.events() if e["type"] == "stray") == [1, 2, 3, 4, 5]
