"""The named change notifications of the fold (core/fold_changes.py): the
pure derivation on hand-made rows, and the sequence a small scenario
publishes through the service, by name."""

from __future__ import annotations

from pathlib import Path

import pytest

from tabletimer.hub.core import changes as C
from tabletimer.hub.core.fold_changes import Around, notes_for
from tabletimer.hub.core.service import HubService
from tabletimer.hub.event.log.rows import kind_of
from tabletimer.hub.event.log.store import EventStore
from tabletimer.hub.protocol.keys import BoardKeys
from tabletimer.hub.rules.facts import Confirm, Count, Press, Void
from tabletimer.shared import protocol as P

from test_hub_core import KEYS, FakeClock, Sender, competition, press

NONE: frozenset[int] = frozenset()


def row(rid: int, source: str, type_: str, payload: dict, board: str | None = None) -> dict:
    return {"id": rid, "received_ms": 1000 + rid, "source": source, "type": type_, "board": board,
            "install": None, "boot": None, "seq": None, "payload": payload}


def told(r: dict, facts=(), before=NONE, after=NONE, flagged=False) -> list:
    return notes_for(r, kind_of(r), Around(flagged, None if facts is None else list(facts), before, after))


def test_a_board_press_opens_a_call_at_its_station_and_changes_the_standings():
    r = row(7, "board", "press", {"station": 2, "at": 5000}, board="b1")
    assert told(r, [Press(entrant="b1/2", puzzle=1, at_ms=5000, press_id="b1/1/4")]) == [
        C.CallOpened(7, "b1/1/4", "b1/2", 1, "b1", 2), C.StandingsChanged(7)]


def test_a_press_by_hand_has_no_board():
    r = row(8, "operator", "press", {"entrant": "e1", "puzzle": 1, "at": 5000, "who": "Eva"})
    assert told(r, [Press(entrant="e1", puzzle=1, at_ms=5000, press_id="op/8")]) == [
        C.CallOpened(8, "op/8", "e1", 1, None, None), C.StandingsChanged(8)]


def test_decisions_say_how_and_by_whom():
    confirm = row(9, "operator", "confirm", {"press_id": "b1/1/4", "who": "Eva"})
    assert told(confirm, [Confirm(entrant="b1/2", puzzle=1, press_id="b1/1/4")]) == [
        C.CallDecided(9, "b1/1/4", "confirmed", "Eva"), C.StandingsChanged(9)]
    void = row(10, "board", "void", {"station": 2}, board="b1")
    assert told(void, [Void(press_id="b1/1/4")]) == [
        C.CallDecided(10, "b1/1/4", "voided", "board b1"), C.StandingsChanged(10)]
    # a correction: the call voided and a new one, in fact order
    correct = row(11, "operator", "correct", {"press_id": "b1/1/4", "at": 6000})
    assert told(correct, [Void(press_id="b1/1/4"), Press(entrant="b1/2", at_ms=6000, press_id="op/11")]) == [
        C.CallDecided(11, "b1/1/4", "voided", "operator"), C.CallOpened(11, "op/11", "b1/2", 1, None, None),
        C.StandingsChanged(11)]


def test_a_count_changes_the_standings_only():
    r = row(12, "operator", "count", {"entrant": "e1", "puzzle": 1, "placed": 300})
    assert told(r, [Count(entrant="e1", placed=300)]) == [C.StandingsChanged(12)]


def test_the_round_and_the_boards_health():
    assert told(row(1, "operator", "round_start", {"at": 0}), facts=None) == [
        C.StandingsChanged(1), C.RoundMoved(1, "round_start")]
    assert told(row(2, "operator", "hall_check", {"phase": "begin"})) == [C.RoundMoved(2, "hall_check_begin")]
    assert told(row(3, "operator", "hall_check", {"phase": "verdict", "ready": 1})) == [
        C.RoundMoved(3, "hall_check_verdict")]
    assert told(row(4, "board", "status", {"state": "online"}, board="b2")) == [
        C.BoardHealthChanged(4, "b2", "online")]


