"""hub/protocol/hub_protocol.py: the hub's half of the wire protocol (its topics and
the messages it sends), checked against the shared validation the boards run."""

from __future__ import annotations

import pytest

from tabletimer.hub.protocol import hub_protocol as H
from tabletimer.shared import protocol as P


def test_board_topics_parse_and_bad_ones_are_refused() -> None:
    t = P.board_topic("table-07", P.EVENT)
    assert H.parse_board_topic(t) == ("table-07", "evt")
    for kind in (P.STATUS, P.SYNC, P.CMD, P.SCHED):
        assert H.parse_board_topic(P.board_topic("b1", kind)) == ("b1", kind)
    for bad in ("tt/v1/b/x/nope", "tt/v2/b/x/evt", "other/v1/b/x/evt", "tt/v1/b/x/evt/more",
                "tt/v1/b/bad id/evt", "tt/v1/b//evt", H.HUB_STATUS):
        with pytest.raises(P.ProtocolError):
            H.parse_board_topic(bad)


def test_the_hubs_own_topics() -> None:
    assert H.HUB_STATUS == "tt/v1/hub/status"            # for people and tools: boards do not read it
    assert H.PROBE == "tt/v1/hub/probe"


def test_hub_subscriptions_cover_what_boards_publish_only() -> None:
    subs = H.hub_subscriptions()
    assert set(subs) == {"tt/v1/b/+/evt", "tt/v1/b/+/status", "tt/v1/b/+/sync"}
    assert P.board_topic("b1", P.CMD) not in subs


def test_the_hubs_messages_are_valid_for_a_board() -> None:
    req = P.decode(P.encode(P.sync_request(7, 1000)))
    msgs = [H.ack(4, 9), H.sync_reply(req, 5000, 5001), H.identify(1796001810000),
            H.recorded(2, [7, 12], 3723000, False), H.recorded(1, [7, 13], None, True),
            H.hub_status(P.ONLINE), H.hub_status(P.OFFLINE),
            H.schedule(1, 1000, None, [[1000, "start"], [9000, "time_up"]]),
            H.schedule(2, 1000, 30000, [], rot=[9000, 8000, 30000], calls=[1, 3])]
    for m in msgs:
        assert P.decode(P.encode(P.stamp(m, 1796001800000))) == m
    assert H.ack(4, 9) == {"v": 1, "type": "ack", "boot": 4, "seq": 9}
    rep = H.sync_reply(req, 5000, 5001)
    assert (rep["id"], rep["t1"], rep["t2"], rep["t3"]) == (7, 1000, 5000, 5001)


def test_invalid_schedules_are_refused() -> None:
    for bad in (H.schedule(6, 0, 0, [], rot=[0, 10, 100]),             # a rotation every 10 ms
                H.schedule(6, 0, 0, [], rot=[0, 1000, 10 ** 6]),        # 1000 rotations
                H.schedule(6, 0, 0, [[0, "bang"]]),
                H.schedule(6, 0, 0, [], calls=[])):
        with pytest.raises(P.ProtocolError):
            P.encode(bad)


