"""The hall check's verdicts (hub/fleet/hall_check.py), directly: pure
logic on stations, what the registry knows of each board and the rows of
the check; and the check's log rows through a real HubService on a real
SQLite log (the action's shape, the round started, a check press not a
stray, the console's lines while it runs)."""

from __future__ import annotations

import pytest

from tabletimer.hub.fleet.hall_check import BoardCheck, HallCheck, check_hall, checklist
from tabletimer.hub.protocol.keys import BoardKeys
from tabletimer.hub.core.registry import BoardInfo
from tabletimer.hub.core.service import HubService
from tabletimer.hub.event.log.action_rows import shape_problem
from tabletimer.hub.event.fold.competition import Competition
from tabletimer.hub.event.folder.event_folder import Station
from tabletimer.hub.event.log.store import EventStore
from tabletimer.hub.rules.formats import load_format
from tabletimer.hub.rules.facts import Entrant
from tabletimer.hub.rules.timetext import fmt_clock
from clocks import FixedClock

STATIONS = [Station("A1", 1, "Table A", "1", None), Station("A1", 2, "Table A", "2", None),
            Station("B1", 1, "Table B", "3", None)]


def row(board: str, station: int, typ: str = "stray", err: int | None = 3, at: int | None = 1000) -> dict:
    p = {"station": station, "at": at, "boot": 1, "seq": 1}
    if err is not None:
        p["err"] = err
    return {"source": "board", "type": typ, "board": board, "payload": p}


def online(board: str, **kw) -> BoardInfo:
    return BoardInfo(board, online=True, fw=kw.pop("fw", "0.3.0"), rssi=kw.pop("rssi", -55),
                     mem_free=kw.pop("mem", 40_000), flash_free=kw.pop("flash", 1_000_000),
                     journal=kw.pop("journal", 0))


def test_a_board_is_ready_when_online_every_button_pressed_and_its_clock_and_wifi_good():
    check = check_hall(STATIONS, {"A1": online("A1"), "B1": online("B1")},
                       [row("A1", 1), row("A1", 2), row("B1", 1)], began_ms=1)
    assert check.ready and [b.ready for b in check.boards] == [True, True]
    assert check.stations == (3, 3)


@pytest.mark.parametrize("info, rows, reason", [
    (None, [], "offline: power it on"),
    (BoardInfo("B1", online=False, fw="0.3.0"), [row("B1", 1)], "offline: check its power and WiFi"),
    (online("B1"), [], "button 1 not pressed yet"),
    (online("B1"), [row("B1", 1, at=None, err=None)], "no clock"),
    (online("B1"), [row("B1", 1, err=51)], "clock error ±51 ms, over ±50 ms"),
    (online("B1", rssi=-81), [row("B1", 1)], "WiFi signal -81 dBm, below -80 dBm"),
    (online("B1", flash=100_000), [row("B1", 1)], "flash nearly full (97 KB free)"),
], ids=["never-heard", "offline", "not-pressed", "no-clock", "bad-clock", "weak-wifi", "flash-full"])
def test_each_reason_a_board_is_not_ready(info, rows, reason):
    boards = {"A1": online("A1")} | ({"B1": info} if info is not None else {})
    check = check_hall(STATIONS, boards, [row("A1", 1), row("A1", 2)] + rows, began_ms=1)
    b1 = check.boards[1]
    assert not b1.ready and not check.ready and check.boards[0].ready
    assert any(r.startswith(reason) for r in b1.reasons), b1.reasons


def test_the_limits_are_the_callers_and_an_older_firmware_is_a_note_not_a_reason():
    check = check_hall(STATIONS[2:], {"B1": online("B1", fw="0.2.0", rssi=-85, mem=4000)},
                       [row("B1", 1, err=80)], began_ms=1, hub_fw="0.3.0", clock_limit_ms=100, rssi_min=-90)
    (b1,) = check.boards
    assert b1.ready, b1.reasons
    assert any("firmware 0.2.0, older than this hub's 0.3.0" in n for n in b1.notes)
    assert any("free heap 4000 bytes" in n for n in b1.notes)
    (b1,) = check_hall(STATIONS[2:], {"B1": online("B1", journal=12)}, [row("B1", 1)], began_ms=1).boards
    assert b1.ready and any(n.startswith("12 entries in its journal at its start") for n in b1.notes), b1.notes
    assert check_hall(STATIONS[2:], {"B1": online("B1", fw="0.10.0")}, [row("B1", 1)], 1,
                      hub_fw="0.3.0").boards[0].notes == []          # 0.10 is newer than 0.3


def test_a_press_of_another_board_or_a_button_not_in_stations_counts_for_nothing():
    check = check_hall(STATIONS[2:], {"B1": online("B1")}, [row("B1", 2), row("Z9", 1)], began_ms=1)
    assert check.boards[0].pressed == [] and not check.ready


