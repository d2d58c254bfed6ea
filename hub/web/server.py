"""The hub's web server: uvicorn serving a Starlette app (the console API,
web/console_api.py; the referees' pages) in a daemon thread until stop().

The network is not trusted to behave; what the server itself keeps
(the app keeps the rest: the token before the body, body sizes, JSON
depth, console_api.py):
  - a request (line, headers, body) must arrive whole within
    REQUEST_TIMEOUT_S of the connection's start or of the previous answer,
    or its connection is closed (idle and trickling connections alike:
    the deadline is one per request, not one per read); once an answer
    has started (a stream of server-sent events: as long as it lasts),
    the deadline waits for its end;
  - at most MAX_CONNECTIONS connections are served at a time, at most
    PER_ADDRESS from one source, and the last MAX_CONNECTIONS //
    RESERVED_SHARE only for requests with a credential (a referee's
    sign-in, the console's token, a hall screen's token: the server's
    `privileged`): connection_limits.py; one refused is answered 503
    (JSON) and closed at once;
  - a request uvicorn's HTTP parser (h11) refuses is answered 400 (JSON)
    and its connection closed;
  - stop() closes every connection still open, answers under way
    (streams) too, and returns within a few seconds;
  - nothing of uvicorn's reaches the terminal: its log goes to this
    module's logger, at debug (errors at error), no access log.
All of it rests on _Protocol (uvicorn's h11 protocol, subclassed) and
WebServer.
"""

from __future__ import annotations

import asyncio
import json
import logging
import shlex
import socket
import threading
from pathlib import Path
from typing import Any, Sequence, cast

import h11
import uvicorn
from starlette.applications import Starlette
from starlette.routing import BaseRoute
from uvicorn.protocols.http.h11_impl import H11Protocol

from ..core.service import HubService
from . import connection_limits
from ..broker.peer_address import source_of
from .connection_limits import PER_ADDRESS, RESERVED_SHARE, ConnectionLimits, Privileged

DEFAULT_PORT = 8765
REQUEST_TIMEOUT_S = 10.0     # a request arrives whole within this, or its connection is closed
# connections served at a time (each open page holds one for its events: 300 spectators, 60
# referees, the consoles); more: 503.  The hub raises its open-files limit to fit (serve.py).
MAX_CONNECTIONS = 1024
STOP_TIMEOUT_S = 3.0         # stop(): answers still running (streams) are cancelled after this
DISCARD_LIMIT = 64 * 1024    # what is read and dropped before a refused connection is closed
log = logging.getLogger(__name__)


def parse_listen(text: str, default_host: str = "127.0.0.1") -> tuple[str, int] | None:
    """'HOST:PORT', ':PORT' or 'PORT' -> (host, port); 'off' -> None."""
    if text.strip().lower() == "off":
        return None
    host, _, port = text.strip().rpartition(":")
    try:
        n = int(port)
    except ValueError:
        raise ValueError(f"--web-listen: expected HOST:PORT (or off), not {text!r}") from None
    if not 0 <= n <= 65535:
        raise ValueError(f"--web-listen: port {n} is outside 0..65535")
    return host or default_host, n


def lan_address() -> str:
    """This machine's address on its network (where another laptop reaches
    it), else its host name."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("192.0.2.1", 9))          # no packet is sent: picks the route's address
            return s.getsockname()[0]
    except OSError:
        return socket.gethostname()


def url_of(host: str, port: int, scheme: str = "http") -> str:
    """SCHEME://HOST:PORT, an IPv6 address in brackets."""
    return f"{scheme}://[{host}]:{port}" if ":" in host else f"{scheme}://{host}:{port}"


def base_url(host: str, port: int) -> str:
    """http://HOST:PORT for a server listening on host:port, as another
    machine reaches it (a wildcard address: this machine's on its network)."""
    return url_of(lan_address() if host in ("0.0.0.0", "::", "") else host, port)


# ------------------------------------------------------------ the connection

