"""The hub's pure logic and its SQLite store, without a broker."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from tabletimer.hub.ranking import rank_single_round
from tabletimer.hub.registry import BoardRegistry
from tabletimer.hub.service import HubService
from tabletimer.hub.store import EventStore
from tabletimer.shared import protocol as P


class FakeClock:
    def __init__(self, t: int = 1_796_000_000_000) -> None:
        self.t = t

    def now_ms(self) -> int:
        return self.t


def enc(m: dict) -> bytes:
    return P.encode(m)


@pytest.fixture
def hub(tmp_path: Path):
    store = EventStore(tmp_path / "events.sqlite")
    svc = HubService(store, FakeClock())
    yield svc
    store.close()


def press(svc, board="b1", boot=1, seq=1, station=1, at=None, received=None):
    at = svc.clock.t + 1000 if at is None else at
    return svc.handle(P.board_topic(board, P.EVENT), enc(P.press(boot, seq, station, at)),
                      received or svc.clock.t)


def test_ranking_shares_places_and_puts_non_finishers_last():
    st = rank_single_round(1000, ["a", "b", "c", "d", "e"],
                           {"a": 5000, "b": 3000, "c": 5000, "e": 9000})
    assert [(s.entrant, s.place, s.time_ms) for s in st] == [
        ("b", 1, 2000), ("a", 2, 4000), ("c", 2, 4000), ("e", 4, 8000), ("d", 5, None)]
    assert st[-1].status == "running"


def test_ranking_before_start_has_no_times():
    st = rank_single_round(None, ["a", "b"], {"a": 5})
    assert all(s.time_ms is None and s.place == 1 for s in st)


def test_press_is_committed_before_ack_and_duplicates_are_harmless(hub, tmp_path):
    hub.start_round()
    out = press(hub, at=hub.clock.t + 61_000)
    assert [(o.topic, json.loads(o.payload)) for o in out] == [
        ("tt/v1/b/b1/cmd", {"v": 1, "type": "ack", "boot": 1, "seq": 1})]
    assert out[0].qos == 1
    # committed: another connection sees it the moment the ack exists
    other = sqlite3.connect(tmp_path / "events.sqlite")
    assert other.execute("SELECT count(*) FROM events WHERE type='press'").fetchone() == (1,)
    again = press(hub, at=hub.clock.t + 61_000)
    assert again == out and hub.duplicates == 1
    assert other.execute("SELECT count(*) FROM events WHERE type='press'").fetchone() == (1,)
    s = hub.standings()[0]
    assert (s.entrant, s.status, s.time_ms) == ("b1/1", "finished", 61_000)


def test_earliest_press_counts_whatever_the_arrival_order(hub):
    hub.start_round()
    t0 = hub.clock.t
    press(hub, seq=2, at=t0 + 9000)
    press(hub, seq=1, at=t0 + 7000)      # arrives later, happened earlier
    assert hub.standings()[0].time_ms == 7000


def test_press_before_the_start_is_kept_but_not_a_finish(hub):
    t0 = hub.clock.t
    hub.start_round(t0 + 5000)
    press(hub, at=t0 + 1000)
    assert hub.standings()[0].status == "running"
    assert len(hub.state.early) == 1


def test_press_without_time_is_stored_and_acked_but_not_ranked(hub):
    hub.start_round()
    out = hub.handle(P.board_topic("b1", P.EVENT), enc(P.press(1, 1, 1, None)), hub.clock.t)
    assert len(out) == 1
    assert hub.standings()[0].status == "running" and len(hub.state.untimed) == 1


@pytest.mark.parametrize("topic,payload", [
    ("tt/v1/b/b1/evt", b"{not json"),
    ("tt/v1/b/b1/evt", b'{"v": 1, "type": "press", "boot": 1}'),
    ("tt/v1/b/b1/evt", b'{"v": 9, "type": "press", "boot": 1, "seq": 1, "station": 1, "at": 1}'),
    ("tt/v1/b/b1/evt", enc(P.ack(1, 1))),
    ("tt/v1/b/bad board/evt", enc(P.press(1, 1, 1, 5))),
    ("somewhere/else", enc(P.press(1, 1, 1, 5))),
])
def test_malformed_messages_are_rejected_and_change_nothing(hub, topic, payload):
    hub.start_round()
    before = hub.store.events()
    assert hub.handle(topic, payload, hub.clock.t) == []
    assert sum(hub.rejected.values()) == 1
    assert hub.store.events() == before
    assert all(s.status == "running" for s in hub.standings())


def test_sync_reply_carries_receive_and_send_times(hub):
    out = hub.handle(P.board_topic("b1", P.SYNC), enc(P.sync_request(4, 123)), hub.clock.t - 2)
    assert len(out) == 1 and out[0].topic == "tt/v1/b/b1/cmd" and out[0].qos == 0
    assert json.loads(out[0].payload) == {"v": 1, "type": "sync", "id": 4, "t1": 123,
                                          "t2": hub.clock.t - 2, "t3": hub.clock.t}


def test_board_status_and_late_last_will():
    reg = BoardRegistry()
    reg.status("b1", P.status_online(2, "0.1.0", 3), 10)
    reg.status("b1", P.status_offline(1), 11)          # will of the previous boot
    assert reg.boards["b1"].online and reg.boards["b1"].stations == 3
    reg.status("b1", P.status_offline(2), 12)
    assert not reg.boards["b1"].online


def test_restart_replays_the_log_to_the_same_state(hub, tmp_path):
    hub.start_round()
    hub.handle(P.board_topic("b1", P.STATUS), enc(P.status_online(1, "0.1.0", 2)), hub.clock.t)
    press(hub, station=2, at=hub.clock.t + 4000)
    press(hub, board="b2", at=hub.clock.t + 3000)
    again = HubService(EventStore(tmp_path / "events.sqlite"), FakeClock())
    assert again.standings() == hub.standings()
    assert [s.entrant for s in again.standings()] == ["b2/1", "b1/2", "b1/1"]
    assert again.registry.boards["b1"].online
