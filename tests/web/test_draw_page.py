"""The team draw on a page for the hall (issue 47, item 1), in Chromium: a
team round's draw (core/before_start.py, as `tabletimer draw` and the
console make it) shown on /draw?round=teams with its number and every team
with its members, on the projector and on a phone; a draw made again shown
within seconds, the first one listed as superseded; the round's start
marked; the projector's rotation showing it in turn; a round without a draw
says so; nothing of the operators' (who, why) is sent."""

from __future__ import annotations

import http.client
import json
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import expect

from tabletimer.hub.cli import main as cli
from tabletimer.hub.core.before_start import draw_round, seat_round
from tabletimer.hub.web.round_views import EventRounds
from web_rig import PHONE, WebHub, browser  # noqa: F401  (browser: a fixture)

PROJECTOR = {"viewport": {"width": 1920, "height": 1080}}


@pytest.fixture
def hub(tmp_path):
    h = WebHub(tmp_path)
    r = h.folder / "rounds" / "teams"
    assert cli.main(["round", "add", str(h.folder), "teams", "--format", "cz-championship-teams"]) == 0
    (r / "registrations.csv").write_text("id,name,club\n" + "".join(
        f"{i},Puzzler {i:02d},Club {i % 10}\n" for i in range(1, 41)))
    (h.folder / "hall.csv").write_text("table,board,buttons\n" + "".join(
        f"Table {i},T{i:02d},8\n" for i in range(1, 13)))
    h.hall.rounds = EventRounds(h.folder, "main")        # the event's rounds, as the hall process gives them
    yield h
    h.close()


def get_json(hub, path: str) -> tuple[int, dict]:
    u = urlsplit(hub.url)
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
    c.request("GET", path)
    r = c.getresponse()
    out = r.status, json.loads(r.read())
    c.close()
    return out


def test_the_draw_on_the_projector_and_a_phone_and_drawn_again(hub, browser):
    first = draw_round(hub.folder, "teams", 4, seed=4711, apart_by="club", who="Olga", why="the first draw")
    screen = browser.new_context(**PROJECTOR).new_page()
    screen.goto(f"{hub.url}/draw?round=teams")
    expect(screen.locator("#seed")).to_have_text("4711")
    expect(screen.locator("#how")).to_contain_text("40 registered, 10 teams of 4; club kept apart")
    expect(screen.locator(".team")).to_have_count(10)
    t1 = first.draw.teams[0]
    team = screen.locator(f'.team[data-team="{t1.id}"]')
    expect(team.locator("h2")).to_have_text(t1.name)
    expect(team.locator("li")).to_have_text([m.name for m in t1.members])
    box = screen.locator(".team").last.bounding_box()
    assert box is not None and box["y"] + box["height"] <= 1080          # ten teams on one projector screen
    phone = browser.new_context(**PHONE).new_page()
    phone.goto(f"{hub.url}/draw?round=teams")
    expect(phone.locator(".team")).to_have_count(10)
    expect(phone.locator("#superseded")).to_have_text("")

    again = draw_round(hub.folder, "teams", 4, seed=4712, apart_by="club", who="Olga", why="a club mistyped")
    assert [t.members for t in again.draw.teams] != [t.members for t in first.draw.teams]
    for page in (screen, phone):                      # within the page's few seconds, no reload
        expect(page.locator("#seed")).to_have_text("4712", timeout=10_000)
        expect(page.locator("#drawn")).to_contain_text("Draw 2 (drawn again)")
        expect(page.locator("#superseded .old")).to_have_count(1)
        expect(page.locator('#superseded .old[data-n="1"]')).to_contain_text("number 4711")
    t1 = again.draw.teams[0]
    expect(screen.locator(f'.team[data-team="{t1.id}"] li')).to_have_text([m.name for m in t1.members])

    status, view = get_json(hub, "/h/api/draw?round=teams")
    assert status == 200 and view["draws"] == 2 and view["latest"]["seed"] == 4712 and not view["started"]
    sent = json.dumps(view)
    assert "Olga" not in sent and "mistyped" not in sent                # the operators' log is not the hall's

    seat_round(hub.folder, "teams", "random", seed=5)
    assert cli.main(["act", str(hub.folder), "round_start", "--round", "teams"]) == 0
    hub.hall.rounds.follow()                          # the hall process's loop reads the round's new rows
    expect(screen.locator("#state")).to_have_text("the round has started: its teams are fixed", timeout=10_000)


def test_a_round_without_a_draw_says_so_and_the_rotation_shows_the_draw(hub, browser):
    page = browser.new_context(**PHONE).new_page()
    page.goto(f"{hub.url}/draw")                        # the live round: individuals, never drawn
    expect(page.locator("#none")).to_have_text("No team draw recorded for this round yet.")
    expect(page.locator("#link")).to_have_text("live")
    expect(page.locator("#rounds a")).to_have_count(2)  # the event's rounds, each linked
    status, view = get_json(hub, "/h/api/draw?round=nope")
    assert status == 404 and "no round 'nope'" in view["error"]

    draw_round(hub.folder, "teams", 4, seed=99, who="Olga")
    screen = browser.new_context(**PROJECTOR).new_page()
    screen.goto(f"{hub.url}/rotate?screens=/draw?round=teams,/hall&every=5")
    shown = screen.frame_locator('iframe[title="/draw?round=teams"]')
    expect(shown.locator("#seed")).to_have_text("99")
    expect(shown.locator(".team")).to_have_count(10)
    expect(screen.locator("iframe.on")).to_have_attribute("title", "/draw?round=teams")
    expect(screen.locator("iframe.on")).to_have_attribute("title", "/hall", timeout=10_000)   # in turn
