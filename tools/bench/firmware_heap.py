"""Benchmark: the board firmware's heap.  Runs the real firmware, compiled to
.mpy as on a board (hub/fleet/firmware_build.py, as `tabletimer board flash`
does, but plain bytecode instead of -march=xtensawin: the unix port loads
it, and the firmware has no native code, so the files are the same), on the
unix MicroPython port with the simulated hardware, against the embedded
broker and a real hub, with MicroPython heaps of decreasing size (-X
heapsize; an ESP32 has roughly 100-160 KB free for Python).  For each it
prints the heap in use after boot and at steady state (after calls, counts,
voids, confirmations and a periodic clock sync), and the smallest heap the
firmware runs in.  Then a long hub outage at 64 and 80 KB (outage(): 200 strays
with the hub away, then the hub back), with the allocations that failed.

Then where the heap goes: gc.mem_alloc() after importing each module and
after building the App (2 stations), on the same unix port and, where node
and npm are at hand, on MicroPython's WebAssembly port (32-bit, as an ESP32:
npm package @micropython/micropython-webassembly-pyscript, installed into
~/.cache/tabletimer; no sockets there, so imports and App only), and with the
modules imported in place from a ROMFS image (code in flash on a board that
has a ROMFS partition; the image itself excluded).

The unix port the tests run is 64-bit: its objects (pointers, small ints,
dict slots) and its GC blocks (32 bytes, 16 on 32-bit) are twice the size of
the ESP32's; bytecode is not.  With $TT_MICROPYTHON naming a 32-bit unix
build (tools/micropython32.py) every board here runs on it instead: the
ESP32's word size, with sockets (the WebAssembly port has none).

    .venv/bin/python -m tabletimer.tools.bench.firmware_heap [--no-wasm]
    TT_MICROPYTHON=/path/to/32-bit/micropython .venv/bin/python -m tabletimer.tools.bench.firmware_heap
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tabletimer.hub.broker.broker import BrokerAddress, EmbeddedBroker
from tabletimer.hub.event.fold.competition import Competition
from tabletimer.hub.rules.formats import load_format
from tabletimer.hub.protocol.keys import BoardKeys
from tabletimer.hub.link.mqtt_adapter import HubMqtt
from tabletimer.hub.core.service import HubService
from tabletimer.hub.event.log.store import EventStore
from tabletimer.hub.fleet import firmware_build
from tabletimer.hub.fleet.simulator import SimBoard, micropython_binary, micropython_path

SIZES_KB = (160, 128, 112, 96, 80, 72, 64, 60, 56)
OUTAGE_HEAPS_KB = (64, 80)
MODULES = ("localclock", "gestures", "signals", "auth", "clocksync", "protocol", "journal", "board",
           "config", "mqtt_client", "hardware_sim", "hub_order", "app")
WASM_PACKAGE = "@micropython/micropython-webassembly-pyscript@1.29.0-6"

# Runs in MicroPython: the heap after each import and after building the App
# (as app.main does, but without running it).  Prints one JSON line.
MEASURE = """
import gc, sys, json
import asyncio, hashlib, binascii, os, time, random
asyncio.Event                                        # asyncio's lazily loaded parts the
getattr(asyncio, "StreamReader", None)               # firmware uses (ThreadSafeFlag: event)
if not hasattr(asyncio, "ThreadSafeFlag"):           # the WebAssembly port has none
    asyncio.ThreadSafeFlag = asyncio.Event
gc.collect()
base = gc.mem_alloc()
out = []
for m in MODULES:
    __import__(m)
    gc.collect()
    out.append([m, gc.mem_alloc() - base])
