"""`tabletimer bench`: the hall-scale benchmarks, one table of figures.

    .venv/bin/tabletimer bench              # everything (about 15-25 minutes)
    .venv/bin/tabletimer bench --quick      # smaller hall, short outages (a few minutes)
    .venv/bin/tabletimer bench --only press,ingest
    .venv/bin/tabletimer bench --broker mosquitto --only floor,loadgen --loadgen-sizes 300,1000,3000

What runs where: the broker (the embedded one, or --broker-url) and the hub
(`tabletimer run DIR`, its own process, as at an event) on this machine;
boards are the real firmware in real `micropython` processes (hub/fleet/simulator.py),
each clock offset by hours and drifting by up to +-50 ppm, optionally behind
the impairment proxy (tools/testing/netimpair).  The press and skew figures
start the round once every board has had its connect burst of clock syncs
and the next sync after it, as boards switched on minutes before a round
have (--fresh-boards: right after the burst).  Times are host milliseconds,
which is hub time on this machine.

Figures (each with its floor measured in the same run, where there is one):
- broker round trip (floor): a paho client publishes, another answers, QoS 1;
- press -> durable in the hub -> ack back on the board, for 1/100/300 boards all
  pressing within one second: true press instant (simulated pin edge) to the
  board's "acked" line (host time stamped by the board's simulated hardware);
- finish-time error (stored press time minus true instant), clean, under
  jitter with asymmetry, and for presses made during an outage of the boards'
  network;
- signal skew: the boards' buzzers starting one scheduled signal, true instant
  minus scheduled instant, spread over all boards -- on this laptop, with all
  boards' processes waking at once on its cores; and as the hall hears it:
  each board's clock error at that signal (its synchronised clock minus the
  true hub time, from its own lines: the processes' lateness cancels out)
  combined with the wake-up lateness of one board on an idle machine over 60
  signals (played_signal, bench_signal_lateness, report_hall_skew);
- hub durable ingest rate: signed events from 300 board identities published
  as fast as the hub acknowledges them (paho load generator, no firmware);
  hub RSS and CPU, idle with 300 boards online and during the burst;
- the load generator (tools/loadgen; --loadgen-sizes, default 300, 1,000,
  3,000): boards as light asyncio MQTT clients in one process, the real
  signed protocol, no firmware: connected and synced, hub idle with them
  online, event -> durable -> ack for a burst (every board within 1 s),
  ingest as fast as acked (--loadgen-inflight events unacked), lost,
  retransmissions, reconnects, hub RSS/CPU, the generator's own CPU; the
  latencies also as ratios to the broker round trip (floor);
- the hall's spectators (tools/bench/spectators): 300 pages on the hall's
  stream (100 with --quick) during the press burst: the boards' event -> ack
  with and without them, a press -> shown on every page;
- the referees' phones (tools/bench/phones): 60 phones (20 with --quick)
  with their table's page open during a burst of 300 (100) boards: a
  referee's action -> durable -> shown on every page of its table, and the
  boards' event -> ack with and without the phones;
- hub restart to caught up after an outage of the hub (boards keep presses in
  their journal meanwhile);
- rank time for 5,000 entrants (tools/bench/ranking), firmware heap
  (tools/bench/firmware_heap, run as it is), press-stamp delay while the
  firmware writes flash and collects (tools/bench/firmware_timing, run as
  it is), what TLS to the broker costs a board's heap (tools/bench/tls_heap).
Not a test: the figures depend on the machine; zero lost events is checked
and reported in every run.

This module is the command line (the list ALL, the options, the order the
benchmarks run in).  The benchmarks: floor.py (the broker round trip),
presses.py (press, impaired), signal_skew.py (skew: played_signal,
bench_signal_lateness, report_hall_skew), ingest.py (ingest, loadgen,
restart), phones.py, spectators.py, module_benches.py (rank, heap, timing,
tls); what they run on: hall_rig.py (the Hall: event folder, hub process,
simulated boards), signed_boards.py (boards without firmware), report.py
(the figures and their table).
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import tempfile
import time
from pathlib import Path

from tabletimer.hub.broker.broker import EmbeddedBroker, parse_broker_url
from tabletimer.tools.bench.floor import bench_floor
from tabletimer.tools.bench.ingest import bench_ingest, bench_loadgen, bench_restart
from tabletimer.tools.bench.module_benches import bench_heap, bench_rank, bench_timing, bench_tls
from tabletimer.tools.bench.presses import bench_impaired, bench_press
from tabletimer.tools.bench.report import Report
from tabletimer.tools.bench.signal_skew import bench_signal_lateness
from tabletimer.tools.testing.local_mosquitto import LocalMosquitto


ALL = ("floor", "press", "skew", "impaired", "ingest", "loadgen", "phones", "spectators", "restart", "rank", "heap",
       "timing", "tls")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="tabletimer bench", description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a smaller hall and short outages")
    ap.add_argument("--only", default=",".join(ALL), help=f"comma-separated subset of {','.join(ALL)}")
    ap.add_argument("--sizes", help="board counts for the press benchmark (default 1,100,300; --quick: 1,20)")
    ap.add_argument("--loadgen-sizes", help="board counts for the load generator (default 300,1000,3000; "
                                            "--quick: 20,100)")
    ap.add_argument("--loadgen-seconds", type=float, default=None,
                    help="seconds of sustained ingest per size (default 15; --quick: 5)")
    ap.add_argument("--loadgen-inflight", type=int, default=200,
                    help="events unacked at all times during the sustained ingest (default 200)")
    ap.add_argument("--broker", choices=("embedded", "mosquitto"), default="embedded",
                    help="the broker to start: the hub's embedded one (amqtt) or this machine's Mosquitto")
    ap.add_argument("--broker-url", help="a running broker instead (e.g. mqtt://127.0.0.1:1883; a Mosquitto "
                                         "needs set_tcp_nodelay true)")
    ap.add_argument("--fresh-boards", action="store_true",
                    help="press and skew: start the round right after the boards' connect burst of clock "
                         "syncs (boards switched on just before it), not after their next sync (30 s later)")
    ap.add_argument("--signals", type=int, default=60,
                    help="signals the idle board plays for the skew's wake-up lateness (default 60)")
    ap.add_argument("--outage", type=float, default=None,
                    help="seconds of network outage / hub outage (default 60 / 600; --quick: 10 / 20)")
    a = ap.parse_args(argv)
    only = set(a.only.split(","))
    unknown = only - set(ALL)
    if unknown:
        ap.error(f"unknown benchmark(s) {', '.join(sorted(unknown))}; known: {', '.join(ALL)}")
    try:
        sizes = tuple(int(x) for x in a.sizes.split(",")) if a.sizes else (1, 20) if a.quick else (1, 100, 300)
    except ValueError:
        ap.error(f"--sizes: comma-separated board counts, not {a.sizes!r}")
    try:
        lg_sizes = (tuple(int(x) for x in a.loadgen_sizes.split(",")) if a.loadgen_sizes
                    else (20, 100) if a.quick else (300, 1000, 3000))
    except ValueError:
        ap.error(f"--loadgen-sizes: comma-separated board counts, not {a.loadgen_sizes!r}")
    lg_seconds = a.loadgen_seconds or (5.0 if a.quick else 15.0)
    net_outage = a.outage or (10.0 if a.quick else 60.0)
    hub_outage = a.outage or (20.0 if a.quick else 600.0)
    report = Report()
    root = Path(tempfile.mkdtemp(prefix="tt-bench-"))
    print(f"tabletimer bench {time.strftime('%Y-%m-%d %H:%M')}, {platform.node()}: {os.cpu_count()} cores, "
          f"{platform.machine()}, {platform.platform()}, Python {platform.python_version()}", flush=True)
    broker = None
    mosq: LocalMosquitto | None = None
    try:
        if a.broker_url:
            port = parse_broker_url(a.broker_url).port
            print(f"broker: {a.broker_url}")
        elif a.broker == "mosquitto":
            try:
                # the event configuration's points that matter for timing:
                # TCP_NODELAY (always on here) and queue limits
                mosq = LocalMosquitto(extra_conf="max_queued_messages 10000\nmax_inflight_messages 100\n",
                                      log=False).start()
            except FileNotFoundError as e:
                raise SystemExit(f"--broker mosquitto: {e}") from None
            assert mosq.port is not None
            port = mosq.port
            print(f"broker: mosquitto on 127.0.0.1:{port}")
        else:
            broker = EmbeddedBroker(root / "broker").start()
            port = broker.port
            print(f"broker: embedded (amqtt) on 127.0.0.1:{port}")
        floor = (float("nan"), float("nan"))
        if only & {"floor", "press", "skew", "loadgen"}:
            floor = bench_floor(port, report)                    # type: ignore[assignment]
        lateness = bench_signal_lateness(port, root, report, a.signals) if "skew" in only else None
        if "press" in only or "skew" in only:
            for n in sizes:
                bench_press(port, root, n, floor, report, signal_skew="skew" in only and n == sizes[-1],
                            lateness=lateness, fresh=a.fresh_boards)
        if "impaired" in only:
            bench_impaired(port, root, 10 if a.quick else 50, net_outage, report)
        if "ingest" in only:
            bench_ingest(port, root, 300, 5 if a.quick else 20, report)
        if "loadgen" in only:
            for n in lg_sizes:
                bench_loadgen(port, root, n, floor, report, "mosquitto" if mosq else "embedded" if broker
                              else "broker-url", lg_seconds, a.loadgen_inflight)
        if "phones" in only:
            from tabletimer.tools.bench.phones import bench_phones
            bench_phones(port, root, 100 if a.quick else 300, 20 if a.quick else 60, report,
                         broker_floor=None if floor[0] != floor[0] else floor)      # nan: not measured yet
        if "spectators" in only:
            from tabletimer.tools.bench.spectators import bench_spectators
            bench_spectators(port, root, 100 if a.quick else 300, 100 if a.quick else 300, report,
                             broker_floor=None if floor[0] != floor[0] else floor)
        if "restart" in only:
            bench_restart(port, root, 10 if a.quick else 100, hub_outage, report)
        if "rank" in only:
            bench_rank(report, a.quick)
        if "heap" in only:
            bench_heap(report)
        if "timing" in only:
            bench_timing(report)
        if "tls" in only:
            bench_tls(report)
    finally:
        if broker:
            broker.stop()
        if mosq:
            mosq.close()
        shutil.rmtree(root, ignore_errors=True)
    print()
    print(report.table())
    print(f"\nevents lost in this run: {report.lost}")
    return 1 if report.lost else 0


if __name__ == "__main__":
    raise SystemExit(main())
