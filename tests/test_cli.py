"""The `tabletimer` command as a user runs it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from tabletimer import firmware_dir
from tabletimer.hub import cli

TT = str(Path(sys.executable).parent / "tabletimer")


def test_board_flash_dry_run_checks_config_and_lists_files(capsys):
    assert cli.main(["board", "flash", "/dev/ttyUSB0", str(firmware_dir() / "config.example.json"),
                     "--dry-run"]) == 0
    cmd = capsys.readouterr().out
    assert "connect /dev/ttyUSB0" in cmd
    for name in (":main.py", ":app.mpy", ":protocol.mpy", ":mqtt_client.mpy", ":config.json"):
        assert name in cmd
    assert "sim_main" not in cmd and "hardware_sim" not in cmd


def test_board_flash_refuses_a_bad_config(tmp_path, capsys):
    bad = tmp_path / "b.json"
    bad.write_text(json.dumps({"board": "no spaces allowed", "broker": {"host": "x"}, "buttons": [1]}))
    assert cli.main(["board", "flash", "/dev/null", str(bad), "--dry-run"]) == 2
    assert "board" in capsys.readouterr().err


def test_run_shows_simulated_presses_ranked_and_stops_cleanly(tmp_path):
    """The README's main job, shortened: embedded broker, hub, simulated
    boards; every simulated station finishes and is ranked; then a clean
    stop leaves no process behind."""
    from brokers import free_port

    proc = subprocess.Popen(
        [TT, "run", "--data", "data", "--port", str(free_port()), "--boards", "2",
         "--stations", "2", "--press-window", "4", "--duration", "30", "--seed", "1"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
        cwd=tmp_path)   # a relative data folder, as in the README's default
    lines: list[str] = []
    finished: set[str] = set()
    assert proc.stdout
    for line in proc.stdout:                  # the live view, as it happens
        lines.append(line)
        if "finished" in line:
            finished |= {w for w in line.split() if w.startswith("sim0")}
        if len(finished) == 4:
            break
    assert len(finished) == 4, "".join(lines[-40:])
    os.killpg(proc.pid, signal.SIGINT)        # Ctrl-C, to the whole group as a terminal does
    rest = proc.communicate(timeout=30)[0]
    assert proc.returncode == 0, rest
    assert "final standings" in rest
    final = rest.split("final standings:")[1].split("\n")
    assert sum("finished" in l for l in final) == 4
    # nothing left running: no broker, no board process of this run
    left = subprocess.run(["pgrep", "-f", str(tmp_path)], capture_output=True, text=True).stdout
    assert left.strip() == "", left


def _pids_mentioning(text: str) -> list[str]:
    out = subprocess.run(["pgrep", "-f", text], capture_output=True, text=True).stdout
    return out.split()


def test_killed_hub_leaves_no_broker_or_boards_behind(tmp_path):
    """SIGKILL gives the hub no chance to clean up: its broker and simulated
    boards notice the closed pipe to it and exit by themselves."""
    import time

    from brokers import free_port

    proc = subprocess.Popen(
        [TT, "run", "--data", str(tmp_path / "data"), "--port", str(free_port()), "--boards", "2",
         "--press-window", "60", "--duration", "120"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.stdout
    online = 0
    for line in proc.stdout:
        online += line.startswith("board sim") and line.rstrip().endswith("online")
        if online == 2:
            break
    assert online == 2
    assert len(_pids_mentioning(str(tmp_path))) >= 3       # broker + 2 boards
    proc.kill()
    proc.wait()
    deadline = time.monotonic() + 15
    while _pids_mentioning(str(tmp_path)) and time.monotonic() < deadline:
        time.sleep(0.1)   # polling other processes' exit: nothing to await
    assert _pids_mentioning(str(tmp_path)) == []
