"""`tabletimer bench` runs (a small hall: the real firmware, the hub as its
own process, the embedded broker) and prints its table with nothing lost."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

TT = str(Path(sys.executable).parent / "tabletimer")


def test_bench_prints_its_figures_and_loses_nothing() -> None:
    out = subprocess.run([TT, "bench", "--only", "floor,press,skew", "--sizes", "1,3", "--signals", "5"],
                         capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    table = out.stdout[out.stdout.index("figure"):]
    for figure in ("broker round trip (floor)", "press -> ack, 3 board(s)", "event -> durable -> ack, 3",
                   "finish-time error, clean, 3", "signal skew, 3 boards", "hub idle, 3 boards",
                   "signal wake-up lateness, 1 board on an idle machine, 5 signals", "signal clock error, 3 boards",
                   "signal skew as the hall hears it, 3 boards"):
        assert figure in table, table
    assert "events lost in this run: 0" in out.stdout


def test_bench_refuses_unknown_names() -> None:
    out = subprocess.run([TT, "bench", "--only", "speed"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "unknown benchmark(s) speed" in out.stderr


def test_phones_bench_prints_its_figures_and_loses_nothing() -> None:
    """The referees' phones during a press burst (tools/bench/phones), tiny:
    10 boards (2 tables), 4 phones (2 pages a table)."""
    out = subprocess.run([sys.executable, "-m", "tabletimer.tools.bench.phones", "--boards", "10", "--phones", "4"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    table = out.stdout[out.stdout.index("figure"):]
    for figure in ("broker round trip (floor)", "web server round trip (floor), GET /r/api/me",
                   "event -> durable -> ack, 10 boards within 1 s, no phones",
                   "event -> durable -> ack, 10 boards within 1 s, 4 phones", "p99 x",
                   "referee action -> durable (POST -> answer), 4 phones",
                   "referee action -> shown on every open page of its table",
                   "10 confirm rows for 10 calls watched", "answers not 200: 0", "stored twice 0"):
        assert figure in table, table
    assert "events lost in this run: 0" in out.stdout


def test_spectators_bench_prints_its_figures_and_loses_nothing() -> None:
    """The hall's pages during a press burst (tools/bench/spectators), tiny:
    10 boards, 12 pages (from three source addresses)."""
    out = subprocess.run([sys.executable, "-m", "tabletimer.tools.bench.spectators", "--boards", "10", "--pages", "12"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    table = out.stdout[out.stdout.index("figure"):]
    for figure in ("broker round trip (floor)", "event -> durable -> ack, 10 boards within 1 s, no pages",
                   "event -> durable -> ack, 10 boards within 1 s, 12 pages", "12 pages open",
                   "press -> shown on the hall's pages (2 of the 12 read)", "10 finishes; not shown on every page read 0", "errors: 0"):
        assert figure in table, table
    assert "events lost in this run: 0" in out.stdout
