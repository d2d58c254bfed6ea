"""The hub's core: turns incoming MQTT messages into stored events, acks,
clock-sync replies and an updated round state, and produces the commands
(signed schedules, identify) the operator's actions call for.

I/O-free except for the event store it is given: the MQTT adapter feeds
`handle()` and publishes what it returns or passes to `publish`.
"""

from __future__ import annotations

import threading
from collections import Counter, deque
from typing import Callable, NamedTuple

from tabletimer.shared import protocol
from tabletimer.shared.auth import AuthError

from .clock import HubClock
from .keys import BoardKeys
from .ranking import Standing
from .registry import BoardRegistry
from .replay import ReplayGuard
from .round_state import RoundState
from .store import EventStore

IDENTIFY_TTL_MS = 10_000


class Outgoing(NamedTuple):
    topic: str
    payload: bytes
    qos: int
    retain: bool


class HubService:
    def __init__(self, store: EventStore, keys: BoardKeys, clock: HubClock | None = None) -> None:
        self.store = store
        self.keys = keys
        self.clock = clock or HubClock()
        self.registry = BoardRegistry()
        self.state = RoundState()
        self.guard = ReplayGuard()
        self.rejected: Counter[str] = Counter()   # reason -> count
        self.duplicates = 0
        self.activity: deque[str] = deque(maxlen=200)
        self.listeners: list[Callable[[dict], None]] = []
        self.reject_listeners: list[Callable[[str, str], None]] = []   # (category, detail)
        self.publish: Callable[[list[Outgoing]], None] = lambda out: None   # set by the adapter
        self._hub_ctr = 0
        self._lock = threading.RLock()
        for ev in store.events():                # resume: replay the log
            if ev["source"] == "board":
                self.guard.check(ev["board"], ev["payload"])
            self._apply(ev)

    # ------------------------------------------------------------ input
    def handle(self, topic: str, payload: bytes, received_ms: int) -> list[Outgoing]:
        """One message from the broker, received at hub time received_ms."""
        if topic == protocol.HUB_STATUS:
            return []                            # our own retained status
        try:
            board, kind = protocol.parse_board_topic(topic)
        except protocol.ProtocolError as e:
            return self._reject("malformed", str(e), topic)
        signer = self.keys.signer(board)
        if signer is None:
            self.keys.reload()                   # flashed since the hub started?
            signer = self.keys.signer(board)
            if signer is None:
                return self._reject("unknown board", board, topic)
        try:
            msg = protocol.decode(signer.open(topic, payload))
        except AuthError as e:
            return self._reject("forged", str(e), topic)
        except protocol.ProtocolError as e:
            return self._reject("malformed", str(e), topic)
        with self._lock:
            why = self.guard.check(board, msg)
            if why:
                return self._reject("replayed", why, topic)
            self.registry.seen(board, received_ms)
            typ = msg["type"]
            if kind == protocol.SYNC and typ == protocol.T_SYNC and "t2" not in msg:
                reply = protocol.sync_reply(msg, received_ms, self.clock.now_ms())
                return [self._to_board(board, protocol.CMD, reply, 0)]
            if kind == protocol.STATUS and typ == protocol.T_STATUS:
                self._apply(self.store.append("board", "status", msg, received_ms, board))
                if msg["state"] == protocol.ONLINE:
                    # a board flashed after the round began has no retained
                    # schedule yet; a rebooted one gets the current one again
                    return self.schedules([board])
                return []
            if kind == protocol.EVENT and typ in protocol.EVENT_TYPES:
                row = self.store.append_board_event(board, msg, received_ms)   # committed here
                if row is None:
                    self.duplicates += 1
                else:
                    self._apply(row)
                return [self._to_board(board, protocol.CMD, protocol.ack(msg["boot"], msg["seq"]), 1)]
            return self._reject("malformed", f"unexpected {typ} message on {kind}", topic)

    def _reject(self, category: str, detail: str, topic: str) -> list[Outgoing]:
        self.rejected[category] += 1
        self.activity.append(f"rejected ({category}) on {topic}: {detail}")
        for fn in self.reject_listeners:
            fn(category, detail)
        return []

    def _to_board(self, board: str, kind: str, msg: dict, qos: int, retain: bool = False) -> Outgoing:
        """A command to one board, numbered and signed with its key."""
        signer = self.keys.signer(board)
        assert signer is not None
        with self._lock:
            self._hub_ctr = max(self._hub_ctr + 1, self.clock.now_ms())
            protocol.stamp(msg, self._hub_ctr)
        topic = protocol.board_topic(board, kind)
        return Outgoing(topic, signer.sign(topic, protocol.encode(msg)), qos, retain)

    # ------------------------------------------------------ operator actions
    def start_round(self, at_ms: int | None = None, duration_ms: int | None = None,
                    warnings_ms: tuple[int, ...] = ()) -> dict:
        """Start the round at at_ms (default now); with a duration, time-up
        and the warnings (ms before the end) are scheduled too.  Every known
        board gets the signed schedule (retained, so a board that reboots
        gets it again)."""
        with self._lock:
            now = self.clock.now_ms()
            at = at_ms if at_ms is not None else now
            payload = {"at": at, "duration": duration_ms, "warnings": list(warnings_ms)}
            row = self.store.append("operator", "round_start", payload, now)
            self._apply(row)
        self.publish(self.schedules())
        return row

    def schedules(self, boards: list[str] | None = None) -> list[Outgoing]:
        """The current schedule for the given boards (default: every board
        with a key)."""
        sched = self.state.schedule
        if sched is None:
            return []
        return [self._to_board(b, protocol.SCHED, protocol.schedule(*sched), 1, retain=True)
                for b in (boards if boards is not None else self.keys.boards())]

    def identify(self, board: str) -> None:
        msg = protocol.identify(self.clock.now_ms() + IDENTIFY_TTL_MS)
        self.publish([self._to_board(board, protocol.CMD, msg, 1)])

    # ------------------------------------------------------------ state
    def _apply(self, ev: dict) -> None:
        p = ev["payload"]
        if ev["source"] == "board" and ev["type"] == "status":
            self.registry.status(ev["board"], p, ev["received_ms"])
            self.activity.append(f"board {ev['board']} {p['state']}")
        elif ev["source"] == "board":
            if p.get("err") is not None:
                self.registry.get(ev["board"]).sync_err_ms = p["err"]
            self.activity.append(f"{ev['type']} {ev['board']}/{p['station']} at {p['at']}")
        elif ev["type"] == "round_start":
            self.activity.append(f"round started at {p['at']}")
        self.state.apply(ev)
        for fn in self.listeners:
            fn(ev)

    def standings(self) -> list[Standing]:
        with self._lock:
            return self.state.standings()
