"""The live advancement marks on the hall's pages (issue 50, item 4), in
Chromium: while a qualifying group runs, its standings (a phone) and the
projector show who is certain to advance to the final, who is in the
qualifying places but not yet certain, and who can no longer make it; the
marks change as finishes come in, and again when the other group's
results are there (read from its own log).  The other group's page
(?round=group-b, a round the pages open from the event folder) has its own.

The event: the live round "main" (group A: Alice, Bob, Carol, Eve on the
rig's two tables), group-b (b1..b4) and a final whose [advancement] takes
the best of each group, then the next best by result up to 3.  The marks,
worked out by hand (advancement_marks.py's cases):
1. group A 50 min in, everybody solving: no marks.
2. Alice finishes (49:57): nobody of group A still solving can finish
   before 50:00, so she is group A's best whatever happens: advances.
3. Bob finishes: as it stands he has the third place (Alice, Bob; group B
   has no results), but group B has not started and its four could all
   beat him: in the places.  Carol the same.
4. Eve finishes fourth of three places (Alice, Bob, Carol ahead of her,
   even if group B never finished): out.
5. group B's results come (b1 40:00, b2 1:40:00, b3 1:50:00, b4 1:55:00;
   its time up): the places are Alice and b1 (each group's best), then the
   next best result, Bob's 50 min before b2's 100: Alice and Bob advance,
   Carol and Eve are out; on group B's page b1 advances, b2-b4 are out."""

from __future__ import annotations

import http.client
import json
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import expect

from tabletimer.hub.cli import main as cli
from tabletimer.hub.event.log.store import EventStore
from web_rig import PHONE, WebHub, browser  # noqa: F401  (browser: a fixture)

PROJECTOR = {"viewport": {"width": 1920, "height": 1080}}
MIN = 60_000
RULE = """
[advancement]
from = ["main", "group-b"]
per_source = 1
total = 3
across = "result"
"""


def rounds(folder: Path) -> None:
    """group-b (not started) and the final with its rule, beside the rig's round."""
    assert cli.main(["round", "add", str(folder), "group-b", "--format", "czjpa-individuals"]) == 0
    b = folder / "rounds" / "group-b"
    (b / "entrants.csv").write_text("id,name,eligible\n" + "".join(f"b{k},Bea {k},yes\n" for k in range(1, 5)))
    (b / "stations.csv").write_text("board,button,table,entrant\n" + "".join(
        f"B{1 + (k > 3)},{k if k <= 3 else 1},Table {1 + (k > 3)},b{k}\n" for k in range(1, 5)))
    assert cli.main(["round", "add", str(folder), "final", "--format", "czjpa-individuals"]) == 0
    with open(folder / "rounds" / "final" / "format.toml", "a", encoding="utf-8") as f:
        f.write(RULE)


@pytest.fixture
def hub(tmp_path):
    h = WebHub(tmp_path, rounds=rounds)
    yield h
    h.close()
    h.hall.rounds.close()


def standings(hub, query: str = "") -> dict:
    u = urlsplit(hub.url)
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
    c.request("GET", "/h/api/standings" + query)
    r = c.getresponse()
    out = json.loads(r.read())
    c.close()
    return out


def run_group_b(folder: Path) -> None:
    """group-b's log: its start 3 h ago, four finishes recorded and confirmed by the desk."""
    now = int(time.time() * 1000)
    start = now - 180 * MIN
    store = EventStore(folder / "rounds" / "group-b" / "events.sqlite")
    try:
        store.append("operator", "round_start", {"at": start, "who": "desk"}, now)
        for k, minutes in ((1, 40), (2, 100), (3, 110), (4, 115)):
            store.append("operator", "press", {"entrant": f"b{k}", "puzzle": 1, "at": start + minutes * MIN,
                                               "who": "desk"}, now)
            store.append("operator", "confirm", {"entrant": f"b{k}", "puzzle": 1, "who": "desk"}, now)
    finally:
        store.close()


