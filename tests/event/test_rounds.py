"""An event folder's rounds (hub/event/folder/rounds.py, event_folder.load/add_round)
and a board event made under another event's schedule (Competition.event_id):
pure, files only."""

from __future__ import annotations

import pytest

from tabletimer.hub.event.folder import event_folder, rounds
from tabletimer.hub.event.fold.competition import Competition
from tabletimer.hub.event.folder.event_folder import Station
from tabletimer.hub.rules.formats import load_format
from tabletimer.hub.rules.standings import Entrant, Press


def test_rounds_are_listed_in_the_order_added_and_the_live_one_is_the_default(tmp_path):
    hall = tmp_path / "day"
    event_folder.add_round(hall, "indiv", "czjpa-individuals", "A day")
    event_folder.add_round(hall, "pairs", "czjpa-pairs")
    event_folder.add_round(hall, "2teams", "czjpa-teams")
    assert rounds.names(hall) == ["indiv", "pairs", "2teams"]          # not sorted: as added
    assert event_folder.event_title(hall) == "A day"
    with pytest.raises(event_folder.EventFolderError, match="holds 3 rounds .* --round NAME"):
        event_folder.load(hall)
    rounds.set_live(hall, "pairs")
    ev = event_folder.load(hall)
    assert (ev.round, ev.files, ev.db) == ("pairs", hall / "rounds" / "pairs",
                                           hall / "rounds" / "pairs" / "events.sqlite")
    assert ev.keys_file == hall / "board-keys.json" and ev.several_rounds    # the hall's, every round's
    assert event_folder.load(hall, "2teams").format.kind == "team"
    for bad in ("pairs", "main", "a b", "../x", ""):
        with pytest.raises(event_folder.EventFolderError):
            event_folder.add_round(hall, bad, "czjpa-pairs")
    with pytest.raises(event_folder.EventFolderError, match="holds rounds already"):
        event_folder.init(hall, "czjpa-pairs")


def test_a_folder_made_by_init_is_an_event_of_one_round_named_main(tmp_path):
    one = event_folder.init(tmp_path / "one", "czjpa-individuals")
    ev = event_folder.load(one)
    assert (ev.round, ev.files, ev.db, ev.several_rounds) == ("main", one, one / "events.sqlite", False)
    event_folder.add_round(one, "pairs", "czjpa-pairs")
    assert rounds.names(one) == ["main", "pairs"] and event_folder.load(one, "main").db == one / "events.sqlite"


def test_a_press_made_under_another_events_schedule_is_flagged_and_not_ranked():
    fmt = load_format("czjpa-individuals")
    comp = Competition(fmt, [Entrant("1", "Anna")], [Station("T01", 1, "Table 1", "1", None)], event_id=7)
    t0 = 1_000_000
    comp.apply({"id": 1, "received_ms": t0, "source": "operator", "type": "round_start", "board": None,
                "payload": {"at": t0, "duration": None, "warnings": []}})

    def press(rid: int, seq: int, ev: int | None) -> dict:
        p = {"type": "press", "boot": 1, "seq": seq, "station": 1, "at": t0 + 60_000 * seq, "err": 3}
        if ev is not None:
            p["ev"] = ev
        return {"id": rid, "received_ms": t0 + rid, "source": "board", "type": "press", "board": "T01",
                "payload": p}
    comp.apply(press(2, 1, 5))          # the round before's, left in the journal
    comp.apply(press(3, 2, 7))          # this one's
    comp.apply(press(4, 3, None))       # last month's firmware: no 'ev', this round's
    assert "made under another event's schedule (event 5)" in comp.flagged[2]
    assert sorted(f.press_id for f in comp.facts() if isinstance(f, Press)) == ["T01/1/2", "T01/1/3"]
