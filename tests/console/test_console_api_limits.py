"""The console API on a hostile network: the hub's real web server on a free
127.0.0.1 port, raw sockets for what no well-behaved client sends (idle
and trickling connections, a body announced and never sent, a wrong token
with a large body), and requests that used to be 500s (a row id in
non-ASCII digits, JSON nested 60 000 deep); a stream (server-sent events)
that the request deadline must not cut, nor keep stop() waiting."""

from __future__ import annotations

import asyncio
import json
import select
import socket
import threading
import time

import pytest

from starlette.responses import StreamingResponse
from starlette.routing import Route

from tabletimer.hub.web import request_body
from tabletimer.hub.web import server as web_server
from tabletimer.hub.web.console_api import console_token, folder_event
from tabletimer.hub.web.server import WebServer, start_hub_web
from test_remote_console import hub, raw  # noqa: F401  (hub: a fixture)
from waiting import until


@pytest.fixture
def start(hub, tmp_path):  # noqa: F811
    """start(extra_routes=()): the hub's web server on the hub, with the
    module's limits as they are then (a test sets them small first)."""
    folder = tmp_path / "event"
    started: list[WebServer] = []

    def start(extra_routes=()) -> WebServer:
        started.append(start_hub_web(hub, folder_event(folder), console_token(folder), "127.0.0.1", 0,
                                     extra_routes))
        return started[-1]
    yield start
    for srv in started:
        srv.stop()


@pytest.fixture
def server(start):
    return start()


def opened(srv: WebServer, n: int) -> list[socket.socket]:
    socks = []
    for _ in range(n):
        s = socket.create_connection(srv.address, timeout=5)
        socks.append(s)
    return socks


def closed_by_server(s: socket.socket) -> bool:
    """The server closed s (EOF or reset; a refusal's 503 before it is
    read and dropped), without waiting."""
    if not select.select([s], [], [], 0)[0]:
        return False
    try:
        while data := s.recv(65536, socket.MSG_DONTWAIT):
            assert data.startswith(b"HTTP/1.1 503"), data     # the only thing an idle client is sent
    except BlockingIOError:
        return False
    except ConnectionResetError:
        pass
    return True


def reply(s: socket.socket) -> tuple[bytes, bool]:
    """The server's whole answer on s and whether it closed s after it
    (s's timeout bounds the wait)."""
    data = b""
    try:
        while chunk := s.recv(65536):
            data += chunk
    except TimeoutError:
        return data, False
    return data, True


# ------------------------------------------------------------ the token first

@pytest.mark.parametrize("token,length", [("guess", 60_000), (None, 60_000), ("guess", 10_000_000)])
def test_a_wrong_token_is_refused_before_the_body_is_read(server, token, length):
    """The body is announced and never sent: the answer comes at once (not
    after the request timeout) and the connection is closed."""
    with socket.create_connection(server.address, timeout=5) as s:   # < the server's 10 s
        auth = f"Authorization: Bearer {token}\r\n" if token else ""
        s.sendall(f"POST /act HTTP/1.1\r\nHost: hub\r\n{auth}Content-Type: application/json\r\n"
                  f"Content-Length: {length}\r\n\r\n".encode())
        data, closed = reply(s)
    assert data.startswith(b"HTTP/1.1 401"), data
    assert b"wrong or missing console token" in data and closed


# ------------------------------------------------------------ what a request says

@pytest.mark.parametrize("after", ["%C2%B2", "%D9%A1", "1" * 5000, "%EF%BC%91"],
                         ids=["superscript-2", "arabic-indic-1", "5000-digits", "full-width-1"])
def test_after_is_a_row_id_in_ascii_digits(server, after):
    """A superscript two, an Arabic-Indic one, a number beyond int()'s
    digits, a full-width one: 400 with the reason (they were 500s)."""
    status, body = raw(server, "GET", f"/rows?after={after}", token=server.token)
    assert status == 400 and "after must be a row id" in body["error"], body
    assert raw(server, "GET", "/rows?after=0006", token=server.token)[0] == 200