def _discard_received(transport: asyncio.BaseTransport, limit: int = DISCARD_LIMIT) -> None:
    """Read and drop what the client has sent already and the event loop
    has not read yet (at most limit bytes), without waiting for more: a
    socket closed with unread data answers with a reset, which may destroy
    the reply before it is read."""
    tsock = transport.get_extra_info("socket")
    if tsock is None:
        return
    try:
        with socket.fromfd(tsock.fileno(), tsock.family, tsock.type) as sock:   # a duplicate descriptor
            while limit > 0 and (data := sock.recv(min(limit, 65536), socket.MSG_DONTWAIT)):
                limit -= len(data)
    except OSError:                    # BlockingIOError: nothing more yet; the socket gone
        pass


def _json_answer(status: int, reason: bytes, data: dict) -> bytes:
    out = json.dumps(data).encode()
    return (b"HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nConnection: close\r\n"
            b"Content-Length: %d\r\n\r\n%s" % (status, reason, len(out), out))


class _Protocol(H11Protocol):
    """uvicorn's h11 protocol with the server's guarantees: a deadline per
    request, the caps on connections (connection_limits.py), JSON
    refusals, connections closed on stop.  WebServer makes a subclass with
    its limits set."""

    request_timeout: float = REQUEST_TIMEOUT_S
    limits: ConnectionLimits = ConnectionLimits(MAX_CONNECTIONS, PER_ADDRESS, 0, None)

    _refused = False
    _counted = False
    _admitted = True              # False: in the reserve, and its request showed no credential
    _deadline: asyncio.TimerHandle | None = None

    # -------------------------------------------------------- the caps
    def connection_made(self, transport: asyncio.Transport) -> None:   # type: ignore[override]
        source = source_of(transport.get_extra_info("peername"))
        why, waiting, evict = self.limits.admit(self, source, len(self.connections))
        if why:
            self._refused = True
            self.transport = transport
            _discard_received(transport)
            transport.write(_json_answer(503, b"Service Unavailable", {"error": why}))
            transport.close()
            log.debug("web: refused a connection from %s (%s)", source, why)
            return
        self._counted = True
        if evict is not None:
            cast(_Protocol, evict)._evict()          # (the limits' keys are these connections)
        if waiting:
            self._admitted = False
            self.app = self._gate(self.app)
        super().connection_made(transport)
        self._arm()

    def _evict(self) -> None:
        """Closed for a newer connection in the reserve (it sent no request yet)."""
        self._disarm()
        if not self.transport.is_closing():
            log.debug("web: %s: closed in the reserve for a newer connection", self.client)
            _discard_received(self.transport)
            self.transport.close()

    def _gate(self, app):
        """The app for a connection in the reserve: its first request is
        served only with a credential (the connection is an ordinary one
        after it; data_received vets the request's head as soon as it is
        parsed); without, 503 and closed."""
        async def gate(scope, receive, send) -> None:
            if not self._admitted:
                body = json.dumps({"error": self.limits.full_text()}).encode()
                await send({"type": "http.response.start", "status": 503,
                            "headers": [(b"content-type", b"application/json"), (b"connection", b"close"),
                                        (b"retry-after", b"5"), (b"content-length", b"%d" % len(body))]})
                await send({"type": "http.response.body", "body": body})
                return
            await app(scope, receive, send)
        return gate

    def data_received(self, data: bytes) -> None:
        if self._refused:
            return
        super().data_received(data)
        if self.cycle is not None and self.limits.waiting(self):
            self._admitted = self.limits.vet(self, cast(dict, self.cycle.scope))
            if self._admitted:
                self._arm()                    # an ordinary request's deadline from here
        self._check_request_whole()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._refused:
            return
        self._disarm()
        if self._counted:
            self.limits.closed(self)
            self._counted = False
        super().connection_lost(exc)

    # -------------------------------------------------------- the deadline
    def _arm(self) -> None:
        """The next request must arrive whole within request_timeout from now
        (within PROBATION_S in the reserve)."""
        self._disarm()
        timeout = self.request_timeout
        if self.limits.waiting(self):
            timeout = min(timeout, connection_limits.PROBATION_S)
        self._deadline = self.loop.call_later(timeout, self._deadline_passed)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _check_request_whole(self) -> None:
        if self.conn.their_state in (h11.DONE, h11.MUST_CLOSE, h11.CLOSED, h11.ERROR):
            self._disarm()

    def _deadline_passed(self) -> None:
        self._deadline = None
        if self.cycle is not None and self.cycle.response_started and not self.cycle.response_complete:
            return           # an answer under way (a stream): on_response_complete arms again at its end
        if not self.transport.is_closing():
            log.debug("web: %s: no whole request within %s s; closed", self.client, self.request_timeout)
            self.transport.close()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self.transport.is_closing():
            # answered before the whole body came (a wrong token, a body too large):
            # drop what came meanwhile before the socket closes (its next turn of the loop)
            self._disarm()
            _discard_received(self.transport)
            return
        self._arm()
        self._check_request_whole()          # a pipelined request, whole already

    # -------------------------------------------------------- refusals, stop
    def send_400_response(self, msg: str) -> None:
        """A request h11 cannot parse: 400 in JSON, and closed."""
        self._disarm()
        try:
            self.transport.write(_json_answer(400, b"Bad Request", {"error": f"not an HTTP request h11 "
                                                                             f"accepts ({msg})"}))
        finally:
            self.transport.close()

    def shutdown(self) -> None:
        """The server stops: every connection is closed, an answer under
        way too (uvicorn's own waits for it, a stream would never end)."""
        self._disarm()
        if self.transport.is_closing():
            return
        if self.cycle is None or self.cycle.response_complete:
            if self.transport.get_write_buffer_size() == 0:
                self.transport.close()
                return
        self.transport.abort()


