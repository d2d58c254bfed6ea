"""Benchmark: the board firmware's heap.  Runs the real firmware, compiled to
.mpy as on a board, on the unix MicroPython port with the simulated hardware,
against the embedded broker and a real hub, with MicroPython heaps of
decreasing size (-X heapsize; an ESP32 has roughly 100-160 KB free for
Python).  For each it prints the heap in use after boot and at steady state
(after calls, counts, voids, confirmations and a periodic clock sync), and
the smallest heap the firmware runs in.

The unix port is 64-bit: its objects (pointers, small ints, dict slots) take
about twice the bytes of the 32-bit ESP32's, so these figures are an upper
bound for a board, not its measurement.

    .venv/bin/python -m tabletimer.tools.bench_firmware_heap
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from tabletimer.hub.broker import EmbeddedBroker
from tabletimer.hub.keys import BoardKeys
from tabletimer.hub.mqtt_adapter import HubMqtt
from tabletimer.hub.service import HubService
from tabletimer.hub.store import EventStore
from tabletimer.tools import firmware_build
from tabletimer.tools.simulator import SimBoard

SIZES_KB = (192, 160, 128, 112, 96, 80, 64)
FAST = {"debounce_ms": 30, "confirm_ms": 300, "void_ms": 900}


def exercise(sim: SimBoard) -> int:
    """Calls, counted missing pieces, voids and a confirmation on both
    stations; returns the record index after the activity."""
    def gesture(st: int, hold: int, pred) -> None:
        start = len(sim.records)
        sim.press(st, hold)
        sim.wait_for(lambda r: r.get("input") == [st, 0], start=start)
        sim.wait_for(pred, start=start)

    for _ in range(3):
        for st in (1, 2):
            gesture(st, 60, lambda r: r.get("type") == "press")
            gesture(st, 60, lambda r: r.get("sim") == "buzz" and r["freq"] == 1800)
            gesture(st, 1000, lambda r: r.get("type") == "void")
    for st in (1, 2):
        gesture(st, 60, lambda r: r.get("type") == "press")
        gesture(st, 400, lambda r: r.get("type") == "confirm")
    sim.wait_for(lambda r: r.get("acked", [0, 0])[1] == 16, timeout=10)
    return len(sim.records)


def main() -> int:
    tmp = Path(tempfile.mkdtemp(prefix="tt-heap-"))
    with EmbeddedBroker(tmp / "broker") as broker:
        keys = BoardKeys(tmp / "keys.json")
        store = EventStore(tmp / "events.sqlite")
        service = HubService(store, keys)
        hub = HubMqtt(service, broker.host, broker.port)
        hub.start()
        service.start_round()
        # as on a board: compiled .mpy modules (compiling source at import
        # time needs far more RAM than the program itself)
        code = tmp / "code"
        firmware_build.build(code, include_host_only=True, arch=None)
        sims = {kb: SimBoard(f"heap{kb}", broker.host, broker.port, tmp, key=keys.ensure(f"heap{kb}"),
                             stations=2, timings=FAST, heap_bytes=kb * 1024, code_dir=code).start()
                for kb in SIZES_KB}
        results: dict[int, tuple[int, int, int] | None] = {}
        marks: dict[int, int] = {}
        for kb, sim in sims.items():
            try:
                results[kb] = (sim.wait_for(lambda r: "heap" in r, timeout=15)["heap"][0], 0, 0)
                sim.wait_for(lambda r: "sched" in r, timeout=10)
                marks[kb] = exercise(sim)
            except TimeoutError as e:
                print(f"{kb} KB: {e}", file=sys.stderr)
                results[kb] = None
        # steady state: the next periodic clock sync after the activity (30 s)
        for kb, mark in marks.items():
            try:
                alloc, free = sims[kb].wait_for(lambda r: "heap" in r, timeout=45, start=mark)["heap"]
                boot = results[kb][0]
                results[kb] = (boot, alloc, free)
            except TimeoutError:
                results[kb] = None
        for sim in sims.values():
            sim.stop()
        hub.stop()
        store.close()
    print(f"{'heap':>8} {'after boot':>12} {'steady':>10} {'free':>10}  works")
    works = []
    for kb in SIZES_KB:
        r = results.get(kb)
        if r is None:
            print(f"{kb:>6}KB {'-':>12} {'-':>10} {'-':>10}  no")
        else:
            works.append(kb)
            print(f"{kb:>6}KB {r[0]:>12} {r[1]:>10} {r[2]:>10}  yes")
    smallest = min(works) if works else None
    print(f"smallest heap it runs in: {smallest} KB (of {', '.join(map(str, SIZES_KB))} KB); "
          "target: runs in 64 KB")
    return 0 if smallest is not None and smallest <= 64 else 1


if __name__ == "__main__":
    sys.exit(main())
