"""The presses of the real firmware's boards: press -> durable -> ack and the
finish-time error for n boards pressing within one second (with the round's
start signal's skew, hub RSS/CPU idle and in the burst: bench_press), and
under network jitter and an outage of the boards' network (bench_impaired)."""

from __future__ import annotations

import os
import random
import statistics
import threading
import time
from pathlib import Path

from tabletimer.tools.bench.hall_rig import Hall, boards_cpu, press_all, press_results, proc_usage
from tabletimer.tools.bench.report import Report, now_ms, pct, spread
from tabletimer.tools.bench.signal_skew import played_signal, report_hall_skew
from tabletimer.tools.testing.netimpair import NetImpair

# clock-sync exchanges a board has had before the press and skew benchmarks
# start a round: its connect burst (firmware/app.py, _SYNC_BURST: 6) and one
# after it; with --fresh-boards, the burst only
FRESH_SYNC_SAMPLES = 6
SETTLED_SYNC_SAMPLES = FRESH_SYNC_SAMPLES + 1
# the start signal of the skew benchmark, ahead of the round_start that schedules it
SKEW_LEAD_MS = 3000
SKEW_LEAD_PER_BOARD_MS = 25


def bench_press(port: int, root: Path, n: int, floor: tuple[float, float], report: Report,
                signal_skew: bool, lateness: list[float] | None = None, fresh: bool = False) -> None:
    """n boards press within one second: press->ack, finish-time error; with
    signal_skew, the round's start signal is scheduled ahead and the boards'
    buzzer instants measured, and each board's clock error at it combined
    with `lateness` (bench_signal_lateness) into the skew the hall hears;
    hub RSS/CPU idle and in the burst.  fresh: the round starts right after
    the boards' connect burst of clock syncs, not after one more sync."""
    hall = Hall(root / f"press{n}", port, n, seed=n)
    try:
        hall.start_hub()
        hall.start_boards()
        # the round starts once every board has synced after its connect
        # burst too (the next periodic sync, 30 s later at most), as boards
        # switched on minutes before a round have: the burst's samples are
        # taken while 300 interpreters start on two cores, and a board that
        # has only those holds up to ~6 ms of error (docs/benchmarks.md)
        hall.wait_synced(samples=FRESH_SYNC_SAMPLES if fresh else SETTLED_SYNC_SAMPLES)
        assert hall.hub is not None
        rss, cpu = proc_usage(hall.hub.pid, 5.0)
        report.add(f"hub idle, {n} boards online", f"RSS {rss:.0f} MB, CPU {cpu:.1f} %")
        # the round starts once every board is up and synced (a press outside a
        # round is a stray, not a finish): now, or, for the signal skew, once
        # every board has its schedule (3 s, and 25 ms a board: 10.5 s for 300)
        marks0 = [len(sim.records) for sim in hall.boards]
        start_at = int(now_ms()) + (SKEW_LEAD_MS + SKEW_LEAD_PER_BOARD_MS * n if signal_skew else 0)
        hall.act("round_start", f"at={start_at}", "warnings=[]")
        for sim, k in zip(hall.boards, marks0):             # every board has the schedule
            sim.wait_for(lambda r: "sched" in r, start=k, timeout=60)
        if signal_skew:
            played, errors = [], []
            for sim, k in zip(hall.boards, marks0):
                got = played_signal(sim, "start", k, timeout=max(0.0, start_at - now_ms()) / 1000 + 30)
                if got is not None:
                    played.append(got[0] - start_at)
                    errors.append(got[1])
            if played:
                report.add(f"signal skew, {n} boards, on this laptop: {n} processes on {os.cpu_count()} cores "
                           "(played - scheduled)", spread(played),
                           f"spread max-min {max(played) - min(played):.1f} ms, {n - len(played)} not played")
                report_hall_skew(report, n, errors, lateness or [])
            else:
                report.add(f"signal skew, {n} boards", "not measured", "no board played the start")
        usage: list[tuple[float, float]] = []
        th = threading.Thread(target=lambda: usage.append(proc_usage(hall.hub.pid, 2.0)))  # type: ignore[union-attr]
        cpu0, t0 = boards_cpu(hall), time.monotonic()
        th.start()
        marks = press_all(hall, 1.0, random.Random(n))
        th.join()
        lat, err, lost, sys_lat = press_results(hall, marks)
        cpu = boards_cpu(hall) - cpu0
        report.add(f"simulated boards' CPU in the burst, {n} board(s)",
                   f"{cpu:.1f} CPU-s in {time.monotonic() - t0:.1f} s",
                   f"{os.cpu_count()} cores shared with the hub and broker (a real board has its own)")
        report.lost += lost
        report.add(f"press -> ack, {n} board(s) within 1 s", spread(lat),
                   f"from the pin edge, incl. the 30 ms debounce; lost {lost}")
        report.add(f"event -> durable -> ack, {n} board(s)", spread(sys_lat),
                   f"from the debounced event; x{pct(sys_lat, 50) / floor[0]:.1f} (p50) / "
                   f"x{pct(sys_lat, 99) / floor[1]:.1f} (p99) the broker round trip")
        report.add(f"finish-time error, clean, {n} board(s)", spread([abs(e) for e in err]),
                   f"|stored - true|; mean {statistics.fmean(err):+.2f} ms" if err else "")
        if usage:
            report.add(f"hub in the burst, {n} boards", f"RSS {usage[0][0]:.0f} MB, CPU {usage[0][1]:.0f} %",
                       "over 2 s from the first press")
    finally:
        hall.close()



