"""The hall's spectators during a press burst (issue #17): `tabletimer bench
--only spectators`, or alone:

    .venv/bin/python -m tabletimer.tools.bench.spectators [--boards 300 --pages 300]

What runs: as tools/bench/phones.py (the embedded broker, the hub as
`tabletimer run DIR` with its web server and the hall's pages' own process,
hub/web/hall_process.py, the boards as signed identities from one paho
client, one station each), and m public pages open on the hall's stream
(GET /h/api/stream on the hall's pages' port, server-sent events: the hub's
own port sends them there) in one other process:
one asyncio loop, HTTP/1.1 by hand.  The pages come from 127.0.0.k source
addresses, at most 5 to an address: the hub limits the streams per device
(web/rate_limit.py), and a hall's spectators are each their own phone.

Figures, in one run:
- the broker round trip (floor, floor.bench_floor);
- the boards' event -> durable -> ack, n boards pressing within one second,
  on a hub with no page open and on a new one with the m pages open; the ratio;
- press -> shown on the hall's pages: from a board's press (its publish) to
  the arrival, on the last of the pages that read their views (every 10th:
  decoding 300 pages' JSON here took a core from the hub and the broker on
  a 2-core machine; the others receive the same bytes and count them), of a
  view in which its entrant has finished; p50/p99/max (target p99 < 1 s);
- views sent, bytes received, nothing lost (every press acked and stored,
  every finish shown on every page);
- the same burst on a third hub without pages: the spread between two hubs
  without pages, against which the ratio with pages is read.
The pages' process takes only idle CPU (hall_process.lowest_priority: it
stands in for 300 phones, which are not on the hub's laptop), as the hall's
pages' own process does.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import shutil
import tempfile
import time
from pathlib import Path

from tabletimer.tools.bench.floor import bench_floor
from tabletimer.tools.bench.hall_rig import Hall
from tabletimer.tools.bench.http_conn import Conn
from tabletimer.tools.bench.report import Report, pct, spread
from tabletimer.tools.bench.web_burst import WebClients, burst, burst_alone, report_against

PAGES_PER_ADDRESS = 5         # under the hub's limit of streams per device (rate_limit.STREAMS_PER_CLIENT)
SAMPLE_EVERY = 10             # every 10th page reads its views (JSON); the others count their bytes


def wall_ms() -> float:
    return time.time_ns() / 1e6          # as report.now_ms, the clock the load generator stamps presses with


class Page:
    def __init__(self, i: int, port: int) -> None:
        self.i, self.port = i, port
        self.reads = i % SAMPLE_EVERY == 0
        self.address = f"127.0.0.{2 + i // PAGES_PER_ADDRESS}"
        self.finished: dict[str, float] = {}     # entrant -> arrival of the first view showing it finished
        self.views = 0
        self.bytes = 0
        self.first = asyncio.Event()
        self.errors: list[str] = []

    async def stream(self) -> None:
        conn = Conn(self.port, None)
        try:
            conn.r, conn.w = await asyncio.open_connection("127.0.0.1", self.port, local_addr=(self.address, 0))
            conn.w.write(conn.head("GET", "/h/api/stream", extra={"Accept": "text/event-stream"}))
            status, headers = await conn.status_and_headers()
            if status != 200:
                self.errors.append(f"page {self.i}: {status}")
                self.first.set()
                return
            async for t, data in conn.views(headers, wall_ms, self._received):
                self.views += 1
                self.first.set()
                if self.reads:
                    self.view(t, json.loads(data))
            self.errors.append(f"page {self.i}: the stream ended")
        except (OSError, ValueError, asyncio.IncompleteReadError) as e:
            self.errors.append(f"page {self.i}: {e!r}")
            self.first.set()

    def _received(self, n: int) -> None:
        self.bytes += n

    def view(self, t: float, v: dict) -> None:
        for r in v["rows"]:
            if r["status"] == "finished" and r["entrant"] not in self.finished:
                self.finished[r["entrant"]] = t


async def _pages(link, port: int, n: int, expect: int, timeout: float) -> None:
    pages = [Page(i, port) for i in range(n)]
    tasks = [asyncio.ensure_future(p.stream()) for p in pages]
    try:
        await asyncio.wait_for(asyncio.gather(*(p.first.wait() for p in pages)), 60)
    except asyncio.TimeoutError:
        pass
    link.send(("ready", sum(1 for p in pages if p.views)))
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not all(len(p.finished) >= expect for p in pages if p.reads):
        await asyncio.sleep(0.05)
    for t in tasks:
        t.cancel()
    link.send(("done", {"finished": [p.finished for p in pages if p.reads], "views": sum(p.views for p in pages),
                        "bytes": sum(p.bytes for p in pages),
                        "errors": [e for p in pages for e in p.errors]}))


def run_pages(link, port: int, n: int, expect: int, timeout: float) -> None:
    # the pages stand in for 300 phones, which are not on the hub's laptop:
    # they take only the CPU that the hub, the broker, the hall's pages and
    # the boards leave (what the boards' acks pay is then the hub's laptop's
    # cost of the crowd, not the bench's cost of playing it)
    from tabletimer.hub.web.hall_process import lowest_priority
    if os.environ.get("TT_BENCH_PAGES_PRIORITY") != "same":
        lowest_priority()
    asyncio.run(_pages(link, port, n, expect, timeout))


def _hall(root: Path, name: str, port: int, n_boards: int) -> Hall:
    from tabletimer.tools.bench.report import now_ms
    hall = Hall(root / name, port, n_boards, seed=41, table_of=lambda i: f"Table {i // 5 + 1}")
    hall.act("round_start", f"at={int(now_ms())}", "warnings=[]")
    return hall


def bench_spectators(port: int, root: Path, n_boards: int, n_pages: int, report: Report,
                     broker_floor: tuple[float, float] | None = None) -> None:
    if broker_floor is None:
        broker_floor = bench_floor(port, report)
    without = burst_alone(_hall(root, "spectators-none", port, n_boards), port, report, "no pages", broker_floor,
                          _pids)

    hall = _hall(root, "spectators", port, n_boards)
    with WebClients(hall, run_pages, (n_pages, n_boards, 180.0), "pages", 120, hall_pages=True) as clients:
        opened = clients.first
        sent_before = time.monotonic()
        pids = dict(_pids(hall), phones=clients.proc.pid)                       # type: ignore[union-attr]
        with_pages, lost = burst(hall, port, report, f"{n_pages} pages", pids)
        res = clients.result()
        report_against(report, f"{n_pages} pages", "pages", n_boards, with_pages, without, lost,
                       f"; {opened} pages open")
        presses = _press_times(hall)
        shown, unseen = [], 0
        for entrant, at in presses.items():
            arrivals = [f.get(entrant) for f in res["finished"]]
            if any(a is None for a in arrivals):
                unseen += 1
                continue
            shown.append(max(arrivals) - at)        # type: ignore[type-var]
        report.lost += unseen
        report.add(f"press -> shown on the hall's pages ({len(res['finished'])} of the {n_pages} read)",
                   spread(shown), f"{len(shown)} finishes; not shown on every page read {unseen}; "
                   "target p99 < 1 s")
        report.add("views sent to the hall's pages", f"{res['views']}",
                   f"{res['bytes'] / 1e6:.1f} MB received in all; errors: {len(res['errors'])}"
                   + (f" ({'; '.join(res['errors'][:2])})" if res["errors"] else "")
                   + f"; {time.monotonic() - sent_before:.0f} s from the burst to the end")
    # the same burst on a third hub without pages: how far two hubs without
    # pages differ, the spread the ratio above is to be read against
    again = burst_alone(_hall(root, "spectators-none-again", port, n_boards), port, report, "no pages, again",
                        broker_floor, _pids)
    report.add("two hubs without pages, the spread", f"p99 x{pct(again, 99) / pct(without, 99):.2f}",
               f"p50 x{pct(again, 50) / pct(without, 50):.2f} (the second without pages / the first)")


def _pids(hall: Hall) -> dict[str, int]:
    """The hub's process and its hall's pages' process."""
    import psutil
    hub = hall.hub.pid                                                           # type: ignore[union-attr]
    pages = [c.pid for c in psutil.Process(hub).children() if "tabletimer.hub.web.hall_process" in c.cmdline()]
    if not pages:
        raise RuntimeError("the hub has no hall's pages' process")
    return {"hub": hub, "hall's pages": pages[0]}