# ------------------------------------------------------------ uvicorn's log

class _ToDebug(logging.Handler):
    """uvicorn's log records, to this module's logger: at debug, errors at error."""

    def emit(self, record: logging.LogRecord) -> None:
        level = logging.ERROR if record.levelno >= logging.ERROR else logging.DEBUG
        if log.isEnabledFor(level):
            log.log(level, "uvicorn: %s", record.getMessage(), exc_info=record.exc_info)


_relay_lock = threading.Lock()


def _quiet_uvicorn() -> None:
    with _relay_lock:
        logger = logging.getLogger("uvicorn")
        if not any(isinstance(h, _ToDebug) for h in logger.handlers):
            logger.addHandler(_ToDebug())
            logger.propagate = False          # not to the root logger (the terminal)


class _Uvicorn(uvicorn.Server):
    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.ready = threading.Event()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        self.ready.set()


# ------------------------------------------------------------ the server

def _bind(host: str, port: int) -> socket.socket:
    """A listening socket on host:port (port 0: a free one); OSError if taken."""
    family, kind, proto, _, address = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM,
                                                         flags=socket.AI_PASSIVE)[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)   # as http.server: a restart on the port
        sock.bind(address)
        sock.listen(128)
    except BaseException:
        sock.close()
        raise
    return sock


