"""Event folders: init from a preset, CSV entrants and stations as
registration tools export them, clear errors with line numbers."""

from __future__ import annotations

import pytest

from tabletimer.hub import event_folder as ef


def test_init_then_load_every_preset(tmp_path):
    from tabletimer.hub.formats import preset_names

    for name in preset_names():
        d = ef.init(tmp_path / name, name)
        ev = ef.load(d)
        assert ev.format.name and ev.entrants and ev.stations
        assert all(ev.station(s.board, s.button) == s for s in ev.stations)
    with pytest.raises(ef.EventFolderError, match="already holds an event"):
        ef.init(tmp_path / name, name)


def test_bom_semicolons_members_and_eligibility(tmp_path):
    d = ef.init(tmp_path / "ev", "rogaland-teams")
    (d / "entrants.csv").write_bytes(
        "\ufeffID;Name;Kind;Members;Eligible;Notes\n"
        "T1;Bitene;team;Åse|Bjørn|Cato|Dina;yes|yes|no|yes;\n"
        "T2;Gjester;team;Eva|Finn|Gro;no|no|yes;unofficial\n".encode("utf-8"))
    (d / "stations.csv").write_text("board;button;table;entrant;puzzle\nT01;1;Bord 1;T1;\nT02;1;Bord 2;T2;\n")
    ev = ef.load(d)
    t1, t2 = ev.entrants
    assert t1.name == "Bitene" and [m.name for m in t1.members] == ["Åse", "Bjørn", "Cato", "Dina"]
    assert [m.eligible for m in t1.members] == [True, True, False, True]
    from tabletimer.hub.standings import is_official
    assert is_official(ev.format, t1) and not is_official(ev.format, t2)
    assert ev.station("T02", 1).entrant == "T2" and ev.station("T02", 1).table == "Bord 2"


@pytest.mark.parametrize("entrants,stations,message", [
    ("id,name\n1,A\n1,B\n", "board,button,entrant\nT01,1,1\n", r"entrants.csv:3: id '1' already used on line 2"),
    ("id,name,kind\n1,A,team\n", "board,button,entrant\nT01,1,1\n", r"entrants.csv:2: kind 'team'"),
    ("id,name,colour\n1,A,red\n", "board,button,entrant\nT01,1,1\n", r"entrants.csv:1: unknown column\(s\) colour"),
    ("id,name,eligible\n1,A,perhaps\n", "board,button,entrant\nT01,1,1\n", r"entrants.csv:2 \(eligible\): expected yes or no"),
    ("id,name\n1,A\n", "board,button,entrant\nT01,x,1\n", r"stations.csv:2: button must be a number"),
    ("id,name\n1,A\n", "board,button,entrant\nT 1,1,1\n", r"stations.csv:2: board"),
    ("id,name\n1,A\n", "board,button,entrant\nT01,1,9\n", r"stations.csv:2: no entrant '9'"),
    ("id,name\n1,A\n", "board,button,entrant\nT01,1,1\nT01,1,1\n", r"stations.csv:3: T01 button 1 already on line 2"),
    ("id,name\n1,A\n", "board,button,entrant,puzzle\nT01,1,1,2\n", r"stations.csv:2: puzzle 2; the format has 1"),
    ("id,name\n1,A\n", "board,entrant\nT01,1\n", r"stations.csv:1: missing column\(s\) button"),
])
def test_bad_rows_are_named_by_file_and_line(tmp_path, entrants, stations, message):
    d = ef.init(tmp_path / "ev", "czjpa-individuals")
    (d / "entrants.csv").write_text(entrants)
    (d / "stations.csv").write_text(stations)
    with pytest.raises(ef.EventFolderError, match=message):
        ef.load(d)


def test_warnings_for_capacity_duplicate_names_and_missing_stations(tmp_path):
    d = ef.init(tmp_path / "ev", "czjpa-individuals")      # capacity 100
    rows = ["id,name"] + [f"{i},Person {i}" for i in range(1, 102)] + ["102,Person 1"]
    (d / "entrants.csv").write_text("\n".join(rows) + "\n")
    (d / "stations.csv").write_text("board,button,entrant\nT01,1,1\n")
    ev = ef.load(d)
    text = "\n".join(ev.warnings)
    assert "102 entrants; the format allows 100" in text
    assert "name 'Person 1' also on line 2" in text
    assert "no station for" in text
