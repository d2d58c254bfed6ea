"""A standby's copy of the primary's log (hub/event/log/replica.py and
EventStore.copy_rows): rows stored as the primary has them, on real SQLite
files; rows that do not follow on, of another event or of the wrong shape
are refused whole, nothing stored."""

from __future__ import annotations

import pytest

from tabletimer.hub.event.log.replica import continuation_problem, differing_files, log_term, row_problem
from tabletimer.hub.event.log.store import EventStore


def primary_rows(tmp_path) -> tuple[list[dict], int]:
    store = EventStore(tmp_path / "primary.sqlite")
    try:
        store.append("operator", "round_start", {"at": 5}, 5)
        store.append_board_event("S1", {"v": 1, "type": "press", "in": "ab", "boot": 2, "seq": 1, "station": 1,
                                        "at": 7}, 8)
        store.append("board", "status", {"v": 1, "type": "status", "state": "online", "boot": 2}, 9, board="S1")
        return store.events(), store.event_id
    finally:
        store.close()


def test_a_copy_is_the_primarys_log_row_for_row_and_takes_its_event_id(tmp_path):
    rows, eid = primary_rows(tmp_path)
    copy = EventStore(tmp_path / "copy.sqlite")
    try:
        assert copy.copy_rows(rows[:1], eid) == 1 and copy.copy_rows(rows[1:], eid) == 2
        assert copy.events() == rows and copy.event_id == eid and copy.last_id() == rows[-1]["id"]
        # the board event keeps its identity: a retransmission of it is a duplicate in the copy too
        assert copy.append_board_event("S1", dict(rows[1]["payload"], ctr=9), 10) == ("duplicate", None)
    finally:
        copy.close()
    again = EventStore(tmp_path / "copy.sqlite")       # the event id is the copy's for good
    assert again.event_id == eid
    again.close()


def test_rows_that_do_not_follow_on_or_of_another_event_are_refused_whole(tmp_path):
    rows, eid = primary_rows(tmp_path)
    copy = EventStore(tmp_path / "copy.sqlite")
    try:
        copy.copy_rows(rows[:2], eid)
        with pytest.raises(ValueError, match="does not follow on from row #2"):
            copy.copy_rows([rows[1], rows[2]], eid)
        with pytest.raises(ValueError, match="rows of another event"):
            copy.copy_rows(rows[2:], eid + 1)
        with pytest.raises(ValueError, match="payload must be an object"):
            copy.copy_rows([dict(rows[2], payload="x")], eid)
        assert copy.events() == rows[:2]                 # nothing of the refused batches
    finally:
        copy.close()


@pytest.mark.parametrize("row, problem", [
    ("x", "a row must be an object"),
    ({"id": 0, "received_ms": 1}, "id must be a whole number"),
    ({"id": 1, "received_ms": True}, "received_ms must be a whole number"),
    ({"id": 1, "received_ms": 1, "source": "phone"}, "source 'phone' is none of"),
    ({"id": 1, "received_ms": 1, "source": "hub", "type": ""}, "type must be text"),
    ({"id": 1, "received_ms": 1, "source": "hub", "type": "t", "board": 3}, "board must be text or null"),
])
def test_a_row_of_the_wrong_shape_is_named(row, problem):
    assert problem in row_problem(row)
    assert problem in continuation_problem(0, None, 7, [row])


def test_the_primary_must_say_its_event_and_the_folder_must_be_a_copy():
    assert "gave no event id" in continuation_problem(0, None, None, [])
    assert continuation_problem(0, 3, 7, []) is None              # an empty copy takes the primary's
    here = {"format.toml": "a", "entrants.csv": "b", "stations.csv": "c"}
    assert differing_files(here, dict(here)) == []
    assert differing_files(here, dict(here, **{"entrants.csv": "B"})) == ["entrants.csv"]


def test_a_logs_term_is_1_or_its_highest_takeovers():
    def takeover(**p):
        return {"source": "hub", "type": "takeover", "payload": p}
    assert log_term([]) == 1
    assert log_term([{"source": "operator", "type": "takeover", "payload": {"term": 7}}]) == 1
    assert log_term([takeover(term=3), takeover(term=2)]) == 3
    # a takeover recorded before terms were, or with a term that is not a whole number: the first
    assert log_term([takeover()]) == 2 and log_term([takeover(term="9")]) == 2 and log_term([takeover(term=True)]) == 2
