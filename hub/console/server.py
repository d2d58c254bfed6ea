"""The hub's HTTP API for remote consoles (a console on a second laptop).

    GET  /event          what the remote needs to build the same Competition:
                         the event folder's files as text (or the demo's recipe)
    GET  /rows?after=N   stored rows with id > N, at most MAX_ROWS at a time
                         ({"rows", "more", "now", "rejected", "duplicates"})
    POST /act            {action, payload, who, why}: the hub's own
                         `HubService.act`; returns the stored row

Every request carries `Authorization: Bearer <token>`; the token is made
once per event folder (`console-token`, readable by its owner only).  The
hub prints that file's path, never the token (`command()`): a remote
console reads a copy of it (`tabletimer console URL --token-file PATH`).
Errors are JSON `{"error": "..."}` with 400 (bad request, an action the
hub refuses), 401 (token), 404 (path), 503 (the hub's log cannot be
written; too many connections).  Plain HTTP: for the hall's own network,
like the boards' MQTT.

The network is not trusted to behave:
  - the token is checked before the body is read: a wrong one is answered
    401 and its connection closed, whatever body it announces;
  - a request (line, headers, body) must arrive whole within
    REQUEST_TIMEOUT_S of the connection's start or the previous answer,
    or its connection is closed (idle and trickling connections alike);
  - at most MAX_CONNECTIONS connections are served at a time, a thread
    each; one more is answered 503 and closed at once;
  - bodies are at most MAX_BODY bytes, JSON nested at most MAX_JSON_DEPTH
    deep (checked before parsing), `after` a row id in ASCII digits: 400
    otherwise.
"""

from __future__ import annotations

import bisect
import hmac
import io
import json
import logging
import os
import re
import secrets
import shlex
import socket
import socketserver
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from ..boards.service import HubService
from ..event.log_health import LogWriteFailed

TOKEN_FILE = "console-token"
DEFAULT_PORT = 8765
MAX_ROWS = 5000
MAX_BODY = 64 * 1024
MAX_JSON_DEPTH = 32          # arrays and objects in one another, in a POST body
REQUEST_TIMEOUT_S = 10.0     # a request arrives whole within this, or its connection is closed
MAX_CONNECTIONS = 64         # connections served at a time (a thread each); more are refused 503
FOLDER_FILES = ("format.toml", "entrants.csv", "stations.csv")
log = logging.getLogger(__name__)


class ApiError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class _Dropped(Exception):
    """The client went, or was too slow: its connection is closed unanswered."""


_ROW_ID = re.compile(r"[0-9]{1,18}")                      # ASCII digits only; an int64 at most
_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_JSON_NESTING = re.compile(rb"[\[\]{}]")


def json_depth(data: bytes) -> int:
    """How deep arrays and objects nest in a JSON text (brackets in strings
    are text), without parsing it: json.loads recurses once per level, so a
    body of 60 000 '[' would end in a RecursionError."""
    depth = deepest = 0
    for m in _JSON_NESTING.finditer(_JSON_STRING.sub(b'""', data)):
        if m.group() in (b"[", b"{"):
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth -= 1
    return deepest


def _json(body: bytes) -> Any:
    """A POST body as JSON; ApiError 400 for one that is not JSON or that
    nests deeper than MAX_JSON_DEPTH."""
    if json_depth(body) > MAX_JSON_DEPTH:
        raise ApiError(400, f"the body is nested deeper than {MAX_JSON_DEPTH} arrays and objects")
    try:
        return json.loads(body or b"null")
    except RecursionError:                    # not after the check above; in case
        raise ApiError(400, f"the body is nested deeper than {MAX_JSON_DEPTH} arrays and objects") from None
    except ValueError as e:
        raise ApiError(400, f"the body is not JSON: {e}") from None


def token_path(folder: Path) -> Path:
    """Where the event folder's console token is (absolute: for a command
    to copy)."""
    return Path(folder).resolve() / TOKEN_FILE


