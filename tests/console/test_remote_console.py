"""A console on a second laptop: the hub's console API (real HTTP on a free
127.0.0.1 port, a real HubService over a real SQLite log in an event
folder) and a remote HubService built from it: the same standings, an
operator action from the remote stored and ranked by the hub, board events
reaching the remote, the token, the hub's refusals, an outage; the Textual
console on the remote service; `tabletimer run` printing the command."""

from __future__ import annotations

import asyncio
import json
import time
import os
import shlex
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tabletimer.hub.cli import main as cli
from tabletimer.hub.web import console_api
from tabletimer.hub.event.folder import event_folder
from tabletimer.hub.console.app import ConsoleApp, FormScreen
from tabletimer.hub.console.table import LiveTable
from tabletimer.hub.event.time.clock import HubClock
from tabletimer.hub.console.client import RemoteError, Unreachable, connect, event_competition
from tabletimer.hub.web.console_api import console_token, folder_event
from tabletimer.hub.web.server import WebServer, parse_listen, start_hub_web
from tabletimer.hub.event.fold.competition import Competition
from tabletimer.hub.protocol.keys import BoardKeys
from tabletimer.hub.core.changes import RowApplied
from tabletimer.hub.core.service import HubService
from tabletimer.hub.rules.standings import row_dict
from tabletimer.hub.event.log.store import EventStore
from tabletimer.hub.protocol import hub_protocol
from tabletimer.shared import protocol as P
from tabletimer.shared.auth import Signer
from textual.widgets import Input
from waiting import Output, settle, until

TT = str(Path(sys.executable).parent / "tabletimer")
KEYS = {"b1": "11" * 32, "b2": "22" * 32}
MIN = 60_000


def wait_for(pred, timeout: float = 10.0, what: str = "the condition") -> None:
    until(pred, what, timeout)


class Board:
    """Signs messages as a board would: its boot and a rising counter."""

    def __init__(self, board: str) -> None:
        self.board, self.ctr, self.seq = board, 0, 0

    def send(self, svc: HubService, kind: str, msg: dict) -> None:
        self.ctr += 1
        P.stamp(msg, self.ctr, 1)
        topic = P.board_topic(self.board, kind)
        svc.handle(topic, Signer(KEYS[self.board]).sign(topic, P.encode(msg)), svc.clock.now_ms())

    def press(self, svc: HubService, station: int, after_start_ms: int) -> str:
        self.seq += 1
        assert svc.competition.start_ms is not None
        self.send(svc, P.EVENT, hub_protocol.press(1, self.seq, station, svc.competition.start_ms + after_start_ms))
        return f"{self.board}/1/{self.seq}"


def make_event(path: Path) -> Path:
    """Three entrants on two boards (b1: Alice, Bob; b2: Carol), one
    500-piece puzzle in 90 minutes."""
    event_folder.init(path, "cz-championship-individuals")
    (path / "entrants.csv").write_text("id,name\ne1,Alice\ne2,Bob\ne3,Carol\n")
    (path / "stations.csv").write_text("board,button,table,entrant\nb1,1,Table 1,e1\n"
                                       "b1,2,Table 1,e2\nb2,1,Table 2,e3\n")
    return path


def make_hub(path: Path, clock=None) -> HubService:
    ev = event_folder.load(path)
    svc = HubService(EventStore(ev.db), BoardKeys(keys=KEYS), Competition(ev.format, ev.entrants, ev.stations),
                     clock)
    svc.boards = {b: Board(b) for b in KEYS}            # type: ignore[attr-defined]
    return svc


