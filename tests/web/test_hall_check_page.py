"""The hall check on the referees' calls page, in a real browser (Chromium
through Playwright, a phone's viewport) on a real hub (web_rig.WebHub: a
real HubService on a real SQLite log, signed board messages through
HubService.handle): no section without a check; the check's beginning
shows the hall's progress and, per table, the buttons not pressed and the
boards not ready; a board's press takes its button off the list live (the
page's own stream); the verdict, or the round's start, takes the section
away, and the page is the calls page as it was."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tabletimer.shared import protocol as P
from web_rig import EVIL, WebHub, browser, calls_page  # noqa: F401  (browser: a fixture)


@pytest.fixture
def hub(tmp_path):
    h = WebHub(tmp_path)
    yield h
    h.close()


@pytest.fixture
def phone(browser, hub):
    ctx, page = calls_page(browser, hub)
    expect(page.locator("#link")).to_have_class("link live")       # the stream is open
    yield page
    ctx.close()


def stray(hub: WebHub, board: str, button: int) -> None:
    """A button pressed at a station not running, as the board sends it."""
    seq = hub.ctr.get(board, 0) + 1
    hub.board(board, P.event("stray", 1, seq, button, hub.svc.clock.now_ms(), err=2, state="idle"))


def calls_json(hub: WebHub, page) -> dict:
    """What the page's API answers now (the page's own cookie)."""
    r = page.request.get(f"{hub.url}/r/api/calls")
    assert r.status == 200
    return r.json()


def test_the_calls_page_follows_a_hall_check_from_its_beginning_to_its_verdict(hub, phone):
    section = phone.locator("#hallcheck")
    expect(section).to_be_hidden()
    assert "hall_check" not in calls_json(hub, phone)                   # the calls page as without a check
    hub.board("B1", P.status_online(1, "0.3.0", 3, rssi=-50), kind=P.STATUS)
    hub.svc.act("hall_check", {"phase": "begin"}, who="desk")
    expect(section).to_be_visible()
    expect(phone.locator("#hallcheck-progress")).to_have_text("Hall check: 0/2 boards ready, 0/4 buttons pressed")
    buttons = phone.locator("#hallcheck-todo li.button")
    expect(buttons).to_have_count(4)
    table1 = phone.locator('#hallcheck-todo > li[data-table="Table 1"]')
    expect(table1).to_contain_text("board B1")
    expect(table1.locator('[data-button="B1:2"]')).to_have_text("button 2 (Bob): not pressed yet")
    table2 = phone.locator('#hallcheck-todo > li[data-table="Table 2"]')
    expect(table2.locator("li.problem")).to_have_text(
        "board B2: offline: power it on, check its WiFi (it has never been heard)")
    expect(table2.locator('[data-button="B2:1"]')).to_have_text(f"button 1 ({EVIL}): not pressed yet")  # as text
    expect(phone).not_to_have_title("pwned")

    stray(hub, "B1", 2)                                            # Bob's button, pressed once
    expect(phone.locator('[data-button="B1:2"]')).to_have_count(0)
    expect(buttons).to_have_count(3)
    expect(phone.locator("#hallcheck-progress")).to_have_text("Hall check: 0/2 boards ready, 1/4 buttons pressed")
    stray(hub, "B1", 1)
    stray(hub, "B1", 3)
    expect(table1).to_have_count(0)                                # board B1 ready: Table 1 done
    expect(phone.locator("#hallcheck-progress")).to_have_text("Hall check: 1/2 boards ready, 3/4 buttons pressed")
    expect(phone.locator("#calls li")).to_have_count(0)            # the check's presses are no calls
    phone.goto(phone.url.split("?")[0] + "?lang=da")               # the same page on a Danish phone
    expect(phone.locator("#hallcheck-progress")).to_have_text("Salstjek: 1/2 bokse klar, 3/4 knapper trykket")

    hub.svc.act("hall_check", {"phase": "verdict", "ready": 0, "report": "not ready: B2"}, who="desk")
    expect(section).to_be_hidden()
    assert "hall_check" not in calls_json(hub, phone)
    expect(phone.locator("#nocalls")).to_be_visible()


def test_the_rounds_start_ends_the_check_on_the_page(hub, phone):
    hub.svc.act("hall_check", {"phase": "begin"}, who="desk")
    expect(phone.locator("#hallcheck")).to_be_visible()
    hub.start(ago_ms=0)                                            # no verdict: the round started
    expect(phone.locator("#hallcheck")).to_be_hidden()
    assert "hall_check" not in calls_json(hub, phone)
