"""The event's public site (issue 49) with real parts: `rclone serve webdav`
on 127.0.0.1 over a temporary folder as the remote, a static web server on
what it holds, the hub's own service, Chromium as a follower; the link cut
(tools/testing/netimpair.py) and back; a wrong remote name, a refused
login and a full remote, each a clear line and the hall unaffected."""

from __future__ import annotations

import http.server
import json
import threading
import time
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tabletimer.hub.cli import main as cli
from tabletimer.hub.broker.ports import free_port
from tabletimer.hub.core.service import HubService
from tabletimer.hub.event.fold.competition import Competition
from tabletimer.hub.event.folder import event_folder
from tabletimer.hub.event.log.store import EventStore
from tabletimer.hub.protocol.keys import BoardKeys
from tabletimer.hub.runtime.site_start import start_site
from tabletimer.hub.web.console_api import folder_event
from tabletimer.hub.web.public_site import HIDDEN_NAME
from tabletimer.hub.web.rclone_remote import RcloneRemote
from tabletimer.hub.web.site_publisher import SiteSource
from tabletimer.tools.testing.netimpair import NetImpair
from site_rig import REFEREE, make_event, published, static, webdav  # noqa: F401  (fixtures)
from waiting import until
from web_rig import PHONE, browser  # noqa: F401  (browser: a fixture)

M = 60_000


def hub(folder: Path, now: int) -> tuple[HubService, EventStore]:
    ev = event_folder.load(folder)
    store = EventStore(ev.db)
    svc = HubService(store, BoardKeys(ev.keys_file), Competition(ev.format, ev.entrants, ev.stations))
    svc.act("round_start", {"at": now - 20 * M}, who="desk")
    return svc, store


def finish(svc: HubService, entrant: str, at: int) -> None:
    svc.act("press", {"entrant": entrant, "puzzle": 1, "at": at}, who="desk")
    svc.act("confirm", {"entrant": entrant, "puzzle": 1}, who=REFEREE)


