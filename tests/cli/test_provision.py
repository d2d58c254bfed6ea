"""`tabletimer boards provision DIR` as a volunteer runs it, without a
board: the USB ports are plugged by the test (a port list that changes
from one look to the next, then Ctrl-C), mpremote runs for real and fails
on a port where there is no board, and --dry-run prints what would be
done.  Nothing here pretends a board was flashed."""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import pytest

from tabletimer.hub.fleet import provisioning as pv
from tabletimer.hub.cli import main as cli
from tabletimer.hub.fleet import usb_boards

SETTINGS = ["--wifi-ssid", "hall", "--wifi-password", "hall-wifi-s3cret", "--broker-host", "192.168.1.10"]


def event(path: Path) -> Path:
    assert cli.main(["init", str(path), "--format", "czjpa-individuals", "--title", "Cup"]) == 0
    (path / "entrants.csv").write_text("id,name,eligible\n" + "".join(f"{i},E{i},yes\n" for i in range(1, 7)))
    (path / "stations.csv").write_text("board,button,table,entrant\n" + "".join(
        f"T0{(i + 1) // 2},{2 - i % 2},Table {(i + 1) // 2},{i}\n" for i in range(1, 7)))   # T01..T03
    return path


class Plugs:
    """What the USB port list shows at each look (the first: at the start);
    once every state is shown, Ctrl-C."""

    def __init__(self, *states):
        self.states = list(states)

    def __call__(self):
        if not self.states:
            raise KeyboardInterrupt
        return self.states.pop(0)


def record(ev: Path) -> list[dict]:
    with open(ev / pv.RECORD_NAME, newline="") as f:
        return list(csv.DictReader(f))


def provision(ev: Path, *extra: str) -> int:
    return cli.main(["boards", "provision", str(ev), *SETTINGS, *extra])


@pytest.fixture
def port(tmp_path):
    """A port where no board is: mpremote fails on it for real."""
    return usb_boards.Port(str(tmp_path / "ttyUSB0"), "0001")


def test_dry_run_prints_the_plan_and_names_the_ids_in_order(tmp_path, capsys):
    ev = event(tmp_path / "hall")
    assert provision(ev, "--dry-run", "--id", "T02") == 0
    out = capsys.readouterr().out
    assert "provisioning the boards of Cup" in out
    assert "to do now: 3, in this order:\n    T02, T01, T03" in out
    assert "WiFi:    'hall' (password set)" in out and "broker:  192.168.1.10 port 1883" in out
    assert "fs cat :config.json" in out and ":main.py" in out and ":config.json + exec" in out
    assert "  1. T02\n  2. T01\n  3. T03\n" in out
    assert "hall-wifi-s3cret" not in out
    assert not (ev / "board-keys.json").exists() and not (ev / pv.RECORD_NAME).exists()


def test_only_limits_the_ids_and_an_unknown_id_is_refused(tmp_path, capsys):
    ev = event(tmp_path / "hall")
    assert provision(ev, "--dry-run", "--only", "T03,T01") == 0
    assert "  1. T01\n  2. T03\n" in capsys.readouterr().out
    assert provision(ev, "--dry-run", "--id", "T09") == 2
    err = capsys.readouterr().err
    assert "not a board of stations.csv: T09 (its boards: T01, T02, T03)" in err


def test_a_failing_flash_does_not_use_up_the_id_and_the_loop_goes_on(tmp_path, capsys, monkeypatch, port):
    """The board answers (MicroPython, no configuration), then mpremote
    fails writing it (no board on that port): T01 is not used up; plugged
    again, the board is tried with T01 again; Ctrl-C gives the summary."""
    ev = event(tmp_path / "hall")
    monkeypatch.setattr(usb_boards, "list_ports", Plugs([], [port], [], [port]))
    monkeypatch.setattr(usb_boards, "read_config", lambda device: None)
    assert provision(ev, "--poll", "0") == 1
    out = capsys.readouterr().out
    assert "waiting for a board: plug one in" in out
    assert out.count(f"T01 not done on {port.device}: mpremote (writing the firmware) failed (exit 1)") == 2
    assert "The board was unplugged during the write: plug it in again" in out
    assert "T01 is not used up: the next board plugged gets it (3 to go)" in out
    assert "T02 not done" not in out and "T02:" not in out
    assert out.rstrip().endswith("provisioned 0; failed attempts 2: T01, T01; remaining 3: T01, T02, T03")
    rows = record(ev)
    assert [(r["board"], r["result"], r["port"]) for r in rows] == [("T01", "failed", port.device)] * 2
    assert rows[0]["install"] != rows[1]["install"] and len(rows[0]["install"]) == 6
    assert list(json.loads((ev / "board-keys.json").read_text())) == ["T01"]   # stored before the write
    assert "hall-wifi-s3cret" not in out
    assert provision(ev, "--dry-run") == 0
    assert "  1. T01\n  2. T02\n  3. T03\n" in capsys.readouterr().out


