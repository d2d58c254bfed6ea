"""The broker's takeover notices in the hub's words (hub/boards/takeovers.py):
pure, no broker."""

from __future__ import annotations

import json

from tabletimer.hub.boards.takeovers import TAKEOVER_ALERT_MS, Takeovers


def notice(client, old, new, **extra) -> bytes:
    return json.dumps({"type": "takeover", "client": client, "old": old, "new": new, **extra}).encode()


def test_a_board_back_from_its_own_address_is_no_alert_another_address_is_until_it_ages():
    t = Takeovers(lambda cid: f"board {cid[3:]}")
    assert t.heard(notice("tt-B3", "10.0.0.5:4000", "10.0.0.5:4001"), 1000) is None   # its WiFi dropped
    assert t.alerts(1000) == [] and t.seen == 1
    assert t.heard(notice("tt-B3", "10.0.0.5:4001", "10.0.0.9:5000"), 2000) is not None
    assert t.heard(notice("tt-B3", "10.0.0.9:5000", "10.0.0.5:4002"), 3000) is not None   # it took it back
    [line] = t.alerts(3000)
    assert line.startswith("board B3: its connection was taken over 2 times between 10.0.0.5 and 10.0.0.9")
    assert t.alerts(3000 + TAKEOVER_ALERT_MS) == []


def test_anything_but_a_notice_on_the_topic_is_dropped():
    t = Takeovers()
    for junk in (b"", b"{", b"[]", json.dumps({"type": "x"}).encode(), notice("", "a:1", "b:2"),
                 notice("c", 5, "b:2"), notice("c" * 200, "a:1", "b:2")):
        assert t.heard(junk, 1) is None, junk
    assert t.seen == 0 and t.alerts(1) == []
