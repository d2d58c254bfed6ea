"""The way to the public site (issue 49, item 4) on the hall's projector
and on the results sheet the hall's pages serve: its QR code and address
in the projector's header, inside it and clear of the standings, only
while one is set (read at each page: set during the day, shown at the
next load); the sheet's foot the same.  Chromium at 1920x1080."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tabletimer.hub.outputs.table_cards import qr_svg
from web_rig import PHONE, WebHub, browser  # noqa: F401  (browser: a fixture)

PROJECTOR = {"viewport": {"width": 1920, "height": 1080}}
URL = "https://cup.example.org/live/"


@pytest.fixture
def site():
    return {"url": None}


@pytest.fixture
def hub(tmp_path, site):
    h = WebHub(tmp_path, hall={"site_url": lambda: site["url"]})
    yield h
    h.close()


def qr_path(url: str) -> str:
    """The path of url's QR code as the pages draw it (segno)."""
    svg = qr_svg(url)
    return svg[svg.index(' d="') + 4:].split('"', 1)[0]


def test_the_projector_shows_the_sites_code_and_address_in_its_header_once_one_is_set(hub, site, browser):
    hub.start()
    screen = browser.new_context(**PROJECTOR).new_page()
    screen.goto(f"{hub.url}/hall")
    expect(screen.locator('tr[data-entrant="2"]')).to_contain_text("solving")
    expect(screen.locator("#site")).to_be_hidden()                 # none set: nothing, no empty box
    assert screen.locator("svg.qr").count() == 0

    site["url"] = URL                                              # `publish DIR --url URL` meanwhile
    screen.reload()
    link = screen.locator("#site .site-link")
    expect(link).to_be_visible()
    expect(link).to_contain_text("Results online")
    expect(link).to_contain_text("cup.example.org/live/")
    assert link.get_attribute("data-url") == URL
    assert screen.locator("#site a").get_attribute("href") == URL
    code = screen.locator("#site svg.qr")
    assert code.locator("path").get_attribute("d") == qr_path(URL)  # the code is the address's
    box, header, table = (screen.locator(s).bounding_box() for s in ("#site svg.qr", "header", "table.standings"))
    assert box and header and table
    assert box["width"] >= 70 and abs(box["width"] - box["height"]) < 1        # square, readable from the hall
    assert header["y"] <= box["y"] and box["y"] + box["height"] <= header["y"] + header["height"]
    assert box["y"] + box["height"] <= table["y"]                   # clear of the standings
    clocks = screen.locator(".clocks").bounding_box()
    assert clocks and box["x"] + box["width"] <= clocks["x"]        # the clock keeps its place
    expect(screen.locator("#clock")).to_be_visible()
    expect(screen.locator('tr[data-entrant="2"]')).to_contain_text("solving")   # the page still live


def test_the_hall_results_sheet_has_the_code_at_its_foot_only_when_set(hub, site, browser):
    hub.start()
    page = browser.new_context(**PHONE).new_page()
    page.goto(f"{hub.url}/results")
    expect(page.locator("table.results")).to_be_visible()
    assert page.locator(".site-link").count() == 0
    site["url"] = URL
    page.reload()
    link = page.locator("main .site-link")
    expect(link).to_contain_text("cup.example.org/live/")
    assert link.locator("path").get_attribute("d") == qr_path(URL)
    foot, box = page.locator("main footer").bounding_box(), link.bounding_box()
    assert foot and box and box["y"] >= foot["y"] + foot["height"] - 1      # after the sheet's footer


def test_the_other_hall_pages_do_not_show_it(hub, site):
    import urllib.request
    site["url"] = URL
    for path in ("/standings", "/draw"):
        with urllib.request.urlopen(hub.url + path, timeout=10) as r:
            assert b"site-link" not in r.read(), path
