"""The day's results for the prize-giving (hub/outputs/day_results.py,
`tabletimer results DIR --day`) and a round's own results naming it, on an
event folder of three rounds made as an organizer does (`round add`, the
CSV files) with logs recorded through the service as `tabletimer act`
records them: the individuals over (an unofficial guest fastest, a tie for
the second award place, a fourth place off the podium), the pairs in
progress (one finish not confirmed yet), the teams not started.  The page is
rendered by Chromium through Playwright (skipped without it, except under
CI=true)."""

from __future__ import annotations

import csv
import io
import json
import re
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest

from rendering import chromium_or_skip

from tabletimer.hub.cli import main as cli
from tabletimer.hub.event.folder import event_folder
from tabletimer.hub.outputs import day_results
from tabletimer.tools.testing.browser import launch
from event_log import finish, record

S, M = 1000, 60_000
GENERATED = datetime(2026, 12, 3, 18, 5, tzinfo=timezone.utc)
TITLE = "A day of rounds"






def make_day(tmp: Path, now: int) -> Path:
    """indiv (CZJPA individuals, awards 1-3 for Czech entrants) over 5 h ago;
    pairs (90 min) started 30 min before now; teams without a log."""
    hall = tmp / "day"
    for name, preset in (("indiv", "czjpa-individuals"), ("pairs", "czjpa-pairs"), ("teams", "czjpa-teams")):
        event_folder.add_round(hall, name, preset, TITLE)
    indiv = hall / "rounds" / "indiv"
    (indiv / "entrants.csv").write_text(
        "id,name,eligible\n1,Jana Nováková,yes\n2,<b>&Guest,no\n3,Petr Dvořák,yes\n4,Eva Svobodová,yes\n"
        "5,Karel Veselý,yes\n6,Lucie Malá,yes\n", encoding="utf-8")
    (indiv / "stations.csv").write_text("board,button,table,entrant\n" + "".join(
        f"T0{i},1,Table {i},{i}\n" for i in range(1, 7)), encoding="utf-8")
    (hall / "rounds" / "pairs" / "entrants.csv").write_text(
        "id,name,kind,members,eligible\nP1,The Edges,pair,Anna|Ben,yes|yes\nP2,Mixed Up,pair,Cid|Dan,yes|no\n"
        "P3,Slow Hands,pair,Eli|Fay,yes|yes\n", encoding="utf-8")
    (hall / "rounds" / "pairs" / "stations.csv").write_text(
        "board,button,table,entrant\nT01,1,Table 1,P1\nT02,1,Table 2,P2\nT03,1,Table 3,P3\n", encoding="utf-8")
    start = now - 5 * 3_600_000
    record(hall, "indiv", [("round_start", {"at": start})]
           + finish("2", start + 40 * M)                 # the fastest: unofficial
           + finish("1", start + 45 * M)
           + finish("3", start + 50 * M) + finish("4", start + 50 * M)    # equal: both award place 2
           + finish("5", start + 55 * M)                 # award place 4: no prize (awards 1-3)
           + [("count", {"entrant": "6", "puzzle": 1, "placed": 300})], now)
    start = now - 30 * M
    record(hall, "pairs", [("round_start", {"at": start})]
           + finish("P1", start + 20 * M) + finish("P2", start + 25 * M, confirm=False), now)
    return hall


def podiums(day: day_results.DayResults) -> dict:
    return {r.name: (r.state, [(p.award_place, p.entrant, p.place, p.official, p.provisional) for p in r.podium])
            for r in day.rounds}


def test_every_round_in_order_with_its_state_and_podium(tmp_path):
    now = int(time.time() * 1000)
    hall = make_day(tmp_path, now)
    day = day_results.load_day(hall, now_ms=now)
    assert day.title == TITLE and not day.final
    assert [r.name for r in day.rounds] == ["indiv", "pairs", "teams"]
    assert [r.format.title for r in day.rounds] == ["CZJPA - individuals", "CZJPA - pairs", "CZJPA - teams"]
    assert podiums(day) == {
        # the guest ranked first shows where it placed, without an award; the tie shares award place
        # 2; Karel's award place would be 4: not on a podium of 3
        "indiv": ("final", [(None, "2", 1, False, False), (1, "1", 2, True, False), (2, "3", 3, True, False),
                            (2, "4", 3, True, False)]),
        "pairs": ("in progress", [(1, "P1", 1, True, False), (2, "P2", 2, True, True)]),
        "teams": ("not started", [])}
    assert day.rounds[1].left_ms == 60 * M
    # the same day at the pairs' time-up: provisional (a finish unconfirmed), not final
    later = day_results.load_day(hall, now_ms=now + 60 * M)
    assert podiums(later)["pairs"][0] == "provisional"
    assert day_results.state_text(later.rounds[1]).startswith("provisional")


