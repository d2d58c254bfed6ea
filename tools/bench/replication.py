"""The standby's copy under a burst (issue 28): n boards played by the load
generator (tools/loadgen: the real signed protocol, one process, each board
logged in as at an event) on the primary (`tabletimer run`, its own broker:
Mosquitto when installed), and a standby (`tabletimer standby`) copying the
primary's log row for row.  Every board presses within 1 s (the burst), then
presses as fast as acked for --seconds.  Measured from outside both hubs,
both log files read every 5 ms: each row's replication lag, from the row in
the primary's file (durable there) to the row in the standby's, as
p50/p99/max and as ratios to the floor: one round trip of the primary's
rows feed at idle (GET /rows with nothing new, what each copied batch
costs at least); beside it the primary's own arrival (the row's
received_ms) -> durable, which at "as fast as acked" is the queue of
events in flight, not the copy.  And the rows the copy is missing at the
end (target 0).

    .venv/bin/python -m tabletimer.tools.bench.replication [--boards 300] [--seconds 10]

docs/benchmarks.md, "The hub laptop died".
"""

from __future__ import annotations

import argparse
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from tabletimer.hub.protocol.hub_secret import ensure_secret
from tabletimer.hub.broker.ports import free_port
from tabletimer.tools.bench.hall_rig import Hall
from tabletimer.tools.bench.report import Report, now_ms, pct
from tabletimer.tools.bench.takeover import start_standby, stop_hubs, wait_for_web
from tabletimer.tools.testing.hub_process import HubProcess

POLL_S = 0.005


class CopyWatch:
    """The standby's file read every POLL_S in a thread: when each row was
    first there (host ms), by id; the primary's arrival time of each."""

    def __init__(self, db: Path) -> None:
        self.db = db
        self.seen: dict[int, tuple[int, float]] = {}      # id -> (received_ms at the primary, seen ms)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> "CopyWatch":
        self._thread.start()
        return self

    def _run(self) -> None:
        conn = None
        last = 0
        while not self._stop.is_set():
            try:
                if conn is None:
                    conn = sqlite3.connect(f"file:{self.db}?mode=ro", uri=True, timeout=1)
                rows = conn.execute("SELECT id, received_ms FROM events WHERE id > ? ORDER BY id", (last,)).fetchall()
            except sqlite3.Error:
                rows = []
            t = now_ms()
            for rid, received in rows:
                self.seen[rid] = (received, t)
                last = rid
            time.sleep(POLL_S)

    def lags(self, after: int = 0, since_ms: float = 0, until_ms: float = float("inf"),
             behind: "CopyWatch | None" = None) -> list[float]:
        """Per row (id > after, arrived in [since, until)): seen here minus
        its arrival, or minus when behind (the primary's file) had it."""
        out = []
        for i, (r, s) in self.seen.items():
            if i > after and since_ms <= r < until_ms:
                if behind is None:
                    out.append(s - r)
                elif i in behind.seen:
                    out.append(max(0.0, s - behind.seen[i][1]))
        return out

    def wait_for(self, rid: int, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while rid not in self.seen:
            if time.monotonic() > deadline:
                return False
            time.sleep(POLL_S)
        return True

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)


def _max_id(db: Path) -> int:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
    try:
        return conn.execute("SELECT COALESCE(MAX(id), 0) FROM events").fetchone()[0]
    finally:
        conn.close()


def _row(figure: str, lags: list[float], floor: list[float] | None) -> tuple[str, str, str]:
    """floor None: a figure that is not the copy's (no ratio)."""
    if not lags:
        return figure, "no rows", ""
    ratio = ("" if floor is None else
             f"; p50 x{pct(lags, 50) / max(1.0, pct(floor, 50)):.1f}, p99 x{pct(lags, 99) / max(1.0, pct(floor, 99)):.1f}"
             " the floor's" if floor else "; no floor")
    return (figure, f"p50 {pct(lags, 50):.0f}  p99 {pct(lags, 99):.0f}  max {max(lags):.0f} ms",
            f"{len(lags)} rows{ratio}")


