"""The door's check-in page in a real browser (Chromium through Playwright,
a phone's viewport; web_rig.WebHub's real hub, log and web server): a staff
badge signs in, an entrant found by name or by the QR code's
/checkin?entrant=ID, marked present and undone, "N of M checked in" live
(also for a check-in made at the desk); a check-in of someone not in the
round refused with what to do and nothing stored (issue 47, item 3)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tabletimer.hub.outputs.check_in_list import check_in_path
from web_rig import EVIL, PHONE, WebHub, browser  # noqa: F401  (browser: a fixture)


@pytest.fixture
def hub(tmp_path):
    h = WebHub(tmp_path)
    yield h
    h.close()


def entrant(page, eid: str):
    return page.locator(f'#entrants li[data-entrant="{eid}"]')


def test_found_by_name_marked_present_and_undone_with_the_count(hub, browser):
    with hub.phone(browser, hub.anna, "/checkin") as page:
        expect(page.locator("h1")).to_have_text("Check-in")
        expect(page.locator("#count")).to_have_text("0 of 4 checked in")
        expect(page.locator("#entrants li")).to_have_count(4)
        page.locator("#search").fill("bo")
        expect(page.locator("#entrants li")).to_have_count(1)
        bob = entrant(page, "2")
        expect(bob).to_contain_text("Table 1")
        bob.locator('[data-act="in"]').tap()
        expect(page.locator("#count")).to_have_text("1 of 4 checked in")
        expect(bob).to_contain_text("checked in by Anna")
        (row,) = hub.rows("check_in")
        assert (row["payload"]["entrant"], row["payload"]["present"], row["payload"]["who"]) == ("2", 1, "Anna")
        bob.locator('[data-act="undo"]').tap()
        expect(page.locator("#count")).to_have_text("0 of 4 checked in")
        expect(bob.locator('[data-act="in"]')).to_be_visible()
        assert [r["payload"]["present"] for r in hub.rows("check_in")] == [1, 0]
        # a check-in at the desk (or another phone) shows here by itself
        hub.svc.act("check_in", {"entrant": "3"}, who="desk")
        page.locator("#search").fill("")
        expect(page.locator("#count")).to_have_text("1 of 4 checked in")
        expect(entrant(page, "3")).to_contain_text("checked in by desk")
        expect(entrant(page, "4").locator("b")).to_have_text(EVIL)        # a name is text, never HTML
        assert page.title() != "pwned"


def test_a_badges_qr_code_opens_the_page_on_its_entrant(hub, browser):
    assert check_in_path("3") == "/checkin?entrant=3"
    with hub.phone(browser, hub.anna, check_in_path("3")) as page:
        expect(page.locator("#search")).to_have_value("3")
        expect(page.locator("#entrants li")).to_have_count(1)
        entrant(page, "3").locator('[data-act="in"]').tap()
        expect(page.locator("#count")).to_have_text("1 of 4 checked in")
    assert [r["payload"]["entrant"] for r in hub.rows("check_in")] == ["3"]


def test_a_check_in_that_cannot_be_is_refused_with_what_to_do_and_nothing_stored(hub, browser):
    status, answer = hub.phone_act(hub.anna, {"action": "check_in", "payload": {"entrant": "99"}})
    assert status == 400
    assert "check_in: no entrant '99' in this round: nothing was recorded. Search again by name" in answer["error"]
    assert hub.rows("check_in") == []
    hub.svc.act("check_in", {"entrant": "1"}, who="Bert")             # another phone, a moment before
    status, answer = hub.phone_act(hub.anna, {"action": "check_in", "payload": {"entrant": "1"}})
    assert status == 400 and "check_in: 1 was checked in already (by Bert at" in answer["error"]
    assert len(hub.rows("check_in")) == 1
    with hub.phone(browser, hub.anna, "/checkin") as page:              # what the page says of a refusal
        expect(page.locator("#count")).to_have_text("1 of 4 checked in")
        page.evaluate("TT.act({action: 'check_in', payload: {entrant: '99'}, label: 'x'})")
        expect(page.locator("#message")).to_contain_text("no entrant '99' in this round")
        expect(page.locator("#message")).to_have_class("message error")
    assert len(hub.rows("check_in")) == 1


def test_without_a_badge_the_page_says_to_sign_in(hub, browser):
    ctx = browser.new_context(**PHONE)
    try:
        page = ctx.new_page()
        r = page.goto(f"{hub.url}/checkin?entrant=2")
        assert r is not None and r.status == 401
        expect(page.locator("body")).to_contain_text("sign in first: scan your staff badge")
    finally:
        ctx.close()
