"""The hub's durable ingest: signed events from the hall's board identities
as fast as the hub acknowledges them (bench_ingest), the load generator's
boards at 300 to 3,000 (tools/loadgen: bench_loadgen), and the hub's
restart catching up with the presses the boards journaled while it was
down (bench_restart)."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import threading
import time
from pathlib import Path

from tabletimer.tools.bench.hall_rig import Hall, press_all, press_results, proc_usage
from tabletimer.tools.bench.report import Report, now_ms, pct, spread
from tabletimer.tools.bench.signed_boards import SignedBoards


def bench_ingest(port: int, root: Path, n: int, per_board: int, report: Report) -> None:
    """Signed events from n board identities (one CPython client: no board
    firmware, so what is measured is the broker and the hub), per_board
    events each, as fast as the hub acknowledges them."""
    hall = Hall(root / "ingest", port, n, seed=3)
    total = n * per_board
    try:
        hall.act("round_start", f"at={int(now_ms())}", "warnings=[]")
        hall.start_hub()
        assert hall.hub is not None
        gen = SignedBoards(hall, port)
        gen.online()
        usage: list[tuple[float, float]] = []
        t0 = time.perf_counter()
        th = threading.Thread(target=lambda: usage.append(proc_usage(hall.hub.pid, 2.0)))  # type: ignore[union-attr]
        th.start()
        gen.presses(per_board)
        gen.wait_acked(120)
        dt = time.perf_counter() - t0
        th.join()
        gen.close()
        stored = len(hall.stored_presses())
        lost = total - stored
        report.lost += max(0, lost)
        burst = len(gen.acks)
        report.add(f"hub durable ingest, {n} boards x {per_board} events", f"{burst / dt:.0f} events/s",
                   f"{burst} acked in {dt:.1f} s, {stored} stored in all, lost {lost}")
        if usage:
            report.add("hub during the ingest burst", f"RSS {usage[0][0]:.0f} MB, CPU {usage[0][1]:.0f} %")
    finally:
        hall.close()


def bench_loadgen(port: int, root: Path, n: int, floor: tuple[float, float], report: Report, broker: str,
                  seconds: float, inflight: int, idle_s: float = 5.0) -> None:
    """n boards played by the load generator (tools/loadgen: one process,
    a connection each, the real signed protocol; no firmware), against the
    hub as its own process: connected and synced, the hub idle with them
    online, a burst (every board presses within 1 s), then sustained
    ingest as fast as acked (inflight events unacked at all times);
    lost (made vs stored in the hub's log), retransmissions, reconnects;
    hub RSS/CPU and the generator's own CPU.  Latencies: the event made on
    the board -> its ack verified there (a board's journal wait included)."""
    import psutil
    hall = Hall(root / f"loadgen{n}", port, n, seed=n)
    label = f"{n} loadgen boards ({broker})"
    try:
        hall.act("round_start", f"at={int(now_ms())}", "warnings=[]")
        hall.start_hub()
        assert hall.hub is not None
        hub = psutil.Process(hall.hub.pid)
        cmd = [sys.executable, "-m", "tabletimer.tools.loadgen", "--broker", f"mqtt://127.0.0.1:{port}",
               "--folder", str(hall.ev), "--boards", str(n), "--idle", str(idle_s), "--burst", "1",
               "--rate", "max", "--inflight", str(inflight), "--seconds", str(seconds), "--json"]
        gen = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        usage: dict[str, tuple[float, float]] = {}         # phase -> (hub RSS MB, CPU % of a core)
        begun: dict[str, tuple[float, float]] = {}
        result: dict = {}
        lines: list[str] = []
        assert gen.stdout is not None
        for line in gen.stdout:              # the generator's phases, as it runs them
            lines.append(line)
            if line.startswith("phase begin "):
                begun[line.split()[2]] = (time.perf_counter(), sum(hub.cpu_times()[:2]))
            elif line.startswith("phase end "):
                name = line.split()[2]
                t0, c0 = begun[name]
                usage[name] = (hub.memory_info().rss / 1e6,
                               (sum(hub.cpu_times()[:2]) - c0) / max(1e-9, time.perf_counter() - t0) * 100)
            elif line.startswith("JSON "):
                result = json.loads(line[5:])
            elif not line.startswith("  "):
                print(f"  {line.rstrip()}", flush=True)
        gen.wait()
        if not result:
            report.add(f"load generator, {label}", "failed", f"exit {gen.returncode}: {''.join(lines)[-500:]}")
            report.lost += n
            return
        print("".join(ln for ln in lines if ln.startswith("  ")), end="", flush=True)
        f50, f99 = floor

        def ratio(lat: list[float]) -> str:
            return (f"p50 x{pct(lat, 50) / f50:.1f}, p99 x{pct(lat, 99) / f99:.1f} the floor's"
                    if f50 == f50 and lat else "no floor measured")
        report.add(f"{label}: connected, synced", f"{result['connected']}/{n} in {result['connect_s']:.1f} s",
                   f"{result['synced']} synced, {result['scheduled']} with their schedule; "
                   f"clock sync round trip {spread(result['sync_rtt_ms'])}")
        if "idle" in usage:
            report.add(f"hub idle, {label} online", f"RSS {usage['idle'][0]:.0f} MB, CPU {usage['idle'][1]:.1f} %")
        made = 0
        for ph, key in zip(result["phases"], ("burst", "sustained")):
            lat = ph["lat_ms"]
            made += ph["made"]
            hub_use = usage.get(key)
            hub_note = f"; hub RSS {hub_use[0]:.0f} MB, CPU {hub_use[1]:.0f} %" if hub_use else ""
            gen_note = (f"; generator CPU {ph['cpu_s'] / max(1, ph['made']) * 1e6:.0f} us/event, "
                        f"{ph['cpu_s'] / max(1e-9, ph['seconds']) * 100:.0f} % of a core")
            if key == "burst":
                report.add(f"event -> durable -> ack, {label} within 1 s", spread(lat),
                           f"{ratio(lat)}; {ph['acked']}/{ph['made']} acked{hub_note}{gen_note}")
            else:
                report.add(f"ingest, {label}, {inflight} in flight, {seconds:g} s",
                           f"{ph['events_per_s'] or 0:.0f} events/s",
                           f"{ph['acked']}/{ph['made']} acked; event -> ack {spread(lat)}; {ratio(lat)}"
                           f"{hub_note}{gen_note}")
        lost = made - result.get("stored", 0)
        report.lost += max(0, lost)
        report.add(f"{label}: lost", f"{lost}",
                   f"{result.get('stored')} of {made} stored, {result.get('twice')} twice; unacked "
                   f"{result['unacked']}; retransmissions {result['retransmissions']}, duplicate acks "
                   f"{result['dup_acks']}, reconnects {result['reconnects']}; hub messages a board rejects "
                   f"{result['bad']} {result['bad_why'] or ''}")
        report.add(f"load generator CPU, {label}", f"{result['cpu_s']:.1f} s in all",
                   f"user {result['cpu_user_s']:.1f} s, system {result['cpu_sys_s']:.1f} s; connecting "
                   f"{result['connect_cpu_s']:.1f} s")
    finally:
        hall.close()


def bench_restart(port: int, root: Path, n: int, outage_s: float, report: Report) -> None:
    """The hub is down for outage_s while the boards press (journal); time
    from its restart to every press acknowledged."""
    hall = Hall(root / "restart", port, n, seed=21)
    try:
        hall.act("round_start", f"at={int(now_ms())}", "warnings=[]")
        hall.start_hub()
        hall.start_boards()
        hall.wait_synced()
        hall.kill_hub()
        marks = press_all(hall, min(outage_s / 2, 10.0), random.Random(4))
        time.sleep(max(0.0, outage_s - min(outage_s / 2, 10.0)))        # the hub's outage
        t0 = now_ms()
        hall.start_hub()
        lat, err, lost, _ = press_results(hall, marks, timeout=300)
        report.lost += lost
        acked_at = []
        for sim, start in marks:
            a = [r["t"] for r in sim.records[start:] if "acked" in r]
            if a:
                acked_at.append(max(a))
        done = (max(acked_at) - t0) / 1000 if acked_at else float("nan")
        report.add(f"hub restart -> caught up, {n} boards, hub down {outage_s:.0f} s",
                   f"{done:.2f} s", f"{n} journaled presses; finish-time error max "
                   f"{max(abs(e) for e in err):.1f} ms; lost {lost}" if err else f"lost {lost}")
    finally:
        hall.close()