def test_the_checklist_says_the_verdict_then_a_line_per_board():
    check = HallCheck(5, [BoardCheck("A1", [1, 2], [1, 2], True, "0.3.0", -60, 30_000, 4,
                                     flash_free=1_500_000, journal=2),
                          BoardCheck("B1", [1], [], True, "0.3.0", None, None, None, ["button 1 not pressed yet"])])
    text = checklist(check, "Cup")
    assert text.splitlines()[0] == "Cup: hall NOT READY: 1/2 boards ready, 2/3 buttons pressed"
    assert ("[x] A1: ready (fw 0.3.0, WiFi -60 dBm, clock ±4 ms, heap 29 KB, flash 1464 KB free, journal 2, "
            "buttons 2/2)") in text
    assert ("[ ] B1: NOT READY (fw 0.3.0, WiFi ?, clock ?, heap ?, flash ?, journal ?, buttons 0/1)\n"
            "      - button 1 not pressed yet") in text
    assert checklist(HallCheck(None, [])) == "no hall check begun"
    assert not HallCheck(None, []).ready                  # no check: not ready


def test_the_hall_check_action_takes_a_beginning_or_a_verdict():
    assert shape_problem("hall_check", {"phase": "begin"}) is None
    assert shape_problem("hall_check", {"phase": "verdict", "ready": 1, "report": "ok"}) is None
    assert "phase is begin or verdict" in shape_problem("hall_check", {"phase": "later"})
    assert "phase is begin or verdict" in shape_problem("hall_check", {"phase": "verdict"})   # no ready
    assert "phase is begin or verdict" in shape_problem("hall_check", {"phase": "begin", "ready": 1})
    assert "outside 0..1" in shape_problem("hall_check", {"phase": "verdict", "ready": 2})
    assert "phase is needed" in shape_problem("hall_check", {})


def _service(tmp_path) -> HubService:
    fmt = load_format("czjpa-individuals")
    entrants = [Entrant(id=s.entrant, name=f"E{s.entrant}") for s in STATIONS]
    keys = BoardKeys(tmp_path / "keys.json")
    return HubService(EventStore(tmp_path / "events.sqlite"), keys, Competition(fmt, entrants, STATIONS))


def _board_row(svc: HubService, board: str, station: int, seq: int) -> dict:
    now = svc.clock.now_ms()
    msg = {"v": 1, "type": "stray", "boot": 1, "seq": seq, "station": station, "at": now, "err": 2, "state": "idle"}
    return svc.store.append_board_event(board, msg, now)[1]


def test_a_press_of_the_check_is_no_stray_and_the_console_shows_what_the_check_waits_for(tmp_path):
    svc = _service(tmp_path)
    try:
        svc.catch_up()
        early = _board_row(svc, "A1", 1, 1)                     # before the check: a stray
        svc.catch_up()
        assert any(a.startswith("stray press A1 button 1") for a in svc.alerts())
        svc.act("hall_check", {"phase": "begin"}, who="desk")
        late = _board_row(svc, "A1", 2, 2)
        svc.catch_up()
        comp = svc.competition
        assert not comp.in_hall_check(early) and comp.in_hall_check(late)
        alerts = svc.alerts()
        assert alerts[0] == "HALL CHECK: 0/2 boards ready, 1/3 buttons pressed", alerts
        assert any(a.startswith("hall check: A1 not ready: offline") for a in alerts)
        assert not any("stray press A1 button 2" in a for a in alerts)     # the check's press
        svc.act("hall_check", {"phase": "verdict", "ready": 0, "report": "..."}, who="desk")
        assert not any(a.startswith("HALL CHECK") for a in svc.alerts())   # its verdict given
        svc.start_round()
        with pytest.raises(ValueError, match="the round has started"):
            svc.check_action("hall_check", {"phase": "begin"})
    finally:
        svc.store.close()


class FakeClock(FixedClock):
    """Hub time held at t."""


