"""The README's pictures of the referees' pages (a phone's viewport,
390x844) and of the hall's pages (the projector, 1920x1080, and the
standings on a phone), taken in Chromium from a real hub and web server:

    .venv/bin/python -m tabletimer.tools.web_screenshots docs/images

A small event (CZJPA individuals: +10 s a missing piece) at Table 4: one
call waiting with two missing pieces entered, one entrant still running,
one confirmed; the hall's calls page; and the standings of 24 entrants in
the round's 58th minute.  Needs Debian's chromium."""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

from tabletimer.hub.protocol.keys import BoardKeys
from tabletimer.hub.core.service import HubService
from tabletimer.hub.event.folder import event_folder
from tabletimer.hub.event.fold.competition import Competition
from tabletimer.hub.event.log.store import EventStore
from tabletimer.hub.web.console_api import console_token, folder_event
from tabletimer.hub.web.hall_pages import HallPages
from tabletimer.hub.web.referee_pages import RefereePages
from tabletimer.hub.web.referees import RefereeBook
from tabletimer.hub.web.server import start_hub_web
from tabletimer.tools.testing.browser import launch

OTHERS = ["Anna Horáková", "Jakub Beneš", "Lucie Marková", "Martin Černý", "Tereza Veselá",
          "Ondřej Pokorný", "Kateřina Němcová", "Jan Procházka", "Veronika Kučerová", "David Fiala",
          "Barbora Šimková", "Filip Růžička", "Michaela Dušková", "Lukáš Pospíšil", "Klára Malá",
          "Vojtěch Sedláček", "Adéla Krejčí", "Marek Zeman", "Simona Bartošová", "Roman Kolář"]
PHONE = {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True,
         "device_scale_factor": 2}


def main(argv: list[str]) -> int:
    out = Path(argv[0] if argv else "docs/images")
    exe = shutil.which("chromium")
    if exe is None:
        print("chromium is not installed (apt-get install chromium)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "hall-2027"
        event_folder.init(folder, "czjpa-individuals")
        more = [f"{30 + i},{n},yes\n" for i, n in enumerate(OTHERS)]
        (folder / "entrants.csv").write_text("id,name,eligible\n12,Jana Nováková,yes\n13,Petr Svoboda,yes\n"
                                             "14,Eva Dvořáková,yes\n21,Tomáš Král,yes\n" + "".join(more))
        (folder / "stations.csv").write_text("board,button,table,entrant\nT04,1,Table 4,12\nT04,2,Table 4,13\n"
                                             "T04,3,Table 4,14\nT07,1,Table 7,21\n" + "".join(
                                                 f"T{10 + i // 4:02d},{i % 4 + 1},Table {10 + i // 4},{30 + i}\n"
                                                 for i in range(len(OTHERS))))
        BoardKeys(folder / "board-keys.json").ensure("T04")
        ev = event_folder.load(folder)
        store = EventStore(ev.db)
        svc = HubService(store, BoardKeys(ev.keys_file), Competition(ev.format, ev.entrants, ev.stations))
        now = svc.clock.now_ms()
        svc.act("round_start", {"at": now - 58 * 60_000}, who="desk")
        svc.act("press", {"entrant": "14", "puzzle": 1, "at": now - 9 * 60_000}, who="desk")
        done = svc.competition.open_calls()[0][1]
        svc.act("confirm", {"press_id": done}, who="Anna")
        svc.act("press", {"entrant": "12", "puzzle": 1, "at": now - 42_000}, who="desk")
        svc.act("press", {"entrant": "21", "puzzle": 1, "at": now - 95_000}, who="desk")
        for i in range(0, len(OTHERS), 3):        # a third of the others have finished
            svc.act("press", {"entrant": str(30 + i), "puzzle": 1, "at": now - (40 - i) * 60_000}, who="desk")
            pid = [c[1] for c in svc.competition.open_calls() if c[2] == str(30 + i)][0]
            svc.act("confirm", {"press_id": pid, "missing_found": i % 2}, who="Anna")
        token = RefereeBook(folder).add("Anna")
        pages = RefereePages(svc, RefereeBook(folder), folder.name)
        hall = HallPages(svc, "Czech Jigsaw Puzzle Championship 2027")
        server = start_hub_web(svc, folder_event(folder), console_token(folder), "127.0.0.1", 0,
                               pages.routes() + hall.routes())
        try:
            with sync_playwright() as p:
                b = launch(p, exe)
                page = b.new_context(**PHONE).new_page()
                page.goto(f"{server.url()}/signin?token={token}")
                page.locator("#calls li").first.wait_for()
                time.sleep(1.2)              # the waiting clocks tick once (a picture, not a test)
                page.screenshot(path=str(out / "referee-calls.png"))
                page.goto(f"{server.url()}/t/Table%204")
                call = page.locator('[data-station="T04:1"]')
                call.get_by_label("more missing pieces").tap()
                call.get_by_label("more missing pieces").tap()
                page.screenshot(path=str(out / "referee-table.png"), full_page=True)
                screen = b.new_context(viewport={"width": 1920, "height": 1080}).new_page()
                screen.goto(f"{server.url()}/hall")
                screen.locator("#rows tr").first.wait_for()
                time.sleep(0.5)              # the row height measured, drawn again (a picture)
                screen.screenshot(path=str(out / "hall-projector.png"))
                spectator = b.new_context(**PHONE).new_page()
                spectator.goto(f"{server.url()}/standings")
                spectator.get_by_label("follow Tomáš Král").tap()
                spectator.evaluate("window.scrollTo(0, 0)")
                spectator.screenshot(path=str(out / "hall-standings.png"))
                b.close()
        finally:
            server.stop()
            pages.close()
            hall.close()
            store.close()
    print(f"wrote referee-calls.png, referee-table.png, hall-projector.png and hall-standings.png in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
