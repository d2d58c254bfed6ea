"""The hall the benchmarks run: an event folder for n boards, the hub as its
own process (`tabletimer run DIR`, as at an event), the boards as the real
firmware in simulated boards (hub/fleet/simulator.py), optionally behind the
impairment proxy (tools/testing/netimpair); and what the benches do with
it: every board presses (press_all), what became of the presses
(press_results), the boards' and a process's CPU and memory (boards_cpu,
proc_usage)."""

from __future__ import annotations

import json
import os
import random
import secrets
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Callable

from tabletimer.hub.event.folder import event_folder
from tabletimer.hub.protocol.keys import BoardKeys
from tabletimer.hub.event.folder.private_file import write_private
from tabletimer.tools.bench.broker_client import paho_client
from tabletimer.tools.bench.report import now_ms
from tabletimer.tools.testing.hub_process import TT, HubProcess, stored_presses
from tabletimer.tools.testing.netimpair import NetImpair
from tabletimer.hub.fleet.simulator import SimBoard

FORMAT = "czjpa-individuals"


class Hall:
    """An event folder for n boards (one station each: one individual per
    board), the hub as its own process, and the boards."""

    def __init__(self, root: Path, broker_port: int, n: int, stations: int = 1,
                 proxy: NetImpair | None = None, seed: int = 1,
                 table_of: Callable[[int], str] | None = None) -> None:
        """table_of(i): the table of the i-th board (0-based; default: a
        table of its own, "Table B001")."""
        self.root = root
        self.broker_port = broker_port
        self.n = n
        self.stations = stations
        self.proxy = proxy
        self.rng = random.Random(seed)
        self.ids = [f"B{i:03d}" for i in range(1, n + 1)]
        self.ev = event_folder.init(root / "event", FORMAT)
        fmt = (self.ev / "format.toml").read_text().replace('resolution = "1s"', 'resolution = "1ms"')
        (self.ev / "format.toml").write_text(fmt)
        (self.ev / "entrants.csv").write_text("id,name,eligible\n" + "".join(
            f"{b}-{s},Puzzler {b}.{s},yes\n" for b in self.ids for s in range(1, stations + 1)))
        self.table_of = table_of or (lambda i: f"Table {self.ids[i]}")
        (self.ev / "stations.csv").write_text("board,button,table,entrant\n" + "".join(
            f"{b},{s},{self.table_of(i)},{b}-{s}\n" for i, b in enumerate(self.ids)
            for s in range(1, stations + 1)))
        # every board's key, the file written once (ensure() rewrites it
        # for each board: minutes for a hall of 3,000)
        known = BoardKeys(self.ev / "board-keys.json")
        write_private(self.ev / "board-keys.json", json.dumps(
            {b: known.key(b) or secrets.token_hex(32) for b in [*known.boards(), *self.ids]}, indent=2, sort_keys=True))
        self.keys = BoardKeys(self.ev / "board-keys.json")
        self.hub: HubProcess | None = None
        self.boards: list[SimBoard] = []

    # -- hub
    def start_hub(self, web_port: int | None = None) -> float:
        """Start the hub (with its web server on 127.0.0.1:web_port, if
        given); returns the host ms at which it was started."""
        t = now_ms()
        self.hub = HubProcess(self.ev, self.broker_port, web_port=web_port)
        return t

    def kill_hub(self) -> None:
        if self.hub and self.hub.proc.poll() is None:
            self.hub.kill()

    def stop_hub(self) -> None:
        if self.hub and self.hub.proc.poll() is None:
            self.hub.stop()

    def act(self, *args: str) -> None:
        subprocess.run([TT, "act", str(self.ev), *args], check=True, capture_output=True)

    # -- boards
    def start_boards(self, **kw) -> None:
        for b in self.ids:
            port = self.proxy.port_for(b) if self.proxy else self.broker_port
            sim = SimBoard(b, "127.0.0.1", port, self.root / "boards", key=self.keys.key(b) or "",
                           stations=self.stations,
                           clock_offset_ms=self.rng.randint(1, 10) * 3_600_000 + self.rng.randint(0, 999),
                           drift_ppm=self.rng.randint(-50, 50), **kw)
            self.boards.append(sim.start())

    def wait_synced(self, samples: int = 6, timeout: float = 120, good_ms: int = 20) -> None:
        """Until every board has had `samples` clock-sync exchanges, one of
        them with a round trip under good_ms (as boards have long before a
        round starts; the console flags a board without one as poor sync).
        In a connect storm the first exchanges queue behind each other; the
        next good one may be the periodic sync, up to 30 s later."""
        for sim in self.boards:
            n = [0, False]

            def count(rec: dict, n=n) -> bool:
                if "sync" in rec:
                    n[0] += 1
                    n[1] = n[1] or rec["sync"][1] < good_ms
                return n[0] >= samples and n[1]
            sim.wait_for(count, timeout=timeout)

    def close(self) -> None:
        for sim in self.boards:
            sim.kill()
        self.stop_hub()
        self.clear_retained()

    def clear_retained(self) -> None:
        """Empty the broker's retained messages on this hall's board topics
        (schedules, births).  The next hall on the same broker reuses the
        board ids with other keys: its boards got this hall's schedules
        first and rejected them ("bad signature on sched"), and its hub
        found births it could not verify."""
        from tabletimer.shared import protocol as P
        c = paho_client(f"bench-clear-{os.getpid()}")
        up = threading.Event()
        c.on_connect = lambda cl, u, f, rc, pr: rc.is_failure or up.set()
        try:
            c.connect("127.0.0.1", self.broker_port)
        except OSError:
            return                       # no broker any more: nothing retained to clear
        c.loop_start()
        try:
            if up.wait(5):               # (a broker that refuses this client: left as it is)
                sent = [c.publish(P.board_topic(b, kind), b"", qos=1, retain=True)
                        for b in self.ids for kind in (P.SCHED, P.STATUS)]
                for info in sent:
                    info.wait_for_publish(10)
        except (RuntimeError, ValueError):
            pass                         # the connection dropped: the next hall's figures say so
        finally:
            c.loop_stop()
            c.disconnect()

    # -- what happened
    def stored_presses(self) -> dict[tuple[str, int, int], dict]:
        return {(e["board"], e["payload"]["boot"], e["payload"]["seq"]): e
                for e in stored_presses(self.ev)}


