"""A hub with its web pages for the browser tests: a real event folder
(two tables; an entrant whose name is HTML), a real SQLite log, the hub's
real clock, signed-in referees (RefereeBook), the web server on a free
127.0.0.1 port, and Chromium through Playwright in a phone's viewport.
Boards act through HubService.handle with signed messages, as the MQTT
adapter passes them; what the hub sends a board is kept (`sent`)."""

from __future__ import annotations

import json
import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import Callable

import pytest

from tabletimer.hub.protocol import hub_protocol as H
from tabletimer.hub.protocol.keys import BoardKeys
from tabletimer.hub.core.changes import ToBoards
from tabletimer.hub.core.service import HubService
from tabletimer.hub.event.folder import event_folder
from tabletimer.hub.event.fold.competition import Competition
from tabletimer.hub.event.log.store import EventStore
from tabletimer.hub.web.hall_pages import HallPages
from tabletimer.hub.web.referee_pages import RefereePages
from tabletimer.hub.web.referees import RefereeBook
from tabletimer.hub.web.round_views import EventRounds
from tabletimer.shared import protocol as P
from tabletimer.shared.auth import Signer
from tabletimer.tools.testing.browser import launch

EVIL = '<img src=x onerror="document.title=\'pwned\'">Eve'
PHONE = {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True,
         "device_scale_factor": 2}


def chromium() -> str:
    exe = shutil.which("chromium")
    if exe is None:
        import os
        if os.environ.get("CI") == "true":
            pytest.fail("chromium is not installed (.ci/run installs it: apt-get install chromium)")
        pytest.skip("chromium is not installed (apt-get install chromium)")
    return exe


@pytest.fixture(scope="module")
def browser():
    """Debian's Chromium through Playwright, for a test module."""
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        b = launch(p, chromium())
        yield b
        b.close()


def calls_page(browser, hub: "WebHub"):
    """(context, page): a phone signed in as Anna on the calls page."""
    from playwright.sync_api import expect

    ctx = browser.new_context(**PHONE)
    ctx.set_default_timeout(10_000)
    page = ctx.new_page()
    page.goto(f"{hub.url}/signin?token={hub.anna}")
    expect(page.locator("h1")).to_have_text("Calls waiting")
    return ctx, page