def test_json_nested_too_deep_is_refused_and_the_hub_serves_on(hub, server):  # noqa: F811
    deep = request_body.MAX_JSON_DEPTH
    for body in (b"[" * 60_000, b'{"a":' * 12_000, b"[" * (deep + 1) + b"]" * (deep + 1)):
        status, reply_ = raw(server, "POST", "/act", body, token=server.token)
        assert status == 400 and f"nested deeper than {deep}" in reply_["error"], (status, reply_)
    # brackets in strings (an escaped quote too) are text, not nesting
    why = '[{"\\"' + "[" * 100
    ok = json.dumps({"action": "dns", "payload": {"entrant": "e1"}, "who": "desk", "why": why}).encode()
    status, row = raw(server, "POST", "/act", ok, token=server.token)
    assert status == 200 and row["payload"]["why"] == why, row
    assert raw(server, "GET", "/event", token=server.token)[0] == 200
    # exactly the limit is not too deep (the hub refuses a list for other reasons)
    status, reply_ = raw(server, "POST", "/act", b"[" * deep + b"]" * deep, token=server.token)
    assert status == 400 and "expected a JSON object" in reply_["error"]


# ------------------------------------------------------------ slow and held connections

def test_idle_and_trickling_connections_are_dropped(start, monkeypatch):
    """Connections that never send a request, and one that sends its
    headers a byte at a time (each byte well within a socket timeout),
    are closed once the request timeout has passed; the hub answers on."""
    monkeypatch.setattr(web_server, "REQUEST_TIMEOUT_S", 0.5)
    server = start()
    idle = opened(server, 20)
    trickle = socket.create_connection(server.address, timeout=5)
    trickle.sendall(b"GET /event HTTP/1.1\r\n")
    header = iter(b"X-Slow: " + b"a" * 10_000)
    try:
        deadline = time.monotonic() + 10

        def dropped() -> bool:
            if not closed_by_server(trickle):
                try:
                    trickle.send(bytes([next(header)]))
                except OSError:
                    pass                    # the server closed it meanwhile
                time.sleep(0.05)            # a byte every 50 ms: pacing, not synchronisation
                return False
            return True
        until(dropped, "the trickling connection closed by the server", timeout=deadline - time.monotonic())
        until(lambda: all(closed_by_server(s) for s in idle), "the idle connections closed by the server",
              timeout=deadline - time.monotonic(), seen=lambda: [closed_by_server(s) for s in idle])
        assert raw(server, "GET", "/event", token=server.token)[0] == 200
    finally:
        for s in idle + [trickle]:
            s.close()


def test_connections_beyond_the_cap_are_refused(start, monkeypatch):
    """The hub serves at most MAX_CONNECTIONS connections at a time; one
    more is answered 503 (or closed) at once, and served again once the
    others are gone."""
    monkeypatch.setattr(web_server, "MAX_CONNECTIONS", 8)
    server = start()
    held = opened(server, 8)
    served = lambda: server.connections      # noqa: E731
    try:
        until(lambda: served() == 8, "the 8 connections held", seen=served)
        status = None
        try:
            status = raw(server, "GET", "/event", token=server.token)[0]
        except OSError:              # closed before it read the 503
            pass
        assert status in (503, None)
        with socket.create_connection(server.address, timeout=5) as s:
            s.sendall(f"GET /event HTTP/1.1\r\nHost: hub\r\nAuthorization: Bearer {server.token}\r\n\r\n".encode())
            data, closed = reply(s)
        assert closed and (data == b"" or data.startswith(b"HTTP/1.1 503")), data
        assert served() == 8
    finally:
        for s in held:
            s.close()
    until(lambda: served() == 0, "the held connections gone", seen=served)
    assert raw(server, "GET", "/event", token=server.token)[0] == 200


