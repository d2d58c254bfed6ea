"""Nobody's decision is replaced without their knowing (issue #32, item 2):
the desk's preview names the decision it would replace, with who and when;
a desk decision made on what it saw, when another decision on that call was
recorded since, is refused as a conflict; every conflict (a board's, a
phone's, the desk's) is one CONFLICT line in the hub's alerts and on the
head referee's calls page until someone resolves it (a decision on it, or
`resolve`); a phone whose confirmation the desk voided is told so."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tabletimer.hub.protocol.keys import BoardKeys
from tabletimer.hub.core.service import HubService, StaleDecision
from tabletimer.hub.event.folder import event_folder
from tabletimer.hub.event.fold.competition import Competition
from tabletimer.hub.event.log.store import EventStore
from tabletimer.hub.web.table_view import calls_view
from web_rig import WebHub, browser  # noqa: F401  (browser: a fixture)


@pytest.fixture
def hub(tmp_path):
    h = WebHub(tmp_path)
    h.start()
    h.press("B1", 1)                                   # Alice calls: B1/1/1, "B1-1"
    yield h
    h.close()


def phone_act(hub, body: dict) -> tuple[int, dict]:
    return hub.phone_act(hub.anna, body)


def conflicts(hub) -> list[str]:
    return [a for a in hub.svc.alerts() if a.startswith("CONFLICT")]


def calls_page_conflicts(hub) -> list[dict]:
    return hub.svc.read(lambda comp, now: calls_view(comp, now))["conflicts"]


def anna_confirms(hub) -> dict:
    status, answer = phone_act(hub, {"action": "confirm", "payload": {"press_id": "B1/1/1"}, "seen": "open",
                                     "request": "anna-1"})
    assert status == 200, answer
    return answer["row"]


def test_the_desks_preview_names_whose_decision_it_replaces(hub):
    row = anna_confirms(hub)
    (change,) = hub.svc.consequences("void", {"press_id": "B1-1"})
    assert f"Anna's confirmation recorded at " in change and f"(log row #{row['id']})" in change, change


def test_a_desk_decision_on_a_call_decided_since_it_looked_is_a_conflict(hub):
    seen = hub.svc.latest_decision_row("void", {"press_id": "B1-1"})
    assert seen == 0                                   # the desk looks: the call is open
    anna_confirms(hub)                                 # meanwhile, at the table
    with pytest.raises(StaleDecision, match="Anna confirmed it at .* after the desk looked"):
        hub.svc.act("void", {"press_id": "B1-1", "seen": seen}, who="Eva", why="pressed by mistake")
    assert hub.rows("void") == []                      # her confirmation stands
    (line,) = conflicts(hub)
    assert line.startswith("CONFLICT (desk, Eva): void of call B1-1 not recorded: Anna confirmed it"), line
    (shown,) = calls_page_conflicts(hub)
    assert shown["text"] == line
    # the desk looks again and decides: made on what it sees now, recorded; the conflict is resolved
    seen = hub.svc.latest_decision_row("void", {"press_id": "B1-1"})
    hub.svc.act("void", {"press_id": "B1-1", "seen": seen}, who="Eva", why="pressed by mistake")
    assert len(hub.rows("void")) == 1 and conflicts(hub) == [] and calls_page_conflicts(hub) == []


def test_a_command_line_act_sees_what_the_hub_recorded_after_it_loaded(hub):
    """`tabletimer act` is another process: it loads the log, previews, and
    catches up with the hub's rows before it writes."""
    ev = event_folder.load(hub.folder)
    store = EventStore(ev.db)
    try:
        cli = HubService(store, BoardKeys(ev.keys_file), Competition(ev.format, ev.entrants, ev.stations))
        seen = cli.latest_decision_row("void", {"press_id": "B1-1"})
        anna_confirms(hub)                             # the running hub stores it
        cli.catch_up()
        with pytest.raises(StaleDecision):
            cli.act("void", {"press_id": "B1-1", "seen": seen}, who="Eva", why="late")
    finally:
        store.close()
    assert hub.rows("void") == [] and [r["type"] for r in hub.rows()][-1] == "intent_conflict"


