"""The tests' Chromium keeps Playwright's own --disable-features and drops
a window's omnibox popup (tools/testing/browser.py): Chromium keeps only the
last list of its command line, so a list of ours that left out one of
Playwright's would quietly turn that feature on again."""

from __future__ import annotations

from web_rig import browser  # noqa: F401  (the module's browser)


def test_the_browser_keeps_playwrights_disabled_features_and_has_no_omnibox_popup(browser):  # noqa: F811
    page = browser.new_page()
    session = browser.new_browser_cdp_session()
    try:
        page.goto("chrome://version")
        line = page.locator("#command_line").inner_text().split()
        urls = [t["url"] for t in session.send("Target.getTargets")["targetInfos"]]
    finally:
        session.detach()
        page.close()
    lists = [a.split("=", 1)[1].split(",") for a in line if a.startswith("--disable-features=")]
    assert len(lists) == 2, f"Playwright's list and this suite's, in that order: {lists}"
    playwrights, kept = lists
    assert set(playwrights) <= set(kept), f"left out of ours (tools/testing/browser.py): {set(playwrights) - set(kept)}"
    assert any(u.startswith("chrome://version") for u in urls), urls
    assert not any("omnibox" in u for u in urls), f"a window's omnibox popup is made again: {urls}"
