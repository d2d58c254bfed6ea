"""What happened to the hub's clock, on the head referee's page (issue 44,
item 1): the calls page, in a real browser (Chromium through Playwright) on
a real hub (web_rig.WebHub), says that the laptop slept, when and for how
long, as the console's alerts do.  The sleep is the laptop's clocks as a
suspend leaves them (host_clock.awake_ns 30 s behind the boot clock), the
rest is the hub's own."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tabletimer.hub.event.time import host_clock
from web_rig import WebHub, browser, calls_page  # noqa: F401  (browser: a fixture)


@pytest.fixture
def hub(tmp_path):
    h = WebHub(tmp_path)
    yield h
    h.close()


def test_the_calls_page_says_the_laptop_slept_and_for_how_long(hub, browser, monkeypatch):
    ctx, page = calls_page(browser, hub)
    try:
        expect(page.locator("#link")).to_have_class("link live")
        hub.svc.start_clock()
        hub.svc.keep_time()
        expect(page.locator("#clock")).to_be_hidden()                  # nothing happened: nothing said
        awake = host_clock.awake_ns
        monkeypatch.setattr(host_clock, "awake_ns", lambda: awake() - 30 * 10 ** 9)   # it slept 30 s
        hub.svc.keep_time()
        said = page.locator("#clock li")
        expect(said).to_have_count(1)
        expect(said).to_have_text(re.compile(r"CLOCK: this laptop slept for 0:00:30, until \d\d:\d\d:\d\d: "
                                             r"hub time ran on"))
        assert any(a.startswith("CLOCK: this laptop slept for 0:00:30") for a in hub.svc.alerts())   # the console's
    finally:
        ctx.close()