def run(n: int, seconds: float, broker_kind: str, report: Report) -> int:
    """The benchmark; the rows missing from the copy at the end."""
    root = Path(tempfile.mkdtemp(prefix="tt-replication-"))
    port, web = free_port(), free_port()
    hall = Hall(root / "hall", port, n, seed=n)
    ev = hall.ev
    ensure_secret(ev)                  # as `tabletimer init` makes it: the standby's copy has it
    copy = root / "standby"
    shutil.copytree(ev, copy)
    extra = ["--port", str(port)] + (["--broker-kind", broker_kind] if broker_kind else [])
    primary = HubProcess(ev, None, *extra, web_port=web)
    standby = watch = durable = None
    try:
        broker_line = next((ln.strip() for ln in primary.lines if ln.startswith("broker:")), "")
        wait_for_web(primary)
        standby, _ = start_standby(copy, ev, web, free_port(), "--broker-kind", "embedded")
        watch = CopyWatch(copy / "events.sqlite").start()
        durable = CopyWatch(ev / "events.sqlite").start()       # the primary's own file
        hall.act("round_start", f"at={int(now_ms())}", "warnings=[]")
        from tabletimer.hub.console.client import HubClient
        client = HubClient(f"http://127.0.0.1:{web}", (ev / "console-token").read_text().strip())
        before = _max_id(ev / "events.sqlite")
        floor: list[float] = []
        for _ in range(20):                          # the floor: the feed's round trip, nothing new
            t0 = now_ms()
            client.request("GET", f"/rows?after={before}")
            floor.append(now_ms() - t0)
        report.add("GET /rows at idle, nothing new (floor)", f"p50 {pct(floor, 50):.0f}  p99 {pct(floor, 99):.0f} ms",
                   "20 requests")
        phases: dict[str, list[float]] = {}
        gen = subprocess.Popen([sys.executable, "-m", "tabletimer.tools.loadgen", "--broker",
                                f"mqtt://127.0.0.1:{port}", "--folder", str(ev), "--boards", str(n), "--login",
                                "--idle", "2", "--burst", "1", "--rate", "max", "--inflight", "200",
                                "--seconds", f"{seconds:g}"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        out: list[str] = []
        assert gen.stdout is not None
        for line in gen.stdout:
            out.append(line)
            if line.startswith("phase begin "):
                phases[line.split()[2]] = [now_ms(), float("inf")]
            elif line.startswith("phase end "):
                phases[line.split()[2]][1] = now_ms()
        gen.wait()
        if gen.returncode != 0 or "burst" not in phases:
            report.add("load generator", "failed", f"exit {gen.returncode}: {''.join(out)[-600:]}")
            return n
        last = _max_id(ev / "events.sqlite")
        copied = watch.wait_for(last, 30)
        for name, label in (("burst", f"{n} boards press within 1 s"), ("sustained", f"{seconds:g} s of presses as "
                                                                                      "fast as acked")):
            if name in phases:
                t0, t1 = phases[name]
                report.add(*_row(f"durable at the primary -> in the copy: {label}",
                                 watch.lags(before, t0, t1, behind=durable), floor))
                report.add(*_row(f"  (arrival at the primary -> durable there: {label})",
                                 durable.lags(before, t0, t1), None))
        report.add(*_row(f"durable at the primary -> in the copy: every row of the {n} boards",
                         watch.lags(before, behind=durable), floor))
        missing = sum(1 for i in range(before + 1, last + 1) if i not in watch.seen)
        report.add("rows missing from the copy", str(missing),
                   f"{last - before} rows written at the primary{'' if copied else ', the copy still behind after 30 s'}; "
                   f"target 0; {broker_line.split(' on ')[0]}")
        return missing
    finally:
        for w in (watch, durable):
            if w is not None:
                w.stop()
        stop_hubs(standby, primary)
        shutil.rmtree(root, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tabletimer.tools.bench.replication",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--boards", type=int, default=300, help="load-generator boards (default 300)")
    ap.add_argument("--seconds", type=float, default=10.0, help="of presses as fast as acked (default 10)")
    ap.add_argument("--broker-kind", choices=("mosquitto", "embedded"), default=None,
                    help="the primary's broker (default: the hub's own choice, Mosquitto when installed)")
    a = ap.parse_args(argv)
    if a.boards < 1:
        ap.error("--boards needs at least 1")
    report = Report()
    print(f"the standby's copy: {a.boards} load-generator boards on the primary, a standby copying its log",
          flush=True)
    missing = run(a.boards, a.seconds, a.broker_kind or "", report)
    print(report.table())
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