def test_a_board_without_micropython_is_said_and_given_no_id(tmp_path, capsys, monkeypatch, port):
    """mpremote for real, reading a port with no board: no id is involved;
    the line says what to do (--image)."""
    ev = event(tmp_path / "hall")
    monkeypatch.setattr(usb_boards, "list_ports", Plugs([], [port]))
    assert provision(ev, "--poll", "0") == 1
    out = capsys.readouterr().out
    assert (f"{port.device}: not provisioned: mpremote (reading /config.json) failed (exit 1): "
            f"mpremote: failed to access {port.device}") in out
    assert "start again with --image FILE" in out
    assert "remaining 3: T01, T02, T03" in out
    assert not (ev / pv.RECORD_NAME).exists()


def test_a_restart_goes_on_with_the_next_id_and_a_replugged_board_is_recognised(tmp_path, capsys, monkeypatch,
                                                                                port):
    ev = event(tmp_path / "hall")
    (ev / pv.RECORD_NAME).write_text(pv.record_text(
        pv.Entry("2027-05-01 07:10:00", "T01", "aa0001", "/dev/ttyUSB0", "0001", pv.DONE), header=True))
    boards = [{"board": "T01", "install": "aa0001", "key": "ab" * 32}, None]     # T01's board, then a new one
    monkeypatch.setattr(usb_boards, "list_ports", Plugs([], [port], [], [port]))
    monkeypatch.setattr(usb_boards, "read_config", lambda device: boards.pop(0))
    assert provision(ev, "--poll", "0") == 1
    out = capsys.readouterr().out
    assert "provisioned already: 1" in out and "in this order:\n    T02, T03" in out
    assert ("this board is T01 already (provisioned 2027-05-01 07:10:00, install aa0001): nothing to do; "
            "unplug it and plug the next") in out
    assert f"T02 not done on {port.device}" in out and "T01 not done" not in out
    assert [(r["board"], r["result"]) for r in record(ev)] == [("T01", "done"), ("T02", "failed")]


def test_a_board_flashed_for_this_event_before_keeps_its_id(tmp_path, capsys, monkeypatch, port):
    """A board `board flash --id T02` made for this event (its key is the
    event's): recorded as T02, not written, and T02 is not handed out."""
    ev = event(tmp_path / "hall")
    from tabletimer.hub.protocol.keys import BoardKeys

    key = BoardKeys(ev / "board-keys.json").ensure("T02")
    monkeypatch.setattr(usb_boards, "list_ports", Plugs([], [port]))
    monkeypatch.setattr(usb_boards, "read_config", lambda device: {"board": "T02", "install": "bb0002", "key": key})
    provision(ev, "--poll", "0")
    out = capsys.readouterr().out
    assert "this board is T02, flashed for this event before" in out and "writing the firmware" not in out
    assert [(r["board"], r["result"], r["install"]) for r in record(ev)] == [("T02", "found", "bb0002")]
    assert out.rstrip().endswith("remaining 2: T01, T03")


def test_another_events_board_is_left_alone_unless_overwrite(tmp_path, capsys, monkeypatch, port):
    ev = event(tmp_path / "hall")
    old = {"board": "T05", "install": "cc0005", "key": "cd" * 32}
    monkeypatch.setattr(usb_boards, "list_ports", Plugs([], [port]))
    monkeypatch.setattr(usb_boards, "read_config", lambda device: old)
    provision(ev, "--poll", "0")
    out = capsys.readouterr().out
    assert "carries a configuration from elsewhere (board T05, install cc0005" in out and "--overwrite" in out
    assert not (ev / pv.RECORD_NAME).exists()
    monkeypatch.setattr(usb_boards, "list_ports", Plugs([], [port]))
    provision(ev, "--poll", "0", "--overwrite", "--id", "T03")
    assert f"T03 not done on {port.device}" in capsys.readouterr().out      # tried, with the chosen id