def test_a_check_runs_from_its_beginning_to_its_verdict_or_the_rounds_start(tmp_path):
    clock = FakeClock(1_800_000_000_000)
    fmt = load_format("czjpa-individuals")
    entrants = [Entrant(id=s.entrant, name=f"E{s.entrant}") for s in STATIONS]
    svc = HubService(EventStore(tmp_path / "events.sqlite"), BoardKeys(tmp_path / "keys.json"),
                     Competition(fmt, entrants, STATIONS), clock)
    try:
        assert svc.hall_check_running() is None and svc.hall_check().began_ms is None     # none begun
        begun = svc.act("hall_check", {"phase": "begin"}, who="desk")
        _board_row(svc, "B1", 1, 1)
        svc.catch_up()
        running = svc.hall_check_running()
        assert running is not None and running.began_ms == begun["received_ms"]
        assert running.stations == (1, 3) and running.progress() == svc.hall_check().progress()
        svc.act("hall_check", {"phase": "verdict", "ready": 0, "report": "..."}, who="desk")
        assert svc.hall_check_running() is None                     # its verdict given
        assert svc.hall_check().stations == (1, 3)                   # the latest check, as it ended
        svc.act("hall_check", {"phase": "begin"}, who="desk")       # checked again: its own presses
        assert svc.hall_check_running().stations == (0, 3)
        svc.start_round(at_ms=clock.t + 60_000)                     # a start in a minute: still before it
        assert svc.hall_check_running() is not None
        clock.t += 60_000
        assert svc.hall_check_running() is None                     # the round has started
        assert not any(a.startswith("HALL CHECK") for a in svc.alerts())
    finally:
        svc.store.close()


def test_every_view_of_a_check_judges_by_the_limits_it_began_with(tmp_path):
    svc = _service(tmp_path)
    try:
        svc.catch_up()
        svc.act("hall_check", {"phase": "begin", "clock_limit": 1}, who="desk")    # ±1 ms: the stray's ±2 is over
        _board_row(svc, "A1", 1, 1)
        svc.catch_up()
        check = svc.hall_check_running()          # the defaults asked for, the recorded limit used
        assert any("clock error ±2 ms, over ±1 ms" in r for r in check.boards[0].reasons), check.boards[0].reasons
    finally:
        svc.store.close()


def _board_event(svc: HubService, board: str, station: int, seq: int, typ: str, at: int, received: int) -> dict:
    msg = {"v": 1, "type": typ, "boot": 1, "seq": seq, "station": station, "at": at, "err": 2}
    if typ == "stray":
        msg["state"] = "idle"
    return svc.store.append_board_event(board, msg, received)[1]


def test_the_rounds_start_ends_the_check_and_a_press_at_or_after_it_never_counts(tmp_path):
    """Issue 44, item 8: the hall check still running when the round
    started counted a finish press after the start as a board's check
    press ("hall READY 2/2" though nobody pressed B2 during the check).  The
    check ends at the round's start (an armed start: its instant); a press
    at or after it is a call, never the check's, however early it reached
    the hub (a board clock ahead of the hub's by its error) and even once
    the start is moved later (a restart): the check does not run again."""
    clock = FakeClock(1_800_000_000_000)
    fmt = load_format("czjpa-individuals")
    entrants = [Entrant(id=s.entrant, name=f"E{s.entrant}") for s in STATIONS]
    svc = HubService(EventStore(tmp_path / "events.sqlite"), BoardKeys(tmp_path / "keys.json"),
                     Competition(fmt, entrants, STATIONS), clock)
    try:
        svc.act("hall_check", {"phase": "begin"}, who="desk")
        start = clock.t + 60_000
        svc.start_round(at_ms=start)                         # armed a minute ahead: the check runs until then
        _board_event(svc, "A1", 1, 1, "stray", clock.t + 1000, clock.t + 1000)       # the check's
        # B1's finish call 5 ms after the start, on a clock 20 ms ahead of the hub's: it arrives "before" the start
        _board_event(svc, "B1", 1, 2, "press", start + 5, start - 15)
        svc.catch_up()
        assert svc.hall_check_running().stations == (1, 3)  # before the start: B1's call is no check press
        clock.t = start
        _board_event(svc, "A1", 2, 3, "press", start, start + 40)         # a call at the start's instant
        svc.catch_up()
        assert svc.hall_check_running() is None              # the start ended it
        check = svc.hall_check()
        assert check.stations == (1, 3) and [b.pressed for b in check.boards] == [[1], []]
        assert check.ended_by_start_ms == start
        text = checklist(check)
        assert text.splitlines()[1] == (f"the check ended at the round's start ({fmt_clock(start)}): presses from "
                                        "then on are calls, not the check's"), text
        assert not any(a.startswith("HALL CHECK") for a in svc.alerts())
        clock.t = start + 120_000                            # a false start: the round starts again in 10 min
        svc.start_round(at_ms=clock.t + 600_000)
        _board_event(svc, "B1", 1, 4, "stray", clock.t + 1000, clock.t + 1000)
        svc.catch_up()
        assert svc.hall_check_running() is None              # it ended at the first start, for good
        again = svc.hall_check()
        assert again.stations == (1, 3) and again.ended_by_start_ms == start
    finally:
        svc.store.close()


