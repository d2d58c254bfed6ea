"""The hub's pure logic and its SQLite store, without a broker."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from tabletimer.hub.event.fold.competition import Competition
from tabletimer.hub.protocol import hub_protocol as H
from tabletimer.hub.rules.formats import load_format
from tabletimer.hub.protocol.keys import BoardKeys
from tabletimer.hub.core.registry import BoardRegistry
from tabletimer.hub.core.changes import MessageRejected, RowApplied, ToBoards
from tabletimer.hub.core.service import HubService
from tabletimer.hub.event.log.store import EventStore
from tabletimer.shared import protocol as P
from tabletimer.shared.auth import Signer
from clocks import FixedClock

KEYS = {"b1": "11" * 32, "b2": "22" * 32}


def competition() -> Competition:
    return Competition(load_format("cz-championship-individuals"), [], [], auto_stations=True)


class FakeClock(FixedClock):
    """Hub time held at t (1_796_000_000_000 at first)."""
    t = 1_796_000_000_000


def enc(m: dict) -> bytes:
    return P.encode(m)


class Sender:
    """Signs messages as a board would: its boot and a rising counter."""

    def __init__(self) -> None:
        self.ctr: dict[str, int] = {}

    def payload(self, board: str, kind: str, msg: dict, boot: int = 1, ctr: int | None = None) -> bytes:
        if ctr is None:
            ctr = self.ctr[board] = self.ctr.get(board, 0) + 1
        P.stamp(msg, ctr, boot)
        return Signer(KEYS[board]).sign(P.board_topic(board, kind), P.encode(msg))

    def send(self, svc, board: str, kind: str, msg: dict, **kw):
        return svc.handle(P.board_topic(board, kind), self.payload(board, kind, msg, **kw), svc.clock.t)


@pytest.fixture
def hub(tmp_path: Path):
    store = EventStore(tmp_path / "events.sqlite")
    svc = HubService(store, BoardKeys(keys=KEYS), competition(), FakeClock())
    svc.sender = Sender()
    yield svc
    store.close()


def press(svc, board="b1", boot=1, seq=1, station=1, at=None):
    at = svc.clock.t + 1000 if at is None else at
    return svc.sender.send(svc, board, P.EVENT, H.press(boot, seq, station, at))


def parse_cmd(out, board="b1"):
    """The body of a signed hub command, verified with the board's key."""
    return json.loads(Signer(KEYS[board]).open(out.topic, out.payload))


def test_press_is_committed_before_ack_and_duplicates_are_harmless(hub, tmp_path):
    hub.start_round()
    out = press(hub, at=hub.clock.t + 61_000)
    assert [o.topic for o in out] == ["tt/v1/b/b1/cmd"] * 3
    body = parse_cmd(out[0])
    assert {k: body[k] for k in ("type", "boot", "seq")} == {"type": "ack", "boot": 1, "seq": 1}
    assert out[0].qos == 1
    rec = parse_cmd(out[1])            # the recorded time, back to the station
    assert {k: rec[k] for k in ("type", "station", "call", "time", "confirmed")} == \
        {"type": "recorded", "station": 1, "call": [1, 1], "time": 61_000, "confirmed": False}
    st = parse_cmd(out[2])             # the hub's state of the board's stations: called
    assert (st["type"], st["st"][0][:2]) == ("stations", [2, [1, 1]]) and out[2].qos == 1
    # committed: another connection sees it the moment the ack exists
    other = sqlite3.connect(tmp_path / "events.sqlite")
    assert other.execute("SELECT count(*) FROM events WHERE type='press'").fetchone() == (1,)
    again = press(hub, at=hub.clock.t + 61_000)     # a retransmission: new counter
    # the whole answer again (the first may never have reached the board)
    assert [parse_cmd(o)["type"] for o in again] == ["ack", "recorded", "stations"]
    assert parse_cmd(again[0])["seq"] == 1 and hub.counts.duplicates == 1
    assert parse_cmd(again[2])["st"][0][:2] == [2, [1, 1]]
    assert other.execute("SELECT count(*) FROM events WHERE type='press'").fetchone() == (1,)
    s = hub.standings()[0]
    assert (s.entrant, s.status, s.time_ms, s.provisional) == ("b1/1", "finished", 61_000, True)


