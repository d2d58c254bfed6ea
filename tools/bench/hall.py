"""`tabletimer bench`: the hall-scale benchmarks, one table of figures.

    .venv/bin/tabletimer bench              # everything (about 15-25 minutes)
    .venv/bin/tabletimer bench --quick      # smaller hall, short outages (a few minutes)
    .venv/bin/tabletimer bench --only press,ingest
    .venv/bin/tabletimer bench --broker mosquitto --only floor,loadgen --loadgen-sizes 300,1000,3000

What runs where: the broker (the embedded one, or --broker-url) and the hub
(`tabletimer run DIR`, its own process, as at an event) on this machine;
boards are the real firmware in real `micropython` processes (tools/simulator),
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
  (tools/bench_firmware_heap, run as it is), press-stamp delay while the
  firmware writes flash and collects (tools/bench/firmware_timing, run as
  it is), what TLS to the broker costs a board's heap (tools/bench/tls_heap).
Not a test: the figures depend on the machine; zero lost events is checked
and reported in every run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable

from tabletimer.hub.event import event_folder
from tabletimer.hub.boards.broker import EmbeddedBroker, parse_broker_url
from tabletimer.hub.boards.keys import BoardKeys
from tabletimer.hub.boards.private_file import write_private
from tabletimer.tools.testing.hub_process import TT, HubProcess, stored_presses
from tabletimer.tools.testing.local_mosquitto import LocalMosquitto
from tabletimer.tools.testing.netimpair import NetImpair
from tabletimer.tools.simulator import SimBoard

FORMAT = "czjpa-individuals"


def now_ms() -> float:
    return time.time_ns() / 1e6


def pct(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    k = min(len(s) - 1, max(0, int(round(p / 100 * (len(s) - 1)))))
    return s[k]


def spread(values: list[float]) -> str:
    return (f"p50 {pct(values, 50):7.1f}  p99 {pct(values, 99):7.1f}  max {max(values):7.1f} ms"
            if values else "no samples")


# ---------------------------------------------------------------- results
class Report:
    def __init__(self) -> None:
        self.rows: list[tuple[str, str, str]] = []       # (figure, value, note)
        self.lost = 0

    def add(self, figure: str, value: str, note: str = "") -> None:
        self.rows.append((figure, value, note))
        print(f"  {figure}: {value}{'   ' + note if note else ''}", flush=True)

    def table(self) -> str:
        w = max(len(r[0]) for r in self.rows)
        v = max(len(r[1]) for r in self.rows)
        lines = [f"{'figure':<{w}}  {'value':<{v}}  note", "-" * (w + v + 30)]
        lines += [f"{a:<{w}}  {b:<{v}}  {c}" for a, b, c in self.rows]
        return "\n".join(lines)


# ---------------------------------------------------------------- the hall
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
        c = _client(f"bench-clear-{os.getpid()}")
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


# ---------------------------------------------------------------- benchmarks
# clock-sync exchanges a board has had before the press and skew benchmarks
# start a round: its connect burst (firmware/app.py, _SYNC_BURST: 6) and one
# after it; with --fresh-boards, the burst only
FRESH_SYNC_SAMPLES = 6
SETTLED_SYNC_SAMPLES = FRESH_SYNC_SAMPLES + 1


def _client(client_id: str):
    """A paho client with TCP_NODELAY, like the hub's (tiny messages would
    otherwise wait up to 40 ms for Nagle's algorithm and delayed ACKs)."""
    import paho.mqtt.client as mqtt
    from tabletimer.hub.boards.mqtt_adapter import no_delay
    c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=client_id)
    c.on_socket_open = no_delay
    return c


def bench_floor(port: int, report: Report, rounds: int = 300) -> float:
    """Broker round trip (QoS 1 publish -> echo -> receive); returns its p50
    and p99."""
    got = threading.Event()
    echo = _client("bench-echo")
    ping = _client("bench-ping")
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
        # round is a stray, not a finish): now, or, for the signal skew, in 10 s
        marks0 = [len(sim.records) for sim in hall.boards]
        start_at = int(now_ms()) + (10_000 if signal_skew else 0)
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



# ---------------------------------------------------------------- signal skew
def played_signal(sim: SimBoard, name: str, start: int, timeout: float) -> tuple[int, int, int] | None:
    """The first scheduled signal `name` the board played after record
    `start`: (true instant its buzzer started, host ms; its clock error then,
    ms; its lateness, ms), or None if it did not play it in time.

    The board's signal line says when the signal was due on its synchronised
    clock ("at", hub ms) and how many ms of its own clock later it started
    the buzzer ("delay"); the simulated hardware's buzz line just before it
    says the true instant ("true").  So at the buzzer's start the board's
    clock read at + delay, and its clock error (its estimate of hub time
    minus the true hub time, host ms here) is at + delay - true; the
    lateness is delay, and played - scheduled = lateness - clock error.
    Whole ms each (ticks and host ms): +-1 ms of rounding."""
    try:
        sig = sim.wait_for(lambda r: r.get("signal") == name, start=start, timeout=timeout)
    except TimeoutError:
        return None
    i = sim.records.index(sig)
    buzz = next((r for r in reversed(sim.records[:i + 1]) if r.get("sim") == "buzz" and r["freq"] > 0), None)
    if buzz is None:
        return None
    return buzz["true"], sig["at"] + sig["delay"] - buzz["true"], sig["delay"]


