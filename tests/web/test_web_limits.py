"""Issue #33 items 2 and 3, and the revoked referee's stream: the web
server's connections on a hall network that floods it, from several source
addresses (127.0.0.N: Linux routes all of 127.0.0.0/8 to this machine).

- one address holds at most its share (per_address); the others are served;
- the last connections are kept for requests with a credential (a signed-in
  referee's cookie, the console's token, a hall screen's token): a flood
  from many addresses that takes the rest, and fills that reserve with
  connections that never send a request, leaves them room;
- the hall's screens (the event's screen token) have streams of their own
  that the spectators' streams never take; a wrong token is said (403);
- a revoked referee's open stream is ended ("revoked") at the next ping.
The small limits here are the web server's options (WebServer /
start_hub_web); the hub runs with server.MAX_CONNECTIONS and
connection_limits.PER_ADDRESS, 1/16 kept."""

from __future__ import annotations

import http.client
import json
import re
import socket

import pytest

from tabletimer.hub.web import connection_limits
from tabletimer.hub.web.changes import HEARTBEAT_S
from tabletimer.hub.web.rate_limit import RateLimit
from tabletimer.hub.broker.peer_address import source_of
from waiting import until
from web_rig import WebHub

SCREEN = "projector-token-of-the-test"


def idle_from(hub: WebHub, address: str, n: int) -> list[socket.socket]:
    """n connections from address that never send a request (held once the
    server has them)."""
    socks = []
    for _ in range(n):
        s = socket.socket()
        s.settimeout(5)
        s.bind((address, 0))
        s.connect(hub.server.address)
        socks.append(s)
    return socks


def get_from(hub: WebHub, address: str, path: str, headers: dict | None = None) -> tuple[int, bytes]:
    """A request from address: (status, body); 0 if the server closed the
    connection without an answer."""
    c = http.client.HTTPConnection(*hub.server.address, timeout=5, source_address=(address, 0))
    try:
        c.request("GET", path, headers=headers or {})
        r = c.getresponse()
        return r.status, r.read()
    except (ConnectionError, http.client.RemoteDisconnected):
        return 0, b""
    finally:
        c.close()


def closed_by_server(s: socket.socket) -> bool:
    try:
        s.setblocking(False)
        data = s.recv(65536)
        return data == b"" or data.startswith(b"HTTP/1.1 503")
    except BlockingIOError:
        return False
    except OSError:
        return True
    finally:
        s.setblocking(True)


def close_all(*groups: list[socket.socket]) -> None:
    for g in groups:
        for s in g:
            s.close()


@pytest.fixture
def hub(tmp_path, request):
    h = WebHub(tmp_path, **getattr(request, "param", {}))
    yield h
    h.close()


# ------------------------------------------------------------ item 2: the connections

def test_the_source_of_a_connection_is_its_ipv4_address_or_its_ipv6_64():
    assert source_of(("192.168.1.7", 50123)) == "192.168.1.7"
    assert source_of(("::ffff:192.168.1.7", 50123, 0, 0)) == "192.168.1.7"
    assert source_of(("2001:db8:1:2:aaaa::1", 1, 0, 0)) == source_of(("2001:db8:1:2:bbbb::9", 2, 0, 0)) \
        == "2001:db8:1:2::/64"
    assert source_of(("2001:db8:1:3::1", 1, 0, 0)) != source_of(("2001:db8:1:2::1", 1, 0, 0))
    assert source_of(None) == "?"


@pytest.mark.parametrize("hub", [{"web": {"max_connections": 64, "per_address": 4}}], indirect=True)
def test_one_address_holds_at_most_its_share_and_the_others_are_served(hub):
    flood = idle_from(hub, "127.0.0.2", 4)
    try:
        until(lambda: hub.server.connections_from("127.0.0.2") == 4, "the 4 connections held",
              seen=lambda: hub.server.connections_from("127.0.0.2"))
        status, body = get_from(hub, "127.0.0.2", "/h/api/standings")        # a 5th: refused at once
        assert status == 503 and b"4 connections from this address already" in body
        assert hub.server.connections_from("127.0.0.2") == 4
        assert get_from(hub, "127.0.0.3", "/h/api/standings")[0] == 200      # another device: served
        assert get_from(hub, "127.0.0.3", "/r/api/me", {"Cookie": f"tt_referee={hub.anna}"})[0] == 200
    finally:
        close_all(flood)
    until(lambda: hub.server.connections_from("127.0.0.2") == 0, "the flood's connections gone")
    assert get_from(hub, "127.0.0.2", "/h/api/standings")[0] == 200         # its share back