def test_conflicts_opened_and_resolved_by_their_rows():
    assert told(row(20, "hub", "conflict", {"of": 3}), before=frozenset({5}), after=frozenset({5, 20})) == [
        C.ConflictOpened(20)]
    assert told(row(21, "operator", "resolve", {"conflict": 5}), before=frozenset({5, 20}),
                after=frozenset({20})) == [C.ConflictResolved(5)]


@pytest.mark.parametrize("r", [
    row(30, "operator", "identify", {"board": "b1"}),
    row(31, "hub", "clock", {"offset": 3}),
    row(32, "operator", "settings", {"board": "b1", "set": {}}),
    row(33, "board", "fw", {"state": "ok"}, board="b1"),
    row(34, "hub", "nonsense", {}),
])
def test_rows_that_change_nothing_named_tell_nothing(r):
    assert told(r) == []


def test_a_flagged_row_tells_nothing():
    r = row(40, "board", "status", {"state": "online"}, board="b1")
    assert told(r, flagged=True) == []
    assert told(row(41, "operator", "round_start", {"at": 0}), facts=None, flagged=True) == []


@pytest.fixture
def hub(tmp_path: Path):
    svc = HubService(EventStore(tmp_path / "events.sqlite"), BoardKeys(keys=KEYS), competition(), FakeClock())
    svc.sender = Sender()
    yield svc


def test_a_small_scenario_publishes_its_notes_in_log_order(hub):
    heard: list = []
    for kind in (C.RowApplied, *C.FOLD_NOTES):
        hub.changes.subscribe(kind, heard.append)
    hub.sender.send(hub, "b1", P.STATUS, P.status_online(1, "0.1.0", 2))        # a board's birth
    hub.start_round()
    press(hub)                                                                 # the board's call b1/1/1
    hub.act("confirm", {"press_id": "b1/1/1", "missing_found": 0}, who="Eva")
    hub.act("void", {"press_id": "b1/1/1"}, who="desk")
    # the board, not told yet, confirms the call the desk voided: a conflict
    hub.sender.send(hub, "b1", P.EVENT, P.event("confirm", 1, 2, 1, hub.clock.t + 2000, call=[1, 1], missing=0))
    [conflict] = hub.competition.open_conflicts()
    hub.act("resolve", {"conflict": conflict.row}, who="Eva", why="the desk's void stands")
    ids = [n.row["id"] for n in heard if isinstance(n, C.RowApplied)]
    status, start, pressed, confirmed, voided, board_confirm, resolve = ids
    assert [n for n in heard if not isinstance(n, C.RowApplied)] == [
        C.BoardHealthChanged(status, "b1", "online"),
        C.StandingsChanged(start), C.RoundMoved(start, "round_start"),
        C.CallOpened(pressed, "b1/1/1", "b1/1", 1, "b1", 1), C.StandingsChanged(pressed),
        C.CallDecided(confirmed, "b1/1/1", "confirmed", "Eva"), C.StandingsChanged(confirmed),
        C.CallDecided(voided, "b1/1/1", "voided", "desk"), C.StandingsChanged(voided),
        C.ConflictOpened(board_confirm),
        C.ConflictResolved(board_confirm),
    ]
    # each row's notes come right after its RowApplied
    assert [type(n).__name__ for n in heard[:3]] == ["RowApplied", "BoardHealthChanged", "RowApplied"]
    assert conflict.row == board_confirm


def test_the_command_sender_tells_a_boards_changed_station_states(hub):
    hub.changes.subscribe(C.ToBoards, lambda note: None)      # a hub that sends (its MQTT link listens)
    heard: list = []
    hub.changes.subscribe(C.StationStatesChanged, heard.append)
    hub.start_round()
    press(hub)
    assert heard and heard[-1].board == "b1" and heard[-1].entries[0][0] == 2      # called
    n = len(heard)
    hub.commands.station_messages(["b1"])                                  # nothing changed: nothing told
    assert len(heard) == n
    hub.act("void", {"press_id": "b1/1/1"}, who="desk")
    assert heard[-1].board == "b1" and heard[-1].entries[0][0] == 1              # running again


def test_nobody_subscribed_nothing_is_read(hub, monkeypatch):
    from tabletimer.hub.event.fold.competition import Competition

    def boom(self):
        raise AssertionError("read with no subscriber")
    monkeypatch.setattr(Competition, "open_conflict_ids", boom)
    hub.start_round()
    press(hub)
