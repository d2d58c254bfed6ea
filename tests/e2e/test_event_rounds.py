"""Issue 31: an event holds its rounds (hub/event/folder/rounds.py): the hall's
boards, keys and logins once, each round's format, entrants, stations and
log in DIR/rounds/NAME.  Moving the hall to the next round needs nothing
at the tables: the board (the real firmware, never restarted) takes the new
round's schedule, starts its stations afresh (nothing "done" carried over,
no stray) and its presses are the new round's, while the last round's
standings stay as they were.  A real hub (`tabletimer run --round`), the
embedded broker with the event's logins."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

from brokers import free_port
from hall import TT, Hub
from rig import made
from tabletimer.hub.protocol.keys import BoardKeys, mqtt_password
from tabletimer.hub.event.folder import event_folder, rounds
from tabletimer.hub.event.log.store import EventStore
from tabletimer.hub.fleet.simulator import SimBoard
from tabletimer.tools.testing.browser import launch
from waiting import Output, until


def tt(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([TT, *args], capture_output=True, text=True, timeout=60)


def make_day(tmp: Path) -> Path:
    hall = tmp / "day"
    for name, preset, entrant in (("indiv", "czjpa-individuals", "1,Anna,individual,,yes,"),
                                  ("pairs", "czjpa-pairs", "P1,The Edges,pair,Anna|Ben,yes|yes,")):
        r = tt("round", "add", str(hall), name, "--format", preset, "--title", "A day of rounds")
        assert r.returncode == 0, r.stderr
        d = hall / "rounds" / name
        (d / "entrants.csv").write_text("id,name,kind,members,eligible,notes\n" + entrant + "\n")
        (d / "stations.csv").write_text(f"board,button,table,entrant,puzzle\nT01,1,Table 1,{entrant[:entrant.index(',')]},\n")
    BoardKeys(hall / "board-keys.json").ensure("T01")
    return hall


def presses(log: Path) -> list[dict]:
    store = EventStore(log)
    try:
        return [e for e in store.events() if e["source"] == "board" and e["type"] in ("press", "stray")]
    finally:
        store.close()


def results(hall: Path, *round: str) -> list[dict]:
    r = tt("results", str(hall), *round, "--json", "-")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)["rows"]


@pytest.mark.parametrize("reboot", [False, True], ids=["left-on", "rebooted-between"])
def test_two_rounds_on_one_board_one_after_another_without_touching_it(tmp_path, reboot):
    """The board left on between the rounds, or rebooted between them (it
    boots with the first round's schedule in its flash)."""
    hall = make_day(tmp_path)
    port = free_port()
    key = BoardKeys(hall / "board-keys.json").key("T01")
    board = None
    hub = None
    try:
        for name, entrant in (("indiv", "1"), ("pairs", "P1")):
            r = tt("act", str(hall), "round_start", f"at={int(time.time() * 1000)}", "--round", name)
            assert r.returncode == 0, r.stderr
            hub = Hub(hall, None, "--port", str(port), "--broker-kind", "embedded", "--round", name)
            if board is not None and reboot:
                board.stop()
                board = None
            if board is None:
                board = SimBoard("T01", "127.0.0.1", port, tmp_path / "boards", key=key,
                                 broker_user="T01", broker_password=mqtt_password(key)).start()
            mark = len(board.records)
            board.wait_for(lambda rec: "sched" in rec, timeout=30, start=mark)     # this round's schedule
            pressed = int(time.time() * 1000)
            board.press(1)                                                       # the finish call
            log = hall / "rounds" / name / "events.sqlite"
            until(lambda: presses(log), f"the press stored in round {name}'s log", timeout=30,
                  seen=lambda: made(board, mark, pressed))                     # what the board made of it
            board.press(1, 2500)                                                 # the referee confirms
            until(lambda: results(hall, "--round", name)[0]["status"] == "finished",
                  f"{entrant} finished in round {name}", timeout=30,
                  seen=lambda: results(hall, "--round", name))
            out = hub.stop()
            assert hub.proc.returncode == 0, out
            hub = None
            assert rounds.live(hall) == name
        assert [e["type"] for e in presses(hall / "rounds" / "pairs" / "events.sqlite")] == ["press"]
        assert [e["type"] for e in presses(hall / "rounds" / "indiv" / "events.sqlite")] == ["press"]
        assert results(hall, "--round", "indiv")[0]["entrant"] == "1"       # the first round's stay its own
        assert results(hall)[0]["entrant"] == "P1"                            # the live round: the last run
        ids = []
        for n in ("indiv", "pairs"):
            store = EventStore(event_folder.load(hall, n).db)
            ids.append(store.event_id)
            store.close()
        assert ids[0] != ids[1], ids                                         # each round an event of its own
    finally:
        if hub is not None:
            hub.stop()
        if board is not None:
            board.stop()


def test_a_folder_of_several_rounds_asks_which_and_a_one_round_folder_needs_no_name(tmp_path):
    hall = make_day(tmp_path)
    r = tt("replay", str(hall))
    assert r.returncode == 2 and "holds 2 rounds (indiv, pairs)" in r.stderr and "--round NAME" in r.stderr
    r = tt("replay", str(hall), "--round", "teams")
    assert r.returncode == 2 and "no round 'teams' (its rounds: indiv, pairs)" in r.stderr
    assert "tabletimer round add" in r.stderr
    one = tmp_path / "one"
    assert tt("init", str(one), "--format", "czjpa-individuals", "--title", "One").returncode == 0
    assert tt("replay", str(one)).returncode == 0                           # today's folders: one round
    assert rounds.names(one) == ["main"]
    r = tt("round", "add", str(one), "pairs", "--format", "czjpa-pairs")
    assert r.returncode == 0, r.stderr
    assert rounds.names(one) == ["main", "pairs"]
    assert event_folder.load(one, "main").db == one / "events.sqlite"
    r = tt("round", "list", str(one))
    assert "main" in r.stdout and "pairs" in r.stdout


def test_a_press_left_in_a_journal_from_the_round_before_is_stored_under_that_round(tmp_path):
    """The hall moved on while a board was offline with a press of round
    indiv in its journal: the pairs' hub stores it in indiv's log (it was
    made under indiv's schedule: 'ev'), acks it, and nothing of it is in
    the pairs' log or standings."""
    hall = make_day(tmp_path)
    port = free_port()
    key = BoardKeys(hall / "board-keys.json").key("T01")
    board = hub = None
    try:
        for name in ("indiv", "pairs"):
            assert tt("act", str(hall), "round_start", f"at={int(time.time() * 1000)}",
                      "--round", name).returncode == 0
        hub = Hub(hall, None, "--port", str(port), "--broker-kind", "embedded", "--round", "indiv")
        board = SimBoard("T01", "127.0.0.1", port, tmp_path / "boards", key=key,
                         broker_user="T01", broker_password=mqtt_password(key)).start()
        board.wait_for(lambda rec: "sched" in rec, timeout=30)
        hub.stop()                                 # the hall switches: the hub and its broker go
        hub = None
        mark = len(board.records)
        board.press(1)                             # offline: journaled, not acked
        board.wait_for(lambda rec: "journaled" in rec, timeout=15, start=mark)
        hub = Hub(hall, None, "--port", str(port), "--broker-kind", "embedded", "--round", "pairs")
        board.wait_for(lambda rec: "acked" in rec, timeout=40, start=mark)
        indiv, pairs = (hall / "rounds" / n / "events.sqlite" for n in ("indiv", "pairs"))
        until(lambda: presses(indiv), "the left-over press in indiv's log", timeout=15)
        assert presses(pairs) == []
        assert results(hall, "--round", "pairs")[0]["status"] != "finished"
    finally:
        if hub is not None:
            hub.stop()
        if board is not None:
            board.stop()


def test_the_hall_pages_name_the_live_round(tmp_path):
    """The projector and the spectators' pages of an event of several
    rounds say which one runs: the event's title and the round's name (the
    category: the round's format)."""
    import urllib.request

    hall = make_day(tmp_path)
    hub = Hub(hall, None, "--port", str(free_port()), "--broker-kind", "embedded", "--round", "pairs",
              web_port=free_port())
    try:
        base = hub.hall_url()
        with urllib.request.urlopen(base + "/h/api/standings", timeout=10) as r:
            view = json.loads(r.read())
        assert view["title"] == "A day of rounds \u2014 pairs" and view["category"] == "CZJPA - pairs", view
        with urllib.request.urlopen(base + "/results.json", timeout=10) as r:
            assert json.loads(r.read())["title"] == "A day of rounds \u2014 pairs"
    finally:
        hub.stop()


def hall_get(url: str) -> tuple[int, dict]:
    """(status, JSON) of a hall page's answer, an error's too."""
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test_the_hall_pages_show_any_round_of_the_event_from_its_own_log(tmp_path):
    """With pairs live, ?round=indiv is the individuals' round: its title,
    its category, its entrants; "not started" while it has no log, then its
    own log followed as it changes (an operator's action written there),
    while the live round's pages stay the live round's."""
    hall = make_day(tmp_path)
    hub = Hub(hall, None, "--port", str(free_port()), "--broker-kind", "embedded", "--round", "pairs",
              web_port=free_port())
    try:
        base = hub.hall_url()
        assert not (hall / "rounds" / "indiv" / "events.sqlite").exists()
        status, view = hall_get(base + "/h/api/standings?round=indiv")
        assert status == 200, view
        assert view["title"] == "A day of rounds \u2014 indiv" and view["category"] == "CZJPA - individuals", view
        assert view["state"] == "before" and view["start"] is None                      # no log: not started
        assert [(r["entrant"], r["name"], r["status"]) for r in view["rows"]] == [("1", "Anna", "waiting")]
        at = int(time.time() * 1000) - 60_000
        assert tt("act", str(hall), "round_start", f"at={at}", "--round", "indiv").returncode == 0
        assert tt("act", str(hall), "dns", "entrant=1", "--round", "indiv").returncode == 0
        view = until(lambda: (lambda v: v if v["start"] == at and v["rows"][0]["status"] == "DNS" else None)(
                         hall_get(base + "/h/api/standings?round=indiv")[1]),
                     "indiv's own log, made since, followed", timeout=15, poll=0.5,    # (4 requests/s at most)
                     seen=lambda: hall_get(base + "/h/api/standings?round=indiv"))
        assert view["title"] == "A day of rounds \u2014 indiv"
        status, sheet = hall_get(base + "/results.json?round=indiv")
        assert status == 200 and sheet["title"] == "A day of rounds \u2014 indiv", sheet
        assert [r["entrant"] for r in sheet["rows"]] == ["1"]
        live = hall_get(base + "/h/api/standings")[1]                                  # the live round's, as before
        assert live["title"] == "A day of rounds \u2014 pairs" and live["start"] is None, live
        assert [r["entrant"] for r in live["rows"]] == ["P1"]
        assert hall_get(base + "/h/api/standings?round=pairs")[1]["title"] == "A day of rounds \u2014 pairs"
    finally:
        hub.stop()


def test_a_round_that_is_not_one_of_the_events_answers_404_naming_them_and_one_that_does_not_load_503(tmp_path):
    import urllib.error
    import urllib.request

    hall = make_day(tmp_path)
    hub = Hub(hall, None, "--port", str(free_port()), "--broker-kind", "embedded", "--round", "pairs",
              web_port=free_port())
    try:
        base = hub.hall_url()
        paths = ("/h/api/standings", "/h/api/stream", "/results.json", "/results.csv", "/standings", "/hall",
                 "/results")
        names = ("teams", "../indiv", "", "Indiv")
        for i, path in enumerate(paths):                # (a device's requests are limited: a few of them)
            for name in (names[i % len(names)], *(names[1:] if i == 0 else ())):
                status, body = hall_get(f"{base}{path}?round={urllib.request.quote(name)}")
                assert status == 404, (path, name, body)
                assert "its rounds are indiv, pairs (the live one: pairs)" in body["error"], body
                assert body["rounds"] == ["indiv", "pairs"] and body["live"] == "pairs"
        with urllib.request.urlopen(base + "/standings", timeout=10) as r:      # no ?round=: the live one
            page = r.read().decode()
        assert 'href="/standings?round=indiv"' in page and 'aria-current="page">pairs</a>' in page
        entrants = hall / "rounds" / "indiv" / "entrants.csv"
        good = entrants.read_text()
        entrants.write_text("who,what\n")                       # a round whose files do not load: 503
        status, body = hall_get(base + "/h/api/standings?round=indiv")
        assert status == 503 and "round 'indiv' cannot be shown now" in body["error"], body
        assert str(tmp_path) not in body["error"]                 # a public page: no path of the laptop's
        entrants.write_text(good)                                  # mended: shown (tried again a while after)
        until(lambda: hall_get(base + "/h/api/standings?round=indiv")[0] == 200, "indiv shown once it loads",
              timeout=20, poll=1.0)
    finally:
        hub.stop()
    assert "unknown column(s) who, what" in (hall / "hall-pages.log").read_text()   # the why: the organizer's


def test_a_phone_picks_another_round_and_stays_on_it(tmp_path):
    """The spectators' page links the event's rounds (the live one
    marked): a tap on indiv shows indiv's title and standings, live from
    indiv's log, and its links to the other pages keep the round."""
    from playwright.sync_api import expect, sync_playwright

    from rendering import chromium_or_skip

    exe = chromium_or_skip()
    hall = make_day(tmp_path)
    hub = Hub(hall, None, "--port", str(free_port()), "--broker-kind", "embedded", "--round", "pairs",
              web_port=free_port())
    try:
        base = hub.hall_url()
        with sync_playwright() as p:
            b = launch(p, exe)
            try:
                page = b.new_context(viewport={"width": 390, "height": 844}).new_page()
                page.set_default_timeout(20_000)
                page.goto(base + "/standings")
                expect(page.locator("#title")).to_have_text("A day of rounds \u2014 pairs")
                expect(page.locator("#rows li")).to_contain_text("The Edges")
                expect(page.locator("#rounds")).to_contain_text("pairs (live)")
                page.locator('#rounds a[data-round="indiv"]').click()
                expect(page.locator("#title")).to_have_text("A day of rounds \u2014 indiv")
                expect(page.locator("#category")).to_have_text("CZJPA - individuals")
                expect(page.locator("#rows li")).to_contain_text("Anna")
                expect(page.locator("#link")).to_have_text("live")
                assert page.url == base + "/standings?round=indiv"
                expect(page.locator('#rounds a[aria-current="page"]')).to_have_text("indiv")
                assert tt("act", str(hall), "dns", "entrant=1", "--round", "indiv").returncode == 0
                expect(page.locator('#rows li[data-entrant="1"] .res')).to_have_text("DNS", timeout=20_000)
                assert page.locator("a", has_text="results sheet").get_attribute("href") == "/results?round=indiv"
                page.locator('#rounds a[data-round="pairs"]').click()                 # back to the live one
                expect(page.locator("#title")).to_have_text("A day of rounds \u2014 pairs")
                assert page.url == base + "/standings"
            finally:
                b.close()
    finally:
        hub.stop()


def test_the_hall_check_before_the_next_round_counts_the_presses_made_under_the_last_rounds_schedule(tmp_path):
    """Issue 45, item 4: round indiv is over (its time up), the hall moves to
    pairs, not started yet: the board still holds indiv's schedule (pairs
    has none before its start), so its presses are strays made under
    indiv's.  Those made during pairs' hall check are the check's: stored
    in pairs' log (the check says 1/1 pressed), none in indiv's, each acked
    once and never sent again."""
    hall = make_day(tmp_path)
    port = free_port()
    key = BoardKeys(hall / "board-keys.json").key("T01")
    board = hub = check = None
    indiv, pairs = (hall / "rounds" / n / "events.sqlite" for n in ("indiv", "pairs"))
    try:
        three_hours_ago = int(time.time() * 1000) - 3 * 3_600_000       # indiv's 2 h are over
        assert tt("act", str(hall), "round_start", f"at={three_hours_ago}", "--round", "indiv").returncode == 0
        hub = Hub(hall, None, "--port", str(port), "--broker-kind", "embedded", "--round", "indiv")
        board = SimBoard("T01", "127.0.0.1", port, tmp_path / "boards", key=key,
                         broker_user="T01", broker_password=mqtt_password(key)).start()
        board.wait_for(lambda rec: "sched" in rec, timeout=30)          # indiv's schedule, its time up
        hub.stop()
        hub = Hub(hall, None, "--port", str(port), "--broker-kind", "embedded", "--round", "pairs")
        check = subprocess.Popen([TT, "check-hall", str(hall), "--round", "pairs", "--timeout", "60"],
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        said = Output(check.stdout)
        said.wait_for(lambda ln: ln.startswith("hall check begun"), "the check begun")
        said.wait_for(lambda ln: ln.startswith("T01: not ready: button 1 not pressed"), "T01 waiting for its press")
        mark = len(board.records)
        board.press(1)
        said.wait_for(lambda ln: ln.startswith("T01: ready"), "T01 ready: its press is the check's")
        board.wait_for(lambda rec: "acked" in rec, timeout=30, start=mark)
        time.sleep(8)          # the board's resend interval passed: nothing of it sent again
        acks = [r for r in board.records[mark:] if "acked" in r]
        assert len(acks) == 1, acks
        assert [e["type"] for e in presses(indiv)] == []                 # nothing of the check in indiv's log
        assert [e["type"] for e in presses(pairs)] == ["stray"]          # the check's press, in pairs' log
        assert results(hall, "--round", "pairs")[0]["status"] != "finished"
    finally:
        if check is not None and check.poll() is None:
            check.terminate()
            check.wait(30)
        if hub is not None:
            hub.stop()
        if board is not None:
            board.stop()