def test_an_events_answers_go_in_its_ack_to_a_board_that_takes_them(hub):
    """A board whose birth says "ack": 2 (the firmware since 0.3.0) gets one
    command per event: its ack with the recorded time and, when they
    changed, its stations' state in it; a copy of the event (the board did
    not get the first answer: a broker restarted, a hub killed between
    storing and answering) gets the same again, its stations' state
    whether it changed or not: a board that never learns the hub has its
    call never counts a missing piece.  A board without it (last month's firmware 0.2.0) gets the
    ack, `recorded` and `stations` apart, as before."""
    hub.start_round()
    t0 = hub.clock.t
    hub.sender.send(hub, "b1", P.STATUS, P.status_online(1, "0.3.0", 1))
    old_fw = P.status_online(1, "0.2.0", 1)
    del old_fw["ack"]
    hub.sender.send(hub, "b2", P.STATUS, old_fw)
    assert [hub.registry.get(b).answers_in_ack for b in ("b1", "b2")] == [True, False]
    # the console's hall table says which boards run last month's firmware
    assert [hub.registry.state(hub.registry.get(b), t0) for b in ("b1", "b2")] == [[], ["old firmware 0.2.0"]]

    (one,) = press(hub, at=t0 + 61_000)
    ack = parse_cmd(one)
    assert (ack["type"], ack["boot"], ack["seq"], one.qos) == ("ack", 1, 1, 1)
    assert ack["recorded"] == {"station": 1, "call": [1, 1], "time": 61_000, "confirmed": False}   # as `recorded` says it
    assert ack["st"][0][:2] == [2, [1, 1]]                           # called
    (copy,) = press(hub, at=t0 + 61_000)                             # sent again: the same answer
    again = parse_cmd(copy)
    assert (again["type"], again["boot"], again["seq"], again["bt"]) == ("ack", 1, 1, 1)   # for the board's boot 1
    assert (again["recorded"], again["st"]) == (ack["recorded"], ack["st"])
    (confirmed,) = hub.sender.send(hub, "b1", P.EVENT, P.event("confirm", 1, 2, 1, t0 + 90_000, call=[1, 1],
                                                              missing=0))
    ack = parse_cmd(confirmed)
    assert (ack["seq"], ack["recorded"], ack["st"][0][:2]) == \
        (2, {"station": 1, "call": [1, 1], "time": 61_000, "confirmed": True}, [3, [1, 1]])

    out = press(hub, board="b2", at=t0 + 62_000)
    bodies = [parse_cmd(o, "b2") for o in out]
    assert [b["type"] for b in bodies] == ["ack", "recorded", "stations"]
    assert "recorded" not in bodies[0] and "st" not in bodies[0]
    assert (bodies[1]["time"], bodies[2]["st"][0][:2]) == (62_000, [2, [1, 1]])
    # the board's firmware updated: its next birth says so
    hub.sender.send(hub, "b2", P.STATUS, P.status_online(1, "0.3.0", 1))
    (one,) = press(hub, board="b2", seq=2, station=2, at=t0 + 63_000)
    assert parse_cmd(one, "b2")["recorded"] == {"station": 2, "call": [1, 2], "time": 63_000, "confirmed": False}
    assert hub.registry.state(hub.registry.get("b2"), t0) == []


def test_an_answer_too_long_for_one_message_goes_apart(hub):
    """A board of 38 stations: its stations' state and the ack do not fit
    one message (protocol.MAX_PAYLOAD): sent apart, each fitting.  (From 39
    running stations, the stations' state alone is too long for a board.)"""
    hub.start_round()
    hub.sender.send(hub, "b1", P.STATUS, P.status_online(1, "0.3.0", 38))
    out = press(hub, station=38, at=hub.clock.t + 61_000)
    assert [parse_cmd(o)["type"] for o in out] == ["ack", "recorded", "stations"]
    assert all(len(Signer(KEYS["b1"]).open(o.topic, o.payload)) <= P.MAX_PAYLOAD for o in out)
    assert len(parse_cmd(out[2])["st"]) == 38


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
    assert hub.standings(final=True)[0].status == "unfinished"
    assert len([e for e in hub.store.events() if e["type"] == "press"]) == 1


def test_press_without_time_is_stored_and_acked_but_not_ranked(hub):
    hub.start_round()
    out = hub.sender.send(hub, "b1", P.EVENT, H.press(1, 1, 1, None))
    assert [parse_cmd(o)["type"] for o in out] == ["ack", "stations"]      # no time recorded
    assert hub.standings(final=True)[0].status == "unfinished"
    assert [u.type for u in hub.competition.unassigned] == ["untimed press"]


def signed(body: bytes, topic: str = "tt/v1/b/b1/evt") -> bytes:
    return Signer(KEYS["b1"]).sign(topic, body)


@pytest.mark.parametrize("topic,payload,category", [
    ("tt/v1/b/b1/evt", signed(b"{not json"), "malformed"),
    ("tt/v1/b/b1/evt", signed(b'{"v": 1, "type": "press", "boot": 1}'), "malformed"),
    ("tt/v1/b/b1/evt", signed(b'{"v": 9, "type": "press", "boot": 1, "seq": 1, "station": 1, "at": 1}'),
     "malformed"),
    ("tt/v1/b/b1/evt", signed(enc(P.stamp(H.ack(1, 1), 5, 1))), "malformed"),
    ("tt/v1/b/b1/evt", signed(enc(H.press(1, 1, 1, 5))), "replayed"),         # no counter
    ("tt/v1/b/b1/evt", enc(P.stamp(H.press(1, 1, 1, 5), 5, 1)), "forged"),    # unsigned
    ("tt/v1/b/b1/evt", Signer("33" * 32).sign("tt/v1/b/b1/evt", enc(P.stamp(H.press(1, 1, 1, 5), 5, 1))),
     "forged"),                                                               # wrong key
    ("tt/v1/b/b1/evt", signed(enc(P.stamp(H.press(1, 1, 1, 5), 5, 1)), "tt/v1/b/b2/evt"),
     "forged"),                                                               # signed for b2's topic
    ("tt/v1/b/stranger/evt", signed(enc(P.stamp(H.press(1, 1, 1, 5), 5, 1))), "unknown board"),
    ("tt/v1/b/bad board/evt", enc(H.press(1, 1, 1, 5)), "malformed"),
    ("somewhere/else", enc(H.press(1, 1, 1, 5)), "malformed"),
])
def test_bad_messages_are_rejected_and_change_nothing(hub, topic, payload, category):
    hub.start_round()
    before = hub.store.events()
    assert hub.handle(topic, payload, hub.clock.t) == []
    assert dict(hub.counts.rejected) == {category: 1}
    assert hub.store.events() == before
    assert all(s.status != "finished" for s in hub.standings())


