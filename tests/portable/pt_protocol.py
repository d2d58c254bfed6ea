# Portable tests of shared/protocol.py (MicroPython and CPython).  The hub's
# own messages are built by hub/hub_protocol.py, which runs on CPython only
# (tests/test_hub_protocol.py); here they are written out as the hub sends
# them, for the validation both sides run.
import protocol as P


def raises(fn, *args):
    try:
        fn(*args)
    except P.ProtocolError:
        return True
    raise AssertionError("no ProtocolError from %r%r" % (fn, args))


def test_topics():
    assert P.board_topic("table-07", P.EVENT) == "tt/v1/b/table-07/evt"
    assert P.board_topic("b1", P.SCHED) == "tt/v1/b/b1/sched"


def test_press_encode_decode():
    m = P.event(P.T_PRESS, 3, 17, 2, 1796000000123, 2)
    back = P.decode(P.encode(m))
    assert P.decode(memoryview(b"xx" + P.encode(m))[2:]) == back     # a view into a packet
    assert back == m
    assert back["at"] == 1796000000123   # big integers survive on MicroPython


def test_press_without_time_is_valid():
    m = P.decode(P.encode(P.event(P.T_PRESS, 1, 1, 1, None)))
    assert m["at"] is None


def test_validation_rejects_bad_messages():
    raises(P.decode, b"not json")
    raises(P.decode, b"[1, 2]")
    raises(P.decode, b'{"v": 2, "type": "press"}')
    raises(P.decode, b'{"v": 1, "type": "warp"}')
    raises(P.decode, b"x" * (P.MAX_PAYLOAD + 1))
    raises(P.encode, {"v": 1, "type": "ack", "boot": 1})
    raises(P.encode, {"v": 1, "type": "ack", "boot": 1, "seq": 0})
    raises(P.encode, {"v": True, "type": "ack", "boot": 1, "seq": 1})
    raises(P.decode, b'{"v": 1, "type": "ack", "boot": 1, "seq": true}')
    raises(P.decode, b'{"v": 1, "type": "hub", "state": "maybe"}')
    raises(P.decode, b'{"v": 1, "type": "identify", "exp": "soon"}')
    raises(P.decode, b'{"v": 1, "type": "recorded", "station": 1, "call": [1, 1], "time": 5, "confirmed": 1}')
    raises(P.decode, b'{"v": 1, "type": "recorded", "station": 1, "call": [1], "time": 5, "confirmed": true}')
    raises(P.decode, b'{"v": 1, "type": "recorded", "station": 65, "call": [1, 1], "time": 5, "confirmed": true}')
    raises(P.decode, b'{"v": 1, "type": "sched", "id": 1, "start": 0, "end": 0, "signals": [], "calls": [0]}')
    raises(P.decode, b'{"v": 1, "type": "sched", "id": 1, "start": 0, "end": 0, "signals": [[0, "x"]]}')
    raises(P.decode, b'{"v": 1, "type": "press", "boot": 1, "seq": 1, "station": 1, "at": 5, "ctr": -1}')


def test_the_boards_own_messages_pass_on_their_envelope():
    # their fields are checked by the hub (hub/hub_protocol.py), not on the board
    m = P.decode(b'{"v": 1, "type": "press", "boot": 1, "seq": 0, "station": 99, "at": "5", "ctr": 3}')
    assert m["seq"] == 0 and m["ctr"] == 3
    raises(P.decode, b'{"v": 1, "type": "press", "boot": 1, "seq": 1, "station": 1, "at": 5, "bt": true}')


def test_status_and_ack_and_hub():
    assert P.decode(P.encode(P.status_online(4, "0.1.0", 2)))["stations"] == 2
    assert P.decode(P.encode(P.status_offline(4)))["state"] == "offline"
    ack = {"v": 1, "type": "ack", "boot": 4, "seq": 9}
    assert P.decode(P.encode(ack)) == ack
    assert P.decode(b'{"v": 1, "type": "hub", "state": "online"}')["state"] == "online"


def test_sync_request_and_reply():
    req = P.decode(P.encode(P.sync_request(7, 1000)))
    rep = {"v": 1, "type": "sync", "id": req["id"], "t1": req["t1"], "t2": 5000, "t3": 5001}
    rep = P.decode(P.encode(rep))
    assert (rep["id"], rep["t1"], rep["t2"], rep["t3"]) == (7, 1000, 5000, 5001)
    raises(P.decode, b'{"v": 1, "type": "sync", "id": 7, "t1": 1000, "t2": 5000}')


def test_schedule_calls_and_rotations():
    m = {"v": 1, "type": "sched", "id": 3, "start": 1000, "end": None, "signals": [[1000, "start"]],
         "calls": [1, 3, 99], "rot": [2000, 1000, 9000]}
    assert P.decode(P.encode(m)) == m
    for bad in ([], [1, 100], [1, True], list(range(1, 66))):
        m["calls"] = bad
        raises(P.encode, m)


def test_board_id_rules():
    assert P.check_board_id("A-b_9") == "A-b_9"
    raises(P.check_board_id, "")
    raises(P.check_board_id, "x" * 33)
    raises(P.check_board_id, "a/b")
    raises(P.check_board_id, "a+")


def test_an_ack_may_carry_its_events_answers():
    # a board's birth says it takes them ("ack": 2); the board checks them
    assert P.status_online(1, "0.3.0", 2)["ack"] == 2
    rec = {"station": 2, "call": [1, 4], "time": 61000, "confirmed": False}
    m = {"v": 1, "type": "ack", "boot": 1, "seq": 4, "recorded": rec,
         "st": [[1, None, None, 0], [2, [1, 4], 9000, 0]]}
    assert P.decode(P.encode(m)) == m
    for key, bad in (("recorded", [2, [1, 4], 61000, False]), ("recorded", dict(rec, station=65)),
                     ("recorded", dict(rec, call=[1])), ("recorded", dict(rec, call=[1, "4"])),
                     ("recorded", dict(rec, time=-1)), ("recorded", dict(rec, confirmed=0)),
                     ("st", [[5, None, None, 0]]), ("st", None)):
        bad_m = dict(m)
        bad_m[key] = bad
        raises(P.encode, bad_m)


def test_the_board_checks_the_hubs_station_states_it_follows():
    m = {"v": 1, "type": "stations", "st": [[1, None, None, 0], [2, [1, 4], 9000, 1]]}
    assert P.decode(P.encode(m)) == m
    for bad in ([[5, None, None, 0]], [[1, None, None]], [[1, [1], None, 0]], [[1, None, "x", 0]],
                [[1, None, None, True]], [[1, None, None, 0]] * 65, {"1": 1}):
        m["st"] = bad
        raises(P.encode, m)