@pytest.mark.parametrize("hub", [{"web": {"max_connections": 16, "per_address": 4, "reserved": 4,
                                          "request_timeout": 60.0},
                                  "hall": {"screen_token": SCREEN}}], indirect=True)
def test_the_reserve_serves_referees_the_console_and_the_screens_through_a_flood(hub, monkeypatch):
    """16 connections, the last 4 kept: a flood from three addresses takes
    the 12 others; a spectator is refused, the referee, the console and
    the projector are served; the reserve filled with connections that
    send nothing (from a fourth address) does not keep them out either:
    the one that waited longest is closed for the newcomer."""
    monkeypatch.setattr(connection_limits, "PROBATION_S", 30.0)      # the reserve's idle ones stay: not a race
    flood = [s for a in ("127.0.0.2", "127.0.0.3", "127.0.0.4") for s in idle_from(hub, a, 4)]
    waiting: list[socket.socket] = []
    try:
        until(lambda: hub.server.connections == 12, "the flood's 12", seen=lambda: hub.server.connections)
        referee = {"Cookie": f"tt_referee={hub.anna}"}
        console = {"Authorization": f"Bearer {hub.server.token}"}
        assert get_from(hub, "127.0.0.9", "/h/api/standings")[0] == 503       # anonymous: refused
        assert get_from(hub, "127.0.0.9", "/r/api/me", {"Cookie": "tt_referee=forged"})[0] == 503
        assert get_from(hub, "127.0.0.9", "/r/api/me", referee)[0] == 200
        assert get_from(hub, "127.0.0.9", "/event", console)[0] == 200
        assert get_from(hub, "127.0.0.9", f"/h/api/standings?screen={SCREEN}")[0] == 200
        waiting = idle_from(hub, "127.0.0.5", 4)                              # the reserve full of idle ones
        until(lambda: hub.server.connections == 16, "the reserve taken", seen=lambda: hub.server.connections)
        assert get_from(hub, "127.0.0.5", "/h/api/standings")[0] == 503       # a 5th waiting from .5: no
        assert get_from(hub, "127.0.0.9", "/r/api/me", referee)[0] == 200
        assert get_from(hub, "127.0.0.10", "/rows?after=0", console)[0] == 200
        until(lambda: closed_by_server(waiting[0]), "the oldest idle one closed for the referee",
              seen=lambda: [closed_by_server(s) for s in waiting])
        assert not any(closed_by_server(s) for s in flood + waiting[1:])      # the others untouched
    finally:
        close_all(flood, waiting)


@pytest.mark.parametrize("hub", [{"web": {"max_connections": 8, "per_address": 8, "reserved": 2}}],
                         indirect=True)
def test_a_connection_in_the_reserve_must_show_its_credential_at_once(hub, monkeypatch):
    monkeypatch.setattr(connection_limits, "PROBATION_S", 0.5)
    flood = idle_from(hub, "127.0.0.2", 6)
    late: list[socket.socket] = []
    try:
        until(lambda: hub.server.connections == 6, "the flood's 6", seen=lambda: hub.server.connections)
        late += idle_from(hub, "127.0.0.3", 1)          # in the reserve, and silent
        until(lambda: closed_by_server(late[0]), "the silent one closed after PROBATION_S", timeout=5)
        assert not any(closed_by_server(s) for s in flood)         # the others' deadline is 10 s
    finally:
        close_all(flood, late)


# ------------------------------------------------------------ item 3: the hall's streams

def stream_from(hub: WebHub, address: str, path: str) -> tuple[int, socket.socket]:
    """A page's stream from address: its status, and the socket (held open)."""
    s = socket.socket()
    s.settimeout(5)
    s.bind((address, 0))
    s.connect(hub.server.address)
    s.sendall(f"GET {path} HTTP/1.1\r\nHost: hub\r\nAccept: text/event-stream\r\n\r\n".encode())
    head = b""
    while b"\r\n" not in head:
        chunk = s.recv(4096)
        if not chunk:
            break
        head += chunk
    parts = head.split(b" ", 2)
    return (int(parts[1]) if len(parts) > 1 else 0), s


@pytest.mark.parametrize("hub", [{"hall": {"limit": RateLimit(streams_per_client=2, streams_in_all=4,
                                                               screens_in_all=2),
                                           "screen_token": SCREEN}}], indirect=True)
