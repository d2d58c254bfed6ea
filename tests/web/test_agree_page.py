"""The competitor's agreement on a referee's phone (issue 47, item 4), in a
real browser on a real hub (web_rig.WebHub): after the confirmation the
card offers "Competitor agreed to the time"; one tap stores an `agree` row
with the referee's name and the card says "competitor agreed"; a phone's
void of the agreed time is refused (an objection is the head referee's, at
the desk), and nothing is stored."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from web_rig import WebHub, browser, calls_page  # noqa: F401  (browser: a fixture)


@pytest.fixture
def hub(tmp_path):
    h = WebHub(tmp_path)
    yield h
    h.close()


@pytest.fixture
def phone(browser, hub):
    ctx, page = calls_page(browser, hub)
    yield page
    ctx.close()


def test_the_competitor_agrees_with_one_tap_and_a_phone_cannot_change_it_after(hub, phone):
    hub.start()
    hub.press("B1", 2)                                    # Bob calls
    phone.locator("#calls li a").tap()
    bob = phone.locator('[data-station="B1:2"]')
    expect(bob).to_have_attribute("data-state", "called")
    call = hub.station("Table 1", "2")["call"]
    bob.locator('[data-act="confirm"]').tap()
    expect(bob).to_have_attribute("data-state", "done")
    agree = bob.locator('[data-act="agree"]')
    expect(agree).to_have_text("Competitor agreed to the time")
    agree.tap()
    expect(bob.locator("[data-agreed]")).to_have_text("competitor agreed")
    rows = hub.rows("agree")
    assert [(r["payload"]["press_id"], r["payload"]["who"]) for r in rows] == [(call, "Anna")]
    expect(bob.locator('[data-act="agree"]')).to_have_count(0)

    before = len(hub.rows("void"))
    answer = phone.evaluate("""async (pid) => {
        const r = await fetch('/r/api/act', {method: 'POST', headers: {'Content-Type': 'application/json',
            'X-TableTimer': '1'}, body: JSON.stringify({action: 'void', payload: {press_id: pid},
            why: 'wrong', table: 'Table 1'})});
        return [r.status, (await r.json()).error];
    }""", call)
    assert answer[0] == 400 and "the competitor agreed to this time (Anna" in answer[1], answer
    answer = phone.evaluate("""async (pid) => {
        const r = await fetch('/r/api/act', {method: 'POST', headers: {'Content-Type': 'application/json',
            'X-TableTimer': '1'}, body: JSON.stringify({action: 'void', payload: {press_id: pid, objection: 'x'},
            why: 'wrong', table: 'Table 1'})});
        return [r.status, (await r.json()).error];
    }""", call)
    assert answer[0] == 400 and "an objection is the head referee's decision, made at the desk" in answer[1]
    assert len(hub.rows("void")) == before