def test_the_marks_appear_and_change_as_finishes_come_in(hub, browser):
    hub.start(ago_ms=50 * MIN)
    screen = browser.new_context(**PROJECTOR).new_page()
    screen.goto(f"{hub.url}/hall")
    phone = browser.new_context(**PHONE).new_page()
    phone.goto(f"{hub.url}/standings")
    expect(phone.locator("#rows li")).to_have_count(4)
    expect(phone.locator(".badge.adv")).to_have_count(0)                       # 1. all solving
    expect(phone.locator("#legend")).to_have_text("")
    view = standings(hub)
    assert view["advance_to"] == "final" and not any("advance" in r for r in view["rows"])

    def mark(page, entrant: str, row: str = "li"):
        return page.locator(f'{row}[data-entrant="{entrant}"] .badge.adv')

    hub.press("B1", 1, hub.svc.clock.now_ms() - 3000)                         # 2. Alice
    expect(mark(phone, "1")).to_have_text("advances")
    expect(mark(phone, "1")).to_have_class("badge adv adv-certain")
    expect(mark(screen, "1", "tr")).to_have_text("advances")
    expect(phone.locator("#legend")).to_contain_text("advances: certain to go on to final")
    expect(screen.locator("#legend")).to_contain_text("out: can no longer reach final")

    hub.press("B1", 2, hub.svc.clock.now_ms() - 2000)                         # 3. Bob, Carol
    hub.press("B1", 3, hub.svc.clock.now_ms() - 1000)
    expect(mark(phone, "2")).to_have_text("in the places")
    expect(mark(phone, "3")).to_have_text("in the places")
    expect(mark(screen, "3", "tr")).to_have_class("badge adv adv-in")
    expect(mark(phone, "4")).to_have_count(0)                                   # Eve solving: no mark

    hub.press("B2", 1)                                                          # 4. Eve
    expect(mark(phone, "4")).to_have_text("out")
    expect(mark(screen, "4", "tr")).to_have_class("badge adv adv-out")
    rows = {r["entrant"]: r.get("advance") for r in standings(hub)["rows"]}
    assert rows == {"1": "certain", "2": "in", "3": "in", "4": "out"}

    run_group_b(hub.folder)                                                     # 5. group B's results
    expect(mark(phone, "2")).to_have_text("advances", timeout=20_000)           # (its files read again)
    expect(mark(phone, "3")).to_have_text("out")
    expect(mark(screen, "2", "tr")).to_have_text("advances")
    b = browser.new_context(**PHONE).new_page()
    b.goto(f"{hub.url}/standings?round=group-b")
    expect(b.locator("#rows li")).to_have_count(4)
    expect(mark(b, "b1")).to_have_text("advances")
    for k in (2, 3, 4):
        expect(mark(b, f"b{k}")).to_have_text("out")
    assert {r["entrant"]: r.get("advance") for r in standings(hub, "?round=group-b")["rows"]} == {
        "b1": "certain", "b2": "out", "b3": "out", "b4": "out"}
    # in the event's language too: a phone in Norwegian
    nb = browser.new_context(**PHONE).new_page()
    nb.goto(f"{hub.url}/standings?lang=nb")
    expect(mark(nb, "1")).to_have_text("går videre")
    expect(mark(nb, "4")).to_have_text("ute")
    expect(nb.locator("#legend")).to_contain_text("ute: kan ikke lenger nå final")


def test_a_round_that_feeds_none_has_no_marks(hub):
    hub.start(ago_ms=50 * MIN)
    hub.press("B1", 1)
    run_group_b(hub.folder)
    final = hub.folder / "rounds" / "final" / "format.toml"
    final.write_text(final.read_text().replace('from = ["main", "group-b"]', 'from = ["group-b"]'))
    time.sleep(2.2)                                # the formats looked at again (advancement_outlook.LOOK_S)
    hub.press("B1", 2)
    view = standings(hub)
    assert view["advance_to"] is None and not any("advance" in r for r in view["rows"])
