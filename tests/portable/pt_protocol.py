# Portable tests of shared/protocol.py (MicroPython and CPython).
import protocol as P


def raises(fn, *args):
    try:
        fn(*args)
    except P.ProtocolError:
        return True
    raise AssertionError("no ProtocolError from %r%r" % (fn, args))


def test_topics_roundtrip():
    t = P.board_topic("table-07", P.EVENT)
    assert t == "tt/v1/b/table-07/evt"
    assert P.parse_board_topic(t) == ("table-07", "evt")
    for bad in ("tt/v1/b/x/nope", "tt/v2/b/x/evt", "other/v1/b/x/evt", "tt/v1/b/x/evt/more",
                "tt/v1/b/bad id/evt", "tt/v1/b//evt"):
        raises(P.parse_board_topic, bad)


def test_hub_subscriptions_cover_board_topics():
    subs = P.hub_subscriptions()
    assert "tt/v1/b/+/evt" in subs and "tt/v1/b/+/status" in subs and "tt/v1/b/+/sync" in subs
    assert P.board_topic("b1", P.CMD) not in subs


def test_press_encode_decode():
    m = P.press(3, 17, 2, 1796000000123, 2)
    back = P.decode(P.encode(m))
    assert back == m
    assert back["at"] == 1796000000123   # big integers survive on MicroPython


def test_press_without_time_is_valid():
    m = P.decode(P.encode(P.press(1, 1, 1, None)))
    assert m["at"] is None


def test_validation_rejects_bad_messages():
    raises(P.decode, b"not json")
    raises(P.decode, b"[1, 2]")
    raises(P.decode, b'{"v": 2, "type": "press"}')
    raises(P.decode, b'{"v": 1, "type": "warp"}')
    raises(P.decode, b'{"v": 1, "type": "press", "boot": 1, "seq": 0, "station": 1, "at": 5}')
    raises(P.decode, b'{"v": 1, "type": "press", "boot": 1, "seq": 1, "station": 99, "at": 5}')
    raises(P.decode, b'{"v": 1, "type": "press", "boot": 1, "seq": 1, "station": 1, "at": "5"}')
    raises(P.decode, b'{"v": 1, "type": "press", "boot": 1, "seq": true, "station": 1, "at": 5}')
    raises(P.decode, b'{"v": 1, "type": "status", "state": "maybe", "boot": 1}')
    raises(P.decode, b'{"v": 1, "type": "status", "state": "online", "boot": 1}')
    raises(P.decode, b"x" * (P.MAX_PAYLOAD + 1))
    raises(P.encode, {"v": 1, "type": "ack", "boot": 1})


def test_status_and_ack_and_hub():
    assert P.decode(P.encode(P.status_online(4, "0.1.0", 2)))["stations"] == 2
    assert P.decode(P.encode(P.status_offline(4)))["state"] == "offline"
    assert P.decode(P.encode(P.ack(4, 9))) == {"v": 1, "type": "ack", "boot": 4, "seq": 9}
    assert P.decode(P.encode(P.hub_status("online")))["state"] == "online"


def test_sync_request_and_reply():
    req = P.decode(P.encode(P.sync_request(7, 1000)))
    rep = P.decode(P.encode(P.sync_reply(req, 5000, 5001)))
    assert (rep["id"], rep["t1"], rep["t2"], rep["t3"]) == (7, 1000, 5000, 5001)


def test_board_id_rules():
    assert P.check_board_id("A-b_9") == "A-b_9"
    raises(P.check_board_id, "")
    raises(P.check_board_id, "x" * 33)
    raises(P.check_board_id, "a/b")
    raises(P.check_board_id, "a+")