def press_all(hall: Hall, window_s: float, rng: random.Random, station: int = 1
              ) -> list[tuple[SimBoard, int]]:
    """Every board presses a station once (its finish call), at random
    moments within the window (a paced plan: the scenario's clock, not
    synchronisation).  Returns (board, index of its records before the press)."""
    plan = sorted((rng.uniform(0, window_s), sim) for sim in hall.boards)
    marks = [(sim, len(sim.records)) for _, sim in plan]
    t0 = time.monotonic()
    for at, sim in plan:
        time.sleep(max(0.0, t0 + at - time.monotonic()))
        sim.press(station, 60)
    return marks


def press_results(hall: Hall, marks: list[tuple[SimBoard, int]], timeout: float = 120
                  ) -> tuple[list[float], list[float], int, list[float]]:
    """(press->ack latencies, stored-minus-true errors, lost, event->ack
    latencies) for presses made after the marks: waits until every board's
    press is acked.  A press becomes an event once debounced (debounce_ms
    after the edge, 30 ms by default): event->ack is the system's own part."""
    lat, err, lost, sys_lat = [], [], 0, []
    acked: dict[str, tuple[dict, dict]] = {}
    for sim, start in marks:
        try:
            press = sim.wait_for(lambda r: r.get("sim") == "press", start=start, timeout=timeout)
            j = sim.wait_for(lambda r: "journaled" in r, start=start, timeout=timeout)
            ack = sim.wait_for(lambda r: r.get("acked") == j["journaled"], start=start, timeout=timeout)
        except TimeoutError as e:
            lost += 1
            print(f"  not acknowledged: {e}", file=sys.stderr, flush=True)
            continue
        lat.append(ack["t"] - press["true"])
        sys_lat.append(ack["t"] - j["t"])
        acked[sim.board_id] = (press, j)
    stored = hall.stored_presses()
    for b, (press, j) in acked.items():
        e = stored.get((b, j["journaled"][0], j["journaled"][1]))
        if e is None:
            lost += 1
            print(f"  acknowledged but not stored: {b} {j['journaled']}", file=sys.stderr, flush=True)
        else:
            err.append(e["payload"]["at"] - press["true"])
    return lat, err, lost, sys_lat


def boards_cpu(hall: Hall) -> float:
    """CPU seconds the board processes have used so far."""
    import psutil
    total = 0.0
    for sim in hall.boards:
        try:
            t = psutil.Process(sim.proc.pid).cpu_times()          # type: ignore[union-attr]
            total += t.user + t.system
        except (psutil.Error, AttributeError):
            pass
    return total


def proc_usage(pid: int, seconds: float) -> tuple[float, float]:
    """(RSS MB, CPU % of one core) of a process over a window."""
    import psutil
    p = psutil.Process(pid)
    c0 = sum(p.cpu_times()[:2])
    time.sleep(seconds)                 # the measuring window
    c1 = sum(p.cpu_times()[:2])
    return p.memory_info().rss / 1e6, (c1 - c0) / seconds * 100