def _press_times(hall: Hall) -> dict[str, float]:
    """entrant -> the press's publish time (wall ms), from what the log stored:
    the board's own press time is the instant the generator stamped."""
    return {f"{p['board']}-{p['payload']['station']}": float(p["payload"]["at"])
            for p in hall.stored_presses().values()}


def main(argv: list[str] | None = None) -> int:
    from tabletimer.hub.broker.broker import EmbeddedBroker
    p = argparse.ArgumentParser(prog="python -m tabletimer.tools.bench.spectators")
    p.add_argument("--boards", type=int, default=300)
    p.add_argument("--pages", type=int, default=300)
    args = p.parse_args(argv)
    report = Report()
    root = Path(tempfile.mkdtemp(prefix="tt-bench-spectators-"))
    broker = EmbeddedBroker(root / "broker").start()
    try:
        print(f"{platform.machine()} {os.cpu_count()} cores, {args.boards} boards, {args.pages} pages", flush=True)
        bench_spectators(broker.port, root, args.boards, args.pages, report)
    finally:
        broker.stop()
        shutil.rmtree(root, ignore_errors=True)
    print(report.table())
    print(f"\nevents lost in this run: {report.lost}")
    return 1 if report.lost else 0


if __name__ == "__main__":
    raise SystemExit(main())
