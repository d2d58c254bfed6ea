"""Group commit (issue #19): board messages that arrive together are stored
in one transaction -- one commit, one fsync -- and acked only after it; a
commit that fails stores and acks none of them; a clock-sync request is
answered while a commit waits.  A real SQLite log; the last test runs the
hub's MQTT edge on a real broker."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest

from tabletimer.hub.protocol import hub_protocol as H
from tabletimer.hub.protocol.keys import BoardKeys
from tabletimer.hub.core.changes import ToBoards
from tabletimer.hub.core.service import HubService
from tabletimer.hub.event.fold.competition import Competition
from tabletimer.hub.event.log.store import EventStore
from tabletimer.hub.rules.formats import load_format
from tabletimer.shared import protocol as P
from tabletimer.shared.auth import Signer
from waiting import until
from clocks import FixedClock

KEYS = {"b1": "11" * 32, "b2": "22" * 32}
T0 = 1_796_000_000_000


class Clock(FixedClock):
    t = T0


def hub(tmp_path: Path) -> HubService:
    comp = Competition(load_format("cz-championship-individuals"), [], [], auto_stations=True)
    return HubService(EventStore(tmp_path / "events.sqlite"), BoardKeys(keys=KEYS), comp, Clock())


class Boards:
    """Signed messages as boards make them (a rising counter each)."""

    def __init__(self) -> None:
        self.ctr = {b: 0 for b in KEYS}

    def message(self, board: str, kind: str, msg: dict) -> tuple[str, bytes, int, bool]:
        self.ctr[board] += 1
        P.stamp(msg, self.ctr[board], 1)
        topic = P.board_topic(board, kind)
        return topic, Signer(KEYS[board]).sign(topic, P.encode(msg)), T0, False

    def press(self, board: str, seq: int) -> tuple[str, bytes, int, bool]:
        return self.message(board, P.EVENT, H.press(1, seq, 1 + seq % 2, T0 - 1000 + seq))


def came_within(pred, seconds: float) -> bool:
    """pred() came true within seconds (polled); False at the deadline."""
    deadline = time.monotonic() + seconds
    while not pred():
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.02)
    return True


def acks(out) -> list[tuple[str, int]]:
    """(board, seq) of each ack in out, in order."""
    got = []
    for o in out:
        board = o.topic.split("/")[3]
        msg = P.decode(Signer(KEYS[board]).open(o.topic, o.payload))
        if msg["type"] == P.T_ACK:
            got.append((board, msg["seq"]))
    return got


def test_events_that_arrive_together_share_one_commit_and_are_acked_in_order(tmp_path):
    svc, boards = hub(tmp_path), Boards()
    svc.check_writable()                # the first block of command counters, as a hub's start reserves it
    batch = [boards.press(b, seq) for seq in range(1, 21) for b in ("b1", "b2")]
    before = svc.store.transactions
    emitted: list = []
    svc.handle_many(batch, emit=emitted.append)
    assert svc.store.transactions == before + 1
    assert acks(o for out in emitted for o in out) == [(b, seq) for seq in range(1, 21) for b in ("b1", "b2")]
    stored = [(e["board"], e["payload"]["seq"]) for e in svc.store.events() if e["type"] == "press"]
    assert len(stored) == 40 and len(set(stored)) == 40
    # what another connection reads: the committed log
    with sqlite3.connect(tmp_path / "events.sqlite") as other:
        assert other.execute("SELECT count(*) FROM events WHERE type = 'press'").fetchone() == (40,)


def test_the_same_event_twice_in_one_batch_is_stored_once_and_acked_twice(tmp_path):
    svc, boards = hub(tmp_path), Boards()
    press = H.press(1, 1, 1, T0 - 500)
    out = svc.handle_many([boards.message("b1", P.EVENT, dict(press)), boards.message("b1", P.EVENT, dict(press))])
    assert acks(out) == [("b1", 1), ("b1", 1)]
    assert len([e for e in svc.store.events() if e["type"] == "press"]) == 1
    assert svc.counts.duplicates == 1


def test_a_commit_that_fails_stores_and_acks_none_of_its_batch(tmp_path, monkeypatch):
    svc, boards = hub(tmp_path), Boards()
    real = svc.store.append_board_event
    calls = []

    def failing(board, msg, received_ms):
        calls.append(msg["seq"])
        if len(calls) == 3:
            raise sqlite3.OperationalError("database or disk is full")
        return real(board, msg, received_ms)

    monkeypatch.setattr(svc.store, "append_board_event", failing)
    out = svc.handle_many([boards.press("b1", seq) for seq in (1, 2, 3, 4)])
    assert acks(out) == []
    assert [e for e in svc.store.events() if e["type"] == "press"] == []      # the first two rolled back
    assert any("EVENT LOG NOT WRITTEN" in a for a in svc.alerts())
    assert svc.competition.standings(None) == hub(tmp_path / "fresh").competition.standings(None)
    # the boards send them again (new counters): all stored, all acked, the alert gone
    out = svc.handle_many([boards.press("b1", seq) for seq in (1, 2, 3, 4)])
    assert acks(out) == [("b1", 1), ("b1", 2), ("b1", 3), ("b1", 4)]
    assert [e["payload"]["seq"] for e in svc.store.events() if e["type"] == "press"] == [1, 2, 3, 4]
    assert not any("EVENT LOG NOT WRITTEN" in a for a in svc.alerts())


@pytest.mark.parametrize("broker", ["embedded", "mosquitto"], indirect=True)
def test_a_sync_request_is_answered_while_a_commit_waits(tmp_path, broker):
    """Another connection holds the log's write lock: the hub's commit of a
    board's event waits (SQLite's busy timeout: 5 s), no ack goes out, and
    the board's clock-sync request is answered meanwhile (it used to queue
    behind the event on paho's network thread); once the lock is let go the
    event is stored and acked (sent again as a board does, if that commit
    gave up)."""
    from tabletimer.hub.link.mqtt_adapter import HubMqtt

    svc, boards = hub(tmp_path), Boards()
    edge = HubMqtt(svc, broker.host, broker.port)
    edge.start()
    assert edge.listening.is_set()      # start() returns once the broker confirmed the subscriptions
    got: list[dict] = []
    subscribed = threading.Event()
    c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="tt-test-b1")
    c.on_connect = lambda cl, u, f, rc, p: cl.subscribe(P.board_topic("b1", P.CMD), 1)
    c.on_subscribe = lambda *a: subscribed.set()
    c.on_message = lambda cl, u, m: got.append(P.decode(Signer(KEYS["b1"]).open(m.topic, m.payload)))
    c.connect(broker.host, broker.port)
    c.loop_start()
    blocker = sqlite3.connect(tmp_path / "events.sqlite", isolation_level=None)
    try:
        assert subscribed.wait(10)
        blocker.execute("BEGIN IMMEDIATE")          # the log's write lock, held
        topic, payload, _, _ = boards.press("b1", 1)
        c.publish(topic, payload, 1)
        until(lambda: "b1" in svc.registry.boards, "the event checked by the hub (its commit next)")
        topic, payload, _, _ = boards.message("b1", P.SYNC, P.sync_request(7, 123))
        c.publish(topic, payload, 0)
        # within 4 s, while the lock is held: the old hub was stuck in the
        # event's commit for the busy timeout (5 s) before it read the sync
        until(lambda: any(m["type"] == P.T_SYNC for m in got), "the sync reply", timeout=4, seen=lambda: got)
        assert not [m for m in got if m["type"] == P.T_ACK], "acked before the event was committed"
        blocker.execute("COMMIT")
        acked = lambda: any(m["type"] == P.T_ACK and m["seq"] == 1 for m in got)    # noqa: E731
        for _ in range(10):                   # a board sends it again until acked
            if came_within(acked, 2.0):
                break
            topic, payload, _, _ = boards.press("b1", 1)
            c.publish(topic, payload, 1)
        assert acked(), got
        assert [e["payload"]["seq"] for e in svc.store.events() if e["type"] == "press"] == [1]
    finally:
        if blocker.in_transaction:
            blocker.execute("ROLLBACK")
        blocker.close()
        c.loop_stop()
        c.disconnect()
        edge.stop()
        svc.store.close()


def test_a_boards_commands_are_published_in_counter_order_whatever_thread_sends_them(tmp_path):
    """A board drops a command whose counter is not above the last one it
    took.  Sync replies (paho's thread), acks and station states (the commit
    thread) and an operator's identify (a web thread) are numbered and
    published under one lock: what reaches the broker for a board is in
    counter order.  (The load generator, which checks as the firmware does,
    found hundreds out of order.)"""
    svc, boards = hub(tmp_path), Boards()
    sent: list = []

    def publish(out) -> None:
        time.sleep(0)                   # as paho's publish may wait for its lock: another thread runs
        sent.extend(out)

    svc.changes.subscribe(ToBoards, lambda n: publish(n.messages))
    lock = threading.Lock()

    def message(kind: str, msg: dict):
        with lock:                      # the boards' own counters, in the order they are made
            return boards.message("b1", kind, msg)

    def syncs() -> None:
        for i in range(300):
            svc.handle_many([message(P.SYNC, P.sync_request(i, 100 + i))], emit=publish)

    def events() -> None:
        for seq in range(1, 301):
            svc.handle_many([message(P.EVENT, H.press(1, seq, 1, T0 - 10_000 + seq))], emit=publish)

    def desk() -> None:
        for _ in range(100):
            svc.act("identify", {"board": "b1"})

    threads = [threading.Thread(target=f) for f in (syncs, events, desk)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    ctrs = [P.decode(Signer(KEYS["b1"]).open(o.topic, o.payload))["ctr"] for o in sent
            if o.topic == P.board_topic("b1", P.CMD) and o.payload]
    assert len(ctrs) >= 300 + 300 + 100
    backwards = [(a, b) for a, b in zip(ctrs, ctrs[1:]) if b <= a]
    assert not backwards, f"{len(backwards)} commands published after a higher counter: {backwards[:5]}"


def test_an_event_waiting_for_the_commit_thread_is_not_a_replay_of_a_later_sync_request(tmp_path):
    """A board sends an event, then a clock-sync request (a higher counter):
    the request is answered at once on paho's thread while the event still
    waits in the commit thread's queue.  The event, checked after it, is
    stored and acked -- it was rejected as "replayed" (its counter below the
    request's), the board sent it again a second later, and a later event
    stored meanwhile made the hub fold the whole log again."""
    svc, boards = hub(tmp_path), Boards()
    svc.check_writable()
    first = boards.press("b1", 1)
    sync = boards.message("b1", P.SYNC, P.sync_request(7, 123))
    second = boards.press("b1", 2)
    replies = svc.handle_many([sync])                      # paho's thread, at once
    assert [P.decode(Signer(KEYS["b1"]).open(o.topic, o.payload))["type"] for o in replies] == [P.T_SYNC]
    out = svc.handle_many([first, second])                 # the commit thread, after it
    assert acks(out) == [("b1", 1), ("b1", 2)]
    assert dict(svc.counts.rejected) == {}
    assert [e["payload"]["seq"] for e in svc.store.events() if e["type"] == "press"] == [1, 2]
    # a sync request replayed (its counter not above the last request's) is still rejected
    assert svc.handle_many([sync]) == [] and dict(svc.counts.rejected) == {"replayed": 1}
    # and so is an event replayed
    assert acks(svc.handle_many([first])) == [] and dict(svc.counts.rejected) == {"replayed": 2}


def test_catch_up_reads_back_only_rows_the_hub_did_not_write_itself(tmp_path, monkeypatch):
    """catch_up (four times a second) read back and decoded every row the
    hub itself had written since the last one; now it reads from the first
    row it has not applied: none after the hub's own, and another process's
    action written among them is still found and applied."""
    svc, boards = hub(tmp_path), Boards()
    svc.check_writable()
    svc.handle_many([boards.press("b1", seq) for seq in (1, 2, 3)])
    asked: list[int] = []
    real = svc.store.events
    monkeypatch.setattr(svc.store, "events", lambda after=0: asked.append(after) or real(after))
    last = max(e["id"] for e in real())
    assert svc.catch_up() == 0 and asked == [last]
    # another process (`tabletimer act`) writes an action, then the hub its next batch
    other = EventStore(tmp_path / "events.sqlite")
    action = other.append("operator", "dns", {"entrant": "b1/2", "who": "desk", "why": ""}, T0)
    other.close()
    svc.handle_many([boards.press("b1", seq) for seq in (4, 5)])
    assert not svc.competition.has(action["id"])
    assert svc.catch_up() == 1 and asked[-1] == last      # read from the first row not applied
    assert svc.competition.has(action["id"])
    newest = max(e["id"] for e in real())
    assert svc.catch_up() == 0 and asked[-1] == newest