def console_token(folder: Path) -> str:
    """The event folder's console token, made on first use (mode 0600)."""
    path = token_path(folder)
    if not path.exists():
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(secrets.token_urlsafe(24) + "\n")
    return path.read_text().strip()


def folder_event(folder: Path) -> dict:
    """/event for an event folder: its definition files as they are now
    (read when the hub starts, so a remote gets what the hub loaded)."""
    return {"name": folder.resolve().name,
            "files": {n: (folder / n).read_bytes().decode("utf-8-sig", errors="replace")
                      for n in FOLDER_FILES}}


def demo_description(fmt_file: str, fmt_text: str, boards: int, stations: int, speed: float) -> dict:
    """/event for `tabletimer demo`: the format file and demo_event's arguments."""
    return {"name": "demo", "files": {fmt_file: fmt_text},
            "demo": {"format": fmt_file, "boards": boards, "stations": stations, "speed": speed}}


def parse_listen(text: str, default_host: str = "127.0.0.1") -> tuple[str, int] | None:
    """'HOST:PORT', ':PORT' or 'PORT' -> (host, port); 'off' -> None."""
    if text.strip().lower() == "off":
        return None
    host, _, port = text.strip().rpartition(":")
    try:
        n = int(port)
    except ValueError:
        raise ValueError(f"--console-listen: expected HOST:PORT (or off), not {text!r}") from None
    if not 0 <= n <= 65535:
        raise ValueError(f"--console-listen: port {n} is outside 0..65535")
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


class ConsoleServer:
    """The API above for one HubService, in a daemon thread until stop()."""

    def __init__(self, service: HubService, event: dict, token: str,
                 host: str = "127.0.0.1", port: int = DEFAULT_PORT,
                 request_timeout: float | None = None, max_connections: int | None = None) -> None:
        """request_timeout, max_connections: REQUEST_TIMEOUT_S and
        MAX_CONNECTIONS unless given."""
        self.service = service
        self.event = dict(event, auto_stations=service.competition.auto_stations)
        self.token = token
        self._rows: list[dict] = []       # the log read so far (ids visible in order)
        self._rows_lock = threading.Lock()
        self._httpd = _Server((host, port), _Handler,      # OSError if taken
                              REQUEST_TIMEOUT_S if request_timeout is None else request_timeout,
                              MAX_CONNECTIONS if max_connections is None else max_connections)
        self._httpd.api = self
        self._thread: threading.Thread | None = None

    @property
    def address(self) -> tuple[str, int]:
        host, port = self._httpd.server_address[:2]
        return str(host), int(port)

    @property
    def connections(self) -> int:
        """Connections being served now."""
        return self._httpd.connections

    def url(self) -> str:
        host, port = self.address
        if host in ("0.0.0.0", "::", ""):
            host = lan_address()
        return f"http://{host}:{port}"

    def command(self, token_file: Path) -> str:
        """What to type on the second laptop: it names the token's file
        (token_file, where the hub keeps it), never the token, so that it can
        be shown on a screen and kept in a log."""
        return f"tabletimer console {self.url()} --token-file {shlex.quote(str(token_file))}"

    def start(self) -> "ConsoleServer":
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="console-server",
                                        kwargs={"poll_interval": 0.2}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join(5)
            self._thread = None
        self._httpd.server_close()

    # ------------------------------------------------------------ requests
    def rows(self, after: int) -> dict:
        with self._rows_lock:
            self._rows += self.service.store.events(after=self._rows[-1]["id"] if self._rows else 0)
            i = bisect.bisect_right(self._rows, after, key=lambda r: r["id"])
            rows = self._rows[i:i + MAX_ROWS]
            more = i + MAX_ROWS < len(self._rows)
        return {"rows": rows, "more": more, "now": self.service.clock.now_ms(),
                "rejected": dict(self.service.rejected), "duplicates": self.service.duplicates,
                "write_failure": dict(f) if (f := self.service.write_failure) else None,
                "network_alerts": self.service.network_alerts()}

    def act(self, body: Any) -> dict:
        if not isinstance(body, dict):
            raise ApiError(400, "expected a JSON object {action, payload, who, why}")
        action, payload = body.get("action"), body.get("payload", {})
        who, why = body.get("who", "operator"), body.get("why", "")
        if not isinstance(action, str) or not isinstance(payload, dict):
            raise ApiError(400, "'action' must be a string and 'payload' an object")
        if not isinstance(who, str) or not who.strip() or not isinstance(why, str):
            raise ApiError(400, "'who' must be a name and 'why' a string")
        try:
            return self.service.act(action, payload, who=who, why=why)
        except (ValueError, TypeError) as e:
            raise ApiError(400, str(e)) from None
        except LogWriteFailed as e:
            raise ApiError(503, f"{e}; nothing was recorded") from None


