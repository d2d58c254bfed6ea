"""Board liveness in the registry (pure, times as numbers) and through the
service: a board whose acks do not reach it (it sends the same event again
and again, long after the hub stored and acked it), a board online that
sends nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tabletimer.hub.protocol import hub_protocol as H
from tabletimer.hub.protocol.keys import BoardKeys
from tabletimer.hub.core.registry import BoardRegistry
from tabletimer.hub.core.service import HubService
from tabletimer.hub.event.log.store import EventStore
from tabletimer.shared import protocol as P

from test_hub_core import KEYS, FakeClock, Sender, competition

T0 = 1_796_000_000_000
# a board's retries of an unacknowledged event: 1, 2, 4, 8, then every 16 s
# (firmware/board.py), as times after its first send
RETRIES = [1000, 3000, 7000, 15_000, 31_000, 47_000]


def online(reg: BoardRegistry, board: str, t: int) -> None:
    reg.status(board, {"state": "online", "boot": 1, "fw": "0.3.0", "stations": 1, "ack": 2}, t)


def test_the_same_event_again_and_again_means_its_acks_are_lost():
    reg = BoardRegistry()
    notes = [reg.duplicate("B3", "", 1, 4, T0 + dt) for dt in RETRIES]
    # 3 times in 6 s is not yet it (an ack or two lost, a slow hub); 4 times in 14 s is
    assert notes[:3] == [None] * 3
    assert notes[3] == "board B3: its acks are not reaching it (it sent boot 1 seq 4 again 4 times in 14 s)"
    assert notes[4:] == [None, None]                     # said once
    info = reg.boards["B3"]
    assert reg.acks_lost(info, T0 + 47_000)[:2] == (1, 4)
    assert reg.liveness_alerts(info, T0 + 50_000) == [
        "board B3: its acks are not reaching it (it sent boot 1 seq 4 again 6 times in 46 s): another "
        "client may use its login or client id, or its WiFi only sends"]
    assert reg.state(info, T0 + 50_000) == ["acks lost"]
    # it stops sending it (its ack arrived): the alert goes after 40 s
    assert reg.acks_lost(info, T0 + 47_000 + 40_000) is not None
    assert reg.acks_lost(info, T0 + 47_000 + 40_001) is None
    assert reg.liveness_alerts(info, T0 + 90_000) == [] and reg.state(info, T0 + 90_000) == []
    # much later the same again: counted afresh
    assert reg.duplicate("B3", "", 1, 4, T0 + 200_000) is None
    assert reg.acks_lost(info, T0 + 200_000) is None


def test_an_ack_lost_now_and_then_is_not_an_alert():
    reg = BoardRegistry()
    for seq in range(1, 30):                       # every event sent twice or three times
        for dt in (1000, 3000):
            reg.duplicate("B1", "", 1, seq, T0 + seq * 10_000 + dt)
    assert reg.acks_lost(reg.boards["B1"], T0 + 300_000) is None
    assert reg.liveness_alerts(reg.boards["B1"], T0 + 300_000) == []


def test_the_window_of_events_resent_together_is_found():
    reg = BoardRegistry()
    notes = []
    for dt in RETRIES[:4]:                         # its window of 4, all unacknowledged, interleaved
        for seq in (4, 5, 6, 7):
            notes.append(reg.duplicate("B3", "ab12", 2, seq, T0 + dt + seq))
    assert [n for n in notes if n] == [
        f"board B3: its acks are not reaching it (it sent boot 2 seq {s} again 4 times in 14 s)" for s in (4, 5, 6, 7)]
    # many more events than a board keeps: the tracking stays small
    for seq in range(8, 200):
        reg.duplicate("B3", "ab12", 2, seq, T0 + 20_000 + seq)
    assert len(reg.boards["B3"].resent) <= 16


def test_an_online_board_that_sends_nothing_is_silent():
    reg = BoardRegistry()
    online(reg, "B2", T0)
    info = reg.boards["B2"]
    assert reg.silent_for(info, T0 + 10**6) is None          # the hub does not listen: nobody is silent
    reg.listening(T0 + 5000)
    reg.seen("B2", T0 + 30_000)
    assert reg.silent_for(info, T0 + 120_000) is None        # 90 s: three of its sync periods
    assert reg.silent_for(info, T0 + 120_001) == 90_001
    assert reg.liveness_alerts(info, T0 + 150_000) == [
        "board B2 silent for 120 s (online, but nothing from it; a board sends at least every 30 s): its "
        "WiFi or its power?"]
    assert reg.state(info, T0 + 150_000) == ["silent"]
    reg.seen("B2", T0 + 150_000)
    assert reg.silent_for(info, T0 + 150_000) is None
    # the hub's own connection came back: a board is silent only for what it has not sent since
    reg.listening(T0 + 500_000)
    assert reg.silent_for(info, T0 + 560_000) is None
    assert reg.silent_for(info, T0 + 600_000) is not None
    reg.status("B2", {"state": "offline", "boot": 1}, T0 + 600_000)
    assert reg.silent_for(info, T0 + 900_000) is None        # offline: another alert says so
    reg.listening(None)
    online(reg, "B2", T0 + 900_000)
    assert reg.silent_for(info, T0 + 10**7) is None


# ------------------------------------------------------------ the service

@pytest.fixture
def hub(tmp_path: Path):
    store = EventStore(tmp_path / "events.sqlite")
    svc = HubService(store, BoardKeys(keys=KEYS), competition(), FakeClock(T0))
    svc.sender = Sender()
    yield svc
    store.close()


def send_press(svc, board: str, seq: int) -> list:
    """The board's press (boot 1, seq), the same each time it is sent."""
    return svc.sender.send(svc, board, P.EVENT, H.press(1, seq, 1, T0 + 500))