def test_sync_reply_carries_receive_and_send_times(hub):
    payload = hub.sender.payload("b1", P.SYNC, P.sync_request(4, 123))
    out = hub.handle(P.board_topic("b1", P.SYNC), payload, hub.clock.t - 2)
    assert len(out) == 1 and out[0].topic == "tt/v1/b/b1/cmd" and out[0].qos == 0
    body = parse_cmd(out[0])
    assert {k: body[k] for k in ("type", "id", "t1", "t2", "t3")} == {
        "type": "sync", "id": 4, "t1": 123, "t2": hub.clock.t - 2, "t3": hub.clock.t}


def test_replayed_message_is_rejected(hub):
    hub.start_round()
    payload = hub.sender.payload("b1", P.EVENT, H.press(1, 1, 1, hub.clock.t + 5))
    assert len(hub.handle("tt/v1/b/b1/evt", payload, hub.clock.t)) == 3     # ack, recorded, stations
    assert hub.handle("tt/v1/b/b1/evt", payload, hub.clock.t) == []        # the very same bytes
    assert dict(hub.counts.rejected) == {"replayed": 1} and hub.counts.duplicates == 0
    old_boot = hub.sender.payload("b1", P.EVENT, H.press(1, 2, 1, hub.clock.t + 5), boot=0, ctr=99)
    assert hub.handle("tt/v1/b/b1/evt", old_boot, hub.clock.t) == []
    assert hub.counts.rejected["replayed"] == 2


def test_stale_last_will_does_not_mark_a_reconnected_board_offline(hub):
    s = hub.sender
    will1 = s.payload("b1", P.STATUS, P.status_offline(1), ctr=1)
    s.send(hub, "b1", P.STATUS, P.status_online(1, "0.2.0", 1), ctr=2)
    will2 = s.payload("b1", P.STATUS, P.status_offline(1), ctr=9)
    s.send(hub, "b1", P.STATUS, P.status_online(1, "0.2.0", 1), ctr=10)      # reconnected
    hub.handle("tt/v1/b/b1/status", will1, hub.clock.t)                       # the old link's will
    assert hub.registry.boards["b1"].online and hub.counts.rejected["replayed"] == 1
    hub.handle("tt/v1/b/b1/status", will2, hub.clock.t)                       # the current link's
    assert not hub.registry.boards["b1"].online
    hub.handle("tt/v1/b/b1/status", will2, hub.clock.t)                       # once only
    assert hub.counts.rejected["replayed"] == 2


def test_a_boards_retained_status_sent_again_at_a_resubscribe_is_not_an_attack(hub):
    """Issue 15, item 6: at every hub start and reconnect the broker sends
    each board's retained status again; the hub has had it, and it counted
    each as "replayed" (12 per restart), so the rejected counter was never
    0.  With the broker's retained flag it is not counted; the same bytes
    published live (anyone replaying them) still are."""
    birth = hub.sender.payload("b1", P.STATUS, P.status_online(1, "0.2.0", 1), ctr=2)
    hub.handle("tt/v1/b/b1/status", birth, hub.clock.t)
    assert hub.registry.boards["b1"].online
    for _ in range(3):                                              # three hub reconnects
        assert hub.handle("tt/v1/b/b1/status", birth, hub.clock.t, retained=True) == []
    assert dict(hub.counts.rejected) == {} and hub.counts.retained_again == 3
    hub.handle("tt/v1/b/b1/status", birth, hub.clock.t)             # live: a replay
    assert dict(hub.counts.rejected) == {"replayed": 1}
    forged = birth[:-1] + (b"0" if birth[-1:] != b"0" else b"1")
    hub.handle("tt/v1/b/b1/status", forged, hub.clock.t)                   # live: an attack
    assert hub.counts.rejected["forged"] == 1
    # kept by the broker, it comes again at every hub start: cleared, not counted again
    assert hub.handle("tt/v1/b/b1/status", forged, hub.clock.t, retained=True) == [
        ("tt/v1/b/b1/status", b"", 1, True)]
    assert hub.counts.rejected["forged"] == 1 and hub.counts.retained_junk == 1


@pytest.mark.parametrize("topic,payload", [
    ("tt/v1/b/b1/evt", b"x" * 300),                          # junk
    ("tt/v1/b/b1/sync", None),                               # a genuine sync request, retained
    ("tt/v1/b/stranger/status", b"{}"),                      # no such board
    ("tt/v1/b/b1/status", b"\xff" * 2000),
])
def test_retained_junk_on_the_hubs_topics_is_cleared_not_counted(hub, topic, payload):
    """Issue #15, item 3: retained junk on the hub's topics came back at
    every hub start (a 64 MB one held 231 MB of the hub's RAM each time) and
    counted as an attack each time.  The hub clears it (an empty retained
    message) and counts it apart; boards never retain events or syncs."""
    if payload is None:
        payload = hub.sender.payload("b1", P.SYNC, P.sync_request(1, 5))
    out = hub.handle(topic, payload, hub.clock.t, retained=True)
    assert out == [(topic, b"", 1, True)]
    assert dict(hub.counts.rejected) == {} and hub.counts.retained_junk == 1 and hub.store.events() == []
    assert hub.handle(topic, b"", hub.clock.t) == []         # the clear comes back: nothing
    assert dict(hub.counts.rejected) == {}
    hub.handle(topic, b"", hub.clock.t)                      # any other empty message: an attack
    assert sum(hub.counts.rejected.values()) == 1


