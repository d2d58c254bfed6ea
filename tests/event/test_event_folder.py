"""Event folders: init from a preset, CSV entrants and stations as
registration tools export them, clear errors with line numbers."""

from __future__ import annotations

import re

import pytest

from tabletimer.hub.event import event_folder as ef


def test_init_then_load_every_preset(tmp_path):
    from tabletimer.hub.rules.formats import preset_names

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
    from tabletimer.hub.rules.standings import is_official
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
    d = ef.init(tmp_path / "ev", "cz-championship-individuals")
    (d / "entrants.csv").write_text(entrants)
    (d / "stations.csv").write_text(stations)
    with pytest.raises(ef.EventFolderError, match=message):
        ef.load(d)


def test_warnings_for_capacity_duplicate_names_and_missing_stations(tmp_path):
    d = ef.init(tmp_path / "ev", "czjpa-individuals")      # capacity 100
    rows = ["id,name,eligible"] + [f"{i},Person {i},yes" for i in range(1, 102)] + ["102,Person 1,no"]
    (d / "entrants.csv").write_text("\n".join(rows) + "\n")
    (d / "stations.csv").write_text("board,button,entrant\nT01,1,1\n")
    ev = ef.load(d)
    text = "\n".join(ev.warnings)
    assert "102 entrants; the format allows 100" in text
    assert "name 'Person 1' also on line 2" in text
    assert "no station for" in text


def test_a_format_with_prizes_for_eligible_entrants_only_needs_the_eligible_column(tmp_path):
    # czjpa: prizes only for participants from the Czech Republic; read without
    # the column, a foreigner would be official and could take a Czech prize
    d = ef.init(tmp_path / "ev", "czjpa-individuals")
    (d / "stations.csv").write_text("board,button,entrant\nT01,1,1\nT01,2,2\n")
    (d / "entrants.csv").write_text("id,name\n1,Jana\n2,Hans\n")
    with pytest.raises(ef.EventFolderError, match=r"entrants.csv:1: missing column\(s\) eligible: format.toml "
                       r"\(prizes.eligible_members_min = 1\) gives prizes only to eligible entrants \(participants from the "
                       r"Czech Republic\); add the column with yes or no"):
        ef.load(d)
    (d / "entrants.csv").write_text("id,name,eligible\n1,Jana,yes\n2,Hans,\n")
    with pytest.raises(ef.EventFolderError, match=r"entrants.csv:3: 'eligible' is empty"):
        ef.load(d)
    (d / "entrants.csv").write_text("id,name,eligible\n1,Jana,yes\n2,Hans,no\n")
    from tabletimer.hub.rules.standings import is_official
    ev = ef.load(d)
    assert [is_official(ev.format, e) for e in ev.entrants] == [True, False]
    # a team's members: every one yes or no
    t = ef.init(tmp_path / "teams", "rogaland-teams")
    (t / "entrants.csv").write_text("id,name,members,eligible\nT1,Lag,A|B|C,yes||yes\n")
    with pytest.raises(ef.EventFolderError, match=r"entrants.csv:2: 'eligible' is empty.*for every member"):
        ef.load(t)
    # a format where everyone is official does not need it
    c = ef.init(tmp_path / "open", "cz-championship-individuals")
    (c / "entrants.csv").write_text("id,name\n1,Jana\n")
    (c / "stations.csv").write_text("board,button,entrant\nT01,1,1\n")
    assert ef.load(c).entrants[0].eligible


def test_init_with_an_unknown_preset_names_the_nearest(tmp_path, capsys):
    from tabletimer.hub.cli import main as cli

    assert cli.main(["init", str(tmp_path / "ev"), "--format", "czjpa-individual"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: no such preset 'czjpa-individual'; did you mean 'czjpa-individuals'"), err
    assert "Traceback" not in err and not (tmp_path / "ev").exists()
    assert cli.main(["init", str(tmp_path / "ev"), "--format", "nothing-like-it"]) == 2
    err = capsys.readouterr().err
    assert "no such preset 'nothing-like-it'; (presets: cz-championship-individuals" in err
    # a format file of one's own works too
    from tabletimer.hub.rules.formats import format_text

    own = tmp_path / "mine.toml"
    own.write_text(format_text("rogaland-pairs"))
    assert cli.main(["init", str(tmp_path / "second"), "--format", str(own)]) == 0
    assert ef.load(tmp_path / "second").format.kind == "pair"


# a file name or a path (seeds/..., docs/formats.md, 000_....txt) in a generated file
_REFERENCE = re.compile(r"[\w.-]+/[\w./-]*\w|[\w-]+(?:\.[\w-]+)*\.(?:txt|md|toml|csv|json|sqlite|html)\b")


def test_generated_files_cite_nothing_the_event_folder_lacks(tmp_path):
    from tabletimer.hub.rules.formats import preset_names

    for name in preset_names():
        d = ef.init(tmp_path / name, name)
        for f in sorted(d.iterdir()):
            for ref in _REFERENCE.findall(f.read_text()):
                if re.fullmatch(r"[a-z]+(?:/[a-z]+)+", ref):
                    continue          # words, such as yes/no or found/lost/adjacent
                assert (d / ref).exists(), f"{f.name} of {name} cites {ref!r}, which the folder does not have"
