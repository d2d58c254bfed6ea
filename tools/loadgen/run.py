"""The load generator's I/O: every board its own MQTT connection (run.py's
Conn, an asyncio.Protocol speaking mqtt.py) in one event loop, and the
Generator that drives them: connect (a few at a time, as a hall's boards
come up), birth, clock syncs (a burst at connect, then periodically),
presses (a burst, a fixed offered rate, or as fast as acked), retransmission
on the boards' schedule, reconnects after a dropped connection, and the
figures of each phase (board.py holds the boards' own logic)."""

from __future__ import annotations

import asyncio
import heapq
import random
import resource
import time
from dataclasses import dataclass, field

from tabletimer.hub.runtime.signals import room_for_connections

from . import mqtt
from .board import Board, Pending


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def cpu_split() -> tuple[float, float]:
    """(user, system) CPU seconds of this process so far."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime, r.ru_stime


class Conn(asyncio.Protocol):
    """One board's MQTT connection."""

    def __init__(self, gen: "Generator", board: Board) -> None:
        self.gen, self.b = gen, board
        self.transport: asyncio.Transport | None = None
        self.dec = mqtt.Decoder()
        self.pid = 0
        self.up = False                     # CONNACK accepted, subscribed, born
        self.connack: asyncio.Future | None = None
        self.ping: asyncio.TimerHandle | None = None
        self.out: list[bytes] = []          # written at the end of this turn of the loop

    def write(self, data: bytes) -> None:
        """Packets of one turn of the event loop go in one send (a PUBACK
        and the next event, a board's syncs): on loopback a send costs the
        sender the receiver's side of TCP too, most of an event's CPU."""
        if not self.out:
            self.gen.loop.call_soon(self.flush)
        self.out.append(data)

    def flush(self) -> None:
        out, self.out = self.out, []
        t = self.transport
        if t is not None and not t.is_closing():
            t.write(b"".join(out) if len(out) > 1 else out[0])

    # -- asyncio.Protocol
    def connection_made(self, transport) -> None:
        self.transport = transport
        topic, will = self.b.will()
        g = self.gen
        user = self.b.id if g.login else None
        transport.write(mqtt.connect(self.b.id, g.keepalive, (topic, will, 1, True), user,
                                     g.passwords.get(self.b.id) if g.login else None))

    def data_received(self, data: bytes) -> None:
        try:
            packets = self.dec.feed(data)
        except mqtt.MqttError:
            self.transport.abort()          # type: ignore[union-attr]
            return
        for kind, flags, body in packets:
            if kind == mqtt.PUBLISH:
                topic, payload, qos, pid, _ = mqtt.parse_publish(flags, body)
                if qos:
                    self.write(mqtt.puback(pid))
                self.gen.on_message(self, topic, payload)
            elif kind == mqtt.CONNACK:
                rc = mqtt.connack_code(body)
                if rc == 0:
                    self.on_connack()
                if self.connack and not self.connack.done():
                    self.connack.set_result(rc)
            # PUBACK (the broker has the event: not what a board waits for),
            # SUBACK, PINGRESP: nothing to do

    def connection_lost(self, exc) -> None:
        self.up = False
        if self.ping:
            self.ping.cancel()
        if self.connack and not self.connack.done():
            self.connack.set_result(-1)
        self.gen.lost(self)

    # -- the board's side
    def next_pid(self) -> int:
        self.pid = self.pid % 65535 + 1
        return self.pid

    def publish(self, topic: str, payload: bytes, qos: int = 0, retain: bool = False) -> None:
        self.write(mqtt.publish(topic, payload, qos, self.next_pid() if qos else 0, retain))

    def on_connack(self) -> None:
        b = self.b
        self.write(mqtt.subscribe(self.next_pid(), [(b.topic_cmd, 1), (b.topic_sched, 1)]))
        self.publish(*b.birth(), qos=1, retain=True)
        self.up = True
        self.ping = self.gen.loop.call_later(self.gen.keepalive * 0.75, self.keep)
        self.gen.on_up(self)

    def keep(self) -> None:
        if self.up and self.transport:
            self.write(mqtt.PINGREQ_PACKET)
            self.ping = self.gen.loop.call_later(self.gen.keepalive * 0.75, self.keep)


