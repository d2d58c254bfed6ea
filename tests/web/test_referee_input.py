"""Bad input at the referees' pages (issue #16): no or a wrong or revoked
badge, a table that does not exist, a count above the puzzle's size, an
oversized body, an action a referee may not take, a forged cross-site
request (from another site's page in the browser, and by hand with a
foreign Origin): a clear answer and nothing stored."""

from __future__ import annotations

import http.client
import json
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import sync_playwright

from web_rig import PHONE, WebHub, chromium
from tabletimer.tools.testing.browser import launch


@pytest.fixture
def hub(tmp_path):
    h = WebHub(tmp_path)
    h.start()
    h.press("B1", 1)
    yield h
    h.close()


def request(hub, method: str, path: str, body: bytes | None = None, token: str | None = None,
            headers: dict | None = None) -> tuple[int, dict | str]:
    u = urlsplit(hub.url)
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
    h = {"X-TableTimer": "1", "Content-Type": "application/json"} if method == "POST" else {}
    if token is not None:
        h["Cookie"] = f"tt_referee={token}"
    h.update(headers or {})
    c.request(method, path, body=body, headers=h)
    r = c.getresponse()
    data = r.read().decode()
    c.close()
    try:
        return r.status, json.loads(data)
    except ValueError:
        return r.status, data


def act(hub, body: dict, **kw) -> tuple[int, dict]:
    return request(hub, "POST", "/r/api/act", json.dumps(body).encode(), **kw)


def confirm_body(hub) -> dict:
    return {"action": "confirm", "payload": {"press_id": hub.station("Table 1", "1")["call"]}, "seen": "open"}


def test_no_wrong_or_revoked_badge_changes_nothing(hub):
    n = len(hub.rows())
    status, page = request(hub, "GET", "/t/Table%201")
    assert status == 401 and "sign in first" in page and "Nothing was changed" in page
    for token in (None, "not-a-token"):
        status, answer = act(hub, confirm_body(hub), token=token)
        assert status == 401 and "No referee is signed in" in answer["error"]
        assert request(hub, "GET", "/r/api/table/Table%201", token=token)[0] == 401
    status, page = request(hub, "GET", "/signin?token=forged")
    assert status == 401 and "not valid" in page
    bo = hub.referees.add("Bo")
    assert act(hub, {"action": "dns", "payload": {"entrant": "3"}}, token=bo)[0] == 200
    hub.referees.revoke("Bo")
    status, answer = act(hub, {"action": "dns", "payload": {"entrant": "2"}}, token=bo)
    assert status == 401
    assert len(hub.rows()) == n + 1 and [r["payload"]["who"] for r in hub.rows("dns")] == ["Bo"]


def test_a_call_named_by_its_short_press_id_is_the_call(hub):
    """A phone (or a script) may name the call as the referee reads it:
    "B1-1", board B1's first press; the intent's check and the log use the
    long id."""
    call = hub.station("Table 1", "1")
    assert (call["call"], call["call_short"]) == ("B1/1/1", "B1-1")
    status, answer = act(hub, {"action": "confirm", "payload": {"press_id": "B1-1"}, "seen": "open"},
                         token=hub.anna)
    assert status == 200, answer
    assert [r["payload"]["press_id"] for r in hub.rows("confirm")] == ["B1/1/1"]
    status, answer = act(hub, {"action": "void", "payload": {"press_id": "B1-1"}, "seen": "open",
                               "why": "late"}, token=hub.anna)
    assert status == 409 and len(hub.rows("void")) == 0, answer   # no longer open: a conflict


def test_a_table_that_does_not_exist(hub):
    status, answer = request(hub, "GET", "/r/api/table/Table%209", token=hub.anna)
    assert status == 404 and answer["error"] == "no table 'Table 9' in this event's stations.csv"
    status, page = request(hub, "GET", "/t/Table%209", token=hub.anna)
    assert status == 404 and "No table" in page


