"""The hub's HTTP API for remote consoles (a console on a second laptop),
as routes of the hub's web server (web/server.py):

    GET  /event          what the remote needs to build the same Competition:
                         the event folder's files as text (or the demo's recipe)
    GET  /rows?after=N   stored rows with id > N, at most MAX_ROWS at a time
                         ({"rows", "more", "now", "last": the log's last row id,
                         "event_id", "rejected", "duplicates", "waited_ms"}; a
                         standby copies them).  &wait=S (0..MAX_WAIT_S): with no
                         such row yet, the answer waits for one up to S seconds
                         (a long poll: a row reaches the standby as it is
                         stored, not at its next poll); waited_ms: how long it did
    POST /act            {action, payload, who, why}: the hub's own
                         `HubService.act`; returns the stored row
    POST /hub/fence      {term, hash, after, by, from}: the hub that took over from
                         this one's log (a hub's request only) shows its
                         term's proof: this hub is fenced and answers with
                         its desk actions after row `after` (split_brain.py)

Every request carries `Authorization: Bearer <token>`; the token is made
once per event folder (`console-token`, readable by its owner only).  The
hub prints that file's path, never the token (`WebServer.command()`): a
remote console reads a copy of it (`tabletimer console URL --token-file
PATH`).  The other hub laptop (a standby, a hub that took over) sends no
token: its requests carry `X-TableTimer-Hub: <nonce>:<HMAC>` under the
event's hub secret (protocol/hub_secret.py, HubAuth; of the method, path,
query, nonce and body), and the answer to such a request carries
`X-TableTimer-Proof`, the HMAC of its body and that nonce: each end proves
it holds the secret, and an answer replayed for another request does not
pass (docs/protocol.md, "The standby and its primary").  A hub's request
is taken for GET /event, GET /rows and POST /hub/fence, never /act.
Errors are JSON `{"error": "..."}` with 400 (bad request, an action the
hub refuses), 401 (token), 404 (path), 503 (the hub's log
cannot be written; too many connections).  Plain HTTP: for the hall's own
network, like the boards' MQTT.

The network is not trusted to behave (what the server keeps besides:
web/server.py, the deadline per request and the cap on connections):
  - the token is checked before the body is read: a wrong one is answered
    401 and its connection closed, whatever body it announces (unread);
  - bodies are at most MAX_BODY bytes with a Content-Length (a
    Transfer-Encoding body is refused 400 unread), JSON nested at most
    request_body.MAX_JSON_DEPTH deep (checked before parsing), `after` a row id in
    ASCII digits: 400 otherwise.

ConsoleApi is the requests' logic (no HTTP in it); console_routes() the
routes that read requests for it and answer them.
"""

from __future__ import annotations

import bisect
import hmac
import json
import logging
import os
import re
import secrets
import threading
import time
from collections import deque
from pathlib import Path
from typing import Any, Awaitable, Callable, MutableMapping
from urllib.parse import parse_qs

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..protocol.hub_secret import HEADER, PROOF_HEADER
from ..core.changes import RowApplied
from ..core.service import HubService
from ..core.split_brain import SELF
from ..event.folder import event_folder
from ..event.log.log_health import LogWriteFailed
from .request_body import BodyDropped, BodyRefused, parse_json, read_body

TOKEN_FILE = "console-token"
MAX_ROWS = 5000
MAX_WAIT_S = 2.0          # a long poll's longest wait (the clients' timeout is 3 s)
MAX_BODY = 64 * 1024
NONCES_KEPT = 200_000     # the other hub's request nonces remembered (a standby asks about once a second)
FOLDER_FILES = ("format.toml", "entrants.csv", "stations.csv")
API_PATHS = "GET /event, GET /rows?after=N[&wait=S], POST /act, POST /hub/fence"
log = logging.getLogger(__name__)


