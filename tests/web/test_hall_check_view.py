"""What the calls page shows of a hall check (hub/web/hall_check_view.py),
directly: pure, from a HallCheck (boards/hall_check.check_hall on stations,
what the registry knows of each board and the check's rows) and the
round's stations and entrants to the page's JSON."""

from __future__ import annotations

import json

from tabletimer.hub.fleet.hall_check import HallCheck, check_hall
from tabletimer.hub.core.registry import BoardInfo
from tabletimer.hub.event.folder.event_folder import Station
from tabletimer.hub.rules.facts import Entrant
from tabletimer.hub.web.hall_check_view import hall_check_view

# a board serving two tables (A1), one table with two boards (Table C: C1, C2)
STATIONS = [Station("A1", 1, "Table A", "1", None), Station("A1", 2, "Table A", "2", None),
            Station("A1", 3, "Table B", "3", None), Station("C1", 1, "Table C", "4", None),
            Station("C2", 1, "Table C", "5", None)]
ENTRANTS = [Entrant(id="1", name="Alice"), Entrant(id="2", name="Bob"), Entrant(id="3", name="Carol"),
            Entrant(id="4", name=""), Entrant(id="5", name="Eve")]


def press(board: str, station: int, err: int = 3) -> dict:
    return {"source": "board", "type": "stray", "board": board,
            "payload": {"station": station, "at": 1000, "err": err, "boot": 1, "seq": 1}}


def online(board: str, rssi: int = -55) -> BoardInfo:
    return BoardInfo(board, online=True, fw="0.3.0", rssi=rssi, mem_free=40_000)


def view(boards: dict, rows: list[dict]) -> dict:
    out = hall_check_view(check_hall(STATIONS, boards, rows, began_ms=5), STATIONS, ENTRANTS)
    assert json.loads(json.dumps(out)) == out                 # JSON as it is
    return out


def test_no_check_running_is_no_section():
    assert hall_check_view(None, STATIONS, ENTRANTS) is None
    assert hall_check_view(HallCheck(None, []), STATIONS, ENTRANTS) is None      # none begun


def test_the_progress_and_each_button_not_pressed_by_table_and_button_with_its_entrant():
    v = view({"A1": online("A1"), "C1": online("C1"), "C2": online("C2")},
             [press("A1", 2), press("C1", 1)])
    assert (v["boards"], v["boards_ready"], v["pressed"], v["buttons"], v["ready"], v["began"]) == (3, 1, 2, 5, False, 5)
    assert v["todo"] == [
        {"table": "Table A", "board": "A1", "online": True, "problems": [],
         "buttons": [{"button": 1, "entrant": "1", "name": "Alice"}]},
        {"table": "Table B", "board": "A1", "online": True, "problems": [],
         "buttons": [{"button": 3, "entrant": "3", "name": "Carol"}]},
        {"table": "Table C", "board": "C2", "online": True, "problems": [],
         "buttons": [{"button": 1, "entrant": "5", "name": "Eve"}]},
    ]                               # tables in stations.csv order; C1, ready, not listed


def test_a_boards_own_problems_are_its_reasons_but_the_buttons_at_each_of_its_tables():
    v = view({"A1": BoardInfo("A1", online=False, fw="0.3.0"), "C1": online("C1", rssi=-90)},
             [press("A1", 1), press("A1", 2), press("A1", 3), press("C1", 1, err=70), press("C2", 1)])
    todo = {(t["table"], t["board"]): t for t in v["todo"]}
    assert list(todo) == [("Table A", "A1"), ("Table B", "A1"), ("Table C", "C1"), ("Table C", "C2")]
    assert todo["Table A", "A1"]["problems"] == ["offline: check its power and WiFi"]
    assert todo["Table A", "A1"]["buttons"] == [] and not todo["Table A", "A1"]["online"]
    assert todo["Table B", "A1"]["problems"] == todo["Table A", "A1"]["problems"]     # at both its tables
    c1 = todo["Table C", "C1"]["problems"]
    assert [p.split(",")[0] for p in c1] == ["clock error ±70 ms", "WiFi signal -90 dBm"], c1
    assert todo["Table C", "C2"]["problems"][0].startswith("offline: power it on")     # never heard
    assert todo["Table C", "C2"]["buttons"] == []                        # pressed, yet never heard online


def test_a_name_left_blank_is_the_entrants_id_and_every_board_ready_lists_nothing():
    rows = [press("A1", 1), press("A1", 2), press("A1", 3), press("C2", 1)]
    v = view({"A1": online("A1"), "C2": online("C2")}, rows)
    assert v["todo"] == [{"table": "Table C", "board": "C1", "online": False,
                          "problems": ["offline: power it on, check its WiFi (it has never been heard)"],
                          "buttons": [{"button": 1, "entrant": "4", "name": "4"}]}]
    v = view({b: online(b) for b in ("A1", "C1", "C2")}, rows + [press("C1", 1)])
    assert v["todo"] == [] and v["ready"] and (v["boards_ready"], v["boards"], v["pressed"], v["buttons"]) == (3, 3, 5, 5)
