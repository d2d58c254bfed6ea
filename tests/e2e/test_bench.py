"""`tabletimer bench` runs (a small hall: the real firmware, the hub as its
own process, the embedded broker) and prints its table with nothing lost."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

TT = str(Path(sys.executable).parent / "tabletimer")


def test_bench_prints_its_figures_and_loses_nothing() -> None:
    out = subprocess.run([TT, "bench", "--only", "floor,press,skew", "--sizes", "3", "--signals", "3",
                          "--fresh-boards"],
                         capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    table = out.stdout[out.stdout.index("figure"):]
    for figure in ("broker round trip (floor)", "press -> ack, 3 board(s)", "event -> durable -> ack, 3",
                   "finish-time error, clean, 3", "signal skew, 3 boards", "hub idle, 3 boards",
                   "signal wake-up lateness, 1 board on an idle machine, 3 signals", "signal clock error, 3 boards",
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


def test_ota_bench_updates_a_small_hall_and_leaves_no_board_broken() -> None:
    """Firmware over the air for a hall (tools/bench/ota.py), tiny: 3 boards
    of the real firmware through Mosquitto, one alone first (the floor)."""
    from brokers import require_mosquitto
    require_mosquitto()
    out = subprocess.run([sys.executable, "-m", "tabletimer.tools.bench.ota", "--boards", "3"],
                         capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    table = out.stdout[out.stdout.index("figure"):]
    for figure in ("one board alone (floor)", "the hall, 3 boards (--all)", "x the floor",
                   "-- 3/3 board(s) on firmware 0.9.1-hall", "3 boards committed"):
        assert figure in table, table
    assert [ln.split()[-3:] for ln in table.splitlines() if ln.startswith("boards not on the new version")] \
        == [["0", "target", "0"]], table


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="two loopback addresses (127.0.0.2)")
@pytest.mark.parametrize("boards, n, said", [
    (["--boards", "2"], 2, ("press -> ack on the primary (floor)", "2/2 boards; their failover 5 s",
                            "boards reset by their watchdog")),
    (["--boards", "2", "--pause", "4", "--watchdog-ms", "3000"], 2, (
        "press -> ack on the primary (floor)", "2/2 boards; their failover 5 s",
        "the host stood still (every process of the run stopped)  4 s",
        "every second press in flash")),
    (["--loadgen", "5"], 5, ("press -> ack on the primary (floor), 5 within 1 s",
                             "5/5 boards; their failover 5 s; failovers 5")),
], ids=["firmware", "firmware-host-paused", "loadgen"])
def test_takeover_bench_switches_a_small_hall_and_loses_nothing(boards, n, said) -> None:
    """The hub laptop dies (tools/bench/takeover.py), tiny: 2 boards of the
    real firmware, or 5 of the load generator (its brokers list and hub
    terms), the standby taking over after 4 s of silence.  Host-paused:
    once the boards' second presses are in flash, every process of the run
    stands still 4 s, longer than the boards' 3 s watchdog: no board is
    reset (the watchdog counts the chip's time), nothing lost.  (On the
    simulator before: both boards reset, never booted again, their presses
    lost.)"""
    out = subprocess.run([sys.executable, "-m", "tabletimer.tools.bench.takeover", *boards, "--auto-after", "4"],
                         capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    table = out.stdout[out.stdout.index("figure"):]
    for figure in (*said, "killed -> the standby's decision", "killed -> first board acked by the new hub"):
        assert figure in table, table
    assert re.search(rf"presses missing from or twice in the new log +0 +{2 * n} of {2 * n}; target 0", table), table
    if "--boards" in boards:
        assert re.search(r"boards reset by their watchdog +0 +target 0; their watchdog", table), table


def test_replication_bench_copies_every_row_and_prints_its_lag() -> None:
    """The standby's copy under a burst (tools/bench/replication.py), tiny:
    5 load-generator boards, 1 s of presses."""
    out = subprocess.run([sys.executable, "-m", "tabletimer.tools.bench.replication", "--boards", "5",
                          "--seconds", "1"], capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    table = out.stdout[out.stdout.index("figure"):]
    for figure in ("GET /rows at idle, nothing new (floor)", "durable at the primary -> in the copy: 5 boards press "
                   "within 1 s", "the floor's", "(arrival at the primary -> durable there"):
        assert figure in table, table
    assert re.search(r"rows missing from the copy +0 +\d+ rows written at the primary; target 0", table), table


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


def test_load_generator_boards_are_acked_and_stored_once_through_dropped_connections(tmp_path: Path) -> None:
    """The load generator (tools/loadgen), 20 boards against a real hub
    (its own process) on Mosquitto: every board connects and syncs, a burst
    and a fixed rate are all acked; events whose connection was cut under
    them are sent again after the reconnect; every event is stored exactly
    once."""
    import asyncio

    from brokers import require_mosquitto
    from waiting import until_async
    from tabletimer.tools.bench.hall_rig import Hall
    from tabletimer.tools.bench.report import now_ms
    from tabletimer.tools.loadgen.__main__ import stored_check
    from tabletimer.tools.loadgen.run import Generator
    from tabletimer.tools.testing.local_mosquitto import LocalMosquitto

    require_mosquitto()
    n = 20
    with LocalMosquitto() as mosq:
        assert mosq.port is not None
        hall = Hall(tmp_path, mosq.port, n)
        hall.act("round_start", f"at={int(now_ms())}", "warnings=[]")
        hall.start_hub()
        try:
            gen = Generator("127.0.0.1", mosq.port, [(b, hall.keys.key(b) or "") for b in hall.ids],
                            reconnect_s=0.2)

            async def scenario() -> None:
                await gen.start(timeout=30)
                await until_async(lambda: gen.synced() == n and gen.scheduled() == n,
                                  "every board synced and with its schedule", timeout=30,
                                  seen=lambda: (gen.synced(), gen.scheduled()))
                burst = await gen.burst(0.5, timeout=30)
                assert burst.acked == burst.made == n
                # five boards press, and their connection is cut before the
                # event is on the wire: it goes again once they are back
                gen.begin("cut under the event")
                cut = gen.boards[:5]
                for b in cut:
                    gen.press(b)
                    gen.conns[b.id].transport.abort()      # type: ignore[union-attr]
                await until_async(lambda: gen.counts["reconnects"] >= 5, "the cut boards reconnected",
                                  timeout=30, seen=lambda: gen.counts)
                ph = await gen.end(timeout=30)
                assert ph.acked == ph.made == 5
                assert gen.counts["retransmissions"] >= 5
                # connections dropped while events flow at a fixed rate
                gen.loop.call_later(0.5, gen.drop, 0.25)
                steady = await gen.offered(100, 1.5, timeout=30)
                assert steady.acked == steady.made > 100
                await until_async(lambda: len(gen.up()) == n, "every board back online", timeout=30)
                assert gen.unacked() == 0 and gen.counts["bad"] == 0, (gen.counts, gen.bad_why)
                await gen.close()

            asyncio.run(scenario())
            made = sum(p.made for p in gen.phases)
            assert gen.counts["reconnects"] >= 5 + 5 and gen.counts["drops"] == 5
            stored = stored_check(hall.ev, set(hall.ids), 1)
            assert stored == {"stored": made, "twice": 0}, (stored, made)
        finally:
            hall.close()


def test_load_generator_command_line_prints_its_summary(tmp_path: Path) -> None:
    """`python -m tabletimer.tools.loadgen` by hand against a running hub:
    its summary, and the JSON line the bench reads, with nothing lost."""
    import json

    from brokers import require_mosquitto
    from tabletimer.tools.bench.hall_rig import Hall
    from tabletimer.tools.bench.report import now_ms
    from tabletimer.tools.testing.local_mosquitto import LocalMosquitto

    require_mosquitto()
    with LocalMosquitto() as mosq:
        hall = Hall(tmp_path, mosq.port or 0, 10)
        hall.act("round_start", f"at={int(now_ms())}", "warnings=[]")
        hall.start_hub()
        try:
            out = subprocess.run([sys.executable, "-m", "tabletimer.tools.loadgen", "--broker",
                                  f"mqtt://127.0.0.1:{mosq.port}", "--folder", str(hall.ev), "--boards", "10",
                                  "--burst", "0.5", "--rate", "50/s", "--seconds", "1", "--json"],
                                 capture_output=True, text=True, timeout=120)
        finally:
            hall.close()
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert "10/10 boards connected" in out.stdout and "lost 0" in out.stdout, out.stdout
    result = json.loads(out.stdout.split("JSON ", 1)[1])
    assert result["stored"] == sum(p["made"] for p in result["phases"]) and result["twice"] == 0
