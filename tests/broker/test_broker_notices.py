"""The broker's takeover notices in the hub's words (hub/broker/broker_notices.py):
pure, no broker."""

from __future__ import annotations

import json

from tabletimer.hub.broker.broker_notices import ALERT_MS, BrokerNotices


def notice(client, old, new, **extra) -> bytes:
    return json.dumps({"type": "takeover", "client": client, "old": old, "new": new, **extra}).encode()


def test_a_board_back_from_its_own_address_is_no_alert_another_address_is_until_it_ages():
    t = BrokerNotices(lambda cid: f"board {cid[3:]}")
    assert t.heard(notice("tt-B3", "10.0.0.5:4000", "10.0.0.5:4001"), 1000) is None   # its WiFi dropped
    assert t.alerts(1000) == [] and t.seen == 1
    assert t.heard(notice("tt-B3", "10.0.0.5:4001", "10.0.0.9:5000"), 2000) is not None
    assert t.heard(notice("tt-B3", "10.0.0.9:5000", "10.0.0.5:4002"), 3000) is not None   # it took it back
    [line] = t.alerts(3000)
    assert line.startswith("board B3: its connection was taken over 2 times between 10.0.0.5 and 10.0.0.9")
    assert t.alerts(3000 + ALERT_MS) == []


def test_anything_but_a_notice_on_the_topic_is_dropped():
    t = BrokerNotices()
    for junk in (b"", b"{", b"[]", json.dumps({"type": "x"}).encode(), notice("", "a:1", "b:2"),
                 notice("c", 5, "b:2"), notice("c" * 200, "a:1", "b:2")):
        assert t.heard(junk, 1) is None, junk
    assert t.seen == 0 and t.alerts(1) == []


def test_refused_connections_are_one_alert_per_address_with_the_counts_until_they_age():
    t = BrokerNotices()
    refused = lambda **n: json.dumps({"type": "refused", "host": "10.0.0.66", "busy": 0, "slow": 0,  # noqa: E731
                                      "open": 16, **n}).encode()
    t.heard(refused(busy=1084), 1000)
    t.heard(refused(slow=16, open=0), 6000)
    [line] = t.alerts(6000)
    assert line.startswith("the broker refused 1100 connection(s) from 10.0.0.66 since "), line
    assert "1084 over the limit open at once from one address, 16 without a login in time" in line
    assert t.alerts(6000 + ALERT_MS) == []
    t.heard(refused(busy=3), 7000 + ALERT_MS)           # a new flood counts afresh
    assert "refused 3 connection(s)" in t.alerts(7000 + ALERT_MS)[0]
    for junk in (refused(busy=-1), refused(host=""), refused(open="x"), refused(busy=True)):
        before = dict(t.refused)
        t.heard(junk, 8000 + ALERT_MS)
        assert t.refused == before, junk
