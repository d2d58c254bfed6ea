"""The console API on a hostile network: a real ConsoleServer on a free
127.0.0.1 port, raw sockets for what no well-behaved client sends (idle
and trickling connections, a body announced and never sent, a wrong token
with a large body), and requests that used to be 500s (a row id in
non-ASCII digits, JSON nested 60 000 deep)."""

from __future__ import annotations

import json
import select
import socket
import threading
import time

import pytest

from tabletimer.hub.console import server as console_server
from tabletimer.hub.console.server import ConsoleServer, console_token, folder_event
from test_remote_console import hub, raw  # noqa: F401  (hub: a fixture)
from waiting import until


@pytest.fixture
def start(hub, tmp_path):  # noqa: F811
    """start(): a ConsoleServer on the hub, with the module's limits as
    they are then (a test sets them small first)."""
    folder = tmp_path / "event"
    started: list[ConsoleServer] = []

    def start() -> ConsoleServer:
        started.append(ConsoleServer(hub, folder_event(folder), console_token(folder), "127.0.0.1", 0).start())
        return started[-1]
    yield start
    for srv in started:
        srv.stop()


@pytest.fixture
def server(start):
    return start()


def opened(srv: ConsoleServer, n: int) -> list[socket.socket]:
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


def handler_threads() -> int:
    return sum(t.name.endswith("(process_request_thread)") for t in threading.enumerate())


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
    deep = console_server.__dict__.get("MAX_JSON_DEPTH", 32)
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
    monkeypatch.setattr(console_server, "REQUEST_TIMEOUT_S", 0.5, raising=False)
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
    """The hub serves at most MAX_CONNECTIONS connections at a time (a
    thread each); one more is answered 503 (or closed) at once, and served
    again once the others are gone."""
    monkeypatch.setattr(console_server, "MAX_CONNECTIONS", 8, raising=False)
    server = start()
    held = opened(server, 8)
    try:
        until(lambda: handler_threads() == 8, "the 8 connections held", seen=handler_threads)
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
        assert handler_threads() == 8
    finally:
        for s in held:
            s.close()
    until(lambda: handler_threads() == 0, "the held connections' threads gone", seen=handler_threads)
    assert raw(server, "GET", "/event", token=server.token)[0] == 200


def test_a_hundred_idle_connections_hold_at_most_the_cap_of_threads(start, monkeypatch):
    """The hall's case: many connections opened and left.  The hub's
    threads for them stay within the cap; all are closed by the timeout,
    and the hub answers."""
    monkeypatch.setattr(console_server, "REQUEST_TIMEOUT_S", 1.0, raising=False)
    cap = console_server.__dict__.get("MAX_CONNECTIONS", 64)
    server = start()
    idle = opened(server, 100)
    peak = [0]

    def all_closed() -> bool:
        peak[0] = max(peak[0], handler_threads())
        return all(closed_by_server(s) for s in idle)
    try:
        until(all_closed, "the 100 idle connections closed by the server", timeout=15,
              seen=lambda: (sum(closed_by_server(s) for s in idle), handler_threads()))
        assert peak[0] <= cap
        assert raw(server, "GET", "/event", token=server.token)[0] == 200
    finally:
        for s in idle:
            s.close()


def test_stop_closes_the_connections_still_open(start):
    srv = start()
    held = opened(srv, 5)
    try:
        until(lambda: handler_threads() == 5, "the 5 connections held", seen=handler_threads)
        stopper = threading.Thread(target=srv.stop, daemon=True)
        stopper.start()
        stopper.join(5)                  # < the request timeout: the server closes them itself
        assert not stopper.is_alive(), "stop() waits for the connections' clients"
        until(lambda: all(closed_by_server(s) for s in held), "the held connections closed")
    finally:
        for s in held:
            s.close()
