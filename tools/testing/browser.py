"""Headless Chromium as the tests and the screenshots run it: Debian's
`chromium`, through Playwright or on its own (--headless --screenshot,
--print-to-pdf), without the parts of a desktop window a headless page
never shows.

Chromium 156's headless mode is the whole browser: each new window (each
Playwright context) builds its omnibox popup as two WebUI pages
(chrome://omnibox-popup.top-chrome/) in a renderer of their own and
preloads other top-chrome WebUI.  Measured on 2026-12-07 (2 cores, process
accounting): a browser and six contexts took 4.3 s of CPU with them, 1.7 s
without; two web test modules' Chromium 39 s, 22 s; a one-shot screenshot
0.87-1.03 s, 0.64-0.68 s.  The suite opens hundreds of contexts.

Chromium keeps only the last `--disable-features` of its command line, and
Playwright passes its own list first: so PLAYWRIGHT_ARGS repeats Playwright's list
(of the pinned playwright, 1.65.2) before this file's.
tests/web/test_browser_args.py reads the running browser's command line
and fails when Playwright's list is no longer all in it."""

from __future__ import annotations

from typing import Any

# Playwright 1.65.2's own --disable-features (chromiumSwitches.ts), kept: the last list wins
PLAYWRIGHTS = ("AvoidUnnecessaryBeforeUnloadCheckSync", "DestroyProfileOnBrowserClose", "HttpsUpgrades",
               "HttpsFirstBalancedModeAutoEnable", "LensOverlay", "MediaRouter", "PaintHolding",
               "ThirdPartyStoragePartitioning", "AvoidCorsURLLoaderRestartOnRedirect", "TcpPortRandomizationWin",
               "OptimizationHints", "NetworkTimeServiceQuerying", "AimEnabled", "PreconnectToSearch",
               "msForceBrowserSignIn", "msEdgeUpdateLaunchServicesPreferredVersion")
# a window's omnibox popup as WebUI, and top-chrome WebUI made ahead of need: nothing a test's page shows
WINDOW_PARTS = ("WebUIOmniboxPopup", "WebUIOmniboxFullPopup", "WebUIOmniboxAimPopup", "PreloadTopChromeWebUI")

# Chromium run by itself (no Playwright: nothing of its to keep)
HEADLESS_ARGS = ("--disable-features=" + ",".join(WINDOW_PARTS),)
# Chromium under Playwright (root in CI: no sandbox)
PLAYWRIGHT_ARGS = ("--no-sandbox", "--disable-features=" + ",".join(PLAYWRIGHTS + WINDOW_PARTS))


def launch(playwright: Any, executable_path: str) -> Any:
    """A Playwright Browser: the Chromium at executable_path, headless, with
    PLAYWRIGHT_ARGS."""
    return playwright.chromium.launch(executable_path=executable_path, args=list(PLAYWRIGHT_ARGS))
