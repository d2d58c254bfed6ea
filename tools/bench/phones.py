"""The referees' phones during a press burst (issue #16): `tabletimer bench
--only phones`, or alone:

    .venv/bin/python -m tabletimer.tools.bench.phones [--boards 300 --phones 60]

What runs: the embedded broker; the hub (`tabletimer run DIR`, its own
process) with its web server on 127.0.0.1; the boards as signed identities
from one paho client (hall.SignedBoards: no firmware, so what is measured is
the broker and the hub), each board one station, 5 boards to a table; the
phones in one other process (so that their work does not hold the load
generator's GIL): one asyncio loop, HTTP/1.1 by hand (keep-alive), each
phone signed in as its own referee (a cookie), one table's page open (its
server-sent events stream, GET /r/api/stream?table=T) and a second
connection for its actions (POST /r/api/act), as the page's script does.

Figures, in one run:
- floors: the broker round trip (hall.bench_floor) and an empty request to
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
import multiprocessing
import os
import platform
import random
import shutil
import socket
import tempfile
import time
from pathlib import Path

from tabletimer.tools.bench.hall import Hall, Report, SignedBoards, bench_floor, now_ms, pct, spread

BOARDS_PER_TABLE = 5
SETTLE_S = 3.0           # from every board online to the burst
IDLE_REUSE_S = 8.0        # the hub closes a connection idle for 10 s (web/server.py REQUEST_TIMEOUT_S)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ms() -> float:
    return time.perf_counter() * 1000


# ---------------------------------------------------------------- HTTP by hand
class Conn:
    """One keep-alive HTTP/1.1 connection (a phone's browser's)."""

    def __init__(self, port: int, cookie: str | None) -> None:
        self.port = port
        self.cookie = cookie
        self.r: asyncio.StreamReader | None = None
        self.w: asyncio.StreamWriter | None = None
        self.used = 0.0

    async def open(self) -> None:
        self.close()
        self.r, self.w = await asyncio.open_connection("127.0.0.1", self.port)
        sock = self.w.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.used = time.monotonic()

    def close(self) -> None:
        if self.w is not None:
            self.w.close()
        self.r = self.w = None

    def head(self, method: str, path: str, body: bytes = b"", extra: dict | None = None) -> bytes:
        h = {"Host": f"127.0.0.1:{self.port}", "Connection": "keep-alive", "Accept": "*/*"}
        if self.cookie:
            h["Cookie"] = f"tt_referee={self.cookie}"
        if method == "POST":
            h.update({"Content-Type": "application/json", "X-TableTimer": "1", "Content-Length": str(len(body))})
        h.update(extra or {})
        return (f"{method} {path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in h.items())
                + "\r\n").encode() + body

    async def status_and_headers(self) -> tuple[int, dict[str, str]]:
        assert self.r is not None
        line = await self.r.readline()
        if not line:
            raise ConnectionError("closed")
        status = int(line.split()[1])
        headers: dict[str, str] = {}
        while True:
            h = await self.r.readline()
            if h in (b"\r\n", b"\n", b""):
                break
            k, _, v = h.decode("latin-1").partition(":")
            headers[k.strip().lower()] = v.strip()
        return status, headers

    async def request(self, method: str, path: str, body: bytes = b"",
                      before_write=None) -> tuple[int, bytes]:
        """(status, body); before_write() is called just before the request
        is written (a fresh connection first, if this one has been idle
        long enough for the hub to close it)."""
        if self.w is None or time.monotonic() - self.used > IDLE_REUSE_S:
            await self.open()
        assert self.r is not None and self.w is not None
        if before_write:
            before_write()
        self.w.write(self.head(method, path, body))
        status, headers = await self.status_and_headers()
        if "content-length" in headers:
            data = await self.r.readexactly(int(headers["content-length"]))
        else:
            data = b""
            async for chunk in self.chunks(headers):
                data += chunk
        self.used = time.monotonic()
        if headers.get("connection", "").lower() == "close":
            self.close()
        return status, data

    async def views(self, headers: dict[str, str], clock, on_chunk=None):
        """A server-sent-events body's views as they arrive: (clock() at the
        arrival of their chunk, the data line's bytes); the pages' pings
        (named events) are skipped.  on_chunk(n): every chunk's size."""
        buf = b""
        async for chunk in self.chunks(headers):
            t = clock()
            if on_chunk is not None:
                on_chunk(len(chunk))
            buf += chunk
            while b"\n\n" in buf:
                event, buf = buf.split(b"\n\n", 1)
                lines = event.split(b"\n")
                if any(line.startswith(b"event:") for line in lines):
                    continue                 # a ping (the hub is there), not a view
                for line in lines:
                    if line.startswith(b"data:"):
                        yield t, line[5:]

    async def chunks(self, headers: dict[str, str]):
        """The body's pieces as they arrive (chunked, or until the end)."""
        assert self.r is not None
        if "chunked" not in headers.get("transfer-encoding", ""):
            while True:
                data = await self.r.read(65536)
                if not data:
                    return
                yield data
        while True:
            line = await self.r.readline()
            if not line:
                return
            size = int(line.split(b";")[0].strip() or b"0", 16)
            if size == 0:
                await self.r.readline()
                return
            data = await self.r.readexactly(size + 2)
            yield data[:-2]


