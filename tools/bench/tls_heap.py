"""Benchmark: what TLS to the broker costs a board's heap (issue #15, item 4).

The real firmware (compiled as for a board) on the unix MicroPython port
(64-bit), against a real Mosquitto configured by `broker config --tls` (the
event's CA, the broker's certificate for 127.0.0.1; TLS on the boards'
port, plain on the hub's 127.0.0.1 port) and a real hub: at each heap size
one board over TLS and one without (the plain listener; same logins and
ACL), each through the heap benchmark's exercise (16 events on 2 stations),
then the next periodic clock sync.  Printed: `gc.mem_alloc()` after boot (the
first sync) and at steady state, for both, and whether each ran without a
failed allocation.

What it cannot show: on an ESP32, mbedTLS's own buffers (its record
buffers, about 16 KB in and 4 KB out, and the handshake's state) come from
ESP-IDF's heap, outside MicroPython's; on the unix port from the C
library's malloc, outside it too.  The figures are what TLS costs the
MicroPython heap: the SSLContext with the CA certificate and the wrapped
socket.

    .venv/bin/python -m tabletimer.tools.bench.tls_heap
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from tabletimer.hub.broker.broker import BrokerAddress
from tabletimer.hub.broker.ports import free_port, wait_port
from tabletimer.hub.protocol.keys import BoardKeys, mqtt_password
from tabletimer.hub.broker.mosquitto_config import write_mosquitto_config
from tabletimer.hub.broker.tls_certs import board_ca
from tabletimer.hub.event.log.store import EventStore
from tabletimer.hub.fleet import firmware_build
from tabletimer.tools.bench.firmware_heap import FAST, exercise, start_hub
from tabletimer.hub.fleet.simulator import SimBoard
from tabletimer.tools.testing.local_mosquitto import mosquitto_path

SIZES_KB = (160, 96, 80, 72, 64)
HUB_PASSWORD = "bench"


def main() -> int:
    binary = mosquitto_path()
    if binary is None:
        print("skipped: mosquitto is not installed (apt-get install mosquitto)")
        return 0
    tmp = Path(tempfile.mkdtemp(prefix="tt-tls-"))
    keys = BoardKeys(tmp / "keys.json")
    names = {(kb, tls): f"{'tls' if tls else 'tcp'}{kb}" for kb in SIZES_KB for tls in (False, True)}
    for n in names.values():
        keys.ensure(n)
    port, hub_port = free_port(), free_port()
    conf = write_mosquitto_config(tmp / "mqtt", keys, "hub", HUB_PASSWORD, listen_host="127.0.0.1",
                                  port=port, tls_hosts=["127.0.0.1"], hub_port=hub_port)
    broker = subprocess.Popen([binary, "-c", str(conf)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    store = EventStore(tmp / "events.sqlite")
    sims: dict[tuple[int, bool], SimBoard] = {}
    hub = None
    try:
        wait_port("127.0.0.1", port, 10, broker)
        wait_port("127.0.0.1", hub_port, 10, broker)
        service, hub = start_hub(store, keys, BrokerAddress("127.0.0.1", hub_port, "hub", HUB_PASSWORD))
        service.start_round()
        code = tmp / "code"
        firmware_build.build(code, include_host_only=True, arch=None)
        ca = board_ca((tmp / "mqtt" / "ca.crt").read_bytes())
        for (kb, tls), n in names.items():
            key = keys.key(n) or ""
            sims[(kb, tls)] = SimBoard(n, "127.0.0.1", port if tls else hub_port, tmp, key=key, stations=2,
                                       timings=FAST, heap_bytes=kb * 1024, code_dir=code, broker_user=n,
                                       broker_password=mqtt_password(key), broker_ca=ca if tls else None
                                       ).start()
        results: dict[tuple[int, bool], tuple | None] = {}
        marks = {}
        for k, sim in sims.items():
            try:
                boot = sim.wait_for(lambda r: "heap" in r, timeout=20)["heap"][0]
                sim.wait_for(lambda r: "sched" in r, timeout=15)
                marks[k] = exercise(sim)
                results[k] = (boot, None)
            except TimeoutError as e:
                print(f"{k[0]} KB {'TLS' if k[1] else 'plain'}: {e}", file=sys.stderr)
                results[k] = None
        for k, mark in marks.items():
            try:
                steady = sims[k].wait_for(lambda r: "heap" in r, timeout=45, start=mark)["heap"][0]
                results[k] = (results[k][0], steady)       # type: ignore[index]
            except TimeoutError:
                results[k] = None
        failed = {k: sum("MemoryError" in str(r.get("log", "")) for r in s.records) for k, s in sims.items()}
    finally:
        for s in sims.values():
            s.stop()
        if hub:
            hub.stop()
        store.close()
        broker.terminate()
        broker.wait(10)
    print(f"{'heap':>6}  {'plain: boot / steady':>22}  {'TLS: boot / steady':>20}  {'TLS costs':>9}  "
          "failed allocations plain / TLS")
    for kb in SIZES_KB:
        p, t = results.get((kb, False)), results.get((kb, True))

        def cell(r) -> str:
            return "does not run" if r is None else f"{r[0]} / {r[1]}"
        cost = f"{t[1] - p[1]:+d}" if p and t and p[1] and t[1] else "-"
        print(f"{kb:>4}KB  {cell(p):>22}  {cell(t):>20}  {cost:>9}  {failed[(kb, False)]} / {failed[(kb, True)]}")
    costs = [t[1] - p[1] for kb in SIZES_KB if (p := results.get((kb, False))) and (t := results.get((kb, True)))
             and p[1] and t[1]]
    tls_ok = [kb for kb in SIZES_KB if results.get((kb, True)) and not failed[(kb, True)]]
    print(f"TLS costs the board's MicroPython heap {max(costs) if costs else '?'} bytes at steady state; "
          f"smallest heap with TLS and no failed allocation: {min(tls_ok) if tls_ok else '-'} KB "
          f"(tried {', '.join(map(str, SIZES_KB))} KB; mbedTLS's buffers are outside it)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