class WebHub:
    def __init__(self, tmp_path: Path, preset: str = "czjpa-individuals", entrants: str | None = None,
                 stations: str | None = None, hall: dict | None = None, web: dict | None = None,
                 rounds: "Callable[[Path], None] | None" = None) -> None:
        """hall: HallPages's options (limit, screen_token); web: the web
        server's limits (max_connections, per_address, reserved, ...);
        rounds: adds the event's other rounds to the folder (its own is
        "main", the live one), then the hall's pages have them as the hall
        process gives them (EventRounds)."""
        from web_server import serve
        self.folder = folder = tmp_path / "hall-2027"
        event_folder.init(folder, preset)
        (folder / "entrants.csv").write_text(entrants or (
            "id,name,eligible\n1,Alice,yes\n2,Bob,yes\n3,Carol,yes\n4,\"" + EVIL.replace('"', '""') + "\",yes\n"))
        (folder / "stations.csv").write_text(stations or (
            "board,button,table,entrant\nB1,1,Table 1,1\nB1,2,Table 1,2\nB1,3,Table 1,3\nB2,1,Table 2,4\n"))
        keys = BoardKeys(folder / "board-keys.json")
        self.keys = {b: keys.ensure(b) for b in ("B1", "B2")}
        ev = event_folder.load(folder)
        self.store = EventStore(ev.db)
        self.svc = HubService(self.store, BoardKeys(ev.keys_file), Competition(ev.format, ev.entrants, ev.stations))
        self.sent: list = []
        self.svc.changes.subscribe(ToBoards, lambda n: self.sent.extend(n.messages))
        if rounds is not None:
            rounds(folder)
            hall = dict(hall or {}, rounds=EventRounds(folder, "main"))
        self.referees = RefereeBook(folder / "referees.json")
        self.anna = self.referees.add("Anna")
        self.pages = RefereePages(self.svc, self.referees, folder.name)
        self.hall = HallPages(self.svc, "Hall 2027", **(hall or {}))
        self.server = serve(self.svc, self.pages.routes() + self.hall.routes(), folder,
                            [self.pages.signed_in, self.hall.privileged], **(web or {}))
        self.url = self.server.url()
        self.ctr: dict[str, int] = {}

    def close(self) -> None:
        self.server.stop()
        self.pages.close()
        self.hall.close()
        self.store.close()

    # ------------------------------------------------------------ boards
    def board(self, board: str, msg: dict, kind: str = P.EVENT) -> list:
        """A board's signed event (kind P.STATUS: its status), as the MQTT
        adapter hands it over."""
        ctr = self.ctr[board] = self.ctr.get(board, 0) + 1
        P.stamp(msg, ctr, 1)
        topic = P.board_topic(board, kind)
        return self.svc.handle(topic, Signer(self.keys[board]).sign(topic, P.encode(msg)), self.svc.clock.now_ms())

    def press(self, board: str, station: int, at: int | None = None) -> None:
        seq = self.ctr.get(board, 0) + 1
        self.board(board, H.press(1, seq, station, self.svc.clock.now_ms() if at is None else at))

    def board_confirm(self, board: str, station: int, call_seq: int, missing: int = 0) -> None:
        seq = self.ctr.get(board, 0) + 1
        self.board(board, P.event("confirm", 1, seq, station, self.svc.clock.now_ms(), call=[1, call_seq],
                                  missing=missing))

    def start(self, ago_ms: int = 60_000) -> None:
        self.svc.act("round_start", {"at": self.svc.clock.now_ms() - ago_ms}, who="desk")

    @contextmanager
    def phone(self, browser, token: str, path: str):
        """A phone's page (Chromium, a phone's viewport), signed in with the
        badge's token and sent on to path; its context closed after."""
        ctx = browser.new_context(**PHONE)
        ctx.set_default_timeout(10_000)
        try:
            page = ctx.new_page()
            page.goto(f"{self.url}/signin?token={token}&next={path}")
            yield page
        finally:
            ctx.close()

    def phone_act(self, token: str, body: dict, lang: str | None = None) -> tuple[int, dict]:
        """POST /r/api/act as a signed-in phone's page sends it: (status,
        answer); lang: the phone's chosen language (its tt_lang cookie)."""
        import http.client
        from urllib.parse import urlsplit
        u = urlsplit(self.url)
        c = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
        c.request("POST", "/r/api/act", body=json.dumps(body).encode(),
                  headers={"X-TableTimer": "1", "Content-Type": "application/json",
                           "Cookie": f"tt_referee={token}" + (f"; tt_lang={lang}" if lang else "")})
        r = c.getresponse()
        out = r.status, json.loads(r.read())
        c.close()
        return out

    # ------------------------------------------------------------ the log
    def rows(self, type_: str | None = None) -> list[dict]:
        return [r for r in self.store.events() if type_ is None or r["type"] == type_]

    def station(self, table: str, entrant: str) -> dict:
        from tabletimer.hub.web.table_view import table_view
        v = self.svc.read(lambda comp, now: table_view(comp, table, now))
        return next(s for s in v["stations"] if s["entrant"] == entrant)

    def board_stations(self, board: str) -> list:
        """What the hub last sent the board of its stations (the board's state)."""
        for o in reversed(self.sent):
            if o.topic == P.board_topic(board, P.CMD):
                body = json.loads(Signer(self.keys[board]).open(o.topic, o.payload))
                if "st" in body:        # a stations message, or an ack with the event's answers
                    return [H.STATION_STATES[e[0]] for e in body["st"]]
        return []
