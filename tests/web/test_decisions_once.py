"""One decision is recorded once (issue #32): a referee's second tap of the
same decision, sent under another idempotency key (a double tap while
offline), is that decision, not a conflict with it, and stores nothing; on
the table page a decision waiting to be sent disables its buttons.  Another
referee's or another decision on the same call is still a conflict."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from web_rig import WebHub, browser  # noqa: F401  (browser: a fixture)


@pytest.fixture
def hub(tmp_path):
    h = WebHub(tmp_path)
    yield h
    h.close()


def act(hub, token: str, body: dict) -> tuple[int, dict]:
    return hub.phone_act(token, body)


def act_in(hub, lang: str, body: dict) -> tuple[int, dict]:
    return hub.phone_act(hub.anna, body, lang=lang)


def test_the_same_confirmation_under_two_keys_is_stored_once(hub):
    hub.start()
    hub.press("B1", 1)
    pid = hub.station("Table 1", "1")["call"]
    mine = {"action": "confirm", "payload": {"press_id": pid, "missing_found": 1}, "seen": "open"}
    status, first = act(hub, hub.anna, dict(mine, request="tap-1"))
    assert status == 200 and first["duplicate"] is False, first
    # the second tap, queued while offline with the page still showing the call open
    status, second = act(hub, hub.anna, dict(mine, request="tap-2"))
    assert status == 200 and second["duplicate"] is True and second["row"]["id"] == first["row"]["id"], second
    # "record mine anyway" of one's own identical decision: still that decision
    status, third = act(hub, hub.anna, dict(mine, request="tap-3", replace=True))
    assert status == 200 and third["duplicate"] is True and third["row"]["id"] == first["row"]["id"], third
    assert len(hub.rows("confirm")) == 1
    # another decision of mine on it (other missing pieces), or another referee's: a conflict
    status, other = act(hub, hub.anna, {"action": "confirm", "payload": {"press_id": pid, "missing_found": 3},
                                        "seen": "open", "request": "tap-4"})
    assert status == 409 and "confirmed by Anna" in other["conflict"], other
    bo = hub.referees.add("Bo")
    status, theirs = act(hub, bo, dict(mine, request="bo-1"))
    assert status == 409 and "confirmed by Anna" in theirs["conflict"], theirs
    assert len(hub.rows("confirm")) == 1


def test_a_confirmation_decided_again_since_is_not_mine_any_more(hub):
    """Anna confirmed, the desk voided it: Anna's second tap is no longer
    the recorded decision, so it is a conflict (never stored silently)."""
    hub.start()
    hub.press("B1", 1)
    pid = hub.station("Table 1", "1")["call"]
    mine = {"action": "confirm", "payload": {"press_id": pid}, "seen": "open"}
    assert act(hub, hub.anna, dict(mine, request="a-1"))[0] == 200
    hub.svc.act("void", {"press_id": pid}, who="desk", why="pressed by mistake")
    status, again = act(hub, hub.anna, dict(mine, request="a-2"))
    assert status == 409, again
    assert len(hub.rows("confirm")) == 1 and len(hub.rows("void")) == 1


def test_the_same_count_twice_is_stored_once(hub):
    hub.start(ago_ms=121 * 60_000)
    count = {"action": "count", "payload": {"entrant": "1", "puzzle": 1, "placed": 400}, "seen": None}
    assert act(hub, hub.anna, dict(count, request="c-1"))[0] == 200
    status, again = act(hub, hub.anna, dict(count, request="c-2"))
    assert status == 200 and again["duplicate"] is True, again
    status, other = act(hub, hub.anna, {"action": "count", "payload": {"entrant": "1", "puzzle": 1, "placed": 401},
                                        "seen": None, "request": "c-3"})
    assert status == 409, other
    assert other["conflict"] == "this puzzle's count is 400 placed since your page showed no count", other
    # a Danish referee's phone: the conflict and its refusal in Danish, the desk's note in English
    status, dansk = act_in(hub, "da", {"action": "count", "payload": {"entrant": "1", "puzzle": 1, "placed": 402},
                                       "seen": None, "request": "c-4"})
    assert status == 409 and dansk["conflict"] == "optællingen for dette puslespil er 400 lagt, mens din side viste " \
        "ingen optælling", dansk
    assert dansk["error"].endswith(": intet blev registreret; se igen og beslut"), dansk
    status, void = act_in(hub, "da", {"action": "void", "payload": {"press_id": "B1/1/1"}, "request": "v-1"})
    assert status == 400 and void["error"].startswith("annullering: sig hvorfor"), void
    assert len(hub.rows("count")) == 1


def test_a_double_tap_offline_queues_one_decision(hub, browser):
    hub.start()
    hub.press("B1", 1)
    with hub.phone(browser, hub.anna, "/t/Table%201") as phone:
        alice = phone.locator('[data-station="B1:1"]')
        expect(alice).to_have_attribute("data-state", "called")
        phone.context.set_offline(True)
        alice.locator('[data-act="confirm"]').tap()
        expect(phone.locator("#queue")).to_contain_text("1 action not sent yet")
        confirm = alice.locator('[data-act="confirm"]')
        expect(confirm).to_be_disabled()                 # the second tap cannot make a second decision
        expect(confirm).to_contain_text("waiting to be sent")
        expect(alice.locator('[data-act="void-arm"]')).to_be_disabled()
        confirm.dispatch_event("click")                  # even a click the page did not stop
        assert phone.evaluate("JSON.parse(localStorage.getItem('tt-queue-v1')).length") == 1
        phone.context.set_offline(False)
        expect(phone.locator("#message")).to_contain_text("stored: confirm")
        expect(phone.locator("#queue")).to_be_hidden()
        assert len(hub.rows("confirm")) == 1
        expect(alice).to_have_attribute("data-state", "done")
