"""A network impairment layer for tests and benchmarks: a TCP proxy that sits
between simulated boards and the MQTT broker on 127.0.0.1 and makes each
board's link slow, jittery, stalling or dead, on purpose and reproducibly.

    from tabletimer.tools.testing.netimpair import NetImpair

    with NetImpair(upstream=("127.0.0.1", broker_port), seed=1) as net:
        port = net.port_for("B01")              # give the board 127.0.0.1:port as its broker
        net.set("B01", up_ms=40, down_ms=120, jitter_ms=15)   # asymmetric, jittery
        net.stall("B01", 800, "up")             # hold everything the board sends for 0.8 s
        net.outage("B01", 5.0)                  # WiFi gone for 5 s: connection cut, reconnects refused
        net.wait_for("B01", lambda s: s.connections >= 2, timeout=15)   # the board came back
        print(net.stats("B01"))

Model.  Every board gets its own listening port on 127.0.0.1 (a simulated
board has its broker host/port in its configuration, so the port *is* the
board's identity); each connection accepted there is forwarded to the one
upstream broker.  Both directions of a connection are impaired separately:
"up" is board -> broker, "down" is broker -> board.  Each chunk read from a
socket is stamped with its arrival time and scheduled for delivery at

    due = arrival + max(0, delay + jitter) [+ stall_ms if the chunk "is lost"]
    delivered = max(due, delivery time of the previous chunk)

so bytes are never reordered (it is TCP: a late chunk holds back the ones
behind it, as retransmission does) and the delay does not limit throughput
(chunks are pipelined: many can be in flight).  The pure part -- `Leg`,
`jitter_offset`, `Schedule`, `delivery_times` -- has no sockets and is tested
directly.

Settings (`Impairment`, changeable live with `NetImpair.set`; each new chunk
uses the settings current at its arrival):
- ``up_ms`` / ``down_ms``: one-way delay per direction (asymmetry = different values);
- ``jitter_ms`` (or per direction ``up_jitter_ms`` / ``down_jitter_ms``) with
  ``jitter="uniform"`` (uniform in +-jitter_ms) or ``"normal"`` (Gaussian with
  sigma = jitter_ms / 3, truncated to +-jitter_ms): jitter_ms is a hard bound
  in both cases;
- ``stall_p`` / ``stall_ms``: with probability stall_p per chunk, the chunk
  (and so everything behind it in that direction) is delivered stall_ms late,
  like a lost TCP segment waiting for its retransmission.  `NetImpair.stall`
  does the same on demand: all data of a direction is held for N ms.

Outages.  `down(board)` cuts every connection of the board at once (both
sockets closed abruptly with a TCP RST, nothing pending is delivered) and,
until `up(board)`, accepts each new connection only to reset it at once; the
board must reconnect afterwards.  `outage(board, seconds)` is down() now and
up() after that many seconds.  (A silent outage -- packets dropped without a
reset, found only by keepalive timeouts -- can be approximated with a long
`stall`.)

Threading.  The proxy runs its own asyncio loop in a daemon thread, so plain
synchronous test code (paho clients, subprocess boards) can use it; every
public method is thread-safe and returns once the change has taken effect
(after `down()` returns, the cut sockets are closed).  `wait_for` waits on a
condition over a board's `LinkStats` with a deadline instead of sleeping.

Reproducibility.  Each direction of each connection draws from its own
`random.Random`, seeded from (seed, board, connection number, direction), so a
run with the same seed draws the same jitter and stall sequence per chunk.
How the operating system splits a stream into chunks is not under our
control, so byte-level timing is reproducible only as far as the chunking is.
Timer resolution is the event loop's (about 1 ms on Linux and macOS, coarser
on Windows).
"""

from __future__ import annotations

import asyncio
import dataclasses
import math
import random
import socket
import struct
import sys
import threading
import time
from collections.abc import Callable, Coroutine, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

