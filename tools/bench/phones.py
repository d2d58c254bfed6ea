"""The referees' phones during a press burst (issue #16): `tabletimer bench
--only phones`, or alone:

    .venv/bin/python -m tabletimer.tools.bench.phones [--boards 300 --phones 60]

What runs: the embedded broker; the hub (`tabletimer run DIR`, its own
process) with its web server on 127.0.0.1; the boards as signed identities
from one paho client (signed_boards.SignedBoards: no firmware, so what is measured is
the broker and the hub), each board one station, 5 boards to a table; the
phones in one other process (so that their work does not hold the load
generator's GIL): one asyncio loop, HTTP/1.1 by hand (keep-alive), each
phone signed in as its own referee (a cookie), one table's page open (its
server-sent events stream, GET /r/api/stream?table=T) and a second
connection for its actions (POST /r/api/act), as the page's script does.

Figures, in one run:
- floors: the broker round trip (floor.bench_floor) and an empty request to
  the hub's web server (GET /r/api/me, keep-alive, the hub idle);
- the boards' event -> durable -> ack (publish to the hub's ack arriving at
  the load generator), n boards pressing within one second, twice: on a hub
  with no phone connected, then on a hub (a new one, set up the same way)
  with the phones open and confirming the calls as they appear; the ratio;
- a referee's action -> durable (POST to its answer) and -> shown on every
  page open on that table: from just before the POST is written to the
  arrival, on the last of the table's pages, of a view whose "row" is at
  least the action's stored row id; p50/p99/max, and as a ratio to the
  empty request's p50;
- nothing lost: every press acked and stored, every action stored exactly
  once (the log's operator confirm rows).

The phones act at once (a referee takes seconds to walk to the table, so
this is heavier than a hall: every call is confirmed while the burst is
still being stored).
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
from tabletimer.tools.bench.report import Report, now_ms, pct, spread
from tabletimer.tools.bench.web_burst import WebClients, burst, burst_alone, report_against

BOARDS_PER_TABLE = 5


def ms() -> float:
    return time.perf_counter() * 1000


# ---------------------------------------------------------------- the phones
class Phone:
    def __init__(self, i: int, port: int, token: str, table: str, acts: bool) -> None:
        self.i, self.port, self.token, self.table, self.acts = i, port, token, table, acts
        self.address = f"127.0.{1 + i // 250}.{1 + i % 250}"   # each phone its own device (the hub caps an address)
        self.views: list[tuple[float, int]] = []        # (arrival ms, view's row)
        self.first = asyncio.Event()
        self.todo: asyncio.Queue[str] = asyncio.Queue()
        self.acted: set[str] = set()
        self.missing_fields: list[str] = []
        self.actions: list[dict] = []
        self.errors: list[str] = []

    async def stream(self) -> None:
        conn = Conn(self.port, self.token, self.address)
        await conn.open()
        from urllib.parse import quote
        assert conn.w is not None
        conn.w.write(conn.head("GET", "/r/api/stream?table=" + quote(self.table), extra={"Accept": "text/event-stream"}))
        status, headers = await conn.status_and_headers()
        if status != 200:
            self.errors.append(f"stream {self.table}: {status}")
            self.first.set()
            return
        async for t, data in conn.views(headers, ms):
            self.view(t, json.loads(data))
        self.errors.append(f"stream {self.table}: ended")

    def view(self, t: float, v: dict) -> None:
        self.views.append((t, v["row"]))
        self.missing_fields = [c["field"] for c in v["format"]["missing"]]
        self.first.set()
        if self.acts:
            for s in v["stations"]:
                if s["call"] and s["call"] not in self.acted:
                    self.acted.add(s["call"])
                    self.todo.put_nowait(s["call"])

    async def act(self) -> None:
        """Confirm each call as it appears, one at a time."""
        conn = Conn(self.port, self.token, self.address)
        k = 0
        while True:
            pid = await self.todo.get()
            k += 1
            body = json.dumps({"action": "confirm", "table": self.table, "seen": "open",
                               "payload": dict({"press_id": pid}, **{f: 0 for f in self.missing_fields}),
                               "request": f"phone{self.i}-{k}-{pid}"}).encode()
            a: dict = {"table": self.table, "press_id": pid}
            for attempt in range(2):
                try:
                    status, data = await conn.request("POST", "/r/api/act", body,
                                                      before_write=lambda: a.setdefault("t0", ms()))
                    break
                except (ConnectionError, asyncio.IncompleteReadError, OSError) as e:
                    conn.close()
                    a["retried"] = a.get("retried", 0) + 1
                    if attempt:
                        status, data = 0, repr(e).encode()
            a["t1"] = ms()
            a["status"] = status
            try:
                answer = json.loads(data)
            except ValueError:
                answer = {"error": data[:200].decode("latin-1")}
            if status == 200:
                a["row"] = answer["row"]["id"]
                a["duplicate"] = answer["duplicate"]
            else:
                a["error"] = answer.get("error", "")[:200]
            self.actions.append(a)


async def _floor(port: int, token: str, rounds: int) -> list[float]:
    """GET /r/api/me round trips on one keep-alive connection."""
    conn = Conn(port, token)
    out = []
    for _ in range(rounds):
        t: list[float] = []
        status, _ = await conn.request("GET", "/r/api/me", before_write=lambda: t.append(ms()))
        if status == 200:
            out.append(ms() - t[0])
    conn.close()
    return out


async def _phones(link, port: int, phones: list[tuple[str, str, bool]], expect: dict[str, int],
                  timeout: float) -> None:
    floor = await _floor(port, phones[0][0], 200)
    ps = [Phone(i, port, token, table, acts) for i, (token, table, acts) in enumerate(phones)]
    tasks = [asyncio.ensure_future(p.stream()) for p in ps]
    tasks += [asyncio.ensure_future(p.act()) for p in ps if p.acts]
    try:
        await asyncio.wait_for(asyncio.gather(*(p.first.wait() for p in ps)), 30)
    except asyncio.TimeoutError:
        pass
    link.send(("ready", floor))
    # until every call of every table is acted on and shown on its pages
    deadline = time.monotonic() + timeout
    by_table: dict[str, list[Phone]] = {}
    for p in ps:
        by_table.setdefault(p.table, []).append(p)

    def finished() -> bool:
        for table, pages in by_table.items():
            actor = next((p for p in pages if p.acts), None)
            if actor is None:
                continue
            if len(actor.actions) < expect.get(table, 0):
                return False
            rows = [a["row"] for a in actor.actions if "row" in a]
            if rows and any(not p.views or p.views[-1][1] < max(rows) for p in pages):
                return False
        return True
    # (or, phones that only watch, until the parent says the burst is over)
    acting = any(p.acts for p in ps)
    while time.monotonic() < deadline and not (acting and finished()):
        if link.poll():
            link.recv()
            if not acting:
                break
        await asyncio.sleep(0.05)
    for t in tasks:
        t.cancel()
    link.send(("done", {"actions": [a for p in ps for a in p.actions],
                        "views": {p.i: p.views for p in ps},
                        "tables": {p.i: p.table for p in ps},
                        "errors": [e for p in ps for e in p.errors] + ([] if finished() else ["timed out"])}))


def run_phones(link, port: int, phones: list[tuple[str, str, bool]], expect: dict[str, int],
               timeout: float) -> None:
    """The phones' process: (token, table, acts) each; expect: calls per
    table.  Sends ("ready", floor ms) once every page shows its table, then
    ("done", results) once every call is acted on and shown (phones that
    only watch: once the parent sends "stop")."""
    asyncio.run(_phones(link, port, phones, expect, timeout))


# ---------------------------------------------------------------- the benchmark
def _hall(root: Path, name: str, port: int, n_boards: int, n_phones: int) -> tuple[Hall, list[str], list[str]]:
    """An event folder: n_boards boards x 1 station, 5 to a table; one
    referee per phone; the round started.  (hall, tables, tokens)"""
    from tabletimer.hub.web.referees import RefereeBook
    n_tables = max(1, -(-n_boards // BOARDS_PER_TABLE))
    hall = Hall(root / name, port, n_boards, seed=31, table_of=lambda i: f"Table {i // BOARDS_PER_TABLE + 1}")
    tables = [f"Table {k + 1}" for k in range(n_tables)]
    book = RefereeBook(hall.ev)
    tokens = [book.add(f"Referee {j + 1}") for j in range(n_phones)]
    hall.act("round_start", f"at={int(now_ms())}", "warnings=[]")
    return hall, tables, tokens


def bench_phones(port: int, root: Path, n_boards: int, n_phones: int, report: Report,
                 broker_floor: tuple[float, float] | None = None, act: bool = True) -> None:
    """act False: the phones only watch (no action: what the open streams
    alone cost the boards)."""
    n = n_boards
    if broker_floor is None:
        broker_floor = bench_floor(port, report)
    # 1. the burst on a hub with its web server and referees, no phone connected
    without = burst_alone(_hall(root, "phones-none", port, n_boards, n_phones)[0], port, report,
                          "no phones", broker_floor)

    # 2. the same on a new hub, with the phones open and confirming
    hall, tables, tokens = _hall(root, "phones", port, n_boards, n_phones)
    # phone j watches table j % tables; the first phone of a table confirms its calls
    phones = [(tokens[j], tables[j % len(tables)], act and j < len(tables)) for j in range(n_phones)]
    expect = {t: sum(1 for i in range(n) if hall.table_of(i) == t) for t in tables[:n_phones] if act}
    with WebClients(hall, run_phones, (phones, expect, 180.0), "phones", 90) as clients:
        http_floor = clients.first
        report.add("web server round trip (floor), GET /r/api/me", spread(http_floor),
                   f"{len(http_floor)} requests, keep-alive, hub idle")
        with_phones, lost = burst(hall, port, report, f"{n_phones} phones")
        if not act:
            # phones that only watch: the burst is over.  (Phones that act end by themselves once
            # every call is acted on and shown: sent to them, "stop" raced their exit, a broken
            # pipe in the flake hunt's run 7 on f13bb09.)
            clients.pipe.send("stop")
        res = clients.result()
        report_against(report, f"{n_phones} phones", "phones", n, with_phones, without, lost)
        views = sum(len(v) for v in res["views"].values())
        report.add(f"views sent to the {n_phones} pages", f"{views}", "server-sent events received, from "
                   "each page's opening to the end of the run")
        if act:
            _actions(hall, res, http_floor, n_phones, sum(expect.values()), report)
        elif res["errors"]:
            report.add("phones' errors", "; ".join(res["errors"][:3]))


def _actions(hall: Hall, res: dict, http_floor: list[float], n_phones: int, calls: int,
             report: Report) -> None:
    """The actions' figures; calls: the calls the phones were to confirm."""
    from tabletimer.hub.event.log.store import EventStore
    actions = res["actions"]
    pages: dict[str, list[list]] = {}
    for i, table in res["tables"].items():
        pages.setdefault(table, []).append(res["views"][i])
    durable, shown, unseen = [], [], 0
    for a in actions:
        if a["status"] != 200:
            continue
        durable.append(a["t1"] - a["t0"])
        last = []
        for views in pages[a["table"]]:
            t = next((t for t, row in views if row >= a["row"] and t >= a["t0"]), None)
            if t is None:
                break
            last.append(t)
        else:
            shown.append(max(last) - a["t0"])
            continue
        unseen += 1
    errors = [a for a in actions if a["status"] != 200]
    f50 = pct(http_floor, 50)
    page_counts = sorted({len(v) for v in pages.values()})
    report.add(f"referee action -> durable (POST -> answer), {n_phones} phones", spread(durable),
               f"{len(durable)} actions; x{pct(durable, 50) / f50:.1f} (p50) / x{pct(durable, 99) / f50:.1f} "
               f"(p99) the empty request's p50")
    report.add("referee action -> shown on every open page of its table", spread(shown),
               f"{len(shown)} actions, {'/'.join(map(str, page_counts))} page(s) a table; "
               f"x{pct(shown, 50) / f50:.1f} (p50) / x{pct(shown, 99) / f50:.1f} (p99) the empty request's "
               f"p50; target p99 < 150 ms")
    retried = sum(a.get("retried", 0) for a in actions)
    store = EventStore(hall.ev / "events.sqlite")
    try:
        rows = [e for e in store.events() if e["type"] == "confirm" and e["source"] == "operator"]
    finally:
        store.close()
    per_press: dict[str, int] = {}
    for e in rows:
        per_press[e["payload"]["press_id"]] = per_press.get(e["payload"]["press_id"], 0) + 1
    ok = {a["press_id"] for a in actions if a["status"] == 200}
    twice = sum(1 for c in per_press.values() if c > 1)
    missing = len(ok - set(per_press))
    not_acted = calls - len({a["press_id"] for a in actions})
    report.lost += twice + missing + not_acted + unseen
    report.add("referee actions stored", f"{len(rows)} confirm rows for {calls} calls watched",
               f"answers not 200: {len(errors)}"
               + (f" ({'; '.join(sorted({str(a['status']) + ' ' + a.get('error', '') for a in errors})[:3])})"
                  if errors else "")
               + f"; stored twice {twice}; answered but not stored {missing}; calls never acted on {not_acted}; "
                 f"never shown {unseen}; connections retried {retried}"
               + (f"; phones: {'; '.join(res['errors'][:3])}" if res["errors"] else ""))