def test_messages_from_unknown_boards_read_the_keys_file_only_when_it_changed(tmp_path, monkeypatch):
    """Issue #15, item 1: every message from an unknown board re-read the
    keys file.  Now a stat; the file is read again once it changed (a board
    flashed since the hub started is heard at once)."""
    keys = BoardKeys(tmp_path / "board-keys.json")
    keys.ensure("b1")
    reads = []
    load = BoardKeys._load
    monkeypatch.setattr(BoardKeys, "_load", lambda self: (reads.append(1), load(self)))
    svc = HubService(EventStore(tmp_path / "events.sqlite"), keys, competition(), FakeClock())
    stranger = Signer("33" * 32)
    topic = P.board_topic("b3", P.STATUS)
    birth = stranger.sign(topic, P.encode(P.stamp(P.status_online(1, "0.2.0", 1), 1, 1)))
    for _ in range(1000):
        svc.handle(topic, birth, svc.clock.t)
    assert svc.counts.rejected["unknown board"] == 1000 and len(reads) == 0
    path = tmp_path / "board-keys.json"
    path.write_text(json.dumps(dict(json.loads(path.read_text()), b3="33" * 32)))   # `board flash` adds b3
    svc.handle(topic, birth, svc.clock.t)
    assert len(reads) == 1 and svc.registry.boards["b3"].online


def test_round_start_sends_signed_retained_schedules(hub):
    sent = []
    hub.changes.subscribe(ToBoards, lambda n: sent.extend(n.messages))
    t0 = hub.clock.t
    hub.start_round(t0 + 5000, duration_ms=90 * 60_000, warnings_ms=(10 * 60_000, 60_000))
    assert sorted(o.topic for o in sent) == ["tt/v1/b/b1/sched", "tt/v1/b/b2/sched"]
    assert all(o.retain and o.qos == 1 for o in sent)
    body = parse_cmd(next(o for o in sent if o.topic.endswith("b1/sched")))
    end = t0 + 5000 + 90 * 60_000
    assert (body["start"], body["end"]) == (t0 + 5000, end)
    assert body["signals"] == [[t0 + 5000, "start"], [end - 600_000, "warn"], [end - 60_000, "warn"],
                               [end, "time_up"]]
    sent.clear()
    hub.state.publish([])
    assert hub.schedules() == []                    # unchanged: nothing to resend
    assert len(hub.schedules(["b1"], force=True)) == 1


def test_confirm_and_void_follow_the_call(hub):
    hub.start_round()
    t0 = hub.clock.t
    press(hub, seq=1, at=t0 + 5000)
    s = hub.sender
    s.send(hub, "b1", P.EVENT, P.event("void", 1, 2, 1, t0 + 6000, call=[1, 1]))
    assert hub.standings()[0].status == "running"
    press(hub, seq=3, at=t0 + 9000)
    assert hub.standings()[0].provisional
    s.send(hub, "b1", P.EVENT, P.event("confirm", 1, 4, 1, t0 + 12000, call=[1, 3], missing=2))
    st = hub.standings()[0]
    assert not st.provisional and st.time_ms == 9000
    assert st.penalty_ms == 20_000 and st.net_time_ms == 29_000


def test_operator_actions_are_logged_with_who_and_why(hub):
    hub.start_round()
    t0 = hub.clock.t
    press(hub, at=t0 + 30_000)
    row = hub.act("confirm", {"press_id": "b1/1/1", "missing_found": 1, "missing_lost": 2},
                  who="head referee", why="two pieces on the floor")
    assert row["payload"]["who"] == "head referee" and row["payload"]["why"] == "two pieces on the floor"
    assert hub.standings()[0].penalty_ms == 30_000     # Czech rules: 10 s for every missing piece, found or lost
    hub.act("correct", {"press_id": "b1/1/1", "at": t0 + 20_000}, why="referee's watch")
    st = hub.standings()[0]
    assert st.time_ms == 20_000 and not st.provisional   # the confirmation carries over
    with pytest.raises(ValueError, match="unknown action"):
        hub.act("teleport", {})
    with pytest.raises(ValueError, match="unknown field"):
        hub.act("dns", {"entrant": "b1/1", "colour": "red"})
    hub.act("dq", {"entrant": "b1/1", "reason": "touched another table"})
    assert hub.standings()[-1].status == "dq" and hub.standings()[-1].reason == "touched another table"


def test_rows_from_another_process_are_caught_up_in_log_order(hub, tmp_path):
    hub.start_round()
    hub.sender.send(hub, "b1", P.STATUS, P.status_online(1, "0.2.0", 2))
    other = EventStore(tmp_path / "events.sqlite")
    other.append("operator", "dns", {"entrant": "b1/2", "who": "desk", "why": ""}, hub.clock.t)
    press(hub, at=hub.clock.t + 3000)                # applied here before the other row is seen
    assert hub.catch_up() == 1
    assert hub.catch_up() == 0
    assert {s.entrant: s.status for s in hub.standings(final=True)}["b1/2"] == "dns"
    again = HubService(EventStore(tmp_path / "events.sqlite"), BoardKeys(keys=KEYS), competition(), FakeClock())
    assert [(s.entrant, s.status) for s in again.standings(final=True)] == \
        [(s.entrant, s.status) for s in hub.standings(final=True)]