def test_a_board_there_at_the_start_is_left_alone_unless_asked(tmp_path, capsys, monkeypatch, port):
    ev = event(tmp_path / "hall")
    monkeypatch.setattr(usb_boards, "list_ports", Plugs([port], [port], [port]))
    monkeypatch.setattr(usb_boards, "read_config", lambda device: None)
    provision(ev, "--poll", "0")
    out = capsys.readouterr().out
    assert f"left alone (there at the start): {port.device} (--take-present" in out and "reading it" not in out
    monkeypatch.setattr(usb_boards, "list_ports", Plugs([port], [port]))
    provision(ev, "--poll", "0", "--take-present")
    assert f"T01 not done on {port.device}" in capsys.readouterr().out


def test_a_failing_esptool_uses_up_no_id_and_nothing_else_is_written(tmp_path, capsys, monkeypatch, port):
    """esptool's failure as it ends (a stand-in that fails as esptool does
    when it cannot connect, not a flash): T01 is still free, mpremote never
    ran for the write."""
    ev = event(tmp_path / "hall")
    image = tmp_path / "ESP32_GENERIC-v1.28.0.bin"
    image.write_bytes(b"\xe9" + bytes(usb_boards.MIN_IMAGE_BYTES))
    fails = [sys.executable, "-c", "import sys; sys.exit('A fatal error occurred: Failed to connect to ESP32')"]
    monkeypatch.setattr(usb_boards, "esptool", lambda: fails)
    monkeypatch.setattr(usb_boards, "list_ports", Plugs([], [port]))
    provision(ev, "--poll", "0", "--image", str(image))
    out = capsys.readouterr().out
    assert f"first MicroPython from {image}" in out
    assert (f"T01 not done on {port.device}: esptool erase_flash failed (exit 1): A fatal error occurred: "
            "Failed to connect to ESP32") in out
    assert "writing the firmware" not in out and "T01 is not used up" in out
    assert [(r["board"], r["result"]) for r in record(ev)] == [("T01", "failed")]


@pytest.mark.parametrize("args,message", [
    (["--image", "{tmp}/missing.bin"], "missing.bin: No such file or directory"),
    (["--image", "{tmp}/notes.txt"], "not an ESP32 image (it does not begin with 0xE9)"),
    (["--image", "{tmp}/cut.bin"], "cut.bin: 1001 bytes, too small for a MicroPython image"),
    (["--image", "{tmp}/good.bin"], "esptool is not installed. It writes the MicroPython image and is needed "
                                    "only with --image"),
    (["--buttons", "4,x"], "invalid literal"),
    (["--only", "T01,Z9"], "not a board of stations.csv: Z9"),
])
def test_the_commands_error_messages(tmp_path, capsys, monkeypatch, args, message):
    ev = event(tmp_path / "hall")
    (tmp_path / "notes.txt").write_text("not an image")
    (tmp_path / "good.bin").write_bytes(b"\xe9" + bytes(usb_boards.MIN_IMAGE_BYTES))
    (tmp_path / "cut.bin").write_bytes(b"\xe9" + bytes(1000))
    monkeypatch.setattr(usb_boards, "esptool", lambda: None)      # as on this machine
    monkeypatch.setattr(usb_boards, "list_ports", Plugs())        # never reached
    assert provision(ev, *[a.replace("{tmp}", str(tmp_path)) for a in args]) == 2
    captured = capsys.readouterr()
    assert message in captured.err and "waiting for a board" not in captured.out
    if "esptool is not" in message:
        assert ".venv/bin/pip install esptool" in captured.err
    assert not (ev / pv.RECORD_NAME).exists() and not (ev / "board-keys.json").exists()