@pytest.fixture
def hub(tmp_path: Path):
    """A hub mid-round: both boards online, the round started 20 minutes
    ago, Alice's finish confirmed, Bob's called."""
    svc = make_hub(make_event(tmp_path / "event"))
    b1, b2 = svc.boards["b1"], svc.boards["b2"]         # type: ignore[attr-defined]
    b1.send(svc, P.STATUS, P.status_online(1, "1.0", 2))
    b2.send(svc, P.STATUS, P.status_online(1, "1.0", 1))
    svc.start_round(svc.clock.now_ms() - 20 * MIN, who="desk")
    alice = b1.press(svc, 1, 15 * MIN)
    svc.act("confirm", {"press_id": alice, "missing_found": 1}, who="referee")
    b1.press(svc, 2, 18 * MIN)
    yield svc
    svc.store.close()


@pytest.fixture
def server(hub: HubService, tmp_path: Path):
    folder = tmp_path / "event"
    srv = start_hub_web(hub, folder_event(folder), console_token(folder), "127.0.0.1", 0)
    yield srv
    srv.stop()


@pytest.fixture
def remote(server: WebServer):
    svc = connect(server.url(), server.token)
    yield svc
    svc.log.close()


def standings(svc: HubService, final: bool = False) -> list[dict]:
    return [row_dict(r) for r in svc.standings(final)]


def entrant(svc: HubService, eid: str):
    return next(r for r in svc.standings() if r.entrant == eid)


def raw(server: WebServer, method: str, path: str, body: bytes | None = None,
        token: str | None = None) -> tuple[int, dict]:
    """A request as any HTTP client sends it: (status, JSON reply)."""
    req = urllib.request.Request(server.url() + path, data=body, method=method)
    if token is not None:
        req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


# ------------------------------------------------------------------ the API

def test_the_remote_has_the_hubs_event_standings_and_boards(hub, remote):
    assert remote.competition.format.title == hub.competition.format.title
    assert [e.name for e in remote.competition.entrants] == ["Alice", "Bob", "Carol"]
    assert standings(remote, final=True) == standings(hub, final=True)
    assert standings(remote) == standings(hub)
    assert entrant(remote, "e1").status == "finished" and not entrant(remote, "e1").provisional
    assert [(c[1], c[2]) for c in remote.competition.open_calls()] == [("b1/1/2", "e2")]
    assert {b: i.online for b, i in remote.registry.boards.items()} == {"b1": True, "b2": True}
    assert remote.keys.boards() == []                   # no board key leaves the hub
    assert abs(remote.clock.now_ms() - hub.clock.now_ms()) < 1000


def test_an_action_from_the_remote_is_stored_and_ranked_by_the_hub(hub, remote):
    assert entrant(hub, "e2").provisional
    row = remote.act("confirm", {"press_id": "b1/1/2", "missing_lost": 2}, who="second desk",
                     why="counted at table 1")
    stored = hub.store.events()[-1]
    assert stored == row and stored["source"] == "operator" and stored["type"] == "confirm"
    assert stored["payload"] == {"press_id": "b1/1/2", "missing_lost": 2, "who": "second desk",
                                 "why": "counted at table 1"}
    assert not entrant(hub, "e2").provisional           # applied by the hub at once
    assert hub.competition.open_calls() == []
    assert "second desk: confirm press_id=b1/1/2 missing_lost=2 (counted at table 1)" in hub.activity
    assert remote.catch_up() == 0                       # the remote applied the hub's row already
    assert standings(remote) == standings(hub)


def test_board_events_the_hub_stores_later_reach_the_remote(hub, remote):
    own = remote.changes.subscribers(RowApplied)       # the service's own (its consoles' lines, ...)
    carol = hub.boards["b2"].press(hub, 1, 19 * MIN)    # type: ignore[attr-defined]
    topic = P.board_topic("b1", P.EVENT)                 # a forgery: counted, not stored
    hub.handle(topic, Signer("33" * 32).sign(topic, P.encode(hub_protocol.press(1, 99, 1, 0))), hub.clock.now_ms())
    wait_for(lambda: remote.catch_up() >= 0 and any(c[1] == carol for c in remote.competition.open_calls()),
             what="Carol's call on the remote")
    assert standings(remote) == standings(hub)
    wait_for(lambda: remote.catch_up() >= 0 and remote.counts.rejected == {"forged": 1},
             what="the hub's count of rejected messages")


