"""Each page in each language in Chromium (issue 48): a referee's phone
in the language it chose (the chooser, remembered), its browser's
(Accept-Language) or the event's; the hall's pages (projector, standings,
results, draw) in the event's.  Screenshots for the docs: the projector
in Norwegian, a referee's phone in Danish (docs/images, renewed with TT_SCREENSHOTS=1)."""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tabletimer import repo_root
from web_rig import PHONE, WebHub, browser  # noqa: F401  (browser: a fixture)

LANGS = ("en", "cs", "da", "nb")
# what each page says, in each language: the calls page's heading, the confirm button,
# the missing pieces' label, the hall's entrants (4: Czech's "few" form), time up
SAYS = {
    "en": {"calls": "Calls waiting", "confirm": "Confirm", "missing": "missing pieces", "entrants": "4 entrants",
           "search": "search a name", "draw": "Team draw", "final": "Provisional"},
    "cs": {"calls": "Čekající volání", "confirm": "Potvrdit", "missing": "chybějící dílky",
           "entrants": "4 soutěžící", "search": "hledat jméno", "draw": "Losování týmů", "final": "Předběžné"},
    "da": {"calls": "Kald der venter", "confirm": "Bekræft", "missing": "manglende brikker",
           "entrants": "4 deltagere", "search": "søg efter et navn", "draw": "Lodtrækning af hold",
           "final": "Foreløbige"},
    "nb": {"calls": "Tilkallinger som venter", "confirm": "Bekreft", "missing": "manglende brikker",
           "entrants": "4 deltakere", "search": "søk etter et navn", "draw": "Trekning av lag",
           "final": "Foreløpige"},
}
# the screenshots: docs/images with TT_SCREENSHOTS=1 (to renew them), else a scratch folder (a test
# run leaves the checkout as it found it)
IMAGES = (repo_root() / "docs" / "images" if os.environ.get("TT_SCREENSHOTS") == "1"
          else Path(tempfile.gettempdir()) / "tt-screenshots")
IMAGES.mkdir(exist_ok=True)


class EventLanguage:
    """The event's language as the hub asks for it (`tabletimer language` changes it)."""
    def __init__(self) -> None:
        self.lang = "en"

    def __call__(self) -> str:
        return self.lang


@pytest.fixture
def hub(tmp_path):
    lang = EventLanguage()
    h = WebHub(tmp_path, hall={"language": lang})
    h.pages.language = lang
    h.event_language = lang            # type: ignore[attr-defined]
    yield h
    h.close()


def phone(browser, hub, lang: str | None = None, **ctx):
    c = browser.new_context(**PHONE, **ctx)
    c.set_default_timeout(10_000)
    page = c.new_page()
    page.goto(f"{hub.url}/signin?token={hub.anna}" + (f"&lang={lang}" if lang else ""))
    return c, page


@pytest.mark.parametrize("lang", LANGS)
def test_a_referees_phone_speaks_the_language_it_asks_for(browser, hub, lang):
    hub.start()
    hub.press("B1", 2)
    ctx, page = phone(browser, hub)
    try:
        page.goto(f"{hub.url}/calls?lang={lang}")
        expect(page.locator("h1")).to_have_text(SAYS[lang]["calls"])
        expect(page.locator("html")).to_have_attribute("lang", lang)
        expect(page.locator("#link")).to_have_text(re.compile(r"\S"))
        page.goto(f"{hub.url}/t/Table%201?lang={lang}")
        card = page.locator('[data-station="B1:2"]')
        expect(card.locator('[data-act="confirm"]')).to_have_text(SAYS[lang]["confirm"])
        expect(card.locator("label").first).to_have_text(SAYS[lang]["missing"])
        expect(card.locator(".wait")).to_contain_text({"en": "ago", "cs": "před", "da": "siden", "nb": "siden"}[lang])
        if lang == "da":
            card.locator('[data-act="confirm"]').scroll_into_view_if_needed()
            page.screenshot(path=str(IMAGES / "referee-phone-da.png"))
        page.goto(f"{hub.url}/checkin?lang={lang}")
        expect(page.locator("#search")).to_have_attribute("placeholder", re.compile(r"\S"))
        expect(page.locator("#count")).to_contain_text({"en": "checked in", "cs": "z 4", "da": "tjekket ind",
                                                        "nb": "sjekket inn"}[lang])
    finally:
        ctx.close()


def test_the_chooser_is_remembered_and_the_browsers_language_is_the_default(browser, hub):
    ctx, page = phone(browser, hub, locale="da-DK", extra_http_headers={"Accept-Language": "da-DK,da;q=0.9"})
    try:
        expect(page.locator("h1")).to_have_text(SAYS["da"]["calls"])          # the browser's language
        page.locator("#lang").select_option("cs")                              # the phone's choice
        expect(page.locator("h1")).to_have_text(SAYS["cs"]["calls"])
        page.goto(f"{hub.url}/calls")                                          # remembered
        expect(page.locator("h1")).to_have_text(SAYS["cs"]["calls"])
        assert any(c["name"] == "tt_lang" and c["value"] == "cs" for c in ctx.cookies())
    finally:
        ctx.close()
    hub.event_language.lang = "nb"
    ctx, page = phone(browser, hub, extra_http_headers={"Accept-Language": "de-DE,fr;q=0.5"})
    try:
        expect(page.locator("h1")).to_have_text(SAYS["nb"]["calls"])          # none we have: the event's
    finally:
        ctx.close()


@pytest.mark.parametrize("lang", LANGS)
def test_the_halls_pages_speak_the_events_language(browser, hub, lang):
    hub.event_language.lang = lang
    hub.start()
    ctx = browser.new_context(viewport={"width": 1920, "height": 1080}, locale="en-US")
    ctx.set_default_timeout(10_000)
    page = ctx.new_page()
    try:
        page.goto(f"{hub.url}/hall")
        expect(page.locator("#summary")).to_contain_text(SAYS[lang]["entrants"])
        expect(page.locator("html")).to_have_attribute("lang", lang)
        if lang == "nb":
            hub.press("B1", 1)
            expect(page.locator("#rows tr")).to_have_count(4)
            page.screenshot(path=str(IMAGES / "projector-nb.png"))
        page.goto(f"{hub.url}/standings")
        expect(page.locator("#search")).to_have_attribute("placeholder", SAYS[lang]["search"])
        page.goto(f"{hub.url}/draw")
        expect(page.locator(".category")).to_have_text(SAYS[lang]["draw"])
        page.goto(f"{hub.url}/results")
        expect(page.locator("#results-state")).to_contain_text(SAYS[lang]["final"])
        page.goto(f"{hub.url}/standings?lang=en")                                  # one page in another
        expect(page.locator("#search")).to_have_attribute("placeholder", SAYS["en"]["search"])
    finally:
        ctx.close()


def test_a_language_we_do_not_have_is_refused_naming_those_we_do(hub):
    import http.client
    from urllib.parse import urlsplit
    u = urlsplit(hub.url)
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
    c.request("GET", "/r/words/de.js")
    r = c.getresponse()
    body = r.read().decode()
    assert r.status == 404 and "en (English), cs (Čeština), da (Dansk), nb (Norsk bokmål)" in body
    c.close()
    assert Path(IMAGES).is_dir()