class _Server(ThreadingHTTPServer):
    """A thread per connection, at most max_connections at a time (one
    more is answered 503 and closed by the accepting thread); stopping
    closes the connections still open."""

    daemon_threads = True
    block_on_close = False          # server_close() closes the connections instead of waiting for them
    request_queue_size = 64
    api: ConsoleServer

    def __init__(self, address: tuple[str, int], handler: type, request_timeout: float,
                 max_connections: int) -> None:
        self.request_timeout = request_timeout
        self.max_connections = max_connections
        self._open: set[socket.socket] = set()
        self._open_lock = threading.Lock()
        super().__init__(address, handler)

    @property
    def connections(self) -> int:
        with self._open_lock:
            return len(self._open)

    def server_bind(self) -> None:
        # as HTTPServer's, without its reverse DNS lookup of the address
        # (seconds on a hall network without a DNS server)
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = str(self.server_address[0]), int(self.server_address[1])

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._open_lock:
            full = len(self._open) >= self.max_connections
            if not full:
                self._open.add(request)
        if full:
            self._refuse(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:           # no thread: the caller closes the request
            self._forget(request)
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._forget(request)

    def _forget(self, request: Any) -> None:
        with self._open_lock:
            self._open.discard(request)

    def _refuse(self, request: socket.socket) -> None:
        """503 and close, from the accepting thread: never waits on the client."""
        out = json.dumps({"error": f"the hub serves {self.max_connections} console connections "
                                   "already; try again in a moment"}).encode()
        try:
            _discard_received(request, MAX_BODY)
            request.setblocking(False)
            request.send(b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
                         b"Connection: close\r\nContent-Length: %d\r\n\r\n%s" % (len(out), out))
        except OSError:
            pass
        log.debug("console API: refused a connection (%d open)", self.max_connections)
        self.shutdown_request(request)

    def server_close(self) -> None:
        super().server_close()
        with self._open_lock:
            still = list(self._open)
        for request in still:          # their threads see the end of the connection and leave
            try:
                request.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def handle_error(self, request: Any, client_address: Any) -> None:
        # a client gone mid-answer: not on the console's screen (socketserver prints a traceback)
        log.debug("console API: connection from %s failed", client_address, exc_info=True)


def _discard_received(sock: socket.socket, limit: int) -> None:
    """Read and drop what the client has sent already (at most limit
    bytes), without waiting for more: a socket closed with unread data
    answers with a reset, which may destroy the reply before it is read."""
    timeout = sock.gettimeout()
    sock.setblocking(False)            # (a socket with a timeout would wait for data, MSG_DONTWAIT or not)
    try:
        while limit > 0 and (data := sock.recv(min(limit, 65536))):
            limit -= len(data)
    except OSError:                    # BlockingIOError: nothing more yet
        pass
    finally:
        sock.settimeout(timeout)


class _Deadline(io.RawIOBase):
    """The connection's reading end, for the handler's rfile: every read
    waits at most until the deadline (restart() sets it a timeout from
    now), so a request that comes a byte at a time is cut off too, not
    only a silent one."""

    def __init__(self, sock: socket.socket, timeout: float) -> None:
        self.sock, self.timeout = sock, timeout
        self.deadline = time.monotonic() + timeout

    def restart(self) -> None:
        self.deadline = time.monotonic() + self.timeout

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"the request did not arrive within {self.timeout} s")
        self.sock.settimeout(left)
        return self.sock.recv_into(buffer)