class ApiError(Exception):
    """An answer other than 200: status and the error's text; close: the
    connection is closed after it (what the client sent next is not read)."""

    def __init__(self, status: int, message: str, close: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.close = close


_ROW_ID = re.compile(r"[0-9]{1,18}")                      # ASCII digits only; an int64 at most


def _header(scope: MutableMapping[str, Any], name: bytes) -> str:
    """A request header's value (its ASGI scope; "" when absent)."""
    return next((v for k, v in scope.get("headers", ()) if k == name), b"").decode("latin-1")


def _target(scope: MutableMapping[str, Any]) -> str:
    """The request's path and query as sent (what a hub's proof covers)."""
    path = scope.get("raw_path") or scope.get("path", "").encode()
    query = scope.get("query_string", b"")
    return (path + (b"?" + query if query else b"")).decode("latin-1")


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


def folder_event(folder: Path, files: Path | None = None, round: str | None = None) -> dict:
    """/event for an event folder: its definition files as they are now
    (read when the hub starts, so a remote gets what the hub loaded):
    those of its round in files (default: the folder's own), named round
    when the event has several."""
    files = files or folder
    out = {"name": folder.resolve().name, "title": event_folder.event_title(folder),
           "files": {n: (files / n).read_bytes().decode("utf-8-sig", errors="replace")
                     for n in FOLDER_FILES}}
    if round is not None:
        out["round"] = round
    return out


def demo_description(fmt_file: str, fmt_text: str, boards: int, stations: int, speed: float) -> dict:
    """/event for `tabletimer demo`: the format file and demo_event's arguments."""
    return {"name": "demo", "files": {fmt_file: fmt_text},
            "demo": {"format": fmt_file, "boards": boards, "stations": stations, "speed": speed}}


class ConsoleApi:
    """The console API's requests for one HubService, without HTTP: the
    token, the rows in batches, the operator's actions checked."""

    def __init__(self, service: HubService, event: dict, token: str) -> None:
        self.service = service
        self.event = dict(event, auto_stations=service.competition.auto_stations)
        self.token = token
        self._rows: list[dict] = []       # the log read so far (ids visible in order)
        self._rows_lock = threading.Lock()
        # rows stored since the start (counted by the service's listener, from
        # the thread that stored them): what a long poll of /rows waits on
        self._stored = 0
        self._new = threading.Condition()
        # the nonces of the other hub's requests taken (the last NONCES_KEPT): one sent again (a request
        # read off the network and replayed) is refused, and does not pass for the standby heard
        self._nonces: set[str] = set()
        self._nonce_order: deque[str] = deque()
        self._nonce_lock = threading.Lock()
        service.changes.subscribe(RowApplied, lambda n: self._on_stored(n.row))

    def _on_stored(self, row: dict) -> None:
        with self._new:
            self._stored += 1
            self._new.notify_all()

    def check_token(self, authorization: str) -> None:
        """ApiError 401 (closing the connection) unless the header is `Bearer <token>`."""
        if not hmac.compare_digest(authorization.encode(), f"Bearer {self.token}".encode()):
            raise ApiError(401, "wrong or missing console token "
                                f"(Authorization: Bearer <the event's {TOKEN_FILE}>)", close=True)

    def check_request(self, scope: MutableMapping[str, Any], hub_only: bool = False) -> bool:
        """A request's credentials, before its body (its ASGI scope):
        True for a hub's request (the other hub laptop: checked with its
        body, check_hub), False for the console's token; ApiError 401
        (closing the connection) for neither, and for the token where a
        hub's request is wanted (hub_only)."""
        if _header(scope, HEADER.lower().encode()):
            if self.service.hub_auth is None:
                raise ApiError(401, "this hub has no hub secret: it takes no other hub's requests", close=True)
            return True
        if hub_only:
            raise ApiError(401, f"only another hub of this event may ask this ({HEADER}: its proof)", close=True)
        self.check_token(_header(scope, b"authorization"))
        return False

    def check_hub(self, scope: MutableMapping[str, Any], body: bytes) -> str:
        """The nonce of a hub's request, proven with its body (its answer is
        proven with it), else ApiError 401."""
        auth = self.service.hub_auth
        nonce = auth.request_nonce(scope.get("method", ""), _target(scope), _header(scope, HEADER.lower().encode()),
                                   body) if auth else None
        if nonce is None:
            raise ApiError(401, "this request's hub proof is not this hub's: the laptop that sent it holds "
                                "another hub secret than this event folder's (copy this folder's hub-secret "
                                "to it), or it is no hub of this event", close=True)
        with self._nonce_lock:
            if nonce in self._nonces:
                raise ApiError(401, "this hub's request was taken once already (a request sent again: replayed?)",
                               close=True)
            self._nonces.add(nonce)
            self._nonce_order.append(nonce)
            if len(self._nonce_order) > NONCES_KEPT:
                self._nonces.discard(self._nonce_order.popleft())
        return nonce

    def carries_token(self, scope: dict) -> bool:
        """Whether a request (its ASGI scope, before its body) carries the
        console's token, or a hub's proof: the web server's reserve of
        connections is for it."""
        given = _header(scope, b"authorization").encode("latin-1")
        if hmac.compare_digest(given, f"Bearer {self.token}".encode()):
            return True
        header = _header(scope, HEADER.lower().encode())
        auth = self.service.hub_auth
        return bool(header and auth and auth.request_nonce(scope.get("method", ""), _target(scope), header))

    @staticmethod
    def row_id(after: str) -> int:
        """`after` of /rows: a row id in ASCII digits, else ApiError 400."""
        if not _ROW_ID.fullmatch(after):
            shown = after if len(after) <= 24 else after[:20] + "..."
            raise ApiError(400, f"after must be a row id (a whole number in the digits 0-9, "
                                f"at most 18 of them), not {shown!r}")
        return int(after)

    @staticmethod
    def wait_s(value: str) -> float:
        """`wait` of /rows: seconds, 0..MAX_WAIT_S, else ApiError 400."""
        try:
            s = float(value)
        except ValueError:
            s = -1.0
        if not 0 <= s <= MAX_WAIT_S:
            raise ApiError(400, f"wait must be seconds from 0 to {MAX_WAIT_S:g}, not {value[:24]!r}")
        return s

    def _last_id(self) -> int:
        """The log's last row id, the rows read so far brought up to it."""
        with self._rows_lock:
            self._rows += self.service.store.events(after=self._rows[-1]["id"] if self._rows else 0)
            return self._rows[-1]["id"] if self._rows else 0

    def rows(self, after: int, wait: float = 0.0) -> dict:
        waited = 0
        if wait > 0:
            began = time.monotonic()
            deadline = began + wait
            while True:
                with self._new:
                    seen = self._stored
                if self._last_id() > after:
                    break
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                with self._new:
                    if self._stored == seen:          # none stored since the look: none missed
                        self._new.wait(left)
            waited = int((time.monotonic() - began) * 1000)
        with self._rows_lock:
            self._rows += self.service.store.events(after=self._rows[-1]["id"] if self._rows else 0)
            i = bisect.bisect_right(self._rows, after, key=lambda r: r["id"])
            rows = self._rows[i:i + MAX_ROWS]
            more = i + MAX_ROWS < len(self._rows)
            last = self._rows[-1]["id"] if self._rows else 0
        return {"rows": rows, "more": more, "now": self.service.clock.now_ms(),
                "last": last, "event_id": self.service.store.event_id, "waited_ms": waited,
                "rejected": dict(self.service.counts.rejected), "duplicates": self.service.counts.duplicates,
                "write_failure": dict(f) if (f := self.service.write_failure) else None,
                "network_alerts": self.service.network_alerts()}

    def fence(self, body: Any) -> dict:
        """POST /hub/fence {term, hash, after, by} from the hub that took over
        from this one's log (a hub's request: it holds the hub secret): its
        term proven, this hub is fenced and answers with its desk actions
        after `after` (split_brain.py); 400 (nothing changed) otherwise."""
        if not isinstance(body, dict) or not isinstance(body.get("by"), str):
            raise ApiError(400, "expected a JSON object {term, hash, after, by, from}")
        if body.get("from") == self.service.instance:
            raise ApiError(409, SELF)
        try:
            actions = self.service.split.fence(body.get("term"), body.get("hash"), body["by"], body.get("after"))
        except ValueError as e:
            raise ApiError(400, str(e)) from None
        except LogWriteFailed as e:
            raise ApiError(503, f"{e}; not fenced") from None
        return {"fenced": True, "term": self.service.term, "actions": actions,
                "last": self.service.store.last_id()}

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


# ------------------------------------------------------------ HTTP

class JsonAnswer(JSONResponse):
    """JSON as json.dumps writes it (as the API always has: NaN and all)."""

    def render(self, content: Any) -> bytes:
        return json.dumps(content).encode()


def error_response(status: int, message: str, close: bool = False) -> JSONResponse:
    """{"error": message}; close: `Connection: close` (uvicorn closes the
    connection after the answer, without reading what the client sends on)."""
    return JsonAnswer({"error": message}, status, headers={"Connection": "close"} if close else None)


def not_found(method: str, path: str, close: bool) -> JSONResponse:
    """404 for a path (or a method on it) that no route serves."""
    return error_response(404, f"no {method} {path}; the console API has {API_PATHS}", close)


Handler = Callable[[ConsoleApi, Request, bytes], Any]


def _endpoint(api: ConsoleApi, handle: Handler, hubs: str = "read") -> Callable[[Request], Awaitable[Response]]:
    """A route's endpoint: the token first (before the body is read), or
    the other hub's proof (with the body), then handle(api, request, body)
    in a worker thread (it reads the hub's log); errors as JSON.  hubs:
    "read" (a hub's request taken, as the token), "no" (the token only:
    an action), "only" (a hub's request only).  The answer to a hub's
    request carries its proof (bound to the request's nonce)."""
    async def endpoint(request: Request) -> Response:
        try:
            hub = api.check_request(request.scope, hub_only=hubs == "only")
            if hub and hubs == "no":
                raise ApiError(401, "a hub's proof is taken for reading only: an action needs the console token",
                               close=True)
            body = await read_body(request, MAX_BODY)
            nonce = api.check_hub(request.scope, body) if hub else None
            if nonce is not None and request.url.path == "/rows":          # the standby follows
                after = parse_qs(request.scope.get("query_string", b"").decode("latin-1")).get("after", ["0"])[-1]
                api.service.split.heard_standby(api.row_id(after))       # (split_brain.py)
            answer = JsonAnswer(await run_in_threadpool(handle, api, request, body))
            if nonce is not None and api.service.hub_auth is not None:     # the other hub: proven
                answer.headers[PROOF_HEADER] = api.service.hub_auth.answer_proof(nonce, bytes(answer.body))
            return answer
        except BodyRefused as e:
            return error_response(400, str(e), e.close)
        except BodyDropped as e:
            log.debug("console API: %s %s: %s", request.method, request.url.path, e)
            return error_response(400, str(e), close=True)       # nobody reads it: the connection is gone
        except ApiError as e:
            return error_response(e.status, str(e), e.close)
        except Exception as e:                 # never a silent dropped connection
            log.exception("console API: %s %s", request.method, request.url.path)
            return error_response(500, f"the hub failed: {e!r}")
    return endpoint


def _event(api: ConsoleApi, request: Request, body: bytes) -> dict:
    return api.event


def _rows(api: ConsoleApi, request: Request, body: bytes) -> dict:
    query = parse_qs(request.scope.get("query_string", b"").decode("latin-1"))
    return api.rows(api.row_id(query.get("after", ["0"])[-1]), api.wait_s(query.get("wait", ["0"])[-1]))


def _act(api: ConsoleApi, request: Request, body: bytes) -> dict:
    return api.act(parse_json(body))


def _fence(api: ConsoleApi, request: Request, body: bytes) -> dict:
    return api.fence(parse_json(body))


def console_routes(api: ConsoleApi) -> list[Route]:
    """The console API's routes (web/app.py's build_app puts them in the app)."""
    return [Route("/event", _endpoint(api, _event), methods=["GET"]),
            Route("/rows", _endpoint(api, _rows), methods=["GET"]),
            Route("/act", _endpoint(api, _act, hubs="no"), methods=["POST"]),
            Route("/hub/fence", _endpoint(api, _fence, hubs="only"), methods=["POST"])]