def bench_impaired(port: int, root: Path, n: int, outage_s: float, report: Report) -> None:
    """Boards behind the impairment proxy: jitter 5-50 ms with asymmetry
    (finish-time error), then every board's network down for outage_s while
    each presses (stored with its board-side time when it comes back)."""
    with NetImpair(("127.0.0.1", port), seed=7) as net:
        hall = Hall(root / "impaired", port, n, stations=2, proxy=net, seed=99)
        rng = random.Random(5)
        try:
            for b in hall.ids:
                # WiFi-like: a few ms each way, more on the way down, and jitter
                # of 5-50 ms that differs per direction.  (A constant difference
                # between the two directions' base delays is invisible to any
                # two-way clock sync: it costs half of itself in error.)
                net.port_for(b)
                up = rng.uniform(2, 6)
                net.set(b, up_ms=up, down_ms=up * rng.uniform(1.0, 2.0),
                        up_jitter_ms=rng.uniform(5, 20), down_jitter_ms=rng.uniform(20, 50))
            hall.act("round_start", f"at={int(now_ms())}", "warnings=[]")
            hall.start_hub()
            hall.start_boards()
            hall.wait_synced(timeout=180)
            marks = press_all(hall, 1.0, random.Random(11))
            lat, err, lost, _ = press_results(hall, marks)
            report.lost += lost
            report.add(f"finish-time error, 5-50 ms jitter + asymmetry, {n} boards",
                       spread([abs(e) for e in err]), f"mean {statistics.fmean(err):+.2f} ms; lost {lost}")
            report.add(f"press -> ack under that jitter, {n} boards", spread(lat))
            for b in hall.ids:
                net.set(b, up_ms=0, down_ms=0, jitter_ms=0)
                net.down(b)
            marks = press_all(hall, min(outage_s / 2, 10.0), random.Random(12), station=2)
            time.sleep(max(0.0, outage_s - min(outage_s / 2, 10.0)))    # the outage lasts outage_s
            for b in hall.ids:
                net.up(b)
            lat, err, lost, _ = press_results(hall, marks, timeout=outage_s + 120)
            report.lost += lost
            report.add(f"finish-time error, presses during a {outage_s:.0f} s outage, {n} boards",
                       spread([abs(e) for e in err]), f"mean {statistics.fmean(err):+.2f} ms; lost {lost}")
        finally:
            hall.close()