class WebServer:
    """A Starlette app served by uvicorn in a daemon thread until stop()."""

    def __init__(self, app: Starlette, host: str = "127.0.0.1", port: int = DEFAULT_PORT,
                 request_timeout: float | None = None, max_connections: int | None = None,
                 per_address: int | None = -1, reserved: int | None = None,
                 privileged: Privileged | None = None) -> None:
        """request_timeout, max_connections, per_address (None: no cap per
        source): REQUEST_TIMEOUT_S, MAX_CONNECTIONS and PER_ADDRESS unless
        given; privileged(scope): whether a request carries a credential
        (None: no reserve); reserved: the connections kept for those
        (default max_connections // RESERVED_SHARE)."""
        self.app = app
        self._host, self._port = host, port
        cap = MAX_CONNECTIONS if max_connections is None else max_connections
        self.limits = ConnectionLimits(cap, PER_ADDRESS if per_address == -1 else per_address,
                                       cap // RESERVED_SHARE if reserved is None else reserved, privileged)
        self._protocol: type[_Protocol] = type("_Protocol", (_Protocol,), {
            "request_timeout": REQUEST_TIMEOUT_S if request_timeout is None else request_timeout,
            "limits": self.limits})
        self._sock: socket.socket | None = None
        self._server: _Uvicorn | None = None
        self._thread: threading.Thread | None = None
        self.api: Any = None               # the console API's object, for command() and tests

    @property
    def address(self) -> tuple[str, int]:
        assert self._sock is not None, "not started"
        host, port = self._sock.getsockname()[:2]
        return str(host), int(port)

    @property
    def connections(self) -> int:
        """Connections being served now (refused ones are not)."""
        return len(self._server.server_state.connections) if self._server else 0

    def connections_from(self, source: str) -> int:
        """Connections from source (source_of's form) being served now."""
        return self.limits.open_from(source)

    def url(self) -> str:
        return base_url(*self.address)

    def start(self) -> "WebServer":
        """Listen (OSError if the port is taken) and serve in a daemon thread."""
        _quiet_uvicorn()
        self._sock = _bind(self._host, self._port)
        config = uvicorn.Config(self.app, http=self._protocol, ws="none", lifespan="off", loop="asyncio",
                                log_config=None, access_log=False, server_header=False,
                                timeout_keep_alive=int(self._protocol.request_timeout) + 1,
                                timeout_graceful_shutdown=int(STOP_TIMEOUT_S))
        self._server = _Uvicorn(config)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [self._sock]},
                                        name="web-server", daemon=True)
        self._thread.start()
        while not self._server.ready.wait(0.05):
            if not self._thread.is_alive():
                self._sock.close()
                raise RuntimeError("the web server did not start (its log: logger "
                                   f"{log.name!r})")
        return self

    def stop(self) -> None:
        """Close every connection and stop serving (within a few seconds)."""
        if self._server is not None and self._thread is not None:
            self._server.should_exit = True
            self._thread.join(STOP_TIMEOUT_S + 2)
            if self._thread.is_alive():
                self._server.force_exit = True
                self._thread.join(2)
            self._thread = None
        if self._sock is not None:
            self._sock.close()

    def command(self, token_file: Path) -> str:
        """What to type on the second laptop: it names the token's file
        (token_file, where the hub keeps it), never the token, so that it can
        be shown on a screen and kept in a log."""
        return f"tabletimer console {self.url()} --token-file {shlex.quote(str(token_file))}"

    # the console API's token, for tests and callers that hold the server
    @property
    def token(self) -> str:
        return self.api.token

    @property
    def event(self) -> dict:
        return self.api.event


def start_hub_web(service: HubService, event: dict, token: str, host: str = "127.0.0.1",
                  port: int = DEFAULT_PORT, extra_routes: Sequence[BaseRoute] = (),
                  request_timeout: float | None = None, max_connections: int | None = None,
                  privileged: Sequence[Privileged] = (), per_address: int | None = -1,
                  reserved: int | None = None) -> WebServer:
    """The hub's web server, started: the console API for service (event:
    its /event; token: its Bearer token) and extra_routes (the referees'
    pages).  The reserve of connections (WebServer) is for requests with
    the console's token or one of privileged's credentials (a referee's
    sign-in, a hall screen's token).  OSError if the port is taken."""
    from .app import build_app
    from .console_api import ConsoleApi

    api = ConsoleApi(service, event, token)
    checks = (api.carries_token, *privileged)
    server = WebServer(build_app(api, extra_routes), host, port, request_timeout, max_connections,
                       per_address, reserved, lambda scope: any(check(scope) for check in checks))
    server.api = api
    return server.start()