def test_the_hubs_failing_log_is_an_alert_on_the_remote_and_its_actions_are_refused(hub, remote):
    hub.store.refuse_writes()      # the log's disk went read-only
    carol = hub.boards["b2"].press(hub, 1, 19 * MIN)        # type: ignore[attr-defined]
    assert carol and not [c for c in hub.competition.open_calls() if c[1] == carol]     # not stored
    wait_for(lambda: remote.catch_up() >= 0 and remote.alerts()[:1] == hub.alerts()[:1]
             and "EVENT LOG NOT WRITTEN" in remote.alerts()[0], what="the hub's alert on the remote")
    with pytest.raises(RemoteError, match=r"cannot write the event log .*nothing was recorded"):
        remote.act("dns", {"entrant": "e3"}, who="second desk")
    hub.store.refuse_writes(False)
    hub.act("dns", {"entrant": "e3"}, who="desk")
    wait_for(lambda: remote.catch_up() >= 0 and not [a for a in remote.alerts() if "LOG" in a],
             what="the alert to go on the remote")


def test_what_the_hub_sees_on_the_network_is_an_alert_on_the_remote_too(hub, remote):
    """The hub's probe of its broker, the boards' liveness and retained junk
    are not in the log: the remote console gets them from the hub."""
    cut_off = "the hub is NOT CONNECTED to the broker since 10:00:00 (12 s): ..."
    hub.queries.add_alerts("the test's cut-off", lambda: [cut_off])
    hub.counts.retained_junk = 2
    wait_for(lambda: remote.catch_up() >= 0 and cut_off in remote.alerts()
             and any("2 retained message(s)" in a for a in remote.alerts()), what="the hub's alerts on the remote")
    hub.queries.drop_alerts("the test's cut-off")
    wait_for(lambda: remote.catch_up() >= 0 and cut_off not in remote.alerts(), what="the alert gone on the remote")


def test_rows_come_in_batches(hub, server, monkeypatch):
    monkeypatch.setattr(console_api, "MAX_ROWS", 2)
    assert len(hub.store.events()) == 6
    status, first = raw(server, "GET", "/rows?after=0", token=server.token)
    assert status == 200 and [r["id"] for r in first["rows"]] == [1, 2] and first["more"]
    svc = connect(server.url(), server.token)            # loops until it has every row
    try:
        assert [r["id"] for r in svc.competition.rows] == [1, 2, 3, 4, 5, 6]
        assert standings(svc) == standings(hub)
    finally:
        svc.log.close()


def test_a_long_poll_answers_as_soon_as_a_row_is_stored_and_after_its_wait_without_one(hub, server):
    """/rows?after=LAST&wait=S (a standby's follower): no row after LAST
    yet, the answer waits; a row stored from another thread (as the MQTT
    thread stores a board's) ends the wait at once, not at the next poll.
    Nothing stored: the answer comes after S, empty.  A wait beyond
    MAX_WAIT_S, or not a number: 400."""
    import threading

    last = hub.store.events()[-1]["id"]
    status, empty = raw(server, "GET", f"/rows?after={last}&wait=0.3", token=server.token)
    assert status == 200 and empty["rows"] == [] and empty["waited_ms"] >= 300, empty
    status, now = raw(server, "GET", f"/rows?after={last - 1}&wait=2", token=server.token)
    assert [r["id"] for r in now["rows"]] == [last] and now["waited_ms"] == 0    # there already: no wait
    # the row is stored 0.3 s after the server has looked for one and found none (it waits then):
    # on a loaded machine the request itself may take longer than 0.3 s to be read
    looked = threading.Event()
    events = hub.store.events

    def watched(*args, **kwargs):
        rows = events(*args, **kwargs)
        if threading.current_thread() is not threading.main_thread():
            looked.set()
        return rows
    answer: list = []
    hub.store.events = watched
    asking = threading.Thread(target=lambda: answer.append(
        (time.monotonic(), raw(server, "GET", f"/rows?after={last}&wait=2", token=server.token), time.monotonic())))
    try:
        asking.start()
        until(looked.is_set, "the server's look for a row after the last", timeout=10)
        time.sleep(0.3)                       # the scenario: a row stored 0.3 s into the wait
        hub.act("dns", {"entrant": "e2"}, who="desk")
        asking.join(10)
    finally:
        hub.store.events = events
    began, (status, got), ended = answer[0]
    took = ended - began
    assert status == 200 and [r["type"] for r in got["rows"]] == ["dns"], got
    assert 0.3 <= took < 2.0 and 250 <= got["waited_ms"] < 2000, (took, got["waited_ms"])
    for bad in ("3", "-1", "soon"):
        status, reply = raw(server, "GET", f"/rows?after=0&wait={bad}", token=server.token)
        assert status == 400 and "wait must be seconds" in reply["error"], reply


