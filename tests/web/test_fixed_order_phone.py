"""Seed 003's fixed order on the referees' phones (issue 47, item 5): "Det
er ikke tilladt at springe et puslespil over" (skipping a puzzle is not
allowed).  Team A's board has a button per puzzle; a press on puzzle 2
before puzzle 1 is a CONFLICT line on the head referee's calls page (and
in the desk's alerts), its call cannot be confirmed on a phone (the
page says why and what to do, nothing is stored), and a count of a puzzle
whose earlier ones are not finished is refused the same way.  The referee
voids the wrong call on the phone: the conflict is gone."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from web_rig import PHONE, WebHub, browser  # noqa: F401  (browser: a fixture)

ENTRANTS = "id,name,members\nA,Alfa,a1|a2\nB,Beta,b1|b2\n"
STATIONS = ("board,button,table,entrant,puzzle\nB1,1,Table 1,A,1\nB1,2,Table 1,A,2\nB1,3,Table 1,A,3\n"
            "B2,1,Table 2,B,\n")


@pytest.fixture
def hub(tmp_path):
    h = WebHub(tmp_path, "dk-team-championship", entrants=ENTRANTS, stations=STATIONS)
    h.start()
    h.press("B1", 2)                                   # A's puzzle 2, before puzzle 1: B1/1/1, "B1-1"
    yield h
    h.close()


def station(page, board: str, button: int):
    return page.locator(f'[data-station="{board}:{button}"]')


def test_a_call_out_of_the_fixed_order_is_a_conflict_the_phone_cannot_confirm(hub, browser):
    (alert,) = [a for a in hub.svc.alerts() if a.startswith("CONFLICT")]
    assert alert.startswith("CONFLICT at Table 1 (A): call B1-1 is puzzle 2"), alert
    ctx = browser.new_context(**PHONE)
    ctx.set_default_timeout(10_000)
    try:
        calls = ctx.new_page()
        calls.goto(f"{hub.url}/signin?token={hub.anna}")
        expect(calls.locator("#conflicts li")).to_have_count(1)
        expect(calls.locator("#conflicts li")).to_contain_text(
            "puzzle 1 is not finished before it (fixed order, none skipped): not a finish, not credited")
        table = ctx.new_page()
        table.goto(f"{hub.url}/t/Table%201")
        wrong = station(table, "B1", 2)
        expect(wrong).to_have_attribute("data-state", "called")
        n = len(hub.rows())
        wrong.locator('[data-act="confirm"]').tap()
        expect(table.locator("#message")).to_contain_text(
            "is no finish: this format's puzzles are done in a fixed order, none skipped, and puzzle 1 comes "
            "first, and A's puzzle 1 has no finish before it; void it")
        expect(table.locator("#message")).to_contain_text("nothing was recorded")
        assert len(hub.rows()) == n and hub.rows("confirm") == []
        # the team had pressed the wrong button: the referee voids the call, with a reason
        wrong.locator('input[name="reason"]').fill("wrong button: puzzle 1 is on the table")
        wrong.locator('[data-act="void-arm"]').tap()
        wrong.locator('[data-act="void"]').tap()
        expect(table.locator("#message")).to_contain_text("stored: void")
        expect(calls.locator("#conflicts")).to_be_hidden()
        assert [a for a in hub.svc.alerts() if a.startswith("CONFLICT")] == []
        assert next(r for r in hub.svc.standings() if r.entrant == "A").pieces == 0
    finally:
        ctx.close()


def test_a_count_of_a_puzzle_before_the_earlier_ones_is_refused_on_the_phone(hub):
    status, answer = hub.phone_act(hub.anna, {"action": "count", "request": "anna-c1",
                                              "payload": {"entrant": "B", "puzzle": 2, "placed": 300}})
    assert status == 400, answer
    assert answer["error"].startswith("count: B's puzzle 2 is not on the table: this format's puzzles are done "
                                      "in a fixed order"), answer
    assert "count puzzle 1 instead" in answer["error"] and answer["error"].endswith("nothing was recorded")
    assert hub.rows("count") == []