ROTATE_GAP_MS = 1537      # the idle board's rotations: the pattern lasts 1.3 s; off the
                          # board's own periods (250 ms, 1 s, 30 s), so their phase sweeps


def bench_signal_lateness(port: int, root: Path, report: Report, count: int = 60) -> list[float]:
    """One board, synced, with nothing else heavy on the machine (the hub
    and the broker idle): `count` relay rotations ROTATE_GAP_MS apart, sent
    to it directly as a schedule signed with its key (as the hub signs one;
    an id above any of the hub's; rotations: a schedule of 60 separate
    signals would not fit the board's MQTT packet limit).  Returns its
    wake-up lateness per signal: from the instant its own synchronised clock
    said to play to the buzzer's start (played_signal)."""
    from tabletimer.shared import protocol as P
    from tabletimer.shared.auth import Signer
    from tabletimer.hub.boards.hub_protocol import schedule
    hall = Hall(root / "lateness", port, 1, seed=17)
    try:
        hall.start_hub()
        hall.start_boards()
        hall.wait_synced()
        (sim,) = hall.boards
        first = int(now_ms()) + 2000
        plan = [first + k * ROTATE_GAP_MS for k in range(count)]
        msg = schedule(10 ** 9, first, plan[-1] + 1, [], rot=[first, ROTATE_GAP_MS, plan[-1] + 1])
        P.stamp(msg, 1)
        topic = P.board_topic(sim.board_id, P.SCHED)
        mark = len(sim.records)
        c = _client("bench-lateness")
        c.connect("127.0.0.1", port)
        c.loop_start()
        try:
            signed = Signer(hall.keys.key(sim.board_id) or "").sign(topic, P.encode(msg))
            c.publish(topic, signed, 1).wait_for_publish(10)
        finally:
            c.loop_stop()
            c.disconnect()
        sim.wait_for(lambda r: r.get("sched") == 10 ** 9, start=mark)
        late, errors, skew, missed = [], [], [], 0
        for at in plan:
            try:
                rec = sim.wait_for(lambda r: r.get("signal") == "rotate" and r["at"] == at, start=mark,
                                   timeout=max(0.0, at - now_ms()) / 1000 + 10)
            except TimeoutError:
                missed += 1
                continue
            mark = sim.records.index(rec)
            got = played_signal(sim, "rotate", mark, timeout=1)
            assert got is not None
            late.append(got[2])
            errors.append(got[1])
            skew.append(got[0] - at)
        report.add(f"signal wake-up lateness, 1 board on an idle machine, {count} signals", spread(late),
                   f"the board's clock from its synchronised instant to the buzzer's start; {missed} not played")
        report.add("that board's clock error at its signals", spread([abs(e) for e in errors]),
                   f"|estimate - true hub time|; mean {statistics.fmean(errors):+.2f} ms")
        report.add("that board's played - scheduled", spread(skew), f"mean {statistics.fmean(skew):+.2f} ms")
        return late
    finally:
        hall.close()


def report_hall_skew(report: Report, n: int, errors: list[int], lateness: list[float]) -> None:
    """The signal skew the hall hears: each of the n boards' clock errors
    (measured in the 300-process run, where the processes' own lateness
    cancels out of it) combined with the wake-up lateness of one board on
    an idle core (bench_signal_lateness): every error with every lateness
    sample, played - scheduled = lateness - error, n x len(lateness) values."""
    report.add(f"signal clock error, {n} boards", spread([abs(e) for e in errors]),
               f"|estimate - true hub time| at the signal; mean {statistics.fmean(errors):+.2f} ms")
    if not lateness:
        report.add(f"signal skew as the hall hears it, {n} boards", "not measured", "no lateness measured")
        return
    skew = [lt - e for e in errors for lt in lateness]
    report.add(f"signal skew as the hall hears it, {n} boards", spread([abs(v) for v in skew]),
               f"|clock error + idle lateness|, {len(errors)} x {len(lateness)} combinations; "
               f"signed p1 {pct(skew, 1):+.1f} p99 {pct(skew, 99):+.1f} ms")


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