def test_a_hundred_idle_connections_hold_at_most_the_cap(start, monkeypatch):
    """The hall's case: many connections opened and left.  The connections
    the hub serves for them stay within the cap (here 64, below the 100);
    all are closed by the timeout, and the hub answers."""
    monkeypatch.setattr(web_server, "REQUEST_TIMEOUT_S", 1.0)
    monkeypatch.setattr(web_server, "MAX_CONNECTIONS", 64)
    server = start()
    idle = opened(server, 100)
    peak = [0]

    def all_closed() -> bool:
        peak[0] = max(peak[0], server.connections)
        return all(closed_by_server(s) for s in idle)
    try:
        until(all_closed, "the 100 idle connections closed by the server", timeout=15,
              seen=lambda: (sum(closed_by_server(s) for s in idle), server.connections))
        assert 0 < peak[0] <= 64
        assert raw(server, "GET", "/event", token=server.token)[0] == 200
    finally:
        for s in idle:
            s.close()


def test_stop_closes_the_connections_still_open(start):
    srv = start()
    held = opened(srv, 5)
    try:
        until(lambda: srv.connections == 5, "the 5 connections held", seen=lambda: srv.connections)
        stopper = threading.Thread(target=srv.stop, daemon=True)
        stopper.start()
        stopper.join(5)                  # < the request timeout: the server closes them itself
        assert not stopper.is_alive(), "stop() waits for the connections' clients"
        until(lambda: all(closed_by_server(s) for s in held), "the held connections closed")
    finally:
        for s in held:
            s.close()


# ------------------------------------------------------------ streams (server-sent events)

async def _ticks(request):
    """A stream that never ends: an event every 100 ms."""
    async def events():
        n = 0
        while True:
            n += 1
            yield f"data: {n}\n\n".encode()
            await asyncio.sleep(0.1)
    return StreamingResponse(events(), media_type="text/event-stream")


async def _silent(request):
    """A stream that never ends and says nothing after its first event."""
    async def events():
        yield b"data: hello\n\n"
        await asyncio.Event().wait()
    return StreamingResponse(events(), media_type="text/event-stream")


STREAMS = [Route("/ticks", _ticks), Route("/silent", _silent)]


def streamed(s: socket.socket, got: bytearray) -> bytes:
    """What s has received so far (s's timeout bounds one read)."""
    chunk = s.recv(65536)
    assert chunk, f"the stream was closed by the server after {bytes(got)!r}"
    got += chunk
    return bytes(got)


def test_a_stream_outlives_the_request_deadline_and_stop_closes_it(start, monkeypatch):
    """A stream's answer is not cut by the request deadline (it is the
    answer, under way); stop() closes open streams, a silent one too, and
    returns within a few seconds."""
    monkeypatch.setattr(web_server, "REQUEST_TIMEOUT_S", 0.3)
    srv = start(STREAMS)
    ticks = socket.create_connection(srv.address, timeout=5)
    silent = socket.create_connection(srv.address, timeout=5)
    try:
        for s, path in ((ticks, "/ticks"), (silent, "/silent")):
            s.sendall(f"GET {path} HTTP/1.1\r\nHost: hub\r\n\r\n".encode())
        got, said = bytearray(), bytearray()
        until(lambda: b"data: hello" in streamed(silent, said), "the silent stream's first event")
        assert said.startswith(b"HTTP/1.1 200") and b"text/event-stream" in said, said
        # 20 events at 100 ms: 2 s of stream, over 6 request deadlines
        until(lambda: b"data: 20\n" in streamed(ticks, got), "20 events of the stream", timeout=15,
              seen=lambda: bytes(got[-60:]))
        assert got.startswith(b"HTTP/1.1 200"), got[:200]
        assert not closed_by_server(silent), "the request deadline cut the silent stream"
        assert srv.connections == 2
        stopper = threading.Thread(target=srv.stop, daemon=True)
        began = time.monotonic()
        stopper.start()
        stopper.join(6)
        assert not stopper.is_alive(), "stop() waits for the streams"
        # closed by stop() itself, not cancelled by uvicorn's graceful-shutdown timeout after it
        assert time.monotonic() - began < web_server.STOP_TIMEOUT_S

        def ended(s: socket.socket) -> bool:
            try:
                while s.recv(65536, socket.MSG_DONTWAIT):
                    pass
            except BlockingIOError:
                return False
            except ConnectionResetError:
                pass
            return True
        until(lambda: ended(ticks) and ended(silent), "both streams closed by the server")
    finally:
        ticks.close()
        silent.close()