def test_a_standbys_follower_copies_a_row_as_it_is_stored_and_does_not_spin_meanwhile(hub, server, tmp_path):
    """The follower's long poll: a row the hub stores is in the copy well
    within the old 0.1 s poll's reach, and idle it asks about once per
    WAIT_S (not in a loop, not ten times a second)."""
    from tabletimer.hub.console.client import HubClient
    from tabletimer.hub.console.follower import WAIT_S, Follower

    client = HubClient(server.url(), server.token)
    asked: list[str] = []
    request = client.request
    client.request = lambda method, path, body=None: (asked.append(path), request(method, path, body))[1]
    copy = EventStore(tmp_path / "copy.sqlite")
    follower = Follower(client, copy)
    try:
        follower.start()
        until(lambda: copy.last_id() == hub.store.last_id() and follower.long_poll, "the copy up to date")
        n = len(asked)
        time.sleep(2 * WAIT_S)                     # idle: the follower's own pace is what is measured
        assert len(asked) - n <= 4, asked[n:]
        assert all("&wait=" in p for p in asked[n:]), asked[n:]
        row = hub.act("dns", {"entrant": "e2"}, who="desk")
        until(lambda: copy.last_id() == row["id"], "the new row copied", timeout=WAIT_S)
    finally:
        follower.stop()
        copy.close()


def test_a_wrong_or_missing_token_is_refused(server):
    assert raw(server, "GET", "/event")[0] == 401
    status, reply = raw(server, "GET", "/rows?after=0", token="guess")
    assert status == 401 and "token" in reply["error"]
    assert raw(server, "POST", "/act", b'{"action": "dns", "payload": {"entrant": "e1"}}',
               token="guess")[0] == 401
    with pytest.raises(RemoteError, match="the hub refused the token"):
        connect(server.url(), "guess")


def test_the_hubs_refusal_reaches_the_remote_caller(hub, remote):
    n = len(hub.store.events())
    # the remote's own check comes first (the same competition) ...
    with pytest.raises(ValueError, match="dns: no entrant 'nobody'"):
        remote.act("dns", {"entrant": "nobody"})
    # ... the hub checks again: its words reach the caller, nothing is stored
    with pytest.raises(RemoteError, match="dq: a reason is needed"):
        remote.log.append("operator", "dq", {"entrant": "e3", "who": "desk", "why": ""}, 0)
    with pytest.raises(RemoteError, match="unknown action 'teleport'"):
        remote.log.append("operator", "teleport", {"who": "desk"}, 0)
    assert len(hub.store.events()) == n


def test_a_round_start_without_warnings_gets_the_formats_from_the_api_and_the_remote(hub, server, remote):
    """Blank warnings mean the format's 10 and 1 minute signals on every
    path: POST /act from any client and a remote console's action alike."""
    at = hub.clock.now_ms() + MIN
    got, reply = raw(server, "POST", "/act", json.dumps({"action": "round_start", "payload": {"at": at},
                                                         "who": "api"}).encode(), token=server.token)
    assert got == 200 and reply["payload"]["warnings"] == [600_000, 60_000], reply
    remote.act("round_start", {"at": at, "duration": 30 * MIN, "warnings": None}, who="second desk")
    assert hub.store.events()[-1]["payload"]["warnings"] == [600_000, 60_000]
    remote.act("round_start", {"at": at, "warnings": []}, who="second desk")
    assert hub.store.events()[-1]["payload"]["warnings"] == []


