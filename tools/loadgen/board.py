"""One board as the load generator plays it, without I/O: its counters
(boot, the replay counter ctr that grows with every message it signs, the
events' seq), the messages it signs (will, birth, clock-sync requests,
presses), its unacknowledged events and their retransmission schedule, and
what it makes of a message from the hub (signature, the hub's counter, acks,
sync replies, schedules).  The firmware's order (firmware/app.py): the will
is signed at connect, the birth right after it; events go on evt at QoS 1
and stay until the hub's ack; see docs/protocol.md."""

from __future__ import annotations

from collections import deque

from tabletimer.hub.protocol import hub_protocol
from tabletimer.shared import protocol as P
from tabletimer.shared.auth import AuthError, Signer, proves

# an unacknowledged event is sent again 1, 2, 4, 8 s after the previous
# send, then every 16 s (docs/protocol.md, ack)
RETRY_S = (1.0, 2.0, 4.0, 8.0, 16.0)
# a board has at most this many events sent and unacknowledged; the others
# wait in its journal until an ack makes room (firmware/board.py _WINDOW)
WINDOW = 4


def retry_delay(sends: int) -> float:
    """Seconds from an event's sends-th send to its next one."""
    return RETRY_S[min(sends, len(RETRY_S)) - 1]


class Pending:
    """An event not yet acknowledged (first: when it was made)."""

    __slots__ = ("seq", "msg", "first", "due", "sends", "phase")

    def __init__(self, seq: int, msg: dict, now: float, phase: int) -> None:
        self.seq, self.msg, self.first, self.phase = seq, msg, now, phase
        self.sends = 0
        self.due = now


class Board:
    """Times (now) are the generator's clock in seconds (perf_counter);
    local_ms, the board's own clock in ms (only inside a sync exchange)."""

    __slots__ = ("id", "signer", "boot", "stations", "fw", "ctr", "seq", "hub_ctr", "term", "proof", "pending",
                 "backlog", "sync_id", "sync_out", "syncs", "sync_delays", "sched", "topic_cmd", "topic_sched",
                 "topic_evt", "topic_status", "topic_sync")

    def __init__(self, board: str, key: str, boot: int = 1, stations: int = 1, fw: str = "loadgen") -> None:
        self.id = board
        self.signer = Signer(key)
        self.boot, self.stations, self.fw = boot, stations, fw
        self.ctr = 0
        self.seq = 0
        self.hub_ctr = 0
        self.term = 1                             # the highest hub term heard (a standby that took over: 2)
        self.proof: str | None = None             # ... and its proof (a schedule's, the first of a term-1 hub)
        self.pending: dict[int, Pending] = {}     # the window: sent, not acked
        self.backlog: deque[Pending] = deque()      # in the journal, not sent yet
        self.sync_id = 0
        self.sync_out: dict[int, int] = {}      # request id -> t1 (the last few)
        self.syncs = 0
        self.sync_delays: list[int] = []
        self.sched: int | None = None
        self.topic_cmd = P.board_topic(board, P.CMD)
        self.topic_sched = P.board_topic(board, P.SCHED)
        self.topic_evt = P.board_topic(board, P.EVENT)
        self.topic_status = P.board_topic(board, P.STATUS)
        self.topic_sync = P.board_topic(board, P.SYNC)

    # -- what it sends
    def seal(self, topic: str, msg: dict) -> bytes:
        self.ctr += 1
        P.stamp(msg, self.ctr, self.boot)
        return self.signer.sign(topic, P.encode(msg))

    def will(self) -> tuple[str, bytes]:
        """Signed before every CONNECT (the birth gets the next counter)."""
        return self.topic_status, self.seal(self.topic_status, P.status_offline(self.boot))

    def birth(self) -> tuple[str, bytes]:
        msg = P.status_online(self.boot, self.fw, self.stations, term=self.term)
        if self.term > 1 and self.proof:
            msg["hash"] = self.proof              # the term's proof: the hubs check it
        return self.topic_status, self.seal(self.topic_status, msg)

    def sync_request(self, local_ms: int) -> tuple[str, bytes]:
        self.sync_id += 1
        self.sync_out[self.sync_id] = local_ms
        self.sync_out.pop(self.sync_id - 8, None)       # only the last few count
        return self.topic_sync, self.seal(self.topic_sync, P.sync_request(self.sync_id, local_ms))

    def press(self, at: int, now: float, phase: int = 0, station: int = 1) -> tuple[Pending, bool]:
        """A new event, journaled until acked; (it, whether it is in the
        window: to send now with event())."""
        self.seq += 1
        p = Pending(self.seq, hub_protocol.press(self.boot, self.seq, station, at), now, phase)
        if self.backlog or len(self.pending) >= WINDOW:
            self.backlog.append(p)
            return p, False
        self.pending[p.seq] = p
        return p, True

    def fill(self) -> list[Pending]:
        """Events taken from the journal into the window (to send now)."""
        out = []
        while self.backlog and len(self.pending) < WINDOW:
            p = self.backlog.popleft()
            self.pending[p.seq] = p
            out.append(p)
        return out

    def unacked(self) -> int:
        return len(self.pending) + len(self.backlog)

    def event(self, p: Pending, now: float) -> tuple[str, bytes]:
        """The event's next send (a new counter each time); its next due."""
        p.sends += 1
        p.due = now + retry_delay(p.sends)
        return self.topic_evt, self.seal(self.topic_evt, dict(p.msg))

    # -- what it receives
    def receive(self, topic: str, payload: bytes, local_ms: int):
        """A message from the hub -> (kind, value):
        ("ack", Pending) the event retired (fill() for the next); ("dup-ack", None) an ack of an
        event already retired; ("sync", round trip ms); ("sched", id);
        ("hub-online", None); ("other", type); ("bad", why)."""
        try:
            msg = P.decode(self.signer.open(topic, payload))
        except (AuthError, P.ProtocolError) as e:
            return "bad", "%s on %s" % (e, topic.rsplit("/", 1)[1])
        t = msg["type"]
        term, proof = msg.get("term", 1), msg.get("hash")   # as the firmware does (hub_order.py)
        if not isinstance(term, int) or term < self.term:
            return "bad", "%s of an old hub's term" % t
        if term > self.term:                # a hub that took over, if it proves it: its counters afresh
            if not proves(proof, term - self.term, self.proof):
                return "bad", "%s of term %d without a hub's proof" % (t, term)
            self.term, self.proof, self.hub_ctr = term, proof, 0
        elif proof and not self.proof:
            self.proof = proof
        if t != P.T_SCHED:                  # schedules are ordered by their id
            ctr = msg.get("ctr")
            if ctr is None or ctr <= self.hub_ctr:
                # as the firmware does: a real board drops it too
                return "bad", "%s not above the hub's last counter" % t
            self.hub_ctr = ctr
        if t == P.T_ACK:
            if msg["boot"] == self.boot:
                p = self.pending.pop(msg["seq"], None)
                if p is not None:
                    return "ack", p
            return "dup-ack", None
        if t == P.T_SYNC and "t2" in msg:
            t1 = self.sync_out.pop(msg["id"], None)
            if t1 is None or t1 != msg["t1"]:
                return "other", "sync reply to no request"
            delay = (local_ms - t1) - (msg["t3"] - msg["t2"])
            self.syncs += 1
            self.sync_delays.append(delay)
            return "sync", delay
        if t == P.T_SCHED:
            self.sched = msg["id"]
            return "sched", msg["id"]
        if t == P.T_HUB and msg["state"] == P.ONLINE:
            return "hub-online", None
        return "other", t