def test_publish_sends_every_round_and_nothing_secret(tmp_path, webdav, static, monkeypatch, capsys):
    folder, secrets = make_event(tmp_path)
    now = int(time.time() * 1000)
    svc, store = hub(folder, now)
    finish(svc, "1", now - 5 * M)
    finish(svc, "3", now - 4 * M)
    store.close()
    monkeypatch.setattr("os.environ", {**__import__("os").environ, **webdav.env()})
    assert cli.main(["publish", str(folder), "--to", "site:cup"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("site:cup: published ") and "(v" in out
    files = published(webdav.folder / "cup")
    assert {"index.html", "event.json", "rounds/main.json", "rounds/main.html", "rounds/main-results.html",
            "site.js", "site.css"} <= set(files)
    view = json.loads(static.get("rounds/main.json") or b"{}")
    names = {r["name"] for r in view["rows"]}
    assert names == {"Jana Novakova", "Petr Dvorak", HIDDEN_NAME}
    hidden = next(r for r in view["rows"] if r["name"] == HIDDEN_NAME)
    assert hidden["status"] == "finished" and hidden["place"] == 2 and "members" not in hidden
    assert b"Olga" not in files["rounds/main-results.html"] and HIDDEN_NAME.encode() in files["rounds/main-results.html"]
    for path, data in files.items():
        for what, secret in secrets.items():
            assert secret.encode() not in data, f"{path} holds the {what}"
        for board in ("T01", "T02"):
            assert board.encode() not in data, f"{path} names board {board}"


def test_a_follower_sees_a_new_finish_and_the_newest_state_after_the_link_is_cut(tmp_path, webdav, static, browser):
    folder, _ = make_event(tmp_path)
    now = int(time.time() * 1000)
    svc, store = hub(folder, now)
    said: list[str] = []
    with NetImpair(upstream=("127.0.0.1", webdav.port)) as net:
        port = net.port_for("site")
        site = start_site("site:cup", svc, folder, folder_event(folder), said.append,
                          remote_env=webdav.env(port=port))
        assert site is not None
        try:
            until(lambda: static.get("rounds/main.json"), "the site on the remote", timeout=30)
            page = browser.new_context(**PHONE).new_page()
            page.goto(f"{static.url}/rounds/main.html")
            row = page.locator('tr:has-text("Jana Novakova")')
            expect(row).to_contain_text("solving", timeout=15_000)
            finish(svc, "1", now - 5 * M)
            expect(row).to_contain_text("15:00", timeout=40_000)        # her time, 20:00 - 5:00
            last = store.last_id()                                      # her confirmation: the remote has it all
            until(lambda: (lambda st: st.version == last and not st.waiting and not st.sending)(
                site.publisher.status()), "every row published", timeout=30, seen=site.line)
            before = static.get("rounds/main.json")
            assert before is not None and json.loads(before)["version"] == last
            text, ok = svc.snapshot().status[0]                         # the console's header
            assert ok and text.startswith("public site: published ") and f"(v{last})" in text

            net.down("site")                                            # the venue's internet gone
            finish(svc, "2", now - 3 * M)                               # the hall goes on: stored at once
            assert svc.standings()[1].entrant == "2" and svc.standings()[1].time_ms == 17 * M
            until(lambda: site.publisher.status().kind == "unreachable", "publishing seen failing", timeout=60,
                  seen=site.line)
            assert "internet down since" in site.line() and "waiting" in site.line()
            assert "PUBLIC SITE" in " ".join(svc.alerts())
            text, ok = svc.snapshot().status[0]
            assert not ok and "internet down since" in text and f"(v{last})" in text
            during = static.get("rounds/main.json")                     # the remote: the state before the cut
            assert during == before
            petr = next(r for r in json.loads(during)["rows"] if r["name"] == "Petr Dvorak")
            assert petr["status"] == "solving" and not petr.get("time_ms")
            net.up("site")
            def second():
                data = static.get("rounds/main.json")
                rows = json.loads(data)["rows"] if data else []
                return any(r["name"] == "Petr Dvorak" and r.get("time_ms") == 17 * M for r in rows)
            until(second, "the newest state on the remote after the link's return", timeout=60, seen=site.line)
            expect(page.locator('tr:has-text("Petr Dvorak")')).to_contain_text("17:00", timeout=40_000)
            until(lambda: site.publisher.status().ok, "the status healthy again", timeout=30, seen=site.line)
            assert site.check() is None or "published" in (site.check() or "published")
            assert not any((webdav.folder / "cup" / ".tt-incoming").rglob("*.json"))   # nothing half-moved left
        finally:
            site.stop()
            store.close()
    status = json.loads((folder / "publish-status.json").read_text())
    assert status["remote"] == "site:cup" and status["line"].startswith("published ")


def test_a_file_of_the_same_size_with_new_bytes_reaches_the_remote(webdav):
    """WebDAV keeps no modification times: rclone's own check (size, time) once
    skipped a file whose size had not changed ("version":123 -> 124)."""
    remote = RcloneRemote("site:cup", env=webdav.env())
    remote.send([("rounds/main.json", b'{"version":123}'), ("index.html", b"<p>a</p>")])
    remote.send([("rounds/main.json", b'{"version":124}')])
    assert (webdav.folder / "cup" / "rounds" / "main.json").read_bytes() == b'{"version":124}'
    remote.send([("rounds/main.json", b'{"version":125}'), ("index.html", b"<p>b</p>")])
    assert (webdav.folder / "cup" / "rounds" / "main.json").read_bytes() == b'{"version":125}'
    assert (webdav.folder / "cup" / "index.html").read_bytes() == b"<p>b</p>"


class Full(http.server.BaseHTTPRequestHandler):
    """A WebDAV host whose disk is full: every upload 507."""

    def log_message(self, *a):
        pass

    def _answer(self, code: int, body: bytes = b"") -> None:
        self.send_response(code)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_PROPFIND(self):
        self._answer(404)

    def do_MKCOL(self):
        self._answer(201)

    def do_PUT(self):
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        self._answer(507, b"Insufficient Storage")


@pytest.mark.parametrize("case", ["wrong name", "bad login", "full"])
def test_a_remote_that_cannot_take_the_site_is_a_clear_line_and_the_hall_goes_on(tmp_path, webdav, case,
                                                                             monkeypatch, capsys):
    folder, _ = make_event(tmp_path)
    now = int(time.time() * 1000)
    svc, store = hub(folder, now)
    full = None
    if case == "wrong name":
        env, remote, words = webdav.env(), "nosuch:cup", "rclone knows no remote 'nosuch'"
    elif case == "bad login":
        env, remote, words = webdav.env(password="wrong"), "site:cup", "refuses rclone's login"
    else:
        full = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), Full)
        threading.Thread(target=full.serve_forever, daemon=True).start()
        env, remote, words = webdav.env(port=full.server_address[1]), "site:cup", "the remote 'site' is full"
    try:
        site = start_site(remote, svc, folder, folder_event(folder), lambda text: None, remote_env=env)
        assert site is not None
        try:
            until(lambda: site.publisher.status().problem, "the failure seen", timeout=60, seen=site.line)
            assert words in site.line()
            said = site.check()
            assert said is not None and words in said
            finish(svc, "1", now - 5 * M)                  # the hall unaffected
            assert svc.standings()[0].entrant == "1" and svc.standings()[0].time_ms == 15 * M
        finally:
            site.stop()
        monkeypatch.setattr("os.environ", {**__import__("os").environ, **env})
        assert cli.main(["publish", str(folder), "--to", remote, "--wait", "0"]) == 1
        assert words in capsys.readouterr().out
        assert cli.main(["publish", str(folder), "--status"]) == 1
        assert words in capsys.readouterr().out
    finally:
        store.close()
        if full is not None:
            full.shutdown()
            full.server_close()