# ---------------------------------------------------------------- the phones
class Phone:
    def __init__(self, i: int, port: int, token: str, table: str, acts: bool) -> None:
        self.i, self.port, self.token, self.table, self.acts = i, port, token, table, acts
        self.views: list[tuple[float, int]] = []        # (arrival ms, view's row)
        self.first = asyncio.Event()
        self.todo: asyncio.Queue[str] = asyncio.Queue()
        self.acted: set[str] = set()
        self.missing_fields: list[str] = []
        self.actions: list[dict] = []
        self.errors: list[str] = []

    async def stream(self) -> None:
        conn = Conn(self.port, self.token)
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
        conn = Conn(self.port, self.token)
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


def wait_web(port: int, timeout: float = 30) -> None:
    import http.client
    deadline = time.monotonic() + timeout
    while True:
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            c.request("GET", "/r/api/me")
            c.getresponse().read()
            c.close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def cpu_seconds(pid: int) -> float:
    """CPU seconds (user + system) a process has used so far."""
    import psutil
    t = psutil.Process(pid).cpu_times()
    return t.user + t.system


def burst(hall: Hall, port: int, report: Report, label: str,
          pids: dict[str, int] | None = None) -> tuple[list[float], int]:
    """The press burst: every board within one second; (event -> ack ms,
    lost).  pids: name -> process whose CPU seconds from the burst's start
    to its last ack are reported."""
    gen = SignedBoards(hall, port, client_id=f"bench-load-{label.replace(' ', '-')}")
    try:
        gen.online()
        # boards are online long before the finishes: the views the pages got
        # for the boards' "online" rows are sent before the burst starts
        time.sleep(SETTLE_S)
        cpu0 = {k: cpu_seconds(pid) for k, pid in (pids or {}).items()}
        gen.presses(1, window_s=1.0, rng=random.Random(17))
        gen.wait_acked(120)
        if pids:
            report.add(f"CPU during the burst, {label}", ", ".join(
                f"{k} {cpu_seconds(pid) - cpu0[k]:.2f} s" for k, pid in pids.items()),
                "user + system, from the first press to the last ack")
        lat = gen.latencies()
        first = min(gen.sent.values(), default=0.0)
        if gen.acks:
            report.add(f"acks' arrival, {label}", f"{(min(gen.acks.values()) - first) / 1000:.2f} .. "
                       f"{(max(gen.acks.values()) - first) / 1000:.2f} s", "from the burst's first press")
    finally:
        gen.close()
    stored = len(hall.stored_presses())
    lost = max(len(hall.ids) - len(lat), len(hall.ids) - stored)
    return lat, lost


class WebClients:
    """The hall's hub started with its web server, and target(pipe, port,
    *args) in a spawned process of its own (the phones or the pages, off the
    bench's interpreter); port: the web server's, or with hall_pages the
    hall's pages' process's; `first`: what it sent once ready.  Use as a
    context manager: the process is killed and the hall closed at the end."""

    def __init__(self, hall: Hall, target, args: tuple, what: str, start_s: float,
                 hall_pages: bool = False) -> None:
        self.hall, self.what, self.proc = hall, what, None
        ctx = multiprocessing.get_context("spawn")
        self.pipe, there = ctx.Pipe()
        try:
            hall.start_hub(web_port=(web := free_port()))
            wait_web(web)
            port = int(hall.hub.hall_url().rsplit(":", 1)[1]) if hall_pages else web   # type: ignore[union-attr]
            self.proc = ctx.Process(target=target, args=(there, port, *args), daemon=True)
            self.proc.start()
            if not self.pipe.poll(start_s):
                raise RuntimeError(f"the {what} did not start")
            self.first = self.pipe.recv()[1]
        except BaseException:
            self.close()
            raise

    def result(self, timeout: float = 240):
        """What the process sent at its end (it is then joined)."""
        if not self.pipe.poll(timeout):
            raise RuntimeError(f"the {self.what} did not finish")
        _, res = self.pipe.recv()
        self.proc.join(10)                              # type: ignore[union-attr]
        return res

    def close(self) -> None:
        if self.proc is not None and self.proc.is_alive():
            self.proc.kill()
        self.hall.close()

    def __enter__(self) -> "WebClients":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def burst_alone(hall: Hall, port: int, report: Report, label: str,
                broker_floor: tuple[float, float], pids_of=None) -> list[float]:
    """The burst on hall's hub with its web server and nobody on it (the
    baseline); the event -> ack times, reported, the lost counted.
    pids_of(hall): the processes whose CPU during the burst is reported."""
    try:
        hall.start_hub(web_port=(web := free_port()))
        wait_web(web)
        without, lost = burst(hall, port, report, label, pids_of(hall) if pids_of else None)
    finally:
        hall.close()
    report.lost += lost
    report.add(f"event -> durable -> ack, {hall.n} boards within 1 s, {label}", spread(without),
               f"lost {lost}; x{pct(without, 99) / broker_floor[1]:.1f} the broker round trip (p99)")
    return without


def report_against(report: Report, label: str, what: str, n: int, with_: list[float], without: list[float],
                   lost: int, note: str = "") -> None:
    """The burst's event -> ack with the clients open, against the baseline's."""
    report.lost += lost
    r = pct(with_, 99) / pct(without, 99) if without and with_ else float("nan")
    r50 = pct(with_, 50) / pct(without, 50) if without and with_ else float("nan")
    report.add(f"event -> durable -> ack, {n} boards within 1 s, {label}", spread(with_),
               f"lost {lost}; p99 x{r:.2f} without {what} (p50 x{r50:.2f})" + note)


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
        clients.pipe.send("stop")           # phones that only watch: the burst is over
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
    from tabletimer.hub.event.store import EventStore
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
    from tabletimer.hub.boards.broker import EmbeddedBroker
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