def test_board_status_and_late_last_will():
    reg = BoardRegistry()
    reg.status("b1", P.status_online(2, "0.1.0", 3), 10)
    reg.status("b1", P.status_offline(1), 11)          # will of the previous boot
    assert reg.boards["b1"].online and reg.boards["b1"].stations == 3
    reg.status("b1", P.status_offline(2), 12)
    assert not reg.boards["b1"].online


def test_restart_replays_the_log_to_the_same_state(hub, tmp_path):
    hub.start_round()
    hub.sender.send(hub, "b1", P.STATUS, P.status_online(1, "0.1.0", 2))
    press(hub, station=2, at=hub.clock.t + 4000)
    press(hub, board="b2", at=hub.clock.t + 3000)
    again = HubService(EventStore(tmp_path / "events.sqlite"), BoardKeys(keys=KEYS), competition(), FakeClock())
    assert [s.entrant for s in again.standings(final=True)] == ["b2/1", "b1/2", "b1/1"]
    assert [(s.place, s.time_ms) for s in again.standings(final=True)] == \
        [(s.place, s.time_ms) for s in hub.standings(final=True)]
    assert again.registry.boards["b1"].online


@pytest.mark.parametrize("action,payload,message", [
    ("count", {"entrant": "b1/1", "puzzle": 1, "placed": 501}, "placed = 501 is outside 0..500"),
    ("count", {"entrant": "b1/1", "puzzle": 1}, "either placed or remaining"),
    ("count", {"entrant": "nobody", "puzzle": 1, "placed": 3}, "no entrant 'nobody'"),
    ("press", {"entrant": "b1/1", "puzzle": 2, "at": 5}, "puzzle = 2 is outside 1..1"),
    ("press", {"entrant": "b1/1", "puzzle": 1}, r"at \(hub time, ms\) is needed"),
    ("void", {"press_id": "b9/1/1"}, "no press 'b9/1/1'"),
    ("confirm", {"press_id": "b1/1/1", "missing_found": -1}, "missing_found = -1"),
    ("dq", {"entrant": "b1/1"}, "a reason is needed"),
])
def test_operator_input_is_checked_with_clear_messages(hub, action, payload, message):
    hub.start_round()
    press(hub, at=hub.clock.t + 5000)
    before = len(hub.store.events())
    with pytest.raises(ValueError, match=message):
        hub.act(action, payload)
    assert len(hub.store.events()) == before


def test_call_queue_and_alerts(tmp_path):
    from tabletimer.hub.event.folder.event_folder import Station
    from tabletimer.hub.rules.standings import Entrant

    store = EventStore(tmp_path / "e.sqlite")
    comp = Competition(load_format("czjpa-individuals"), [Entrant("1", "A"), Entrant("2", "B")],
                       [Station("b1", 1, "Table 1", "1", None), Station("b2", 1, "Table 2", "2", None)])
    svc = HubService(store, BoardKeys(keys=KEYS), comp, FakeClock())
    svc.sender = Sender()
    assert "board b1 (stations.csv) has not been seen" in svc.alerts()
    svc.start_round()
    t0 = svc.clock.t
    svc.sender.send(svc, "b1", P.STATUS, P.status_online(1, "0.2.0", 1))
    press(svc, board="b2", at=t0 + 9000)
    press(svc, board="b1", at=t0 + 5000)
    press(svc, board="b1", seq=2, station=2, at=t0 + 6000)        # a button without a station
    calls = svc.competition.open_calls()
    assert [(c[2], c[4]) for c in calls] == [("1", "Table 1 #1"), ("2", "Table 2 #1")]
    svc.sender.send(svc, "b1", P.EVENT, P.event("confirm", 1, 3, 1, t0 + 12000, call=[1, 1], missing=0))
    assert [c[2] for c in svc.competition.open_calls()] == ["2"]
    svc.sender.send(svc, "b1", P.STATUS, P.status_offline(1), ctr=0)   # its will (signed before its birth)
    alerts = svc.alerts()
    assert "board b1 is OFFLINE during the round" in alerts
    assert "press from b1 button 2: no station for it" in alerts
    store.close()