def test_the_site_speaks_the_events_language(tmp_path, static, browser):
    """The site's pages, its script's texts and its results sheet in the
    event's language (`tabletimer language DIR nb`), as the hall's pages
    speak it: the page's language, the catalogue beside it (words.js), a
    name not published said in Norwegian."""
    folder, _ = make_event(tmp_path)
    event_folder.save_language(folder, "nb")
    now = int(time.time() * 1000)
    svc, store = hub(folder, now)
    finish(svc, "3", now - 4 * M)                     # the entrant who is not published, finished
    store.close()
    source = SiteSource(folder)
    try:
        files, _ = source.files()
    finally:
        source.close()
    for path, data in files.items():                  # the remote, as the outbox leaves it
        out = tmp_path / "remote" / "cup" / path
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(data)
    index = files["index.html"].decode()
    assert '<html lang="nb">' in index and "laster…" in index and "Resultater direkte fra salen" in index
    assert files["words.js"].decode().startswith('var TT_WORDS = {lang: "nb"')
    assert "(navn ikke publisert)" in {r["name"] for r in json.loads(files["rounds/main.json"])["rows"]}
    sheet = files["rounds/main-results.html"].decode()
    assert "direkte resultatliste" in sheet and "(navn ikke publisert)" in sheet and "Olga" not in sheet
    page = browser.new_context(**PHONE).new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(f"{static.url}/rounds/main.html")
    expect(page.locator("#standings thead")).to_contain_text("navn")
    expect(page.locator('tr:has-text("Jana Novakova")')).to_contain_text("legger")     # solving
    expect(page.locator("#state")).to_contain_text("i gang")                           # running
    page.goto(f"{static.url}/index.html")
    expect(page.locator("#state")).to_have_text("1 runde")
    expect(page.locator(".round-state")).to_contain_text("i gang · 1 ferdige")
    assert not errors, errors
    page.context.close()
