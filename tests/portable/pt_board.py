# Portable tests of firmware/board.py: the board's pure logic.
import protocol
from board import RETRY_MAX_MS, RETRY_MIN_MS, Board

OFF = 7200000


def synced(board, t=0):
    req = board.sync_request(t)
    reply = protocol.sync_reply(req, t + OFF + 1, t + OFF + 1)
    assert board.sync_reply(reply, t + 2) is not None


def test_press_after_sync_carries_hub_time():
    b = Board("b1", 3, 2)
    synced(b)
    e = b.press(2, 1000)
    assert e == {"boot": 3, "seq": 1, "station": 2, "at": 1000 + OFF, "err": 2}
    m = Board.event_message(e)
    assert protocol.decode(protocol.encode(m)) == m
    assert b.press(1, 1001)["seq"] == 2


def test_press_before_sync_gets_time_later():
    b = Board("b1", 1, 1)
    e = b.press(1, 500)
    assert e["at"] is None and e["local"] == 500
    assert b.due(0) == []                   # held back until converted
    assert b.resolve_times() == []
    synced(b, 1000)
    changed = b.resolve_times()
    assert changed == [e] and e["at"] == 500 + OFF and "local" not in e
    assert b.due(0) == [e]


def test_old_boot_entries_without_time_are_sent_as_unknown():
    old = {"boot": 1, "seq": 4, "station": 1, "at": None, "local": 5}
    b = Board("b1", 2, 1, [old])
    assert b.due(0) == [old]
    synced(b)
    assert b.resolve_times() == []          # another boot's clock: cannot convert
    assert Board.event_message(old)["at"] is None


def test_retry_backoff_and_ack():
    b = Board("b1", 1, 1)
    synced(b)
    e = b.press(1, 10)
    assert b.due(0) == [e]
    assert b.due(RETRY_MIN_MS - 1) == []
    assert b.due(RETRY_MIN_MS) == [e]
    t = RETRY_MIN_MS
    for _ in range(10):
        t += RETRY_MAX_MS
        assert b.due(t) == [e]
    b.retry_all_now()
    assert b.due(t) == [e]
    assert b.ack(1, 1) and not b.ack(1, 1)
    assert b.due(t + 10 * RETRY_MAX_MS) == []


def test_unknown_station_rejected():
    b = Board("b1", 1, 2)
    for st in (0, 3):
        try:
            b.press(st, 0)
        except ValueError:
            continue
        raise AssertionError("station %d accepted" % st)


def test_sync_reply_must_match_request():
    b = Board("b1", 1, 1)
    req = b.sync_request(100)
    bad = protocol.sync_reply(req, 1, 2)
    bad["t1"] = 99
    assert b.sync_reply(bad, 105) is None
    assert b.sync_reply(protocol.sync_reply(req, 1, 2), 105) is None   # already consumed
    assert not b.sync.ready
    for i in range(20):                     # lost replies do not pile up
        b.sync_request(i)
    assert len(b.sync_sent) <= 8