class SignedBoards:
    """The hall's n board identities as one paho client (no firmware: what
    is measured is the broker and the hub): each board comes online, then
    presses on demand, signed with its key as a board signs.  `sent` and
    `acks` map (board, seq) to host perf_counter ms at the publish and at
    the hub's ack's arrival here."""

    def __init__(self, hall: Hall, port: int, client_id: str = "bench-load") -> None:
        from tabletimer.shared import protocol as P
        from tabletimer.shared.auth import Signer
        self.P = P
        self.hall = hall
        self.sent: dict[tuple[str, int], float] = {}
        self.acks: dict[tuple[str, int], float] = {}
        self.scheduled: set[str] = set()
        self._want = 0
        self._done = threading.Event()
        self._lock = threading.Lock()
        self.signers = {b: Signer(hall.keys.key(b) or "") for b in hall.ids}
        self.ctr = {b: 0 for b in hall.ids}          # messages' replay counters
        self.seq = {b: 0 for b in hall.ids}          # events' journal numbers
        self.gen = _client(client_id)
        self.gen.on_message = self._message
        sub = threading.Event()
        self.gen.on_connect = lambda c, u, f, rc, p: c.subscribe([("tt/v1/b/+/cmd", 1), ("tt/v1/b/+/sched", 1)])
        self.gen.on_subscribe = lambda *a: sub.set()
        self.gen.connect("127.0.0.1", port)
        self.gen.loop_start()
        sub.wait(10)

    def _message(self, c, u, m) -> None:
        t = time.perf_counter() * 1000
        board = m.topic.split("/")[3]
        try:
            msg = self.P.decode(self.signers[board].open(m.topic, m.payload))
        except Exception:
            return
        if m.topic.endswith("/sched"):
            with self._lock:
                self.scheduled.add(board)
        elif msg.get("type") == "ack":
            with self._lock:
                self.acks.setdefault((board, msg["seq"]), t)
                if len(self.acks) >= self._want:
                    self._done.set()

    def send(self, b: str, kind: str, msg: dict) -> None:
        """Publish a board's message (stamped with its next counter)."""
        self.ctr[b] += 1
        self.P.stamp(msg, self.ctr[b], 1)
        topic = self.P.board_topic(b, kind)
        payload = self.signers[b].sign(topic, self.P.encode(msg))
        if kind == self.P.EVENT:
            with self._lock:
                self.sent[(b, msg["seq"])] = time.perf_counter() * 1000
        self.gen.publish(topic, payload, 1)

    def _press(self, b: str, station: int) -> None:
        from tabletimer.hub.boards import hub_protocol
        self.seq[b] += 1
        self.send(b, self.P.EVENT, hub_protocol.press(1, self.seq[b], station, int(now_ms())))

    def online(self, timeout: float = 60) -> None:
        """Every board says it is online; until the hub has answered each
        (its schedule)."""
        for b in self.hall.ids:
            self.send(b, self.P.STATUS, self.P.status_online(1, "bench", 1))
        deadline = time.monotonic() + timeout
        while len(self.scheduled) < len(self.hall.ids) and time.monotonic() < deadline:
            time.sleep(0.05)

    def presses(self, per_board: int = 1, window_s: float | None = None, rng: random.Random | None = None,
                station: int = 1) -> None:
        """per_board presses from every board: as fast as they can be
        published (window_s None), or each at a random moment within
        window_s (a paced plan, as press_all)."""
        plan = [(b, k) for k in range(per_board) for b in self.hall.ids]
        with self._lock:
            self._want = len(self.sent) + len(plan)
            self._done.clear()
        if window_s is None:
            for b, _ in plan:
                self._press(b, station)
            return
        rng = rng or random.Random(1)
        timed = sorted((rng.uniform(0, window_s), b) for b, _ in plan)
        t0 = time.monotonic()
        for at, b in timed:
            time.sleep(max(0.0, t0 + at - time.monotonic()))
            self._press(b, station)

    def wait_acked(self, timeout: float = 120) -> bool:
        return self._done.wait(timeout)

    def latencies(self) -> list[float]:
        """publish -> ack, ms, of the events acked."""
        with self._lock:
            return [self.acks[k] - t for k, t in self.sent.items() if k in self.acks]

    def close(self) -> None:
        self.gen.loop_stop()
        self.gen.disconnect()


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


def bench_rank(report: Report, quick: bool) -> None:
    from tabletimer.tools.bench import ranking as br
    scratch, live = br.bench("team championship (8 puzzles)", "cz-championship-teams", br.team_facts,
                             5000, 3 if quick else 9)
    report.add("rank 5,000 entrants x 20 facts, live (as the hub does)", f"{live:.1f} ms (best)",
               f"from scratch {scratch:.1f} ms (best), once at hub start")


def _bench_module(report: Report, module: str, picks, label: str) -> None:
    """Run a benchmark module as it is, show its output, report its line
    that picks() chooses (the last)."""
    out = subprocess.run([sys.executable, "-m", module], capture_output=True, text=True)
    print(out.stdout, flush=True)
    lines = [ln.strip() for ln in out.stdout.splitlines() if picks(ln)]
    report.add(label, lines[-1] if lines else f"see above (exit {out.returncode})")


def bench_heap(report: Report) -> None:
    _bench_module(report, "tabletimer.tools.bench_firmware_heap", lambda ln: "smallest" in ln.lower(),
                  "firmware heap")


def bench_timing(report: Report) -> None:
    _bench_module(report, "tabletimer.tools.bench.firmware_timing",
                  lambda ln: ln.startswith("worst press-stamp delay"), "press-stamp delay (firmware, modelled)")


def bench_tls(report: Report) -> None:
    _bench_module(report, "tabletimer.tools.bench.tls_heap", lambda ln: ln.startswith("TLS costs"),
                  "TLS to the broker (firmware heap)")


# ---------------------------------------------------------------- main
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