def test_a_phones_conflict_stays_at_the_desk_until_resolved(hub):
    hub.board_confirm("B1", 1, call_seq=1)             # the referee's board button
    status, answer = phone_act(hub, {"action": "confirm", "payload": {"press_id": "B1/1/1", "missing_found": 2},
                                     "seen": "open", "request": "anna-2", "table": "Table 1"})
    assert status == 409, answer
    (line,) = conflicts(hub)
    assert line.startswith("CONFLICT at Table 1 (phone, Anna): confirm of call B1-1 not recorded: "
                           "this call is confirmed by board B1"), line
    row = calls_page_conflicts(hub)[0]["row"]
    with pytest.raises(ValueError, match="resolve: say why"):
        hub.svc.act("resolve", {"conflict": row}, who="Eva")
    with pytest.raises(ValueError, match="no open conflict"):
        hub.svc.act("resolve", {"conflict": row + 100}, who="Eva", why="checked")
    hub.svc.act("resolve", {"conflict": row}, who="Eva", why="Anna agrees with the board: 0 missing")
    assert conflicts(hub) == [] and calls_page_conflicts(hub) == []


def test_a_boards_conflict_ends_with_the_desks_decision(hub):
    hub.svc.act("void", {"press_id": "B1-1"}, who="Eva", why="false start")
    hub.board_confirm("B1", 1, call_seq=1)             # the board's confirmation of a voided call
    (line,) = conflicts(hub)
    assert "CONFLICT at board B1 button 1" in line and "resolve conflict=" in line, line
    hub.svc.act("correct", {"press_id": "B1-1", "at": hub.svc.competition.press_at("B1/1/1")}, who="Eva",
                why="the board was right")
    assert conflicts(hub) == []


def test_a_phone_is_told_when_the_desk_voids_its_confirmation(hub, browser):
    with hub.phone(browser, hub.anna, "/t/Table%201") as page:
        alice = page.locator('[data-station="B1:1"]')
        expect(alice).to_have_attribute("data-state", "called")
        alice.locator('[data-act="confirm"]').tap()
        expect(page.locator("#message")).to_contain_text("stored: confirm")
        expect(alice).to_have_attribute("data-state", "done")
        (row,) = hub.rows("confirm")
        seen = hub.svc.latest_decision_row("void", {"press_id": "B1-1"})
        assert seen == row["id"]                       # the desk saw Anna's confirmation: no conflict
        hub.svc.act("void", {"press_id": "B1-1", "seen": seen}, who="Eva", why="the wrong table's press")
        expect(alice).to_have_attribute("data-state", "running")
        expect(alice.locator(".overridden")).to_have_text(
            f"voided by Eva after Anna's confirmation (row #{row['id']}) of call B1-1")
        expect(page.locator("#message")).to_contain_text(f"(row #{row['id']}) was replaced: voided by Eva")
        calls = page.context.new_page()                # the head referee's calls page
        hub.board_confirm("B1", 1, call_seq=1)         # the board's confirmation of the voided call
        calls.goto(f"{hub.url}/calls")
        expect(calls.locator("#conflicts li")).to_have_count(1)
        expect(calls.locator("#conflicts li")).to_contain_text("CONFLICT at board B1 button 1")
        row = int(calls.locator("#conflicts li").get_attribute("data-row"))
        hub.svc.act("resolve", {"conflict": row}, who="Eva", why="the void stands")
        expect(calls.locator("#conflicts")).to_be_hidden()


def test_act_force_says_whose_decision_it_replaced(hub):
    """`act ... --force` skips the question, not the news: the desk is told
    whose decision it has just replaced."""
    import subprocess
    import sys
    from pathlib import Path
    row = anna_confirms(hub)
    tt = str(Path(sys.executable).parent / "tabletimer")
    done = subprocess.run([tt, "act", str(hub.folder), "void", "press_id=B1-1", "--who", "Eva",
                           "--why", "wrong table", "--force"], capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    assert f"Anna's confirmation recorded at" in done.stdout and f"(log row #{row['id']})" in done.stdout, done.stdout
    hub.svc.catch_up()
    (void,) = hub.rows("void")
    assert void["payload"]["seen"] == row["id"]        # what the desk saw when it decided