@pytest.mark.parametrize("body, status, message", [
    ({"action": "count", "payload": {"entrant": "1", "puzzle": 1, "placed": 501}}, 400, "outside 0..500"),
    ({"action": "confirm", "payload": {"press_id": "nope"}}, 400, "no press 'nope'"),
    ({"action": "round_start", "payload": {"at": 1}}, 400, "not a referee's action here"),
    ({"action": "dq", "payload": {"entrant": "1", "reason": "x"}}, 400, "not a referee's action here"),
    ({"action": "void", "payload": {"press_id": "x"}}, 400, "say why"),
    ({"action": "dns", "payload": {"entrant": "1", "extra": 1}}, 400, "unknown field(s) extra"),
    ({"action": "dns", "payload": []}, 400, "expected {action, payload"),
    ({"action": "dns", "payload": {"entrant": "1"}, "request": 5}, 400, "request a text key"),
])
def test_bad_actions_are_refused_with_a_clear_message(hub, body, status, message):
    n = len(hub.rows())
    got, answer = act(hub, body, token=hub.anna)
    assert got == status and message in answer["error"], answer
    assert "nothing was recorded" in answer["error"]
    assert len(hub.rows()) == n


def test_oversized_and_non_json_bodies(hub):
    n = len(hub.rows())
    big = json.dumps({"action": "dns", "payload": {"entrant": "1"}, "why": "x" * 20_000}).encode()
    status, answer = request(hub, "POST", "/r/api/act", big, token=hub.anna)
    assert status == 400 and "at most 16384" in answer["error"], answer
    status, answer = request(hub, "POST", "/r/api/act", b"{nope", token=hub.anna)
    assert status == 400 and "not JSON" in answer["error"]
    # nested 5,000 deep: refused before json.loads recurses (the console API's rule, shared)
    status, answer = request(hub, "POST", "/r/api/act", b"[" * 5_000 + b"]" * 5_000, token=hub.anna)
    assert status == 400 and "nested deeper than 32" in answer["error"], answer
    assert len(hub.rows()) == n


def test_a_request_with_another_sites_origin_or_without_the_pages_header(hub):
    n = len(hub.rows())
    body = json.dumps(confirm_body(hub)).encode()
    status, answer = request(hub, "POST", "/r/api/act", body, token=hub.anna,
                             headers={"Origin": "http://evil.example"})
    assert status == 403 and "another site" in answer["error"]
    status, answer = request(hub, "POST", "/r/api/act", body, token=hub.anna,
                             headers={"X-TableTimer": "", "Content-Type": "text/plain"})
    assert status == 403 and "X-TableTimer" in answer["error"]
    assert len(hub.rows()) == n


def test_another_sites_page_cannot_act_for_a_signed_in_phone(hub):
    """A signed-in phone opens a page of another site that posts a form and
    a fetch to the hub: the browser sends no cookie with them, or the hub
    refuses them; nothing is stored."""
    n = len(hub.rows())
    evil = f"""<form id=f method=POST action="{hub.url}/r/api/act" enctype="text/plain">
      <input name='{{"action":"dns","payload":{{"entrant":"1"}},"x":"' value='"}}'></form>
      <script>
        fetch("{hub.url}/r/api/act", {{method: "POST", mode: "no-cors", credentials: "include",
              body: '{{"action":"dns","payload":{{"entrant":"2"}}}}'}}).finally(() => document.getElementById("f").submit());
      </script>"""
    with sync_playwright() as p:
        b = launch(p, chromium())
        ctx = b.new_context(**PHONE)
        page = ctx.new_page()
        page.goto(f"{hub.url}/signin?token={hub.anna}")
        assert any(c["name"] == "tt_referee" for c in ctx.cookies())
        ctx.route("http://evil.example/", lambda route: route.fulfill(status=200, content_type="text/html", body=evil))
        with page.expect_navigation(url=f"{hub.url}/r/api/act"):
            page.goto("http://evil.example/")
        assert "error" in page.content()
        b.close()
    assert len(hub.rows()) == n