def test_a_remote_desks_decision_on_a_call_decided_since_it_looked_is_the_hubs_conflict(hub, server, remote):
    """A second desk decides on what it saw (`seen`); the hub, which writes
    the log, checks it: a referee's confirmation recorded meanwhile makes
    the void a conflict, refused with who and when, stored for every desk."""
    bob = next(c[1] for c in hub.competition.open_calls())
    wait_for(lambda: remote.catch_up() >= 0 and any(c[1] == bob for c in remote.competition.open_calls()),
             what="the remote console sees Bob's call")
    seen = remote.latest_decision_row("void", {"press_id": bob})
    assert seen == 0                                        # open, as the second desk looks
    hub.act("confirm", {"press_id": bob}, who="Anna")       # meanwhile, at the table
    with pytest.raises(RemoteError, match="Anna confirmed it at .* after the desk looked"):
        remote.act("void", {"press_id": bob, "seen": seen}, who="second desk", why="false start")
    assert [r["type"] for r in hub.store.events()][-2:] == ["confirm", "intent_conflict"]
    assert any(a.startswith("CONFLICT (desk, second desk): void of call") for a in hub.alerts())


@pytest.mark.parametrize("method,path,body,status,message", [
    ("POST", "/act", b"{not json", 400, "the body is not JSON"),
    ("POST", "/act", b'["dns"]', 400, "expected a JSON object"),
    ("POST", "/act", b'{"action": "dns", "payload": {"entrant": "e1"}, "who": ""}', 400, "'who' must be a name"),
    ("GET", "/rows?after=x", None, 400, "after must be a row id"),
    ("GET", "/standings", None, 404, "no GET /standings"),
])
def test_bad_requests_get_a_clear_answer(server, method, path, body, status, message):
    got, reply = raw(server, method, path, body, token=server.token)
    assert got == status and message in reply["error"]


def test_an_outage_is_shown_and_the_remote_keeps_trying(hub, server, remote):
    host, port = server.address
    assert remote.snapshot().blind is None
    server.stop()
    t0 = time.monotonic()
    wait_for(lambda: remote.catch_up() >= 0 and remote.log.down is not None, what="the outage noticed")
    assert time.monotonic() - t0 < 10            # (issue #17: within 10 s, not "boards online 3/3")
    assert remote.alerts()[0].startswith("HUB UNREACHABLE")
    assert remote.snapshot().blind == "the hub cannot be reached"
    assert any("trying again" in line for line in remote.activity)
    with pytest.raises(Unreachable, match="Not confirmed by the hub"):
        remote.act("dns", {"entrant": "e3"})
    own = remote.changes.subscribers(RowApplied)       # the service's own (its consoles' lines, ...)
    carol = hub.boards["b2"].press(hub, 1, 19 * MIN)    # type: ignore[attr-defined]
    again = start_hub_web(hub, server.event, server.token, host, port)
    try:
        wait_for(lambda: remote.catch_up() >= 0 and remote.log.down is None, what="the hub back")
        wait_for(lambda: remote.catch_up() >= 0 and any(c[1] == carol for c in remote.competition.open_calls()),
                 what="the call made during the outage")
        assert any("answers again" in line for line in remote.activity)
        assert not any(a.startswith("HUB UNREACHABLE") for a in remote.alerts())
        assert standings(remote) == standings(hub)
    finally:
        again.stop()


