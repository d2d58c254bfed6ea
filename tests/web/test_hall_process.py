"""Issue #17: the hall's pages in a process of their own (hub/web/hall_process.py),
following the hub's log read-only (hub/event/log/followed_log.py), so that a
crowd on them does not cost the hub's process: the projector follows the
log live, the hub's own web server sends the known addresses on, the pages
end with the hub (killed or hanging) and say so, and a process that dies is
started again."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
import urllib.request
from contextlib import closing
from pathlib import Path

import pytest
from playwright.sync_api import expect

from brokers import free_port
from hall import Hub, act
from tabletimer.hub.event.folder import event_folder
from tabletimer.hub.event.log.followed_log import FollowedLog, ReadOnlyLog
from tabletimer.hub.event.log.store import SCHEMA_VERSION, EventStore
from waiting import until
from web_rig import browser  # noqa: F401  (the fixture)

PROJECTOR = {"viewport": {"width": 1920, "height": 1080}}


# ------------------------------------------------------------ the followed log

def test_the_log_is_followed_and_never_written(tmp_path):
    path = tmp_path / "events.sqlite"
    store = EventStore(path)
    store.append("operator", "dns", {"entrant": "1"}, 1000)
    followed = FollowedLog(path)
    try:
        assert [r["type"] for r in followed.events()] == ["dns"]
        assert followed.event_id == store.event_id
        store.append("operator", "reinstate", {"entrant": "1"}, 2000)      # the hub writes on
        assert [(r["id"], r["type"]) for r in followed.events(after=1)] == [(2, "reinstate")]
        for write in (lambda: followed.append("operator", "dq", {"entrant": "1"}, 3000),
                      lambda: followed.append_board_event("B1", {}, 3000),
                      lambda: followed.reserve("hub_ctr", 10),
                      lambda: followed.transaction()):
            with pytest.raises(ReadOnlyLog, match="only the hub writes it"):
                write()
        assert len(store.events()) == 2
    finally:
        followed.close()
        store.close()


def test_a_follower_makes_no_log_and_migrates_none(tmp_path):
    with pytest.raises(FileNotFoundError, match="no event log at"):
        FollowedLog(tmp_path / "none.sqlite")
    assert not (tmp_path / "none.sqlite").exists()
    old = tmp_path / "old.sqlite"
    with closing(sqlite3.connect(old)) as db:
        db.execute("CREATE TABLE events (id INTEGER PRIMARY KEY)")
        db.execute("PRAGMA user_version = 1")
    with pytest.raises(ReadOnlyLog, match=f"schema version 1, not {SCHEMA_VERSION}"):
        FollowedLog(old)
    with closing(sqlite3.connect(old)) as db:
        assert db.execute("PRAGMA user_version").fetchone() == (1,)      # not migrated


def test_a_round_without_a_log_yet_is_read_once_the_hub_has_made_it(tmp_path):
    """FollowedLog(wait=True): a round not started (the hall's pages show any round)."""
    path = tmp_path / "events.sqlite"
    followed = FollowedLog(path, wait=True)
    try:
        assert not followed.there and followed.events() == [] and followed.event_id is None
        assert not followed.look() and not path.exists()                  # nothing made
        path.write_bytes(b"")                                             # being made this instant
        assert not followed.look()
        path.unlink()
        store = EventStore(path)
        store.append("operator", "round_start", {"at": 1000}, 1000)
        assert followed.look() and followed.there and followed.event_id == store.event_id
        assert [r["type"] for r in followed.events()] == ["round_start"]
        with pytest.raises(ReadOnlyLog, match="only the hub writes it"):
            followed.append("operator", "dq", {"entrant": "1"}, 3000)
        store.close()
    finally:
        followed.close()


# ------------------------------------------------------------ the process, with the hub

def make_event(tmp: Path) -> Path:
    ev = event_folder.init(tmp / "hall-2027", "czjpa-individuals")
    (ev / "entrants.csv").write_text("id,name,eligible\n1,Alice,yes\n2,Bob,yes\n3,Carol,yes\n")
    (ev / "stations.csv").write_text("board,button,table,entrant\nB1,1,Table 1,1\nB1,2,Table 1,2\n"
                                     "B1,3,Table 1,3\n")
    return ev


def start_hub(ev: Path) -> tuple[Hub, int]:
    web = free_port()
    hub = Hub(ev, None, "--broker-kind", "embedded", "--port", str(free_port()), web_port=web)
    return hub, web


def standings(url: str) -> dict:
    with urllib.request.urlopen(f"{url}/h/api/standings", timeout=5) as r:
        return json.loads(r.read())


def answers(url: str) -> bool:
    try:
        standings(url)
        return True
    except OSError:
        return False


def hall_pids(log: Path) -> list[int]:
    """The hall's pages' processes following this log (from /proc; pgrep elsewhere)."""
    if not Path("/proc").is_dir():
        out = subprocess.run(["pgrep", "-f", f"hall_process --log {log}"], capture_output=True, text=True)
        return [int(p) for p in out.stdout.split()]
    pids = []
    for d in Path("/proc").iterdir():
        try:
            cmd = (d / "cmdline").read_bytes().split(b"\0")
            state = (d / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if b"tabletimer.hub.web.hall_process" in cmd and str(log).encode() in cmd and state != "Z":
            pids.append(int(d.name))
    return pids


def test_the_projector_follows_the_log_from_its_own_process_and_ends_with_the_hub(tmp_path, browser):  # noqa: F811
    ev = make_event(tmp_path)
    hub, web = start_hub(ev)
    try:
        hall = hub.hall_url()
        assert hall != f"http://127.0.0.1:{web}" and len(hall_pids(ev / "events.sqlite")) == 1
        act(ev, "round_start", at=int(time.time() * 1000) - 30 * 60_000)
        screen = browser.new_context(**PROJECTOR).new_page()
        screen.goto(f"http://127.0.0.1:{web}/hall")                   # the address people know
        assert screen.url == f"{hall}/hall"                             # sent on to the hall's own server
        expect(screen.locator("#link")).to_have_text("live")
        expect(screen.locator("#clock")).to_contain_text("30:", timeout=10_000)
        bob = screen.locator('tr[data-entrant="2"]')
        expect(bob).to_contain_text("solving")
        act(ev, "press", entrant="2", puzzle=1, at=int(time.time() * 1000) - 60_000)   # a finish by hand
        expect(bob).to_contain_text("29:", timeout=5_000)
        hub.kill()                                                      # SIGKILL: no clean stop
        t0 = time.monotonic()
        expect(screen.locator("#link")).to_contain_text("no connection to the hub since", timeout=10_000)
        assert time.monotonic() - t0 < 10
        until(lambda: not answers(hall) and not hall_pids(ev / "events.sqlite"),
              "the hall's pages gone with the hub", timeout=10)
    finally:
        hub.kill()


def test_the_projectors_address_carries_the_events_screen_token(tmp_path):
    """Issue #33 item 3: the hub prints the projector's address with the
    event's screen token (made once, 0600, in the event folder), which the
    hall's process takes from that file (not its command line) for the
    screens' own streams."""
    import http.client
    from urllib.parse import urlsplit

    ev = make_event(tmp_path)
    hub, web = start_hub(ev)
    try:
        hall = hub.hall_url()
        token = (ev / "screen-token").read_text().strip()
        assert len(token) >= 20 and oct((ev / "screen-token").stat().st_mode & 0o777) == "0o600"
        until(lambda: any(f"the projector: {hall}/hall?screen={token} " in line for line in hub.lines),
              "the projector's address said")
        commands = hall_pids_cmdlines(ev / "events.sqlite")          # seen by every user of the machine
        assert all(token not in c and "--screen-token-file" in c for c in commands)

        def stream(query: str) -> int:
            u = urlsplit(hall)
            c = http.client.HTTPConnection(u.hostname, u.port, timeout=5)
            c.request("GET", "/h/api/stream" + query, headers={"Accept": "text/event-stream"})
            status = c.getresponse().status
            c.close()
            return status
        assert stream(f"?screen={token}") == 200
        assert stream("?screen=guessed") == 403
        assert stream("") == 200
    finally:
        hub.kill()
    first = token
    hub, web = start_hub(ev)                             # the same token at the next start
    try:
        hub.hall_url()
        assert (ev / "screen-token").read_text().strip() == first
    finally:
        hub.kill()


def hall_pids_cmdlines(log: Path) -> list[str]:
    """The command lines of the hall's pages' processes following log."""
    out = []
    for pid in hall_pids(log):
        try:
            out.append(Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode())
        except OSError:
            pass
    return out


def test_a_hall_process_that_dies_or_loses_the_hub_is_started_again(tmp_path):
    ev = make_event(tmp_path)
    log = ev / "events.sqlite"
    hub, web = start_hub(ev)
    try:
        hall = hub.hall_url()
        assert oct((ev / "hall-pages.log").stat().st_mode & 0o777) == "0o600"      # its errors: the owner's only
        act(ev, "dns", entrant="3")
        until(lambda: any(r["status"] == "DNS" for r in standings(hall)["rows"]), "the DNS shown")
        (pid,) = hall_pids(log)
        os.kill(pid, signal.SIGKILL)
        until(lambda: any("the hall's pages stopped (exit -9); started again at " + hall in line
                          for line in hub.lines), "the hub saying it started them again", timeout=20)
        assert any(r["status"] == "DNS" for r in standings(hall)["rows"])    # the same port, the whole log
        (again,) = hall_pids(log)
        assert again != pid
        os.kill(hub.pid, signal.SIGSTOP)                                 # the hub hangs
        try:
            until(lambda: not hall_pids(log), "the hall's pages ending without the hub's heartbeat",
                  timeout=15)
            assert not answers(hall)
        finally:
            os.kill(hub.pid, signal.SIGCONT)
        until(lambda: answers(hall), "the hall's pages started again once the hub goes on", timeout=20)
        out = hub.stop()
        assert hub.proc.returncode == 0, out
        until(lambda: not hall_pids(log), "the hall's pages stopped with the hub")
    finally:
        hub.kill()


def test_a_hall_port_that_is_taken_is_said_and_the_hub_runs_on(tmp_path):
    import socket
    ev = make_event(tmp_path)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        hub = Hub(ev, None, "--broker-kind", "embedded", "--port", str(free_port()), web_port=free_port(),
                  hall_port=port)
        try:
            with pytest.raises(RuntimeError, match=rf"no hall pages: .*cannot listen on 127.0.0.1:{port} "
                                                   r".*--hall-listen HOST:PORT"):
                hub.hall_url()
            until(lambda: any(line.startswith("referees' pages") for line in hub.lines), "the hub serving on")
            assert hub.proc.poll() is None
        finally:
            hub.kill()


def test_the_process_ends_at_once_when_the_hub_has_said_nothing(tmp_path):
    """Started by hand without a description (its stdin closed): it ends, 0."""
    p = subprocess.run([sys.executable, "-m", "tabletimer.hub.web.hall_process", "--log",
                        str(tmp_path / "x.sqlite"), "--listen", "127.0.0.1:0"],
                       stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and p.stdout == ""


def test_the_hubs_own_server_sends_the_hall_paths_on_and_says_when_they_are_starting(tmp_path):
    """The redirects on the hub's web server (HallProcess.redirect_routes):
    the path and query kept, the port the hall's; 503 while the process
    is not running."""
    import http.client

    from tabletimer.hub.web.app import build_hall_app
    from tabletimer.hub.web.hall_pages import PATHS
    from tabletimer.hub.web.hall_process import HallProcess
    from tabletimer.hub.web.server import WebServer

    hall = HallProcess(tmp_path / "events.sqlite", {}, ("127.0.0.1", 18766), "t", tmp_path / "hall-pages.log")
    server = WebServer(build_hall_app(hall.redirect_routes(PATHS)), "127.0.0.1", 0).start()
    stand_in = None
    try:
        def get(path: str) -> tuple[int, dict]:
            c = http.client.HTTPConnection(*server.address, timeout=5)
            c.request("GET", path)
            r = c.getresponse()
            r.read()
            c.close()
            return r.status, dict(r.getheaders())
        status, headers = get("/hall")
        assert status == 503 and headers["retry-after"] == "5"            # not started (or dead)
        stand_in = hall.proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        status, headers = get("/rotate?screens=/hall,http://10.0.0.2:8765/hall&every=20")
        assert status == 307
        assert headers["location"] == "http://127.0.0.1:18766/rotate?screens=/hall,http://10.0.0.2:8765/hall&every=20"
        assert get("/h/static/hall.js")[1]["location"] == "http://127.0.0.1:18766/h/static/hall.js"
        assert get("/calls")[0] == 404                                  # only the hall's paths
    finally:
        server.stop()
        if stand_in is not None:
            stand_in.kill()
            stand_in.wait()