Direction = Literal["up", "down"]
Distribution = Literal["uniform", "normal"]
DIRECTIONS: tuple[Direction, Direction] = ("up", "down")
CHUNK = 65536
_LINGER_0 = struct.pack("HH" if sys.platform == "win32" else "ii", 1, 0)   # close = RST

T = TypeVar("T")


# --- pure logic -------------------------------------------------------------

@dataclass(frozen=True)
class Leg:
    """The impairment of one direction."""

    delay_ms: float = 0.0
    jitter_ms: float = 0.0
    jitter: Distribution = "uniform"
    stall_p: float = 0.0
    stall_ms: float = 0.0


@dataclass(frozen=True)
class Impairment:
    """The impairment of one board's link (both directions).  The per-direction
    jitter values, when given, override ``jitter_ms``."""

    up_ms: float = 0.0
    down_ms: float = 0.0
    jitter_ms: float = 0.0
    jitter: Distribution = "uniform"
    up_jitter_ms: float | None = None
    down_jitter_ms: float | None = None
    stall_p: float = 0.0
    stall_ms: float = 0.0

    def __post_init__(self) -> None:
        for name in ("up_ms", "down_ms", "jitter_ms", "up_jitter_ms", "down_jitter_ms", "stall_ms"):
            v = getattr(self, name)
            if v is not None and not (v >= 0 and math.isfinite(v)):
                raise ValueError(f"{name} must be a finite number >= 0, not {v!r}")
        if not 0.0 <= self.stall_p <= 1.0:
            raise ValueError(f"stall_p must be in [0, 1], not {self.stall_p!r}")
        if self.jitter not in ("uniform", "normal"):
            raise ValueError(f"jitter must be 'uniform' or 'normal', not {self.jitter!r}")

    def leg(self, direction: Direction) -> Leg:
        if direction == "up":
            delay, jitter = self.up_ms, self.up_jitter_ms
        else:
            delay, jitter = self.down_ms, self.down_jitter_ms
        return Leg(delay, self.jitter_ms if jitter is None else jitter, self.jitter,
                   self.stall_p, self.stall_ms)


def jitter_offset(rng: random.Random, jitter_ms: float, dist: Distribution) -> float:
    """A jitter draw in [-jitter_ms, +jitter_ms]: uniform, or a normal with
    sigma = jitter_ms / 3 truncated (by redrawing) to the bound."""
    if jitter_ms <= 0:
        return 0.0
    if dist == "uniform":
        return rng.uniform(-jitter_ms, jitter_ms)
    while True:
        x = rng.gauss(0.0, jitter_ms / 3)
        if -jitter_ms <= x <= jitter_ms:
            return x


class Schedule:
    """Delivery times of one direction of one connection, chunk after chunk,
    in order: a chunk is delivered at max(its own due time, the previous
    chunk's delivery)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.last_ms = -math.inf
        self.stalls = 0                 # chunks "lost" (delivered stall_ms late)

    def due(self, arrival_ms: float, leg: Leg) -> float:
        t = arrival_ms + max(0.0, leg.delay_ms + jitter_offset(self.rng, leg.jitter_ms, leg.jitter))
        if leg.stall_p > 0 and self.rng.random() < leg.stall_p:
            t += leg.stall_ms
            self.stalls += 1
        self.last_ms = max(t, self.last_ms)
        return self.last_ms


def delivery_times(arrivals_ms: Iterable[float], leg: Leg, rng: random.Random) -> list[float]:
    """The delivery time of each chunk, given their arrival times in order."""
    s = Schedule(rng)
    return [s.due(a, leg) for a in arrivals_ms]


# --- the proxy --------------------------------------------------------------

@dataclass(frozen=True)
class LinkStats:
    """A snapshot of one board's link.  Bytes count what was delivered."""

    port: int
    down: bool = False
    connections: int = 0            # accepted and forwarded (the first and every reconnect)
    active: int = 0                 # open now
    cuts: int = 0                   # cut by down()/outage()
    refused: int = 0                # reset at once while down
    upstream_failures: int = 0      # the broker did not accept the forwarded connection
    stalls: int = 0                 # random stalls (chunks delivered stall_ms late)
    bytes_up: int = 0
    bytes_down: int = 0