def test_the_days_page_shows_each_rounds_podium_and_never_a_provisional_one_as_final(tmp_path):
    now = int(time.time() * 1000)
    day = day_results.load_day(make_day(tmp_path, now), now_ms=now)
    page = day_results.day_html(day, GENERATED)
    assert "<script" not in page and "<link" not in page and "src=" not in page
    assert "@page{size:A4 portrait" in page and f"<h1>{TITLE}</h1>" in page
    sections = re.findall(r'<section class="round ([^"]+)" id="round-(\w+)"[^>]*>(.*?)</section>', page, re.S)
    assert [(cls, name) for cls, name, _ in sections] == [
        ("final", "indiv"), ("in-progress", "pairs"), ("not-started", "teams")]
    indiv, pairs, teams = (body for _, _, body in sections)
    assert "CZJPA - individuals" in indiv and '<span class="state final">Final</span>' in indiv
    rows = re.findall(r"<tr class=\"(\w+)\">(.*?)</tr>", indiv, re.S)
    assert [cls for cls, _ in rows] == ["unofficial", "awarded", "awarded", "awarded"]
    assert "&lt;b&gt;&amp;Guest" in rows[0][1] and 'class="badge unofficial"' in rows[0][1]
    assert 'class="medal' not in rows[0][1] and "<b>&Guest" not in page
    assert [re.search(r'title="award place (\d)"', r).group(1) for _, r in rows[1:]] == ["1", "2", "2"]
    assert "0:45:00" in rows[1][1] and "Karel" not in indiv
    # in progress: marked provisional, with the time left; the word "final" nowhere in it
    assert "In progress: provisional" in pairs and "Round in progress, 1:00:00 left" in pairs
    assert 'class="banner"' in pairs and "final" not in pairs.lower()
    assert "The Edges" in pairs and "Anna, Ben" in pairs
    assert pairs.count('class="badge provisional"') == 1                # Mixed Up's unconfirmed finish
    assert "Not started" in teams and "<table" not in teams
    top = page.split("<section", 1)[0]
    assert 'class="banner"' in top and "pairs in progress, teams not started" in top
    final = day_results.day_html(day_results.load_day(tmp_path / "day", now_ms=now + 60 * M), GENERATED)
    assert "pairs provisional" in final and "final" not in re.search(
        r'id="round-pairs".*?</section>', final, re.S).group(0).lower()


def test_the_days_json_and_csv_list_every_round(tmp_path, capsys):
    now = int(time.time() * 1000)
    hall = make_day(tmp_path, now)
    out = tmp_path / "day.csv"
    assert cli.main(["results", str(hall), "--day", "--json", "-", "--csv", str(out)]) == 0
    std = capsys.readouterr()
    assert "round pairs: provisional: round in progress" in std.err and "round teams: not started" in std.err
    doc = json.loads(std.out)
    assert doc["title"] == TITLE and doc["final"] is False
    assert [(r["round"], r["format"], r["state"], r["final"], r["provisional"], r["awards"]) for r in doc["rounds"]] == [
        ("indiv", "format", "final", True, False, 3), ("pairs", "format", "in progress", False, True, 3),
        ("teams", "format", "not started", False, False, 3)]
    assert [(p["award_place"], p["name"]) for p in doc["rounds"][0]["podium"]] == [
        (None, "<b>&Guest"), (1, "Jana Nováková"), (2, "Petr Dvořák"), (2, "Eva Svobodová")]
    assert doc["rounds"][1]["in_progress"] is True and 0 < doc["rounds"][1]["left_ms"] <= 60 * M
    assert doc["rounds"][1]["podium"][0]["members"] == ["Anna", "Ben"]
    assert doc["rounds"][2]["podium"] == [] and doc["rounds"][2]["round_start_ms"] is None
    rows = list(csv.DictReader(io.StringIO(out.read_bytes().decode("utf-8-sig"), newline="")))
    assert list(rows[0]) == day_results.DAY_COLUMNS and list(rows[0])[0] == "round"
    assert [(r["round"], r["state"], r["award_place"], r["entrant"]) for r in rows] == [
        ("indiv", "final", "", "2"), ("indiv", "final", "1", "1"), ("indiv", "final", "2", "3"),
        ("indiv", "final", "2", "4"), ("pairs", "in progress", "1", "P1"), ("pairs", "in progress", "2", "P2"),
        ("teams", "not started", "", "")]
    assert rows[0]["name"] == "<b>&Guest" and rows[0]["official"] == "no"
    assert rows[1]["net_time"] == "0:45:00" and rows[5]["provisional"] == "yes"


