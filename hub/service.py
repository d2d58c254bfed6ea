"""The hub's core: turns incoming MQTT messages into stored events, acks,
clock-sync replies and an updated round state.

I/O-free except for the event store it is given: the MQTT adapter feeds
`handle()` and publishes what it returns.
"""

from __future__ import annotations

import threading
from collections import Counter, deque
from typing import Callable, NamedTuple

from tabletimer.shared import protocol

from .clock import HubClock
from .ranking import Standing
from .registry import BoardRegistry
from .round_state import RoundState
from .store import EventStore


class Outgoing(NamedTuple):
    topic: str
    payload: bytes
    qos: int
    retain: bool


class HubService:
    def __init__(self, store: EventStore, clock: HubClock | None = None) -> None:
        self.store = store
        self.clock = clock or HubClock()
        self.registry = BoardRegistry()
        self.state = RoundState()
        self.rejected: Counter[str] = Counter()   # reason -> count
        self.duplicates = 0
        self.activity: deque[str] = deque(maxlen=200)
        self.listeners: list[Callable[[dict], None]] = []
        self._lock = threading.RLock()
        for ev in store.events():                # resume: replay the log
            self._apply(ev)

    # ------------------------------------------------------------ input
    def handle(self, topic: str, payload: bytes, received_ms: int) -> list[Outgoing]:
        """One message from the broker, received at hub time received_ms."""
        try:
            board, kind = protocol.parse_board_topic(topic)
            msg = protocol.decode(payload)
        except protocol.ProtocolError as e:
            return self._reject(f"malformed: {e}", topic)
        with self._lock:
            self.registry.seen(board, received_ms)
            if kind == protocol.SYNC and msg["type"] == protocol.T_SYNC and "t2" not in msg:
                reply = protocol.sync_reply(msg, received_ms, self.clock.now_ms())
                return [Outgoing(protocol.board_topic(board, protocol.CMD), protocol.encode(reply), 0, False)]
            if kind == protocol.STATUS and msg["type"] == protocol.T_STATUS:
                self._apply(self.store.append("board", "status", msg, received_ms, board))
                return []
            if kind == protocol.EVENT and msg["type"] == protocol.T_PRESS:
                row = self.store.append_board_event(board, msg, received_ms)   # committed here
                if row is None:
                    self.duplicates += 1
                else:
                    self._apply(row)
                ack = protocol.encode(protocol.ack(msg["boot"], msg["seq"]))
                return [Outgoing(protocol.board_topic(board, protocol.CMD), ack, 1, False)]
            return self._reject(f"unexpected {msg['type']} message on {kind}", topic)

    def _reject(self, reason: str, topic: str) -> list[Outgoing]:
        self.rejected[reason.split(":")[0]] += 1
        self.activity.append(f"rejected on {topic}: {reason}")
        return []

    # ------------------------------------------------------ operator actions
    def start_round(self, at_ms: int | None = None) -> dict:
        with self._lock:
            now = self.clock.now_ms()
            row = self.store.append("operator", "round_start", {"at": at_ms if at_ms is not None else now}, now)
            self._apply(row)
            return row

    # ------------------------------------------------------------ state
    def _apply(self, ev: dict) -> None:
        p = ev["payload"]
        if ev["source"] == "board" and ev["type"] == "status":
            self.registry.status(ev["board"], p, ev["received_ms"])
            self.activity.append(f"board {ev['board']} {p['state']}")
        elif ev["source"] == "board" and ev["type"] == "press":
            if p.get("err") is not None:
                self.registry.get(ev["board"]).sync_err_ms = p["err"]
            self.activity.append(f"press {ev['board']}/{p['station']} at {p['at']}")
        elif ev["type"] == "round_start":
            self.activity.append(f"round started at {p['at']}")
        self.state.apply(ev)
        for fn in self.listeners:
            fn(ev)

    def standings(self) -> list[Standing]:
        with self._lock:
            return self.state.standings()