def test_hub_time_on_the_remote_follows_the_hubs_clock(tmp_path):
    """The laptops' clocks need not agree: the remote shows the hub's time."""
    class Ahead(HubClock):                    # the hub's clock runs 3 h ahead of this machine's
        def now_ms(self) -> int:
            return super().now_ms() + 3 * 3_600_000
    folder = make_event(tmp_path / "event")
    hub = make_hub(folder, Ahead())
    srv = start_hub_web(hub, folder_event(folder), console_token(folder), "127.0.0.1", 0)
    try:
        svc = connect(srv.url(), srv.token)
        try:
            assert abs(svc.clock.now_ms() - hub.clock.now_ms()) < 500
            row = svc.start_round()                  # "now" is the hub's now
            assert abs(row["payload"]["at"] - hub.clock.now_ms()) < 500
        finally:
            svc.log.close()
    finally:
        srv.stop()
        hub.store.close()


def test_the_demo_event_is_rebuilt_remotely():
    from tabletimer.hub.event.folder.demo import demo_event
    from tabletimer.hub.rules.formats import format_text

    fmt, entrants, stations = demo_event("cz-championship-teams", 3, 2, 30)
    comp = event_competition(console_api.demo_description(
        "cz-championship-teams.toml", format_text("cz-championship-teams"), 3, 2, 30))
    assert (comp.format.name, comp.format.title, comp.format.time_limit_ms) == (fmt.name, fmt.title, fmt.time_limit_ms)
    assert comp.format.parts == fmt.parts          # relay rotation sped up the same
    assert comp.entrants == entrants and comp.stations == stations


def test_token_file_is_made_once_and_private(tmp_path):
    token = console_token(tmp_path)
    assert len(token) >= 32 and console_token(tmp_path) == token
    assert oct((tmp_path / "console-token").stat().st_mode & 0o777) == "0o600"


def test_console_listen_option():
    assert parse_listen("0.0.0.0:8765") == ("0.0.0.0", 8765)
    assert parse_listen(":0") == ("127.0.0.1", 0) and parse_listen("9000") == ("127.0.0.1", 9000)
    assert parse_listen("off") is None
    with pytest.raises(ValueError, match="HOST:PORT"):
        parse_listen("laptop")