def test_the_projectors_stream_is_never_the_crowds(hub):
    """The spectators' streams all taken (4 here, from two addresses), a
    spectator is refused (503: the page then polls the standings, which
    are answered); a screen with the event's token gets a stream of the
    screens' own, up to their limit; a wrong token is said."""
    held = []
    try:
        for a in ("127.0.0.2", "127.0.0.3"):
            for _ in range(2):
                status, s = stream_from(hub, a, "/h/api/stream")
                held.append(s)
                assert status == 200
        status, s = stream_from(hub, "127.0.0.4", "/h/api/stream")
        held.append(s)
        assert status == 503
        assert get_from(hub, "127.0.0.4", "/h/api/standings")[0] == 200       # what its page polls
        for _ in range(2):
            status, s = stream_from(hub, "127.0.0.4", f"/h/api/stream?screen={SCREEN}")
            held.append(s)
            assert status == 200
        status, s = stream_from(hub, "127.0.0.4", f"/h/api/stream?screen={SCREEN}")   # a third screen
        held.append(s)
        assert status == 503
        status, body = get_from(hub, "127.0.0.4", "/h/api/stream?screen=guessed")
        assert status == 403 and json.loads(body)["screen"] == "refused"
        assert get_from(hub, "127.0.0.4", "/h/api/standings?screen=guessed")[0] == 403
        assert hub.hall.limit.streams == 4 and hub.hall.limit.screens == 2
    finally:
        close_all(held)
    until(lambda: hub.hall.limit.streams == 0 and hub.hall.limit.screens == 0, "every stream's place given back",
          seen=lambda: (hub.hall.limit.streams, hub.hall.limit.screens))


@pytest.mark.parametrize("hub", [{"hall": {"screen_token": SCREEN}}], indirect=True)
def test_a_screens_page_loads_its_scripts_with_its_token(hub):
    status, body = get_from(hub, "127.0.0.2", f"/hall?screen={SCREEN}")
    assert status == 200 and f'"/h/static/hall.js?screen={SCREEN}"'.encode() in body
    status, body = get_from(hub, "127.0.0.2", "/hall?screen=guessed")      # the page; its script says so
    assert status == 200 and b'"/h/static/hall.js"' in body and b"guessed" not in body


# ------------------------------------------------------------ a revoked referee's stream

def test_a_revoked_referees_open_stream_is_ended(hub):
    s = socket.create_connection(hub.server.address, timeout=5)
    try:
        s.sendall(f"GET /r/api/stream?table=Table%201 HTTP/1.1\r\nHost: hub\r\nCookie: tt_referee={hub.anna}"
                  "\r\nAccept: text/event-stream\r\n\r\n".encode())
        got = bytearray()
        until(lambda: got.extend(s.recv(65536)) or b"data: {" in got, "the stream's first view")
        assert got.startswith(b"HTTP/1.1 200")
        hub.referees.revoke("Anna")
        got.clear()

        def ended() -> bool:                      # the chunked body's last chunk (or the socket closed)
            chunk = s.recv(65536)
            got.extend(chunk)
            return not chunk or got.endswith(b"\r\n0\r\n\r\n")
        until(ended, "the stream ended", timeout=HEARTBEAT_S + 5, seen=lambda: bytes(got[-200:]))
        assert b"event: revoked" in got and b"badge was revoked" in got
    finally:
        s.close()


# ------------------------------------------------------------ the flood tool of the figures

@pytest.mark.parametrize("hub", [{"web": {"max_connections": 64, "per_address": 4}}], indirect=True)
def test_the_flood_tool_measures_what_the_server_answers(hub, capsys):
    """tools/attack/web_flood.py, small: 12 slow connections from one
    address (4 held, the rest refused), the probes from another answered."""
    from tabletimer.tools.attack import web_flood

    web_flood.main([hub.url, "--kind", "slow", "--from", "127.0.0.2", "--connections", "12", "--reopen", "0",
                    "--seconds", "1", "--every", "0.5", "--warmup", "0.3", "--probe", "GET:/h/api/standings",
                    "--probe", "STREAM:/h/api/stream"])
    out = capsys.readouterr().out
    assert "12 connections from 1 address(es)" in out
    for probe in ("GET:/h/api/standings", "STREAM:/h/api/stream"):
        answered = re.search(rf"probe {probe}: (\d+)/(\d+) answered \(200 x(\d+)\)", out)
        assert answered and answered[1] == answered[2] == answered[3] and int(answered[1]) >= 1, out
    refused = re.search(r"refused \(503\) (\d+) of (\d+) opened", out)
    assert refused and int(refused[1]) >= 8, out          # 12 at once, 4 held: the others refused