def test_relay_schedule_changes_only_when_the_relay_does(tmp_path):
    """The rotations of a team's board: sent once, unchanged while time
    passes, dropped (a newer schedule) when the team's part 1 is done."""
    from tabletimer.hub.event.folder.event_folder import Station
    from tabletimer.hub.rules.standings import Entrant

    fmt = load_format("cz-championship-teams")
    stations = [Station("b1", n, "T1", "A", n) for n in range(1, 9)]
    store = EventStore(tmp_path / "e.sqlite")
    svc = HubService(store, BoardKeys(keys={"b1": KEYS["b1"]}), Competition(fmt, [Entrant("A", "Alfa")], stations),
                     FakeClock())
    svc.sender = Sender()
    sent = []
    svc.changes.subscribe(ToBoards, lambda n: sent.extend(n.messages))
    t0 = svc.clock.t
    svc.start_round(t0)
    first, stations = sent                           # the schedule, then the stations' state
    assert parse_cmd(stations)["st"] == [[1, None, t0 + 5 * 3_600_000, 0]] * 8
    body = parse_cmd(first)
    assert body["rot"] == [t0 + 480_000, 480_000, t0 + 5 * 3_600_000]
    svc.clock.t += 20 * 60_000                        # three rotations later
    assert svc.schedules() == []                      # nothing changed
    for n, minute in ((1, 21), (2, 22), (3, 23)):
        svc.clock.t = t0 + minute * 60_000
        out = press(svc, station=n, seq=n, at=svc.clock.t)
        assert all(not o.topic.endswith("/sched") for o in out)   # still rotating
    svc.clock.t = t0 + 24 * 60_000
    out = press(svc, station=4, seq=4, at=svc.clock.t)            # part 1 complete
    (sched,) = [o for o in out if o.topic.endswith("/sched")]
    new = parse_cmd(sched)
    assert "rot" not in new and new["id"] > body["id"]
    store.close()


def test_a_round_started_with_its_own_limit_is_ranked_to_that_limit(hub):
    """round_start duration=... (a shorter round than the format's): the
    boards sound time-up then, and the standings end there too (a finish
    recorded after it is not a finish; entrants are unfinished, not running)."""
    t0 = hub.clock.t
    hub.start_round(t0, duration_ms=600_000)
    press(hub, seq=1, station=1, at=t0 + 300_000)
    press(hub, seq=2, station=2, at=t0 + 700_000)    # (a board would have made it a stray)
    press(hub, board="b2", seq=1, station=1, at=t0 - 1)   # b2/1 exists, never finishes
    hub.clock.t = t0 + 650_000                       # after this round's time-up
    st = {s.entrant: s for s in hub.standings()}
    assert st["b1/1"].status == "finished"
    assert st["b1/2"].status == "unfinished"        # 11:40 is after the 10:00 limit
    assert st["b2/1"].status == "unfinished"         # not 'running' until the format's 90 min


def _stations(outgoing) -> list[list]:
    """The entries of the last stations' state to b1 among outgoing commands
    (a `stations` message, or an ack's "st", as the board follows them)."""
    mine = [o for o in reversed(outgoing) if o.topic == "tt/v1/b/b1/cmd"]
    (last, *_) = [m for m in (parse_cmd(o) for o in mine) if "st" in m]
    return last["st"]


def test_the_stations_message_names_the_call_the_hub_closed(hub):
    """A board follows the hub's states by the call: a call the desk voided
    or confirmed comes back with the station's new state (so a board still
    holding that call knows it is this one that was decided, and a board
    with a newer call of its own keeps it); a board's decision refused as a
    conflict gets the recorded state again at once, though it changed
    nothing."""
    sent: list = []
    hub.changes.subscribe(ToBoards, lambda n: sent.extend(n.messages))
    hub.start_round()
    end = hub.competition.round_end_ms()
    out = press(hub)                                             # the board's call [1, 1]
    assert _stations(out)[0] == [2, [1, 1], end, 0]             # called
    hub.act("void", {"press_id": "b1/1/1"}, who="desk")
    assert _stations(sent)[0] == [1, [1, 1], end, 0]            # running again: [1, 1] was voided
    # the board, not told yet, confirms the call the desk voided: refused, told again
    out = hub.sender.send(hub, "b1", P.EVENT, P.event("confirm", 1, 2, 1, hub.clock.t + 2000, call=[1, 1],
                                                       missing=0))
    assert [c.press_id for c in hub.competition.conflicts] == ["b1/1/1"]
    assert _stations(out)[0] == [1, [1, 1], end, 0]
    out = press(hub, seq=3, at=hub.clock.t + 3000)              # a new call
    assert _stations(out)[0] == [2, [1, 3], end, 0]
    sent.clear()
    hub.act("confirm", {"press_id": "b1/1/3", "missing_found": 1}, who="desk")
    assert _stations(sent)[0] == [3, [1, 3], end, 1]            # done: [1, 3] was confirmed


def test_a_flood_of_rejected_messages_is_one_log_line_a_second(hub):
    """Issue #15, item 6: noise hides attacks.  20,000 junk messages made as
    many lines of the consoles' event log (it keeps 200): the real ones were
    gone.  Each is counted; a category gets a line a second at most, the
    next one saying how many were not shown."""
    for _ in range(5000):
        hub.handle("tt/v1/b/stranger/evt", b"junk", hub.clock.t)
    hub.handle("tt/v1/b/b1/status", b"forged", hub.clock.t)
    assert hub.counts.rejected == {"unknown board": 5000, "forged": 1}
    lines = [a for a in hub.activity if a.startswith("rejected")]
    assert len(lines) == 2
    hub.clock.t += 1000
    hub.handle("tt/v1/b/stranger/evt", b"junk", hub.clock.t)
    assert hub.activity[-1].endswith(")") and "(and 4999 more like it since " in hub.activity[-1]