def test_a_start_moved_before_its_instant_moves_the_checks_end_and_a_verdict_before_it_ends_it_first(tmp_path):
    clock = FakeClock(1_800_000_000_000)
    fmt = load_format("czjpa-individuals")
    entrants = [Entrant(id=s.entrant, name=f"E{s.entrant}") for s in STATIONS]
    svc = HubService(EventStore(tmp_path / "events.sqlite"), BoardKeys(tmp_path / "keys.json"),
                     Competition(fmt, entrants, STATIONS), clock)
    try:
        svc.start_round(at_ms=clock.t + 60_000)             # armed before the check began
        svc.act("hall_check", {"phase": "begin"}, who="desk")
        assert svc.competition.hall_check_end_ms() == clock.t + 60_000
        clock.t += 30_000
        svc.start_round(at_ms=clock.t + 300_000)            # moved later before it came: the check goes on
        clock.t += 60_000
        _board_event(svc, "A1", 1, 1, "stray", clock.t, clock.t)
        svc.catch_up()
        assert svc.hall_check_running().stations == (1, 3)
        svc.act("hall_check", {"phase": "verdict", "ready": 0, "report": "..."}, who="desk")
        clock.t += 600_000                                   # the round has started since: the verdict ended it
        assert svc.hall_check().ended_by_start_ms is None
        assert "the round's start" not in checklist(svc.hall_check())
    finally:
        svc.store.close()


def test_a_check_stray_made_under_the_round_befores_schedule_is_this_rounds_check_press(tmp_path):
    """Issue 45, item 4: before a round's start the hub sends no schedule,
    so a board left on holds the round before's ('ev' another event id) and
    every press of the check is a stray under it.  One made during this
    round's check is the check's (not flagged, counted); one made before the
    check (sent late from a journal) or outside a check stays another
    event's, flagged."""
    svc = _service(tmp_path)
    try:
        svc.catch_up()
        comp = svc.competition
        other = (svc.event_id or 0) + 1

        def stray(station: int, seq: int, at: int) -> dict:
            msg = {"v": 1, "type": "stray", "boot": 1, "seq": seq, "station": station, "at": at, "err": 2,
                   "state": "stopped", "ev": other}
            row = svc.store.append_board_event("A1", msg, svc.clock.now_ms())[1]
            svc.catch_up()
            return row
        before = stray(1, 1, svc.clock.now_ms())                 # no check yet: another event's
        assert before["id"] in comp.flagged
        svc.act("hall_check", {"phase": "begin"}, who="desk")
        began = comp.hall_check_row()["received_ms"]
        journaled = stray(1, 2, began - 5_000)                  # pressed before the check began
        pressed = stray(2, 3, svc.clock.now_ms())
        assert journaled["id"] in comp.flagged and pressed["id"] not in comp.flagged
        assert comp.check_stray(pressed) and not comp.check_stray(journaled)
        assert svc.hall_check().boards[0].pressed == [2]
    finally:
        svc.store.close()


def test_a_rounds_hub_numbers_its_commands_above_the_round_befores(tmp_path):
    """Issue 45, item 4: a hub's counters run up to a block (CTR_BLOCK) ahead
    of the clock (the block an `act` reserved first); the next round's hub,
    on a new log, numbered from the clock, and the board left on refused its
    acks and sync replies as replays for up to a minute: its check presses
    were sent again and again.  Above every counter the other rounds'
    hubs reserved, it is not."""
    from tabletimer.hub.core.board_commands import CTR_BLOCK, FOLLOW_AHEAD_MS

    before = EventStore(tmp_path / "round-1.sqlite")
    now = _service(tmp_path / "clock").clock.now_ms()
    before.reserve("hub_ctr", CTR_BLOCK, now)
    before.reserve("hub_ctr", CTR_BLOCK, now)                    # a second block: two minutes ahead
    top = before.reserved("hub_ctr")
    assert top == now + 2 * CTR_BLOCK
    before.close()
    svc = _service(tmp_path)
    try:
        svc.check_writable()
        svc.follow_rounds({1: tmp_path / "round-1.sqlite"})
        assert svc.commands.next_ctr() > top
    finally:
        svc.store.close()
    # a log whose acts reserved far ahead (each `act` a block): never more than FOLLOW_AHEAD_MS
    # ahead of the clock, which a board would refuse as a counter jump (5 minutes)
    far = EventStore(tmp_path / "round-2.sqlite")
    for _ in range(8):
        far.reserve("hub_ctr", CTR_BLOCK, now)
    far.close()
    svc = _service(tmp_path / "again")
    try:
        svc.check_writable()
        svc.follow_rounds({2: tmp_path / "round-2.sqlite"})
        n = svc.commands.next_ctr()
        assert now + 2 * CTR_BLOCK < n <= svc.clock.now_ms() + FOLLOW_AHEAD_MS + 1
    finally:
        svc.store.close()