import app, config, hardware_sim
cfg = config.load(CFG)
a = app.App(hardware_sim.Hardware(cfg), cfg, None)
gc.collect()
out.append(["App built", gc.mem_alloc() - base])
print(json.dumps(out))
"""

WASM_RUNNER = """
import { loadMicroPython } from "@micropython/micropython-webassembly-pyscript";
import fs from "fs";
const [codeDir, script] = process.argv.slice(2);
const mp = await loadMicroPython({ stdout: (l) => console.log(l), linebuffer: true });
mp.FS.mkdir("/code");
for (const f of fs.readdirSync(codeDir)) mp.FS.writeFile("/code/" + f, fs.readFileSync(codeDir + "/" + f));
mp.runPython(fs.readFileSync(script, "utf8"));
"""
FAST = {"debounce_ms": 30, "confirm_ms": 300, "void_ms": 900, "quiet_ms": 1}


def exercise(sim: SimBoard) -> int:
    """Calls, counted missing pieces, voids and a confirmation on both
    stations; returns the record index after the activity."""
    def gesture(st: int, hold: int, pred) -> dict:
        start = len(sim.records)
        sim.press(st, hold)
        sim.wait_for(lambda r: r.get("input") == [st, 0], start=start)
        return sim.wait_for(pred, start=start)

    def called(st: int) -> None:
        """A call, then its ack."""
        start = len(sim.records)
        call = gesture(st, 60, lambda r: r.get("type") == "press")
        sim.wait_for(lambda r: r.get("acked") == call["journaled"], start=start)

    def counted(st: int) -> None:
        """A missing piece counted: its stray says so (not its blip: a fifth sound waiting is
        dropped, app.play, and the acks' beeps may fill the queue on a loaded machine).  A short
        press counts only once the hub's state of the station has the call, which may come in a
        message after the ack's: a press before it is a repeat of the call (a stray without
        'missing', seen on a loaded machine), and the referee presses again."""
        for _ in range(5):
            if gesture(st, 60, lambda r: r.get("type") == "stray").get("missing") is not None:
                return
        raise AssertionError(f"station {st}: 5 short presses, none counted a missing piece")

    for _ in range(3):
        for st in (1, 2):
            called(st)
            counted(st)
            gesture(st, 1000, lambda r: r.get("type") == "void")
    for st in (1, 2):
        gesture(st, 60, lambda r: r.get("type") == "press")
        last = gesture(st, 400, lambda r: r.get("type") == "confirm")
    sim.wait_for(lambda r: r.get("acked") == last["journaled"], timeout=10)
    return len(sim.records)


def _measure_script(modules_dir: str, cfg_path: str) -> str:
    return (f"import sys\nsys.path.insert(0, {modules_dir!r})\nMODULES = {MODULES!r}\nCFG = {cfg_path!r}\n"
            + MEASURE)


def _config(path: Path, root: str, key: str) -> None:
    path.write_text(json.dumps({"board": "heap", "key": key, "broker": {"host": "127.0.0.1", "port": 1},
                                "buttons": [1, 2], "sim": {"root": root}}))


def measure_unix(code: Path, tmp: Path, key: str) -> list | None:
    """Imports and App on the unix port (.mpy files loaded into the heap)."""
    _config(tmp / "m-unix.json", str(tmp / "m-unix"), key)
    (tmp / "m-unix.py").write_text(_measure_script(str(code), str(tmp / "m-unix.json")))
    r = subprocess.run([micropython_binary(), str(tmp / "m-unix.py")], capture_output=True, text=True,
                       env=dict(os.environ, MICROPYPATH=micropython_path(code)), timeout=60)
    return json.loads(r.stdout.splitlines()[-1]) if r.returncode == 0 else None


def measure_romfs(code: Path, tmp: Path, key: str) -> list | None:
    """The same with the modules in a ROMFS image (mpremote romfs build),
    imported in place: what a board with a ROMFS partition keeps in RAM.  On
    the unix port the image is a bytes object in the heap; the figures
    exclude it (on a board it is flash)."""
    src = tmp / "romsrc"
    src.mkdir(exist_ok=True)
    for f in code.glob("*.mpy"):
        shutil.copy(f, src / f.name)
    mpremote = Path(sys.executable).parent / "mpremote"
    r = subprocess.run([str(mpremote), "romfs", "--no-mpy", "-o", str(tmp / "fw.romfs"), "build", str(src)],
                       capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        return None
    _config(tmp / "m-rom.json", str(tmp / "m-rom"), key)
    script = (f"import vfs\nf = open({str(tmp / 'fw.romfs')!r}, 'rb')\nimg = f.read()\nf.close()\n"
              "vfs.mount(vfs.VfsRom(img), '/rom')\n" + _measure_script("/rom", str(tmp / "m-rom.json")))
    (tmp / "m-rom.py").write_text(script)
    r = subprocess.run([micropython_binary(), str(tmp / "m-rom.py")], capture_output=True, text=True,
                       env=dict(os.environ, MICROPYPATH=".frozen"), timeout=60)
    return json.loads(r.stdout.splitlines()[-1]) if r.returncode == 0 else None


def measure_wasm(code: Path, tmp: Path, key: str) -> tuple[list | None, str]:
    """Imports and App on MicroPython's WebAssembly port (32-bit pointers and
    objects, as on an ESP32), under node; (None, why) when it cannot run."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if not node or not npm:
        return None, "no node/npm"
    cache = Path.home() / ".cache" / "tabletimer" / "mp-wasm"
    pkg = cache / "node_modules" / "@micropython" / "micropython-webassembly-pyscript"
    if not pkg.exists():
        cache.mkdir(parents=True, exist_ok=True)
        r = subprocess.run([npm, "install", "--prefix", str(cache), "--no-audit", "--no-fund", WASM_PACKAGE],
                           capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            return None, "npm install failed: " + (r.stderr.strip().splitlines() or ["?"])[-1]
    wcode = tmp / "wasm-code"
    wcode.mkdir(exist_ok=True)
    for f in code.glob("*.mpy"):
        shutil.copy(f, wcode / f.name)
    _config(wcode / "config.json", "/tmp/m-wasm", key)
    (tmp / "m-wasm.py").write_text(_measure_script("/code", "/code/config.json"))
    (cache / "run.mjs").write_text(WASM_RUNNER)
    r = subprocess.run([node, str(cache / "run.mjs"), str(wcode), str(tmp / "m-wasm.py")],
                       capture_output=True, text=True, timeout=120)
    try:
        return json.loads(r.stdout.splitlines()[-1]), ""
    except (ValueError, IndexError):
        return None, "failed: " + (r.stderr.strip().splitlines() or ["?"])[-1]


def print_modules(columns: list[tuple[str, list | None]]) -> None:
    cols = [(name, dict(rows)) for name, rows in columns if rows]
    print("\nheap in use (gc.mem_alloc() - before, bytes) after each import and after building the App:")
    print(f"{'':>14}" + "".join(f"{name:>24}" for name, _ in cols))
    prev = {name: 0 for name, _ in cols}
    for m in (*MODULES, "App built"):
        line = f"{m:>14}"
        for name, d in cols:
            line += f"{d[m]:>14} (+{d[m] - prev[name]:>6})"
            prev[name] = d[m]
        print(line)


OUTAGE_EVENTS = 200


def start_hub(store: EventStore, keys: BoardKeys, broker: BrokerAddress) -> tuple[HubService, HubMqtt]:
    """A hub for the benchmark's boards (every station an individual
    entrant), connected to the broker at that address (with its login)."""
    service = HubService(store, keys, Competition(load_format("cz-championship-individuals"), [], [],
                                                  auto_stations=True))
    hub = HubMqtt(service, broker.host, broker.port, broker.user, broker.password)
    hub.start()
    return service, hub


def outage(kb: int, tmp: Path, code: Path, events: int = OUTAGE_EVENTS) -> dict:
    """A long hub outage at a kb KB heap, with a broker and a hub of its
    own: no round started (every press a stray, each journaled), the hub
    away, the board makes `events` strays, then the hub comes back and
    acknowledges them all.  Returns what a caller prints: the strays
    journaled and acknowledged, the allocations that failed (a MemoryError
    a task logged), the least free heap at a clock sync, whether the board
    is still running.
    Time is compressed: the events come as fast as the board takes them
    (~150 ms apart) and the outage lasts as long as that takes, not 30
    minutes -- the firmware's state after an outage is its events, its
    retries (back-off capped at 16 s: after a minute every entry waits at
    the cap, as after 30) and its reconnect attempts; the clock sync and the
    heap's age are what a longer outage would add."""
    out: dict = {}
    broker = EmbeddedBroker(tmp / "outage-broker").start()
    keys = BoardKeys(tmp / "outage-keys.json")
    store = EventStore(tmp / "outage.sqlite")
    service, hub = start_hub(store, keys, broker.address)
    name = f"out{kb}"
    sim = SimBoard(name, broker.host, broker.port, tmp, key=keys.ensure(name), stations=2, timings=FAST,
                   heap_bytes=kb * 1024, code_dir=code).start()
    try:
        for _ in range(3):
            sim.wait_for(lambda r: "sync" in r, start=len(sim.records), timeout=15)
        hub.stop()
        t0 = time.monotonic()
        for i in range(events):
            s0 = len(sim.records)
            sim.press(1 + i % 2, 60)
            try:
                sim.wait_for(lambda r: "journaled" in r or "Error" in str(r.get("log", "")), start=s0)
                sim.wait_for(lambda r: r.get("input", [0, 1])[1] == 0, start=s0)
            except TimeoutError:             # the board stuck or dead: say so below
                break
        made = time.monotonic() - t0
        hub = HubMqtt(service, broker.host, broker.port)
        hub.start()
        t1 = time.monotonic()
        # (the timeout: 200 entries, 16 s back-off, a few in flight at a time)
        acked: set[tuple[int, int]] = set()

        def all_acked(r: dict) -> bool:
            if "acked" in r:
                acked.add(tuple(r["acked"]))
            return len(acked) >= events
        try:
            sim.wait_for(all_acked, timeout=120)
        except TimeoutError:
            pass
        back = time.monotonic() - t1
        failed = [r["log"] for r in sim.records if "MemoryError" in str(r.get("log", ""))]
        journaled = sum(1 for r in sim.records if "journaled" in r)
        free = [r["heap"][1] for r in sim.records if "heap" in r]
        out = {"journaled": journaled, "acked": len(acked), "failed": failed, "made_s": made, "back_s": back,
               "free": min(free) if free else None, "alive": sim.alive, "stderr": sim.stderr_tail}
    finally:
        sim.stop()
        hub.stop()
        store.close()
        broker.stop()
    return out


def pointer_bits() -> int:
    """32 or 64: the unix MicroPython the boards here run on."""
    out = subprocess.run([micropython_binary(), "-c", "import struct; print(struct.calcsize('P'))"],
                         capture_output=True, text=True)
    return 8 * int(out.stdout.strip() or 8)


def main() -> int:
    wasm = "--no-wasm" not in sys.argv[1:]
    tmp = Path(tempfile.mkdtemp(prefix="tt-heap-"))
    with EmbeddedBroker(tmp / "broker") as broker:
        keys = BoardKeys(tmp / "keys.json")
        store = EventStore(tmp / "events.sqlite")
        service, hub = start_hub(store, keys, broker.address)
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
        for okb in OUTAGE_HEAPS_KB:
            try:
                o = outage(okb, tmp, code)
            except TimeoutError as e:      # the board never got going (a heap too small to connect)
                print(f"outage at {okb} KB: not measured, the board did not get going: {e}", flush=True)
                continue
            print(f"outage at {okb} KB (hub away, compressed: see outage()): {o['journaled']}/{OUTAGE_EVENTS} "
                  f"strays journaled in {o['made_s']:.0f} s, {o['acked']}/{OUTAGE_EVENTS} acknowledged "
                  f"{o['back_s']:.0f} s after the hub came back; failed allocations: {len(o['failed'])} "
                  f"(target 0); least free heap at a clock sync: {o['free']} bytes"
                  + ("" if o["alive"] else "; the board DIED"), flush=True)
            for line in sorted(set(o["failed"]))[:5]:
                print("   ", line)
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
    print(f"boards on {micropython_binary()} ({pointer_bits()}-bit)")
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
    print(f"smallest heap it runs in: {smallest} KB (tried {', '.join(map(str, SIZES_KB))} KB); "
          "target: runs in 64 KB")
    key = "00" * 31 + "01"
    bits = pointer_bits()
    columns = [(f"unix {bits}-bit", measure_unix(code, tmp, key)), ("unix, ROMFS", measure_romfs(code, tmp, key))]
    why = "skipped (--no-wasm)"
    if wasm:
        rows, why = measure_wasm(code, tmp, key)
        columns.append(("wasm 32-bit", rows))
    print_modules(columns)
    if not wasm or not columns[-1][1]:
        print(f"(32-bit WebAssembly port: {why})")
    print("ROMFS: modules imported in place from a ROMFS image (code stays in flash on a board "
          "with a ROMFS partition); the image itself is not counted")
    return 0 if smallest is not None and smallest <= 64 else 1


if __name__ == "__main__":
    sys.exit(main())
