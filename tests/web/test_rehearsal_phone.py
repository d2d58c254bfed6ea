"""The whole flow of a table in a rehearsal (issue #16): `tabletimer
rehearse` (the hub in its own process, a simulated board running the real
firmware), a finish call pressed on the board with `tabletimer press`, and a
phone (Chromium, signed in with the rehearsal's printed demo sign-in) that
sees the call on the calls page, opens the table and confirms it with a
missing piece: stored with the referee's name, ranked with the penalty."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from playwright.sync_api import expect, sync_playwright

from brokers import free_port
from tabletimer.hub.event.folder import event_folder
from tabletimer.tools.testing.browser import launch
from waiting import Output
from web_rig import PHONE, chromium

TT = str(Path(sys.executable).parent / "tabletimer")


def test_a_rehearsed_call_is_confirmed_from_a_phone(tmp_path):
    ev = event_folder.init(tmp_path / "event", "czjpa-individuals")
    (ev / "entrants.csv").write_text("id,name,eligible\n1,Alice,yes\n2,Bob,yes\n")
    (ev / "stations.csv").write_text("board,button,table,entrant\nT01,1,Table 1,1\nT01,2,Table 1,2\n")
    web, hall_port = free_port(), free_port()
    hub = subprocess.Popen([TT, "rehearse", str(ev), "--port", str(free_port()), "--web-listen",
                            f"127.0.0.1:{web}", "--hall-listen", f"127.0.0.1:{hall_port}"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out = Output(hub.stdout)
    rehearsal = ev / "rehearsal"
    try:
        line = out.wait_for(lambda ln: "sign this browser in as 'Demo referee'" in ln, "the demo sign-in")
        signin = re.search(r"(http://\S+/signin\?token=\S+)", line).group(1)
        assert signin.startswith(f"http://127.0.0.1:{web}/signin?token=")
        hall = out.wait_for(lambda ln: ln.startswith("hall pages (public, no sign-in; a process of their own): "),
                            "the hall pages' address")
        assert f"http://127.0.0.1:{hall_port}/hall, " in hall
        projector = out.wait_for(lambda ln: ln.startswith("  the projector: "), "the projector's address")
        token = (rehearsal / "screen-token").read_text().strip()
        assert f"http://127.0.0.1:{hall_port}/hall?screen={token} " in projector
        out.wait_for(lambda ln: ln.startswith("board T01 online"), "the simulated board online")
        subprocess.run([TT, "act", str(rehearsal), "round_start"], check=True, capture_output=True)
        with sync_playwright() as p:
            b = launch(p, chromium())
            page = b.new_context(**PHONE).new_page()
            page.set_default_timeout(20_000)
            page.goto(signin)
            expect(page.locator("h1")).to_have_text("Calls waiting")
            assert subprocess.run([TT, "press", str(ev), "T01", "2"], capture_output=True).returncode == 0
            expect(page.locator("#calls li")).to_contain_text("Bob")         # the board's press, live
            page.locator("#calls li a").tap()
            bob = page.locator('[data-station="T01:2"]')
            expect(bob).to_have_attribute("data-state", "called")
            bob.get_by_label("more missing pieces").tap()
            bob.locator('[data-act="confirm"]').tap()
            expect(page.locator("#message")).to_contain_text("stored: confirm")
            expect(bob).to_have_attribute("data-state", "done")
            b.close()
    finally:
        hub.terminate()
        hub.wait(30)
    rows = json.loads(subprocess.run([TT, "replay", str(rehearsal), "--json"], capture_output=True, text=True,
                                     check=True).stdout)["standings"]
    bob_row = next(r for r in rows if r["entrant"] == "2")
    assert bob_row["status"] == "finished" and not bob_row["provisional"] and bob_row["penalty_ms"] == 10_000
    from tabletimer.hub.event.log.store import EventStore
    store = EventStore(rehearsal / "events.sqlite")
    try:
        confirms = [r for r in store.events() if r["type"] == "confirm"]
    finally:
        store.close()
    assert [(r["source"], r["payload"]["who"]) for r in confirms] == [("operator", "Demo referee")]