class _Handler(BaseHTTPRequestHandler):
    server_version = "TableTimer"
    protocol_version = "HTTP/1.1"
    server: _Server

    def setup(self) -> None:
        self.timeout = self.server.request_timeout      # every socket operation: writing the answer too
        super().setup()
        self.rfile.close()                              # the plain one, replaced by one with a deadline
        self._reader = _Deadline(self.connection, self.timeout)
        self.rfile = io.BufferedReader(self._reader)

    def handle_one_request(self) -> None:
        # a request (line, headers, body) must arrive whole within the
        # timeout of the connection's start or the previous answer; an idle
        # connection is closed then (BaseHTTPRequestHandler catches the
        # TimeoutError and closes it)
        self._reader.restart()
        super().handle_one_request()

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")

    def _serve(self, method: str) -> None:
        api = self.server.api
        self.connection.settimeout(self.timeout)        # for the answer
        try:
            url = urlsplit(self.path)
            given = self.headers.get("Authorization", "")
            if not hmac.compare_digest(given.encode(), f"Bearer {api.token}".encode()):
                # before the body: a stranger's body is never waited for, nor read
                self.close_connection = True
                _discard_received(self.connection, MAX_BODY)
                raise ApiError(401, "wrong or missing console token "
                                    f"(Authorization: Bearer <the event's {TOKEN_FILE}>)")
            body = self._body()
            if (method, url.path) == ("GET", "/event"):
                reply = api.event
            elif (method, url.path) == ("GET", "/rows"):
                after = parse_qs(url.query).get("after", ["0"])[-1]
                if not _ROW_ID.fullmatch(after):
                    shown = after if len(after) <= 24 else after[:20] + "..."
                    raise ApiError(400, f"after must be a row id (a whole number in the digits 0-9, "
                                        f"at most 18 of them), not {shown!r}")
                reply = api.rows(int(after))
            elif (method, url.path) == ("POST", "/act"):
                reply = api.act(_json(body))
            else:
                raise ApiError(404, f"no {method} {url.path}; the console API has "
                                    "GET /event, GET /rows?after=N, POST /act")
            self._send(200, reply)
        except _Dropped as e:
            self.close_connection = True
            log.debug("console API: %s %s: %s", method, self.path, e)
        except ApiError as e:
            self._send(e.status, {"error": str(e)})
        except Exception as e:                 # never a silent dropped connection
            log.exception("console API: %s %s", method, self.path)
            self._send(500, {"error": f"the hub failed: {e!r}"})

    def _body(self) -> bytes:
        if "Transfer-Encoding" in self.headers:
            self.close_connection = True
            raise ApiError(400, "a body must come with a Content-Length (no Transfer-Encoding)")
        try:
            n = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            n = -1
        if n < 0:
            self.close_connection = True
            raise ApiError(400, "bad Content-Length")
        if n > MAX_BODY:
            self.close_connection = True
            raise ApiError(400, f"the body is too large ({n} bytes; at most {MAX_BODY})")
        if n == 0:
            return b""
        try:
            body = self.rfile.read(n)
        except OSError as e:                  # TimeoutError: the deadline; a reset
            raise _Dropped(f"the body did not come: {e}") from None
        if len(body) < n:
            raise _Dropped(f"the client closed the connection after {len(body)} of {n} bytes")
        return body

    def _send(self, status: int, data: Any) -> None:
        out = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("console API %s: " + format, self.address_string(), *args)   # not on the console's screen