def test_a_clock_sync_reply_and_the_hub_online_owed_with_it_go_in_counter_order(hub):
    """A board drops a command whose counter is not above the last it took
    (firmware/app.py), so what the hub publishes to a board must be in
    counter order.  The hub online owed to a board (the hub connected
    before it heard the board: a new round's log) went with the answer to
    its first message; when that was a clock-sync request (answered at
    once, while its birth waited for a commit), the hub online was numbered
    first and published after the reply: the board took the reply and
    dropped the hub online (the load generator's 20 boards, in a loaded
    run: "hub not above the hub's last counter", one less than the reply's)."""
    assert hub.hub_online() == []                  # never heard: owed
    out = hub.sender.send(hub, "b1", P.SYNC, P.sync_request(1, 5))
    cmds = [parse_cmd(o) for o in out]
    assert [m["type"] for m in cmds] == [P.T_SYNC, P.T_HUB]    # the reply first: the board times it
    ctrs = [m["ctr"] for m in cmds]
    assert ctrs[0] < ctrs[1], ctrs
    # a board that checks the counters takes both (the load generator's, as the firmware does)
    from tabletimer.tools.loadgen.board import Board
    board = Board("b1", KEYS["b1"])
    board.sync_out[1] = 5
    assert [board.receive(o.topic, o.payload, 10)[0] for o in out] == ["sync", "hub-online"]
    # owed once: the next request's answer is the reply alone
    assert [parse_cmd(o)["type"] for o in hub.sender.send(hub, "b1", P.SYNC, P.sync_request(2, 6))] == [P.T_SYNC]


def test_every_command_names_the_boot_of_the_board_it_is_for(tmp_path):
    """Issue 44, item 6: a command captured in one boot of a board and
    replayed as the first of a later boot set that boot's counter base, and
    the board refused every real command after it as a counter jump.  Every
    command to a board but the retained schedule now names the board's boot
    it is for, 'bt', and its install, 'bi' (the board refuses one of
    another: firmware/app.py): an ack and a clock-sync reply the boot of
    the message they answer; the others (the hub online, identify,
    stations) the latest the hub has taken of the board, read back from
    its log after a restart.  A board it has not heard would refuse the
    hub online (a new round's log, its boot unknown): it is told with the
    answer to its first message."""
    store = EventStore(tmp_path / "events.sqlite")
    svc = HubService(store, BoardKeys(keys=KEYS), competition(), FakeClock())
    sent: list = []
    svc.changes.subscribe(ToBoards, lambda n: sent.extend(n.messages))
    ctr = iter(range(1, 1000))

    def send(msg: dict, kind: str, boot: int, install: str = "0a1b2c"):
        P.stamp(msg, next(ctr), boot, install)
        topic = P.board_topic("b1", kind)
        return svc.handle(topic, Signer(KEYS["b1"]).sign(topic, P.encode(msg)), svc.clock.t)

    def named(out) -> list:
        return [(m.get("bt"), m.get("bi")) for m in (parse_cmd(o) for o in out if o.topic == "tt/v1/b/b1/cmd")]

    try:
        assert named(svc.hub_online()) == []                           # never heard: owed, not sent
        # its birth's answer: the hub online owed, then its stations
        assert named(send(P.status_online(7, "0.4.0", 1), P.STATUS, 7)) == [(7, "0a1b2c")] * 2
        assert named(send(P.sync_request(1, 5), P.SYNC, 7)) == [(7, "0a1b2c")]
        assert named(send(H.press(7, 1, 1, svc.clock.t), P.EVENT, 7)) == [(7, "0a1b2c")]     # the ack
        svc.act("identify", {"board": "b1"})
        assert named(sent) == [(7, "0a1b2c")]
        # the board restarted: its birth and its first request say boot 8
        send(P.status_online(8, "0.4.0", 1), P.STATUS, 8)
        assert named(send(P.sync_request(1, 5), P.SYNC, 8)) == [(8, "0a1b2c")]
        assert named(svc.hub_online()) == [(8, "0a1b2c")]
        # an event of boot 7 resent in boot 8 ('bt' 8): its ack is for boot 8
        assert named(send(H.press(7, 1, 1, svc.clock.t), P.EVENT, 8)) == [(8, "0a1b2c")]
        # the schedule (retained: a rebooted board takes it) names none
        svc.start_round()
        scheds = [parse_cmd(o) for o in svc.schedules(["b1"], force=True)]
        assert scheds and all("bt" not in m and "bi" not in m for m in scheds)
    finally:
        store.close()
    # a restarted hub names the boot its log has last of the board
    store = EventStore(tmp_path / "events.sqlite")
    try:
        again = HubService(store, BoardKeys(keys=KEYS), competition(), FakeClock())
        assert named(again.hub_online()) == [(8, "0a1b2c")]
    finally:
        store.close()