@dataclass
class Phase:
    """The events made in one phase of a run and what became of them."""
    name: str
    started: float = 0.0                     # perf_counter s
    made: int = 0
    acked: int = 0
    first_send: float | None = None
    last_ack: float | None = None
    lat_ms: list[float] = field(default_factory=list)       # made -> acked (journal wait included)
    cpu0: float = 0.0
    cpu1: float = 0.0
    ended: float = 0.0

    def summary(self) -> dict:
        span = (self.last_ack - self.first_send) if self.last_ack and self.first_send else 0.0
        return {"name": self.name, "made": self.made, "acked": self.acked,
                "seconds": round(self.ended - self.started, 3), "ack_span_s": round(span, 3),
                "events_per_s": round(self.acked / span, 1) if span > 0 else None,
                "cpu_s": round(self.cpu1 - self.cpu0, 3), "lat_ms": [round(x, 2) for x in self.lat_ms]}


class Generator:
    """n boards in this event loop.  boards: [(board id, key)].  host: the
    broker's, or a list (the hub laptop's, then its standby's): a board
    without a broker for failover_s tries the next, as the firmware does."""

    def __init__(self, host: str | list[str], port: int, boards: list[tuple[str, str]], boot: int = 1,
                 login: bool = False, keepalive: int = 60, sync_burst: int = 3, sync_every_s: float = 30.0,
                 connect_at_once: int = 64, reconnect_s: float = 1.0, seed: int = 1,
                 failover_s: float = 0.0) -> None:
        self.hosts = [host] if isinstance(host, str) else list(host)
        self.host, self.port = self.hosts[0], port
        self.failover_s = failover_s
        self.host_of: dict[str, int] = {}          # a board's broker now: its index in hosts
        self.down_since: dict[str, float] = {}     # a board without a broker since (monotonic s)
        self.boards = [Board(b, k, boot) for b, k in boards]
        self.login = login
        self.passwords: dict[str, str] = {}
        if login:
            from tabletimer.hub.protocol.keys import mqtt_password
            self.passwords = {b: mqtt_password(k) for b, k in boards}
        self.keepalive = keepalive
        self.sync_burst, self.sync_every_s = sync_burst, sync_every_s
        self.connect_at_once = connect_at_once
        self.reconnect_s = reconnect_s
        self.rng = random.Random(seed)
        self.conns: dict[str, Conn] = {}
        self.closing = False
        self.retries: list[tuple[float, int, str, int]] = []     # heap: (due, tiebreak, board, seq)
        self._tie = 0
        self.phase = Phase("idle")
        self.phases: list[Phase] = []
        self.counts = {"retransmissions": 0, "reconnects": 0, "drops": 0, "dup_acks": 0, "bad": 0,
                       "connect_failures": 0, "connacks_refused": 0, "hub_online": 0, "failovers": 0}
        self.bad_why: dict[str, int] = {}
        self.ever_up: set[str] = set()
        self.loop: asyncio.AbstractEventLoop = None            # type: ignore[assignment]
        self._sem: asyncio.Semaphore | None = None
        self._ticker: asyncio.Task | None = None
        self._tasks: set[asyncio.Task] = set()
        self._phase_want: int = 0
        self._phase_done: asyncio.Event | None = None
        self._closed_loop: tuple[float, int] | None = None     # (until, station) while "as fast as acked"

    # -- connections
    async def start(self, timeout: float = 120.0) -> float:
        """Connect every board; returns the seconds it took."""
        self.loop = asyncio.get_running_loop()
        room_for_connections(len(self.boards) + 256)
        self._sem = asyncio.Semaphore(self.connect_at_once)
        self._ticker = self.loop.create_task(self._tick())
        t0 = time.perf_counter()
        await asyncio.gather(*(self._connect(b) for b in self.boards))
        await self.until(lambda: len(self.up()) == len(self.boards), timeout)
        return time.perf_counter() - t0

    def up(self) -> list[Conn]:
        return [c for c in self.conns.values() if c.up]

    async def _connect(self, b: Board) -> None:
        assert self._sem is not None
        while not self.closing:
            async with self._sem:
                conn = Conn(self, b)
                conn.connack = self.loop.create_future()
                try:
                    await self.loop.create_connection(lambda: conn, self.hosts[self.host_of.get(b.id, 0)],
                                                      self.port)
                    self.conns[b.id] = conn
                    rc = await asyncio.wait_for(conn.connack, 10.0)
                except (OSError, asyncio.TimeoutError):
                    rc = -1
                    if conn.transport:
                        conn.transport.abort()
                if rc == 0:
                    self.down_since.pop(b.id, None)
                    return
                self.counts["connect_failures" if rc == -1 else "connacks_refused"] += 1
                self._fail_over(b)
            await asyncio.sleep(self.reconnect_s * (1 + self.rng.random()))

    def on_up(self, conn: Conn) -> None:
        b = conn.b
        if b.id in self.ever_up:
            self.counts["reconnects"] += 1
        self.ever_up.add(b.id)
        for k in range(self.sync_burst):                  # the connect's sync burst, 100 ms apart
            self.loop.call_later(0.1 * k, self._sync, conn)
        # what waits goes now (the board's journal after a reconnect)
        now = time.perf_counter()
        for p in list(b.pending.values()):
            self._send(conn, p, now)
        self.loop.call_later(self.sync_every_s * (0.5 + self.rng.random()), self._periodic_sync, conn)

    def _fail_over(self, b: Board) -> None:
        """After failover_s without a broker: the next address."""
        now = time.monotonic()
        since = self.down_since.setdefault(b.id, now)
        if len(self.hosts) > 1 and self.failover_s and now - since >= self.failover_s:
            self.host_of[b.id] = (self.host_of.get(b.id, 0) + 1) % len(self.hosts)
            self.down_since[b.id] = now
            self.counts["failovers"] += 1

    def lost(self, conn: Conn) -> None:
        if self.closing or self.conns.get(conn.b.id) is not conn:
            return
        self.down_since.setdefault(conn.b.id, time.monotonic())
        t = self.loop.create_task(self._reconnect(conn.b))
        self._tasks.add(t)
        t.add_done_callback(self._tasks.discard)

    async def _reconnect(self, b: Board) -> None:
        await asyncio.sleep(self.reconnect_s * (1 + self.rng.random()))
        await self._connect(b)

    def drop(self, fraction: float) -> int:
        """Cut a fraction of the connections (no DISCONNECT: the broker
        sends their wills); they reconnect.  Returns how many."""
        ups = self.up()
        cut = self.rng.sample(ups, max(1, round(fraction * len(ups)))) if ups and fraction > 0 else []
        for c in cut:
            c.transport.abort()                                # type: ignore[union-attr]
        self.counts["drops"] += len(cut)
        return len(cut)

    # -- clock sync
    def _sync(self, conn: Conn) -> None:
        if conn.up:
            conn.publish(*conn.b.sync_request(time.monotonic_ns() // 1_000_000))

    def _periodic_sync(self, conn: Conn) -> None:
        if conn.up:
            self._sync(conn)
            self.loop.call_later(self.sync_every_s, self._periodic_sync, conn)

    # -- events
    def _send(self, conn: Conn | None, p: Pending, now: float) -> None:
        """Send (again) if the board is connected: else it waits for the
        reconnect (on_up sends the board's journal)."""
        if conn is not None and conn.up:
            if p.sends:
                self.counts["retransmissions"] += 1
            else:
                ph = self.phases[p.phase] if p.phase < len(self.phases) else None
                if ph is not None and ph.first_send is None:
                    ph.first_send = now
            conn.publish(*conn.b.event(p, now), qos=1)
            self._tie += 1
            heapq.heappush(self.retries, (p.due, self._tie, conn.b.id, p.seq))

    def press(self, board: Board, station: int = 1) -> None:
        now = time.perf_counter()
        self.phase.made += 1
        p, now_in_window = board.press(now_ms(), now, len(self.phases) - 1, station)
        if now_in_window:
            self._send(self.conns.get(board.id), p, now)

    async def _tick(self) -> None:
        """Retransmissions that are due (every 50 ms)."""
        while not self.closing:
            await asyncio.sleep(0.05)
            now = time.perf_counter()
            h = self.retries
            while h and h[0][0] <= now:
                _, _, bid, seq = heapq.heappop(h)
                conn = self.conns.get(bid)
                if conn is None:
                    continue
                p = conn.b.pending.get(seq)
                if p is None or p.due > now:       # acked, or sent again since (a reconnect)
                    continue
                if conn.up:
                    self._send(conn, p, now)
                # a board offline sends its journal when it is back (on_up)

    def on_message(self, conn: Conn, topic: str, payload: bytes) -> None:
        t = time.perf_counter()
        kind, v = conn.b.receive(topic, payload, time.monotonic_ns() // 1_000_000)
        if kind == "ack":
            for p in conn.b.fill():
                self._send(conn, p, t)
            ph = self.phases[v.phase] if v.phase < len(self.phases) else None
            if ph is not None:
                ph.acked += 1
                ph.last_ack = t
                ph.lat_ms.append((t - v.first) * 1000)
                if ph is self.phase:
                    if self._closed_loop and t < self._closed_loop[0]:
                        self.press(self.rng.choice(self.boards), self._closed_loop[1])
                    elif self._phase_done and ph.acked >= ph.made:
                        self._phase_done.set()
        elif kind == "dup-ack":
            self.counts["dup_acks"] += 1
        elif kind == "bad":
            self.counts["bad"] += 1
            self.bad_why[v] = self.bad_why.get(v, 0) + 1
        elif kind == "hub-online":
            self.counts["hub_online"] += 1
            now = time.perf_counter()
            for p in list(conn.b.pending.values()):
                self._send(conn, p, now)
            for k in range(self.sync_burst):
                self.loop.call_later(0.1 * k, self._sync, conn)

    # -- phases
    def begin(self, name: str) -> Phase:
        ph = Phase(name, started=time.perf_counter(), cpu0=cpu_s())
        self.phases.append(ph)
        self.phase = ph
        self._phase_done = asyncio.Event()
        return ph

    async def end(self, timeout: float) -> Phase:
        """Until every event of the phase is acked (or the deadline)."""
        ph = self.phase
        assert self._phase_done is not None
        deadline = time.monotonic() + timeout
        # (the event is set whenever the acks catch up with what was made so
        # far: a fast hub does so in the middle of a phase)
        while ph.acked < ph.made and time.monotonic() < deadline:
            self._phase_done.clear()
            if ph.acked >= ph.made:
                break
            try:
                await asyncio.wait_for(self._phase_done.wait(), deadline - time.monotonic())
            except asyncio.TimeoutError:
                break
        ph.ended = time.perf_counter()
        ph.cpu1 = cpu_s()
        self.phase = Phase("idle")
        self.phases.append(self.phase)
        return ph

    async def burst(self, window_s: float, timeout: float = 120.0, station: int = 1) -> Phase:
        """Every board presses once, at a random moment within window_s."""
        self.begin(f"burst {len(self.boards)} within {window_s:g} s")
        for b in self.boards:
            self.loop.call_later(self.rng.uniform(0, window_s), self.press, b, station)
        await asyncio.sleep(window_s)                 # the plan's own clock
        return await self.end(timeout)

    async def offered(self, rate: float, seconds: float, timeout: float = 120.0, station: int = 1) -> Phase:
        """Presses at a fixed offered rate (events/s, spread over the
        boards in turn) for seconds, whatever the acks."""
        self.begin(f"offered {rate:g}/s for {seconds:g} s")
        order = self.boards[:]
        self.rng.shuffle(order)
        t0 = time.perf_counter()
        made = 0
        while True:
            el = time.perf_counter() - t0
            if el >= seconds:
                break
            due = int(rate * el)
            while made < due:
                self.press(order[made % len(order)], station)
                made += 1
            await asyncio.sleep(0.005)
        return await self.end(timeout)

    async def as_fast_as_acked(self, inflight: int, seconds: float, timeout: float = 120.0,
                               station: int = 1) -> Phase:
        """inflight events unacked at all times (each ack makes another,
        from a random board) for seconds."""
        self.begin(f"{inflight} in flight for {seconds:g} s")
        self._closed_loop = (time.perf_counter() + seconds, station)
        for _ in range(inflight):
            self.press(self.rng.choice(self.boards), station)
        await asyncio.sleep(seconds)
        self._closed_loop = None
        return await self.end(timeout)

    async def until(self, pred, timeout: float, poll: float = 0.05) -> bool:
        deadline = time.monotonic() + timeout
        while not pred():
            if time.monotonic() >= deadline:
                return False
            await asyncio.sleep(poll)
        return True

    def synced(self) -> int:
        return sum(1 for b in self.boards if b.syncs > 0)

    def scheduled(self) -> int:
        return sum(1 for b in self.boards if b.sched is not None)

    def unacked(self) -> int:
        return sum(b.unacked() for b in self.boards)

    async def close(self) -> None:
        self.closing = True
        for c in list(self.conns.values()):
            if c.transport and not c.transport.is_closing():
                if c.up:
                    c.transport.write(mqtt.DISCONNECT_PACKET)     # a clean stop: no will
                c.transport.close()
        if self._ticker:
            self._ticker.cancel()
        for t in list(self._tasks):
            t.cancel()
        await asyncio.sleep(0.1)