def test_two_provisionings_of_one_folder_are_refused(tmp_path, capsys, monkeypatch):
    import fcntl
    import os

    ev = event(tmp_path / "hall")
    fd = os.open(ev / (pv.RECORD_NAME + ".lock"), os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        monkeypatch.setattr(usb_boards, "list_ports", Plugs())
        assert provision(ev) == 2
        assert "another `tabletimer boards provision` runs on" in capsys.readouterr().err
    finally:
        os.close(fd)


def test_the_port_list_is_the_usb_serial_ports_as_mpremote_lists_them(monkeypatch):
    """pyserial's list, as `mpremote connect list` and `connect auto` read
    it: a port without a USB vendor id (the machine's own ttyS0) is no board."""
    from serial.tools import list_ports
    from serial.tools.list_ports_common import ListPortInfo

    def info(device, vid, serial):
        p = ListPortInfo(device, skip_link_detection=True)
        p.vid, p.pid, p.serial_number = vid, vid, serial
        return p

    monkeypatch.setattr(list_ports, "comports", lambda: [info("/dev/ttyUSB1", 0x10C4, "0002"),
                                                         info("/dev/ttyS0", None, None),
                                                         info("/dev/ttyUSB0", 0x1A86, None)])
    assert usb_boards.list_ports() == [usb_boards.Port("/dev/ttyUSB0", None), usb_boards.Port("/dev/ttyUSB1", "0002")]


def test_the_settings_come_from_the_folders_board_template(tmp_path, capsys):
    """DIR/board-template.json (the organizer's, the night before): the
    volunteer gives no option."""
    from tabletimer import firmware_dir

    ev = event(tmp_path / "hall")
    cfg = json.loads((firmware_dir() / "config.example.json").read_text())
    cfg["wifi"] = {"ssid": "cup-2027", "password": "x"}
    cfg["broker"]["host"] = ["10.0.0.5", "10.0.0.6"]
    (ev / "board-template.json").write_text(json.dumps(cfg))
    assert cli.main(["boards", "provision", str(ev), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert f"(from {ev / 'board-template.json'} and the options" in out
    assert "WiFi:    'cup-2027' (password set)" in out and "broker:  10.0.0.5, 10.0.0.6 port 1883" in out


@pytest.mark.parametrize("kind", ["passive", "active"])
def test_the_board_plays_the_identify_pattern_on_the_buzzer_and_led_of_its_configuration(tmp_path, kind):
    """The script mpremote runs on the board after the write, run here with
    a stand-in `machine` recording what the pins are told, and the
    firmware's own signals module."""
    import importlib.util
    import io
    import types

    from tabletimer import firmware_dir
    from tabletimer.hub.fleet import deploy

    played = []

    class Pin:
        OUT = 1

        def __init__(self, n, mode=None, value=None):
            self.n = n

        def value(self, v):
            played.append(("pin", self.n, v))

    class PWM:
        def __init__(self, pin, freq, duty_u16):
            self.pin = pin

        def freq(self, f):
            played.append(("freq", self.pin.n, f))

        def duty_u16(self, d):
            played.append(("duty", self.pin.n, d))

    spec = importlib.util.spec_from_file_location("signals", firmware_dir() / "signals.py")
    signals = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(signals)
    fake = {"machine": types.SimpleNamespace(Pin=Pin, PWM=PWM),
            "time": types.SimpleNamespace(sleep_ms=lambda ms: played.append(("sleep", ms))),
            "signals": signals}
    cfg = {"buzzer": {"pin": 25, "kind": kind}, "led": 2}

    def fake_import(name, *a, **kw):
        return fake[name] if name in fake else __import__(name, *a, **kw)

    g = {"__builtins__": dict(vars(__builtins__) if isinstance(__builtins__, types.ModuleType) else __builtins__,
                              __import__=fake_import,
                              open=lambda path: io.StringIO(json.dumps(cfg)) if path == "/config.json" else None)}
    exec(deploy.PLAY_IDENTIFY, g)
    steps = list(signals.steps("identify"))
    assert [p[1] for p in played if p[0] == "sleep"] == [ms for _, ms in steps]
    sounding = [p for p in played if p[1] == 25 and (p[0] == "duty" and p[2] or p[0] == "pin" and p[2] == 1)]
    assert len(sounding) == sum(1 for f, _ in steps if f) == 10
    assert [p[2] for p in played if p[:2] == ("pin", 2)] == [1 if f else 0 for f, _ in steps]   # the LED
    if kind == "passive":
        assert {p[2] for p in played if p[0] == "freq"} == {3000}
