"""Boards without firmware: the hall's board identities as one paho client
speaking the signed protocol (online, then presses on demand, each signed
with its board's key), timing each event's publish and its ack's arrival:
what is measured is the broker and the hub."""

from __future__ import annotations

import random
import threading
import time

from tabletimer.tools.bench.broker_client import paho_client
from tabletimer.tools.bench.hall_rig import Hall
from tabletimer.tools.bench.report import now_ms


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
        self.gen = paho_client(client_id)
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
        from tabletimer.hub.protocol import hub_protocol
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