@pytest.mark.parametrize("body", [
    b'{"v": 1, "type": "press", "boot": 1, "seq": 0, "station": 1, "at": 5}',
    b'{"v": 1, "type": "press", "boot": 1, "seq": 1, "station": 99, "at": 5}',
    b'{"v": 1, "type": "press", "boot": 1, "seq": 1, "station": 1, "at": "5"}',
    b'{"v": 1, "type": "press", "boot": 1, "seq": true, "station": 1, "at": 5}',
    b'{"v": 1, "type": "press", "boot": -1, "seq": 1, "station": 1, "at": 5}',
    b'{"v": 1, "type": "press", "boot": 1, "seq": 1, "station": 1, "at": 5, "err": -1}',
    b'{"v": 1, "type": "status", "state": "maybe", "boot": 1}',
    b'{"v": 1, "type": "status", "state": "online", "boot": 1}',
    b'{"v": 1, "type": "status", "state": "online", "boot": 1, "fw": "", "stations": 2}',
    b'{"v": 1, "type": "status", "state": "online", "boot": 1, "fw": "1", "stations": 2, "rssi": 5}',
    b'{"v": 1, "type": "status", "state": "online", "boot": 1, "fw": "1", "stations": 2, "flash": [5]}',
    b'{"v": 1, "type": "status", "state": "online", "boot": 1, "fw": "1", "stations": 2, "flash": [-1, 0]}',
    b'{"v": 1, "type": "status", "state": "online", "boot": 1, "fw": "1", "stations": 2, "flash": "full"}',
    b'{"v": 1, "type": "stray", "boot": 1, "seq": 1, "station": 1, "at": 5, "state": "x"}',
    b'{"v": 1, "type": "stray", "boot": 1, "seq": 1, "station": 1, "at": 5, "state": "called", "missing": 0}',
    b'{"v": 1, "type": "stray", "boot": 1, "seq": 1, "station": 1, "at": 5, "state": "called", "missing": "1"}',
    b'{"v": 1, "type": "confirm", "boot": 1, "seq": 2, "station": 1, "at": 5, "call": [1], "missing": 0}',
    b'{"v": 1, "type": "confirm", "boot": 1, "seq": 2, "station": 1, "at": 5, "call": [1, 1], "missing": 1000}',
    b'{"v": 1, "type": "void", "boot": 1, "seq": 2, "station": 1, "at": 5}',
    b'{"v": 1, "type": "sync", "id": 1}',
    b'{"v": 1, "type": "warp"}',
])
def test_the_hub_refuses_a_board_message_with_bad_fields(body: bytes) -> None:
    with pytest.raises(P.ProtocolError):
        H.decode_from_board(body)


def test_the_boards_messages_pass_the_hubs_check() -> None:
    msgs = [P.status_online(4, "0.2.0", 2, mem=51200, up=12, rssi=-58), P.status_offline(4),
            H.press(3, 17, 2, 1796000000123, 2), H.press(1, 1, 1, None),
            P.event(P.T_CONFIRM, 3, 18, 2, 1796000000999, 2, call=[3, 17], missing=2),
            P.event(P.T_VOID, 3, 19, 2, None, call=[3, 17]),
            P.event(P.T_STRAY, 3, 20, 1, 5, state="done"), P.sync_request(7, 1000),
            P.event(P.T_STRAY, 3, 21, 1, 5, state="called"),            # a repeat call (issue 45, item 3)
            P.event(P.T_STRAY, 3, 22, 1, 5, state="called", missing=2)]  # the referee's count so far
    for m in msgs:
        assert H.decode_from_board(P.encode(P.stamp(m, 5, 3))) == m
    assert set(H.EVENT_TYPES) == {P.T_PRESS, P.T_CONFIRM, P.T_VOID, P.T_STRAY}


def test_a_birth_message_may_name_the_fault_that_reset_the_board():
    """'fault' (issue 14, item 8): what ended the board's previous boot, a
    short string; kept by the registry until a birth without one."""
    from tabletimer.hub.core.registry import BoardRegistry
    msg = P.status_online(2, "0.2.0", 2, fault="RuntimeError: boom (File \"app.py\", line 3, in syncer)")
    assert H.check_board_message(P.stamp(msg, 1, 2))["fault"].startswith("RuntimeError")
    for bad in ("", 7, "x" * 201, ["boom"]):
        with pytest.raises(P.ProtocolError):
            H.check_board_message(P.stamp(dict(msg, fault=bad), 1, 2))
    reg = BoardRegistry()
    assert reg.status("T1", msg, 1000).fault == msg["fault"]
    assert reg.status("T1", P.status_online(3, "0.2.0", 2), 2000).fault is None