# ---------------------------------------------------------------- alone
def main(argv: list[str] | None = None) -> int:
    from tabletimer.hub.broker.broker import EmbeddedBroker
    ap = argparse.ArgumentParser(prog="python -m tabletimer.tools.bench.phones", description=__doc__.splitlines()[0])
    ap.add_argument("--boards", type=int, default=300)
    ap.add_argument("--phones", type=int, default=60)
    ap.add_argument("--watch-only", action="store_true", help="the phones watch their tables and do nothing")
    a = ap.parse_args(argv)
    report = Report()
    root = Path(tempfile.mkdtemp(prefix="tt-bench-phones-"))
    print(f"phones bench {time.strftime('%Y-%m-%d %H:%M')}, {platform.node()}: {os.cpu_count()} cores, "
          f"{platform.machine()}, Python {platform.python_version()}; {a.boards} boards, {a.phones} phones",
          flush=True)
    broker = EmbeddedBroker(root / "broker").start()
    try:
        bench_phones(broker.port, root, a.boards, a.phones, report, act=not a.watch_only)
    finally:
        broker.stop()
        shutil.rmtree(root, ignore_errors=True)
    print()
    print(report.table())
    print(f"\nevents lost in this run: {report.lost}")
    return 1 if report.lost else 0


if __name__ == "__main__":
    raise SystemExit(main())