def acks_alerts(svc) -> list[str]:
    return [a for a in svc.alerts() if "acks are not reaching" in a]


def test_the_service_shows_a_board_whose_acks_do_not_reach_it(hub):
    hub.start_round()
    t0 = hub.clock.t
    send_press(hub, "b1", 1)                 # b1: a normal board, one ack lost
    hub.clock.t = t0 + 1000
    send_press(hub, "b1", 1)
    hub.clock.t = t0
    send_press(hub, "b2", 1)                 # b2: every ack lost; it sends again as a board does
    for dt in RETRIES[:4]:
        hub.clock.t = t0 + dt
        out = send_press(hub, "b2", 1)
        assert [json.loads(o.payload.split(b"\n")[0])["type"] for o in out] == ["ack", "recorded", "stations"]
        assert sum(e["type"] == "press" for e in hub.store.events()) == 2   # answered again, stored once
    assert hub.counts.duplicates == 5
    assert acks_alerts(hub) == [
        "board b2: its acks are not reaching it (it sent boot 1 seq 1 again 4 times in 14 s): another client "
        "may use its login or client id, or its WiFi only sends"]
    assert "board b2: its acks are not reaching it (it sent boot 1 seq 1 again 4 times in 14 s)" in hub.activity
    states = {r.board: r.state for r in hub.snapshot().hall}
    assert "acks lost" not in states["b1"] and "acks lost" in states["b2"], states
    hub.clock.t = t0 + 15_000 + 41_000       # it stopped: its ack reached it
    assert acks_alerts(hub) == []


def test_the_service_shows_a_silent_board(hub):
    hub.sender.send(hub, "b1", P.STATUS, P.status_online(1, "0.2.0", 1))
    hub.sender.send(hub, "b2", P.STATUS, P.status_online(1, "0.2.0", 1))
    t0 = hub.clock.t
    hub.registry.listening(t0)                # as the MQTT adapter does when it connects
    hub.clock.t = t0 + 60_000
    hub.sender.send(hub, "b1", P.SYNC, P.sync_request(1, 5))     # b1 syncs its clock; b2 says nothing
    hub.clock.t = t0 + 100_000
    silent = [a for a in hub.alerts() if "silent" in a]
    assert silent == ["board b2 silent for 100 s (online, but nothing from it; a board sends at least every "
                      "30 s): its WiFi or its power?"]
    states = {r.board: r.state for r in hub.snapshot().hall}
    assert states["b2"].endswith("silent") and "silent" not in states["b1"], states