def test_a_rounds_own_results_name_the_round_in_an_event_of_several(tmp_path, capsys):
    now = int(time.time() * 1000)
    hall = make_day(tmp_path, now)
    sheet = tmp_path / "pairs.html"
    assert cli.main(["results", str(hall), "--round", "pairs", "--html", str(sheet), "--json", "-"]) == 0
    assert json.loads(capsys.readouterr().out)["round"] == "pairs"
    assert f"<h1>{TITLE} \u2014 pairs (CZJPA - pairs)</h1>" in sheet.read_text(encoding="utf-8")
    assert cli.main(["results", str(hall), "--round", "indiv", "--csv", "-"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert {r["round"] for r in rows} == {"indiv"} and rows[0]["entrant"] == "2"
    # an event of one round: as before, no round named
    one = event_folder.init(tmp_path / "one", "czjpa-individuals", "One")
    record(one, None, [("round_start", {"at": now - 5 * 3_600_000})], now)
    assert cli.main(["results", str(one), "--json", "-", "--csv", str(tmp_path / "one.csv")]) == 0
    assert json.loads(capsys.readouterr().out)["round"] is None
    header = next(csv.reader(io.StringIO((tmp_path / "one.csv").read_text(encoding="utf-8-sig"))))
    assert header[:2] == ["place", "award_place"] and "round" not in header
    assert cli.main(["results", str(one), "--html", "-"]) == 0
    assert "<h1>One</h1>" in capsys.readouterr().out


def test_the_days_page_renders_in_chromium_every_podium_visible_on_one_a4_page(tmp_path):
    from playwright.sync_api import expect, sync_playwright

    now = int(time.time() * 1000)
    hall = make_day(tmp_path, now)
    page_file = tmp_path / "day.html"
    assert cli.main(["results", str(hall), "--day", "--html", str(page_file)]) == 0
    exe = chromium_or_skip()
    with sync_playwright() as p:
        browser = launch(p, exe)
        try:
            page = browser.new_page(viewport={"width": 794, "height": 1123})     # A4 at 96 dpi
            page.goto(page_file.resolve().as_uri())
            for name, names in (("indiv", ["<b>&Guest", "Jana Nováková", "Petr Dvořák", "Eva Svobodová"]),
                                ("pairs", ["The Edges", "Mixed Up"])):
                section = page.locator(f"#round-{name}")
                expect(section.locator("h2")).to_be_visible()
                rows = section.locator("table.podium tbody tr")
                expect(rows).to_have_count(len(names))
                for i, who in enumerate(names):
                    expect(rows.nth(i)).to_be_visible()
                    expect(rows.nth(i).locator(".name")).to_have_text(who)
            expect(page.locator("#round-pairs .state")).to_have_text("In progress: provisional")
            expect(page.locator("#round-pairs .banner")).to_be_visible()
            expect(page.locator("#round-teams")).to_contain_text("Not started")
            assert page.locator("#round-indiv .medal").count() == 3
            # printed: one A4 page with every round on it
            pdf = page.pdf(format="A4", print_background=True)
        finally:
            browser.close()
    boxes = re.findall(rb"/MediaBox \[0 0 ([\d.]+) ([\d.]+)\]", pdf)
    assert len(boxes) == 1, boxes
    w, h = (float(x) for x in boxes[0])
    assert abs(w - 595.3) < 2 and abs(h - 841.9) < 2


@pytest.mark.parametrize("kind", ["html", "json", "csv"])
def test_the_days_output_to_standard_output(tmp_path, capsys, kind):
    now = int(time.time() * 1000)
    hall = make_day(tmp_path, now)
    assert cli.main(["results", str(hall), "--day", f"--{kind}", "-"]) == 0
    out = capsys.readouterr().out
    assert "indiv" in out and "pairs" in out and "teams" in out and not out.startswith("\ufeff")
