"""Benchmark: how late the board stamps a press while it writes its journal
and collects garbage (issue #14, item 8).  ESP32 pin interrupts are soft
(Pin.irq(hard=False); the port schedules the handler with
mp_sched_schedule): the handler, which reads ticks_ms(), runs only once a
blocking call -- a flash write, a gc.collect() -- has returned.  The
simulated hardware models that and charges each blocking call the time an
ESP32 might take (firmware/hardware_sim.py, sim_blocking.py: flash_write_ms,
flash_erase_ms every flash_erase_every-th write, gc_collect_ms; ESTIMATES,
see docs/firmware.md, "Soft interrupts"); for each press it reports the
instant the contact closed ("true") and how much later its handler ran
("delay").  The delay printed is that one.

The real firmware (compiled as for a board), one board of 3 stations against
the embedded broker and a real hub, a round running:
- station 3 runs all along (no one at it: a finish call may come any time,
  so the board is "while a station runs" throughout);
- station 2 called and was confirmed (done): its presses are strays;
- station 1 called (a referee is at it); then probed: a 10 ms contact every
  23 ms (too short to count as a press, no work of its own for the board,
  stamped all the same by the pin interrupt).  Those stamps are measured.
Phases:
  outage   the hub is away; station 2 journals 100 strays (a journal write
           each, and the stations' state: an event is durable before
           anything else) while station 1 is probed: the cost of another
           station's event;
  flood    the hub is back: the 100 events go out, 100 acks come back (each
           an entry to remove from flash), the clock-sync burst with its
           collections; station 1 probed meanwhile.
Variants: "now" is this firmware (acknowledged entries removed only once no
station runs); "remove at once" is the same firmware with that deferral
taken out (the policy before), same costs; "no costs" is this firmware with
every blocking cost 0: what the host's own scheduling adds (nothing: without
a modelled blocking call a stamp is the contact's instant).

    .venv/bin/python -m tabletimer.tools.bench.firmware_timing
    .venv/bin/tabletimer bench --only timing
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from tabletimer import firmware_dir
from tabletimer.hub.broker.broker import EmbeddedBroker
from tabletimer.hub.protocol.keys import BoardKeys
from tabletimer.hub.link.mqtt_adapter import HubMqtt
from tabletimer.hub.core.service import HubService
from tabletimer.hub.event.fold.competition import Competition
from tabletimer.hub.event.log.store import EventStore
from tabletimer.hub.rules.formats import load_format
from tabletimer.hub.fleet import firmware_build
from tabletimer.tools.bench.firmware_heap import FAST
from tabletimer.hub.fleet.simulator import SimBoard

STRAYS = 100
GAP_MS = 23                      # station 1's probes (not a divisor of anything the board does)
HOLD_MS = 10
BUDGET_MS = 5
COSTS = {"flash_write_ms": 3, "flash_erase_ms": 50, "flash_erase_every": 10, "gc_collect_ms": 3}
# the deferral, taken out for the "remove at once" variant
DEFERRED = '            if b.state(n, now) == "running":\n'
AT_ONCE = '            if False:\n'


def build(tmp: Path, name: str, at_once: bool) -> Path:
    code = tmp / name
    firmware_build.build(code, include_host_only=True, arch=None)
    if at_once:
        src = tmp / (name + "-src")
        src.mkdir()
        app = (firmware_dir() / "app.py").read_text()
        assert DEFERRED in app, "app.py changed: update the benchmark's patch"
        (src / "app.py").write_text(app.replace(DEFERRED, AT_ONCE))
        firmware_build.compile_file(src / "app.py", code, arch=None)
        shutil.rmtree(src)
    return code


def probes(sim: SimBoard, n: int) -> int:
    """Plan n probes of station 1, GAP_MS apart from now; returns the record
    index they start after."""
    start = len(sim.records)
    for i in range(n):
        t = i * GAP_MS
        sim.command(f"edges 1 {t}:1 {t + HOLD_MS}:0")
    return start


def delays(sim: SimBoard, start: int, n: int) -> list[int]:
    got: list[dict] = []

    def enough(r: dict) -> bool:
        if r.get("sim") == "press" and r["station"] == 1:
            got.append(r)
        return len(got) >= n
    sim.wait_for(enough, timeout=n * GAP_MS / 1000 + 30, start=start)
    return [r["delay"] for r in got]


def gesture(sim: SimBoard, station: int, hold: int, pred) -> None:
    start = len(sim.records)
    sim.press(station, hold)
    sim.wait_for(lambda r: r.get("input") == [station, 0], start=start)
    sim.wait_for(pred, start=start)


def run(tmp: Path, name: str, at_once: bool, costs: dict) -> dict[str, list[int]]:
    code = build(tmp, name, at_once)
    with EmbeddedBroker(tmp / (name + "-broker")) as broker:
        keys = BoardKeys(tmp / (name + "-keys.json"))
        store = EventStore(tmp / (name + "-events.sqlite"))
        service = HubService(store, keys, Competition(load_format("cz-championship-individuals"), [], [],
                                                      auto_stations=True))
        hubs = [HubMqtt(service, broker.host, broker.port)]
        hubs[0].start()
        service.start_round()
        sim = SimBoard(name, broker.host, broker.port, tmp, key=keys.ensure(name), stations=3, timings=FAST,
                       code_dir=code)
        sim.config["sim"].update(costs)
        sim.start()
        try:
            sim.wait_for(lambda r: "sched" in r, timeout=20)
            for _ in range(3):                                              # a few clock syncs
                sim.wait_for(lambda r: "sync" in r, start=len(sim.records))
            gesture(sim, 2, 60, lambda r: r.get("type") == "press")
            gesture(sim, 2, 450, lambda r: r.get("type") == "confirm")     # station 2: done
            gesture(sim, 1, 60, lambda r: r.get("type") == "press")        # station 1: called
            sim.wait_for(lambda r: r.get("acked", [0, 0])[1] == 3)
            out: dict[str, list[int]] = {}
            # the outage: strays journaled while station 1 is probed
            hubs[0].stop()
            start = probes(sim, STRAYS * 6)
            for _ in range(STRAYS):
                s0 = len(sim.records)
                sim.press(2, 60)
                sim.wait_for(lambda r: r.get("type") == "stray" and "journaled" in r, start=s0)
                sim.wait_for(lambda r: r.get("input") == [2, 0], start=s0)
            out["outage"] = delays(sim, start, STRAYS * 6)
            # the flood: the hub back, every stray acknowledged
            start = probes(sim, 300)
            hubs[0] = HubMqtt(service, broker.host, broker.port)
            hubs[0].start()
            acked: set[int] = set()

            def all_acked(r: dict) -> bool:
                if "acked" in r:
                    acked.add(r["acked"][1])
                return len(acked) >= STRAYS
            sim.wait_for(all_acked, timeout=60, start=start)
            out["flood"] = delays(sim, start, 300)
            return out
        finally:
            sim.stop()
            hubs[0].stop()
            store.close()


def pct(v: list[int], p: float) -> int:
    s = sorted(v)
    return s[min(len(s) - 1, max(0, round(p / 100 * (len(s) - 1))))]


def main(argv: list[str] | None = None) -> int:
    tmp = Path(tempfile.mkdtemp(prefix="tt-timing-"))
    variants = [("now", False, COSTS), ("remove at once", True, COSTS),
                ("no costs", False, {k: 0 for k in COSTS})]
    print(f"press-stamp delay (handler run - contact closed, ms), station 1 probed every {GAP_MS} ms; "
          f"modelled costs (estimates): flash write {COSTS['flash_write_ms']} ms, erase "
          f"{COSTS['flash_erase_ms']} ms every {COSTS['flash_erase_every']}th, gc.collect "
          f"{COSTS['gc_collect_ms']} ms")
    print(f"{'variant':>16} {'phase':>8} {'probes':>8} {'p50':>5} {'p99':>5} {'max':>5} "
          f"{'> ' + str(BUDGET_MS) + ' ms':>8}")
    worst = {}
    for name, at_once, costs in variants:
        res = run(tmp, name.replace(" ", "-"), at_once, costs)
        for phase, d in res.items():
            over = sum(x > BUDGET_MS for x in d)
            print(f"{name:>16} {phase:>8} {len(d):>8} {pct(d, 50):>5} {pct(d, 99):>5} {max(d):>5} {over:>8}",
                  flush=True)
            worst[name, phase] = max(d)
    print(f"worst press-stamp delay while the board writes its journal and collects garbage (this "
          f"firmware): {max(worst['now', 'outage'], worst['now', 'flood'])} ms (outage "
          f"{worst['now', 'outage']}, flood {worst['now', 'flood']}; removing at once: flood "
          f"{worst['remove at once', 'flood']})")
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