@dataclass(eq=False)
class _Conn:
    number: int
    client: asyncio.StreamWriter
    task: asyncio.Task[None] | None
    upstream: asyncio.StreamWriter | None = None
    cut: bool = False


@dataclass(eq=False)
class ImpairedLink:
    """One board's listening port, settings, live connections and counters.
    Lives in the proxy's loop thread; read it through `NetImpair`."""

    board_id: str
    impairment: Impairment
    server: asyncio.Server | None = None
    stats: LinkStats = field(default_factory=lambda: LinkStats(port=0))
    conns: set[_Conn] = field(default_factory=set)
    hold_until_ms: dict[Direction, float] = field(default_factory=lambda: {"up": 0.0, "down": 0.0})
    up_timer: asyncio.TimerHandle | None = None


def _abort(writer: asyncio.StreamWriter | None) -> None:
    """Close abruptly: RST, drop whatever is buffered."""
    if writer is None or writer.transport.is_closing():
        return
    sock = writer.get_extra_info("socket")
    if sock is not None:
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, _LINGER_0)
        except OSError:
            pass
    writer.transport.abort()


class NetImpair:
    """The proxy: one listening port per board on `host`, each forwarding to
    `upstream` with that board's `Impairment` (`default` for new boards)."""

    def __init__(self, upstream: tuple[str, int], *, boards: Iterable[str] = (),
                 default: Impairment = Impairment(), seed: int = 0, host: str = "127.0.0.1") -> None:
        self.upstream = upstream
        self.host = host
        self.seed = seed
        self.default = default
        self._initial = list(boards)
        self._links: dict[str, ImpairedLink] = {}
        self._cond = threading.Condition()          # guards LinkStats snapshots
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    # lifecycle

    def start(self) -> NetImpair:
        if self._loop is not None:
            raise RuntimeError("already started")
        loop = self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=loop.run_forever, name="netimpair", daemon=True)
        self._thread.start()
        for b in self._initial:
            self.add(b)
        return self

    def stop(self) -> None:
        """Cut every connection, close every port, end the loop thread."""
        loop = self._loop
        if loop is None:
            return
        # cut everything while the loop is still ours: pumps that are still
        # running use it until their sockets are closed
        asyncio.run_coroutine_threadsafe(self._close_all(), loop).result(10)
        self._loop = None
        loop.call_soon_threadsafe(loop.stop)
        assert self._thread is not None
        self._thread.join(10)
        loop.close()

    def __enter__(self) -> NetImpair:
        if self._loop is None:
            self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # boards

    def add(self, board_id: str, impairment: Impairment | None = None) -> int:
        """Open a listening port for the board; its port number."""
        return self._run(self._add(board_id, impairment or self.default))

    def port_for(self, board_id: str) -> int:
        """The board's port (opened now with the default settings if the board is new)."""
        link = self._links.get(board_id)
        return link.stats.port if link is not None else self.add(board_id)

    def boards(self) -> list[str]:
        return list(self._links)

    def set(self, board_id: str, **settings: Any) -> Impairment:
        """Change some `Impairment` fields live (e.g. ``up_ms=50``); the new settings."""
        link = self._link(board_id)
        new = dataclasses.replace(link.impairment, **settings)
        link.impairment = new                       # one reference swap: atomic
        return new

    def impairment(self, board_id: str) -> Impairment:
        return self._link(board_id).impairment

    def stall(self, board_id: str, ms: float, direction: Direction | Literal["both"] = "both") -> None:
        """Hold all data of that direction (pending and new) for ms from now."""
        dirs = DIRECTIONS if direction == "both" else (direction,)
        if any(d not in DIRECTIONS for d in dirs):
            raise ValueError(f"direction must be 'up', 'down' or 'both', not {direction!r}")
        self._call(self._stall, self._link(board_id), ms, dirs)

    def down(self, board_id: str) -> None:
        """Cut the board's connections and reset new ones until `up`."""
        self._run(self._down(self._link(board_id), None))

    def up(self, board_id: str) -> None:
        self._call(self._up, self._link(board_id))

    def outage(self, board_id: str, seconds: float) -> None:
        """`down` now, `up` after seconds (returns at once)."""
        self._run(self._down(self._link(board_id), seconds))

    def stats(self, board_id: str) -> LinkStats:
        link = self._link(board_id)
        with self._cond:
            return link.stats

    def wait_for(self, board_id: str, condition: Callable[[LinkStats], bool],
                 timeout: float = 5.0) -> LinkStats:
        """Block until condition(stats) holds; the stats then.  TimeoutError
        (with the last stats) after timeout."""
        link = self._link(board_id)
        deadline = time.monotonic() + timeout
        with self._cond:
            while not condition(link.stats):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"{board_id}: condition not met in {timeout} s: {link.stats}")
                self._cond.wait(left)
            return link.stats

    # internals (the loop thread)

    def _link(self, board_id: str) -> ImpairedLink:
        try:
            return self._links[board_id]
        except KeyError:
            raise KeyError(f"unknown board {board_id!r} (add it or ask port_for first)") from None

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        loop = self._loop
        if loop is None:
            coro.close()
            raise RuntimeError("NetImpair is not running (call start())")
        return asyncio.run_coroutine_threadsafe(coro, loop).result(10)

    def _call(self, fn: Callable[..., T], *args: Any) -> T:
        async def call() -> T:
            return fn(*args)
        return self._run(call())

    def _update(self, link: ImpairedLink, **changes: Any) -> None:
        """Apply stats changes (field=new value, or field=callable(old))."""
        with self._cond:
            s = link.stats
            link.stats = dataclasses.replace(s, **{
                k: (v(getattr(s, k)) if callable(v) else v) for k, v in changes.items()})
            self._cond.notify_all()

    def _count(self, link: ImpairedLink, name: str, n: int = 1) -> None:
        self._update(link, **{name: lambda v: v + n})

    async def _add(self, board_id: str, impairment: Impairment) -> int:
        link = self._links.get(board_id)
        if link is not None:
            return link.stats.port
        link = ImpairedLink(board_id, impairment)
        link.server = await asyncio.start_server(
            lambda r, w: self._serve(link, r, w), self.host, 0)
        link.stats = LinkStats(port=link.server.sockets[0].getsockname()[1])
        self._links[board_id] = link
        return link.stats.port

    def _stall(self, link: ImpairedLink, ms: float, dirs: Iterable[Direction]) -> None:
        until = self._now_ms() + ms
        for d in dirs:
            link.hold_until_ms[d] = max(link.hold_until_ms[d], until)

    async def _down(self, link: ImpairedLink, seconds: float | None) -> None:
        assert self._loop is not None
        self._up_timer(link, None)
        if seconds is not None:
            self._up_timer(link, self._loop.call_later(seconds, self._up, link))
        self._update(link, down=True)
        await self._cut(link, count=True)

    def _up(self, link: ImpairedLink) -> None:
        self._up_timer(link, None)
        self._update(link, down=False)

    @staticmethod
    def _up_timer(link: ImpairedLink, timer: asyncio.TimerHandle | None) -> None:
        if link.up_timer is not None:
            link.up_timer.cancel()
        link.up_timer = timer

    async def _cut(self, link: ImpairedLink, count: bool) -> None:
        """Reset every connection of the link and wait until they are gone."""
        conns = list(link.conns)
        for c in conns:
            c.cut = True
            _abort(c.client)
            _abort(c.upstream)
            if c.task is not None:
                c.task.cancel()
        if count and conns:
            self._count(link, "cuts", len(conns))
        tasks = [c.task for c in conns if c.task is not None]
        if tasks:
            await asyncio.wait(tasks, timeout=5)

    async def _close_all(self) -> None:
        for link in self._links.values():
            self._up_timer(link, None)
            assert link.server is not None
            link.server.close()
            await self._cut(link, count=False)
            await link.server.wait_closed()

    @staticmethod
    def _now_ms() -> float:
        # called in the proxy's loop only: its own clock, even while stop()
        # is letting go of it
        return asyncio.get_running_loop().time() * 1000.0

    async def _serve(self, link: ImpairedLink, reader: asyncio.StreamReader,
                     writer: asyncio.StreamWriter) -> None:
        if link.stats.down:
            _abort(writer)
            self._count(link, "refused")
            return
        number = link.stats.connections
        conn = _Conn(number, writer, asyncio.current_task())
        link.conns.add(conn)
        self._update(link, connections=lambda v: v + 1, active=lambda v: v + 1)
        clean = False
        try:
            try:
                up_reader, conn.upstream = await asyncio.open_connection(*self.upstream)
            except OSError:
                self._count(link, "upstream_failures")
                return
            if conn.cut:
                return
            queues: dict[Direction, asyncio.Queue[tuple[float, bytes]]] = {
                d: asyncio.Queue() for d in DIRECTIONS}
            tasks = [asyncio.create_task(t) for t in (
                self._pump_in(link, conn, "up", reader, queues["up"]),
                self._pump_out(link, "up", queues["up"], conn.upstream),
                self._pump_in(link, conn, "down", up_reader, queues["down"]),
                self._pump_out(link, "down", queues["down"], writer))]
            try:
                await asyncio.gather(*tasks)
                clean = True                        # both directions ended with EOF
            finally:
                for t in tasks:
                    t.cancel()
        except OSError:
            pass                                    # a reset on one side resets the other
        except asyncio.CancelledError:
            if not conn.cut:                        # cut: a normal end (and asyncio 3.11
                raise                               # logs a cancelled connection handler)
        finally:
            link.conns.discard(conn)
            self._update(link, active=lambda v: v - 1)
            if clean:
                writer.close()
                if conn.upstream is not None:
                    conn.upstream.close()
            else:
                _abort(writer)
                _abort(conn.upstream)

    async def _pump_in(self, link: ImpairedLink, conn: _Conn, direction: Direction,
                       src: asyncio.StreamReader, q: asyncio.Queue[tuple[float, bytes]]) -> None:
        """Read chunks, stamp them with their delivery time, queue them (b"" = EOF)."""
        rng = random.Random(f"{self.seed}/{link.board_id}/{conn.number}/{direction}")
        sched = Schedule(rng)
        while True:
            data = await src.read(CHUNK)
            stalls = sched.stalls
            q.put_nowait((sched.due(self._now_ms(), link.impairment.leg(direction)), data))
            if sched.stalls != stalls:
                self._count(link, "stalls")
            if not data:
                return

    async def _pump_out(self, link: ImpairedLink, direction: Direction,
                        q: asyncio.Queue[tuple[float, bytes]], dst: asyncio.StreamWriter) -> None:
        """Deliver queued chunks in order, each not before its time (nor
        before an on-demand stall ends)."""
        counter = "bytes_up" if direction == "up" else "bytes_down"
        while True:
            due, data = await q.get()
            while (wait := max(due, link.hold_until_ms[direction]) - self._now_ms()) > 0:
                await asyncio.sleep(wait / 1000.0)
            if not data:
                if dst.can_write_eof():
                    dst.write_eof()
                return
            self._count(link, counter, len(data))     # before the peer can see it
            dst.write(data)
            await dst.drain()