def test_the_desk_refuses_a_firmware_older_than_the_boards_unless_it_allows_it(hub):
    """Issue 44, item 6: a firmware older than the version a board's birth
    said is refused at the desk (the board refuses it too:
    firmware/firmware_update.py, the same order), unless the request allows it
    (`boards update --allow-older`: 'older' 1); then the update's begin, signed
    and for the board's boot, says so."""
    import time

    from tabletimer.hub.fleet.firmware_update import Package

    hub.sender.send(hub, "b1", P.STATUS, P.status_online(3, "0.9.0", 1), boot=3)
    request = {"board": "b1", "fw": "0.8.0-old", "pkg": "p", "sha": "0" * 64}
    with pytest.raises(ValueError, match=r"board b1 runs 0\.9\.0: 0\.8\.0-old is older, refused \(--allow-older"):
        hub.check_action("firmware", request)
    hub.check_action("firmware", dict(request, older=1))
    hub.check_action("firmware", dict(request, fw="0.9.1"))
    hub.check_action("firmware", dict(request, fw="0.9.0"))        # the same again: not older
    with pytest.raises(ValueError, match="older = 2 is outside 0..1"):
        hub.check_action("firmware", dict(request, older=2))
    sent: list = []
    hub.changes.subscribe(ToBoards, lambda n: sent.extend(n.messages))
    manifest = b"tabletimer-firmware 0.8.0-old sim\napp.mpy 1 " + b"0" * 64 + b"\n"
    hub.firmware.start("b1", 9, Package("0.8.0-old", "sim", manifest, [("app.mpy", b"x")]), older=True)
    deadline = time.monotonic() + 10
    while not sent and time.monotonic() < deadline:
        time.sleep(0.01)
    hub.firmware.stop()
    begin = parse_cmd(sent[0])
    assert (begin["type"], begin["id"], begin["older"], begin["bt"]) == ("fw", 9, True, 3)


def test_named_notifications_tell_subscribers_in_order_and_end_with_cancel(hub):
    """The catalogue's notifications (core/changes.py): a row applied is told
    after its console line is written, a rejection names its category, a
    round start's schedules go out as ToBoards; a cancelled subscriber hears
    nothing more, and a class outside the catalogue is refused."""
    heard: list = []
    subs = [hub.changes.subscribe(RowApplied, lambda n: heard.append(("row", n.row["type"], hub.activity[-1]))),
            hub.changes.subscribe(MessageRejected, lambda n: heard.append(("rejected", n.category))),
            hub.changes.subscribe(ToBoards, lambda n: heard.append(("boards", sorted(o.topic for o in n.messages))))]
    hub.start_round(hub.clock.t)
    press(hub, at=hub.clock.t + 1000)
    hub.handle(P.board_topic("b1", P.EVENT), b"not json", hub.clock.t)
    assert heard[0][:2] == ("row", "round_start") and heard[0][2].startswith("operator: round start at ")
    assert heard[1] == ("boards", ["tt/v1/b/b1/sched", "tt/v1/b/b2/sched"])
    assert heard[2][:2] == ("row", "press") and heard[2][2].startswith("press b1/1 at ")
    assert heard[3:] == [("rejected", "forged")]                  # (not signed with b1's key)
    for sub in subs:
        sub.cancel()
    heard.clear()
    press(hub, seq=2, at=hub.clock.t + 2000)
    assert heard == []
    with pytest.raises(TypeError, match="not a notification"):
        hub.changes.subscribe(dict, print)


def test_alert_and_blind_sources_are_registered_and_withdrawn_by_name(hub):
    hub.queries.add_alerts("the test", lambda: ["ONE"])
    hub.queries.add_alerts("the test", lambda: ["TWO"])        # the same name again: replaced
    assert "TWO" in hub.alerts() and "ONE" not in hub.alerts()
    hub.queries.add_blind("the test", lambda: "the hub cannot be reached")
    assert hub.blind() == "the hub cannot be reached"
    hub.queries.drop_alerts("the test")
    hub.queries.drop_blind("the test")
    assert "TWO" not in hub.alerts() and hub.blind() is None


def test_no_part_of_the_service_is_handed_the_service_or_the_state(hub):
    """Issue 46 item 2: each part is given the collaborators it uses by
    name; none holds the service or its state (admission read st.firmware,
    which only the service had)."""
    from tabletimer.hub.core.hub_state import HubState
    parts = {"admission": hub.admission, "answers": hub.answers, "commands": hub.commands,
             "actions": hub.actions, "timekeeper": hub.timekeeper, "split": hub.split, "firmware": hub.firmware}
    holding = {name: sorted(k for k, v in vars(part).items() if isinstance(v, HubState))
               for name, part in parts.items()}
    assert holding == {name: [] for name in parts}
    assert hub.admission.firmware is hub.firmware and hub.answers.admission is hub.admission


def test_the_service_holds_its_state_and_is_not_one(hub):
    """Issue 46 item 2: HubService composes the state (hub_state.py) and its
    parts; it is no subclass of the state, no part (nor the state) holds the
    service or the state, and what the service's callers read of it is its
    public face: the state's internals (the locks, the write path, the boots)
    are the state's, reached as such."""
    from tabletimer.hub.core.hub_state import HubState
    assert not issubclass(HubService, HubState) and isinstance(hub.state, HubState)
    parts = {"state": hub.state, "admission": hub.admission, "answers": hub.answers, "commands": hub.commands,
             "actions": hub.actions, "timekeeper": hub.timekeeper, "split": hub.split, "firmware": hub.firmware}
    holding = {name: sorted(k for k, v in vars(part).items() if isinstance(v, (HubState, HubService)))
               for name, part in parts.items()}
    assert holding == {name: [] for name in parts}
    # the face reads the state's own objects (one store, one clock, one fold ...), and nothing forwards by magic
    assert (hub.store, hub.clock, hub.competition, hub.registry, hub.changes, hub.counts) == (
        hub.state.store, hub.state.clock, hub.state.competition, hub.state.registry, hub.state.changes,
        hub.state.counts)
    assert not hasattr(HubService, "__getattr__")
    for internal in ("lock", "writer", "write", "apply", "boots", "publish", "record", "live", "caught_up"):
        assert not hasattr(hub, internal), internal