def test_console_command_needs_a_token_and_a_hub(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("TABLETIMER_CONSOLE_TOKEN", raising=False)
    assert cli.main(["console", "http://127.0.0.1:9"]) == 2
    assert "--token" in capsys.readouterr().err
    assert cli.main(["console", "http://127.0.0.1:9", "--token", "x"]) == 2
    assert "no answer from the hub at http://127.0.0.1:9" in capsys.readouterr().err


# ------------------------------------------------------------ the console

def test_confirm_a_call_from_the_remote_console(hub, remote):
    """The organizer console on the remote service: a call the hub stores
    appears; confirming it there confirms it on the hub."""
    own = remote.changes.subscribers(RowApplied)       # the service's own (its consoles' lines, ...)
    carol = hub.boards["b2"].press(hub, 1, 19 * MIN)    # type: ignore[attr-defined]

    async def main() -> None:
        app = ConsoleApp(remote, "Remote Cup", tick=remote.catch_up)
        async with app.run_test(size=(120, 36)) as pilot:
            calls = lambda: app.main().query_one("#calls", LiveTable)      # noqa: E731
            await settle(pilot, lambda: calls().row_count == 2, "both calls on the remote console",
                         seen=lambda: calls().keys)
            calls().focus()
            calls().move_cursor(calls().keys.index(carol))
            await settle(pilot, lambda: calls().selected_key() == carol, "Carol's call selected",
                         seen=lambda: calls().selected_key())
            await pilot.press("c")
            form = await settle(pilot, lambda: isinstance(app.screen, FormScreen) and app.screen,
                                "the confirm form", seen=lambda: app.screen)
            assert form.query_one("#f-press_id", Input).value == carol
            form.query_one("#f-found", Input).value = "1"
            form.query_one("#f-why", Input).value = "from the second laptop"
            form.query_one("#f-found", Input).focus()
            await pilot.press("enter")
            await settle(pilot, lambda: not isinstance(app.screen, FormScreen), "the form to close",
                         seen=lambda: (app.screen, str(form.query_one("#error").render())))
            await settle(pilot, lambda: calls().row_count == 1, "Carol's call gone", seen=lambda: calls().keys)
    asyncio.run(main())
    carols = entrant(hub, "e3")
    assert (carols.status, carols.provisional, carols.penalty_ms) == ("finished", False,
                                                                     entrant(remote, "e3").penalty_ms)
    assert [c[2] for c in hub.competition.open_calls()] == ["e2"]
    last = hub.store.events()[-1]
    assert (last["type"], last["payload"]["press_id"], last["payload"]["who"], last["payload"]["why"]) == (
        "confirm", carol, "head referee", "from the second laptop")
    assert remote.changes.subscribers(RowApplied) == own


# ------------------------------------------------------------ the command

def test_run_prints_the_remote_console_command_and_serves_it(tmp_path):
    """The command names the token's file, never the token (a screen, a
    log, a terminal's scrollback are seen by others)."""
    from brokers import free_port

    folder = make_event(tmp_path / "event")
    proc = subprocess.Popen(
        [TT, "run", str(folder), "--port", str(free_port()), "--console-listen", "127.0.0.1:0",
         "--duration", "60"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        out = Output(proc.stdout)
        command = shlex.split(out.wait_for(lambda line: "tabletimer console http://" in line,
                                           "the remote console command"))
        assert command[:2] == ["tabletimer", "console"] and command[3] == "--token-file", out.text()
        url, token_file = command[2], Path(command[4])
        assert token_file == (folder / "console-token").resolve()
        token = token_file.read_text().strip()
        svc = connect(url, token)
        try:
            svc.act("dns", {"entrant": "e3"}, who="second desk")
        finally:
            svc.log.close()
        line = out.wait_for(lambda line: line.startswith("operator dns"), "the hub's log of the stored action")
        assert '"who": "second desk"' in line
    finally:
        os.killpg(proc.pid, signal.SIGINT)
        proc.wait(timeout=30)
    rest = out.wait_closed()
    assert proc.returncode == 0, rest
    assert "e3" in rest.split("stopped; standings:")[1]
    assert token not in rest


def test_the_console_log_names_the_token_file_not_the_token(hub, tmp_path):
    """What the hub says of its console API, on its screen and in the
    consoles' event log (which a remote console shows too)."""
    from tabletimer.hub.runtime.web_start import web_server as _web_server

    folder = tmp_path / "event"
    said: list[str] = []
    srv = _web_server(hub, folder_event(folder), folder, ("127.0.0.1", 0), said.append)
    try:
        token = (folder / "console-token").read_text().strip()
        shown = "\n".join(said + list(hub.activity))
        assert token not in shown
        assert str((folder / "console-token").resolve()) in shown and "--token-file" in shown
    finally:
        srv.stop()


def test_demo_prints_no_console_token(tmp_path):
    from brokers import free_port

    done = subprocess.run(
        [TT, "demo", "--data", str(tmp_path / "data"), "--port", str(free_port()), "--boards", "1",
         "--web-listen", "127.0.0.1:0", "--duration", "2"],
        capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    token = (tmp_path / "data" / "console-token").read_text().strip()
    assert token not in done.stdout + done.stderr
    assert "--token-file" in done.stdout


def test_console_takes_the_token_from_a_file_the_option_or_the_environment(tmp_path, capsys, monkeypatch):
    from tabletimer.hub.console import client

    given: list[tuple[str, str]] = []

    def no_hub(url: str, token: str):
        given.append((url, token))
        raise ValueError("no hub here")
    monkeypatch.setattr(client, "connect", no_hub)
    monkeypatch.setenv("TABLETIMER_CONSOLE_TOKEN", "from-the-environment")
    url = "http://127.0.0.1:9"
    token_file = tmp_path / "console-token"
    token_file.write_text("from-the-file\n")
    assert cli.main(["console", url, "--token-file", str(token_file)]) == 2
    assert cli.main(["console", url, "--token", "from-the-option"]) == 2
    assert cli.main(["console", url]) == 2
    assert given == [(url, "from-the-file"), (url, "from-the-option"), (url, "from-the-environment")]
    capsys.readouterr()
    assert cli.main(["console", url, "--token-file", str(tmp_path / "missing")]) == 2
    assert str(tmp_path / "missing") in capsys.readouterr().err
    token_file.write_text("\n")
    assert cli.main(["console", url, "--token-file", str(token_file)]) == 2
    assert "empty" in capsys.readouterr().err
    assert len(given) == 3                       # neither tried the hub


def test_a_console_beside_the_hub_says_when_the_hub_is_not_running(tmp_path):
    """issue #17: the second console still showed "boards online 3/3" 18 s
    after the hub stopped.  A console on the hub's folder reads the hub's
    lock file (never taking the lock): a hub holding it (here a process that
    holds it as `tabletimer run` does) and one gone."""
    from tabletimer.hub.cli.common import service_for
    from tabletimer.hub.runtime.desk_console import watch_the_hub
    from tabletimer.hub.event.log.store import EventStore

    ev_path = event_folder.init(tmp_path / "event", "czjpa-individuals")
    ev = event_folder.load(ev_path)
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys; from tabletimer.hub.event.folder.folder_lock import HubLock; "
        f"l = HubLock({str(ev.db)!r}).acquire(); print('held', flush=True); sys.stdin.read()")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    store = EventStore(ev.db)
    try:
        assert holder.stdout.readline().strip() == "held"
        service = service_for(ev, BoardKeys(), store)
        watch_the_hub(service, ev.db)
        assert service.snapshot().blind is None and not any("NOT RUNNING" in a for a in service.alerts())
        holder.kill()
        holder.wait(10)
        t0 = time.monotonic()
        wait_for(lambda: service.snapshot().blind == "the hub is not running", what="the stopped hub noticed")
        assert time.monotonic() - t0 < 10
        assert any(a.startswith(f"THE HUB IS NOT RUNNING on {ev_path}") for a in service.alerts())
    finally:
        holder.kill()
        store.close()


def test_the_hubs_and_a_remote_console_name_the_round_of_an_event_of_several(tmp_path, monkeypatch):
    """issue 31: `tabletimer run DIR --round pairs` titled its console "A day
    of rounds - CZJPA - pairs", and a remote console "TableTimer - CZJPA -
    pairs (remote: URL)": neither said which round (the local console did).
    The remote reads it from the hub's /event ("round")."""
    from tabletimer.hub.cli.serve import console_title
    from tabletimer.hub.console import app as console_app

    hall = tmp_path / "day"
    event_folder.add_round(hall, "indiv", "czjpa-individuals", "A day of rounds")
    event_folder.add_round(hall, "pairs", "czjpa-pairs")
    ev = event_folder.load(hall, "pairs")
    event = folder_event(ev.path, ev.files, ev.round if ev.several_rounds else None)   # as run_folder does
    assert console_title(event, ev.format.title) == "A day of rounds - CZJPA - pairs (round pairs)"
    one = event_folder.init(tmp_path / "one", "czjpa-individuals", "One Cup")
    assert console_title(folder_event(one), "CZJPA - individuals") == "One Cup - CZJPA - individuals"
    svc = HubService(EventStore(ev.db), BoardKeys(), Competition(ev.format, ev.entrants, ev.stations))
    srv = start_hub_web(svc, event, console_token(hall), "127.0.0.1", 0)
    titles: list[str] = []
    monkeypatch.setattr(console_app, "run_console", lambda service, title, *a, **k: titles.append(title))
    url = srv.url()
    try:
        assert cli.main(["console", url, "--token-file", str(console_api.token_path(hall))]) == 0
    finally:
        srv.stop()
        svc.store.close()
    assert titles == [f"TableTimer - CZJPA - pairs (remote: {url}, round pairs)"]
