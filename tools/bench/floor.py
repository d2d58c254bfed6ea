"""The floor the benches' latencies are read against: the broker's own round
trip (a paho client publishes, another answers, QoS 1)."""

from __future__ import annotations

import threading
import time

from tabletimer.tools.bench.broker_client import paho_client
from tabletimer.tools.bench.report import Report, pct, spread


def bench_floor(port: int, report: Report, rounds: int = 300) -> float:
    """Broker round trip (QoS 1 publish -> echo -> receive); returns its p50
    and p99."""
    got = threading.Event()
    echo = paho_client("bench-echo")
    ping = paho_client("bench-ping")
    ready = threading.Semaphore(0)
    echo.on_connect = lambda c, u, f, rc, p: (c.subscribe("bench/ping", 1), ready.release())
    echo.on_message = lambda c, u, m: c.publish("bench/pong", m.payload, 1)
    ping.on_connect = lambda c, u, f, rc, p: (c.subscribe("bench/pong", 1), ready.release())
    ping.on_message = lambda c, u, m: got.set()
    subs = threading.Semaphore(0)
    echo.on_subscribe = ping.on_subscribe = lambda *a: subs.release()
    for c in (echo, ping):
        c.connect("127.0.0.1", port)
        c.loop_start()
    for _ in range(2):
        ready.acquire(timeout=10)
        subs.acquire(timeout=10)
    rtt = []
    for _ in range(rounds):
        got.clear()
        t = time.perf_counter()
        ping.publish("bench/ping", b"x" * 200, 1)
        if not got.wait(5):
            continue
        rtt.append((time.perf_counter() - t) * 1000)
    for c in (echo, ping):
        c.loop_stop()
        c.disconnect()
    report.add("broker round trip (floor), QoS 1", spread(rtt), f"{len(rtt)} round trips")
    return pct(rtt, 50), pct(rtt, 99)          # type: ignore[return-value]
