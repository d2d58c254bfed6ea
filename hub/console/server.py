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
written).  Plain HTTP: for the hall's own network, like the boards' MQTT.

The network is not trusted to behave:
  - the token is checked before the body is read: a wrong one is answered
    401 and its connection closed, whatever body it announces;
  - bodies are at most MAX_BODY bytes, JSON nested at most MAX_JSON_DEPTH
    deep (checked before parsing), `after` a row id in ASCII digits: 400
    otherwise.
"""

from __future__ import annotations

import bisect
import hmac
import json
import logging
import os
import re
import secrets
import shlex
import socket
import socketserver
import threading
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
FOLDER_FILES = ("format.toml", "entrants.csv", "stations.csv")
log = logging.getLogger(__name__)


class ApiError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class _Dropped(Exception):
    """The client went: its connection is closed unanswered."""


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
                 host: str = "127.0.0.1", port: int = DEFAULT_PORT) -> None:
        self.service = service
        self.event = dict(event, auto_stations=service.competition.auto_stations)
        self.token = token
        self._rows: list[dict] = []       # the log read so far (ids visible in order)
        self._rows_lock = threading.Lock()
        self._httpd = _Server((host, port), _Handler)     # OSError if taken
        self._httpd.api = self
        self._thread: threading.Thread | None = None

    @property
    def address(self) -> tuple[str, int]:
        host, port = self._httpd.server_address[:2]
        return str(host), int(port)

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
                "write_failure": dict(f) if (f := self.service.write_failure) else None}

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
    daemon_threads = True
    api: ConsoleServer

    def server_bind(self) -> None:
        # as HTTPServer's, without its reverse DNS lookup of the address
        # (seconds on a hall network without a DNS server)
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = str(self.server_address[0]), int(self.server_address[1])


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


class _Handler(BaseHTTPRequestHandler):
    server_version = "TableTimer"
    protocol_version = "HTTP/1.1"
    server: _Server

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")

    def _serve(self, method: str) -> None:
        api = self.server.api
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
        except OSError as e:                  # a reset
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
