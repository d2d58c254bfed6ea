"""The referees' pages on the hub (Starlette routes for the web server):

    GET  /signin?token=T     a badge's QR code: signs the phone in (a cookie)
                             and opens the hall's calls
    GET  /t/{table}          a table's page (a table card's QR code)
    GET  /checkin[?entrant=ID]  the door's check-in page (check_in_view.py: an
                             entrant's badge or list QR code opens it on that entrant)
    GET  /calls              every call waiting in the hall, oldest first (and
                             while a hall check runs, what it still waits for:
                             hall_check_view.py)
    GET  /r/static/{file}    the pages' scripts and styles
    GET  /r/api/me           who is signed in
    GET  /r/api/table/{table}, GET /r/api/calls, GET /r/api/checkin
                             what the pages show (table_view.py), as JSON
    GET  /r/api/stream?table=T (or page=checkin, or none: the calls)
                             the same, sent again at every stored row that
                             touches the table and every 10 s, a `ping`
                             event between (server-sent events, changes.py:
                             a page that has had nothing for 8 s says it
                             lost the hub, common.js); a badge revoked
                             meanwhile ends it (a `revoked` event) within
                             changes.HEARTBEAT_S
    POST /r/api/act          {action, payload, why, request, seen, replace}:
                             a referee's action, through HubService.act

A page without a signed-in referee says so and shows nothing; the API
answers 401.  Every action is stored with the referee's name as `who`.

Cross-site requests: the cookie is SameSite=Lax and HttpOnly (another site's
page cannot send it with a POST, nor read it); a POST must also carry
Content-Type application/json and the header X-TableTimer: 1 (a form of
another site can send neither without the browser asking this server
first, which it never allows), and an Origin, when given, must be this
server's.  The answers to an action:

    200  {row, duplicate, view}      stored (or stored before, same request key)
    400  {error}                     refused by the hub's checks: nothing stored
    401  {error}                     no referee signed in, or the badge revoked
    403  {error}                     a cross-site request
    404  {error}                     no such table
    409  {error, conflict, now}      the page's state is not the hub's any more
                                     (or the request key was used for another action)
    503  {error}                     the hub's log cannot be written: nothing stored
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, Callable, Protocol
from urllib.parse import quote

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, RedirectResponse, Response, \
    StreamingResponse
from starlette.routing import Route

from ..core.service import AlreadyRecorded, RequestConflict
from ..event.log.log_health import LogWriteFailed
from ..event.log.rows import kind_of
from . import intents
from .changes import ChangeFeed, SharedView, stream_views
from ..i18n.catalogue import N_, SOURCE, Words
from .check_in_view import check_in_view
from .page_words import catalogue_script, phone_language, render, words
from .hall_check_view import hall_check_view
from .request_body import BodyDropped, BodyRefused, parse_json, read_body
from .table_view import calls_view, table_view, tables

COOKIE = "tt_referee"
COOKIE_AGE_S = 3 * 24 * 3600          # an event's days
MIN_INTERVAL_S = 0.05                 # a stream's views at most this often (a burst: fewer, fuller views)
VIEWS_AT_ONCE = 3                     # views made at once (each in a worker thread, under the service's lock)
FRESH_S = 1.0                         # a view made for one page serves the others this long, unchanged
MAX_BODY = 16 * 1024                  # a referee's action is a few hundred bytes
PAGES = Path(__file__).parent / "pages"
STATIC = {"app.css": "text/css", "table.js": "text/javascript", "calls.js": "text/javascript",
          "common.js": "text/javascript", "translate.js": "text/javascript", "checkin.js": "text/javascript"}
CHECK_IN = "checkin"                  # the stream's page=... of the check-in page


class Referees(Protocol):
    def who(self, token: str) -> str | None: ...


def _error(status: int, text: str, close: bool = False, **more: Any) -> JSONResponse:
    """close: the connection is closed after the answer (a body left unread)."""
    return JSONResponse({"error": text, **more}, status_code=status,
                        headers={"Connection": "close"} if close else None)


class RefereePages:
    """The routes above for one HubService and its referees."""

    def __init__(self, service: Any, referees: Referees, event_name: str = "",
                 language: Callable[[], str] = lambda: SOURCE) -> None:
        """language: the event's (asked at each request: `tabletimer language` takes
        effect at the next page); a phone may choose its own (page_words.py)."""
        self.service = service
        self.language = language
        self.referees = referees
        self.event_name = event_name
        self.feed = ChangeFeed(service, self._tables_touched)
        self._views: dict[str | None, SharedView] = {}
        self._checkin: SharedView | None = None
        # a few views made at a time: 60 tables' views in 40 worker threads at once
        # queued the hub's MQTT thread behind them for the service's lock
        self._gate = asyncio.Semaphore(VIEWS_AT_ONCE)
        self._tables_of: tuple[int, dict[str, set[str]], dict[str, set[str]]] | None = None
        self.status_line: Callable[[], str] | None = None     # the public site's (runtime/site_start.py)

    def _tables_touched(self, row: dict) -> list[str] | None:
        """The table pages a stored row can change (None: all of them: the
        round's start, a row this cannot place).  Called by the service with
        its lock held, after the row is applied: dictionary lookups only."""
        comp = self.service.competition
        by_board, by_entrant = self._index(comp)
        p = row.get("payload") or {}
        if kind_of(row).from_board and row.get("board"):
            tables = by_board.get(row["board"])
        elif isinstance(p.get("entrant"), str):
            tables = by_entrant.get(p["entrant"])
        elif isinstance(p.get("press_id"), str) and (at := comp.station_of(p["press_id"])) is not None:
            tables = by_board.get(at[0])
        else:
            return None
        return [_key(t) for t in tables] if tables else None

    def _index(self, comp) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
        n = len(comp.stations)                # stations appear while folding (auto stations)
        if self._tables_of is None or self._tables_of[0] != n:
            boards: dict[str, set[str]] = {}
            entrants: dict[str, set[str]] = {}
            for s in comp.stations:
                boards.setdefault(s.board, set()).add(s.table)
                entrants.setdefault(s.entrant, set()).add(s.table)
            self._tables_of = (n, boards, entrants)
        return self._tables_of[1], self._tables_of[2]

    def routes(self) -> list[Route]:
        return [
            Route("/signin", self.signin, methods=["GET"]),
            Route("/t/{table:path}", self.table_page, methods=["GET"]),
            Route("/calls", self.calls_page, methods=["GET"]),
            Route("/checkin", self.checkin_page, methods=["GET"]),
            Route("/r/api/checkin", self.checkin_data, methods=["GET"]),
            Route("/r/static/{name}", self.static, methods=["GET"]),
            Route("/r/words/{lang}.js", catalogue_script, methods=["GET"]),
            Route("/r/api/me", self.me, methods=["GET"]),
            Route("/r/api/table/{table:path}", self.table_data, methods=["GET"]),
            Route("/r/api/calls", self.calls_data, methods=["GET"]),
            Route("/r/api/stream", self.stream, methods=["GET"]),
            Route("/r/api/act", self.act, methods=["POST"]),
        ]

    def close(self) -> None:
        self.feed.close()

    # ------------------------------------------------------------ identity
    def referee(self, request: Request) -> str | None:
        token = request.cookies.get(COOKIE, "")
        return self.referees.who(token) if token else None

    def signed_in(self, scope: dict) -> bool:
        """A request (ASGI scope, before its body) of a signed-in referee's
        phone: for the web server's reserve of connections (server.py)."""
        return self.referee(Request(scope)) is not None

    def words(self, request: Request):
        """The words of this phone's language (page_words.phone_language)."""
        return words(phone_language(request, self.language()))

    async def signin(self, request: Request) -> Response:
        token = request.query_params.get("token", "")
        name = self.referees.who(token) if token else None
        if name is None:
            return self._page(request, "notice.html", status=401, message=self.words(request).t(
                "This sign-in code is not valid (revoked, or from another event). Ask the head "
                "referee for a badge; nothing was changed."))
        nxt = request.query_params.get("next", "")
        to = nxt if nxt.startswith(("/t/", "/checkin")) or nxt == "/calls" else "/calls"
        out = RedirectResponse(to, status_code=303)
        out.set_cookie(COOKIE, token, max_age=COOKIE_AGE_S, httponly=True, samesite="lax", path="/")
        return out

    # ------------------------------------------------------------ pages
    def _page(self, request: Request, name: str, status: int = 200, **values: str) -> HTMLResponse:
        text = render((PAGES / name).read_text(), self.words(request))
        for k, v in values.items():
            text = text.replace("{{" + k + "}}", _html(v))
        return HTMLResponse(text, status_code=status, headers=_NO_STORE)

    async def table_page(self, request: Request) -> Response:
        table = request.path_params["table"]
        who = self.referee(request)
        w = self.words(request)
        if who is None:
            return self._page(request, "notice.html", status=401, message=w.t(
                "Table {table}: sign in first: scan your referee badge's QR code with this phone's "
                "camera, then this table's code again. Nothing was changed.", table=table))
        if self.service.read(lambda comp, now: table not in tables(comp)):
            return self._page(request, "notice.html", status=404, message=w.t(
                "No table {table} in this event's stations.csv: scan the code on the table card again, "
                "or open the calls page.", table=table))
        return self._page(request, "table.html", table=table, event=self.event_name, referee=who)

    async def calls_page(self, request: Request) -> Response:
        who = self.referee(request)
        if who is None:
            return self._page(request, "notice.html", status=401, message=self.words(request).t(
                "Sign in first: scan your referee badge's QR code with this phone's camera. "
                "Nothing was changed."))
        return self._page(request, "calls.html", event=self.event_name, referee=who)

    async def checkin_page(self, request: Request) -> Response:
        who = self.referee(request)
        if who is None:
            return self._page(request, "notice.html", status=401, message=self.words(request).t(
                "Check-in: sign in first: scan your staff badge's QR code with this phone's camera, then "
                "the entrant's code again. Nothing was changed."))
        return self._page(request, "checkin.html", event=self.event_name, referee=who)

    async def checkin_data(self, request: Request) -> Response:
        if self.referee(request) is None:
            return _error(401, self.words(request).t(_SIGN_IN))
        return Response((await self._checkin_shared().get())[1], media_type="application/json",
                        headers=_NO_STORE)

    def _checkin_shared(self) -> SharedView:
        """The check-in page's view, shared by every phone at the door (it
        follows every row: a check-in names an entrant, a DNS or a
        replacement changes the count)."""
        if self._checkin is None:
            self._checkin = SharedView(self.feed, None, lambda: self.service.read(check_in_view), FRESH_S,
                                       self._gate)
        return self._checkin

    async def static(self, request: Request) -> Response:
        name = request.path_params["name"]
        if name not in STATIC:
            return _error(404, f"no file {name!r}")
        return FileResponse(PAGES / name, media_type=STATIC[name], headers={"Cache-Control": "no-cache"})

    # ------------------------------------------------------------ data
    def _view(self, table: str | None) -> dict | None:
        if table is None:
            return self.service.read(self._calls)
        return self.service.read(lambda comp, now: table_view(comp, table, now))

    def _calls(self, comp, now: int) -> dict:
        """The hall's calls, and while a hall check runs what it still waits
        for (no `hall_check` at all when none runs: the page as without one)."""
        view = calls_view(comp, now)
        view["clock"] = self.service.clock_alerts(now)   # a sleep, a stepped clock: for the head referee
        if self.status_line is not None:
            view["site"] = self.status_line()              # the public site's publishing
        check = self.service.hall_check_running()          # (the service's lock is held: read)
        if check is not None:
            view["hall_check"] = hall_check_view(check, comp.stations, comp.entrants)
        return view

    def _shared(self, table: str | None) -> SharedView:
        """The view of a table (None: the calls), shared by every page open on it."""
        view = self._views.get(table)
        if view is None:
            view = self._views[table] = SharedView(self.feed, None if table is None else _key(table),
                                                   lambda: self._view(table), FRESH_S, self._gate)
        return view

    async def me(self, request: Request) -> Response:
        who = self.referee(request)
        if who is None:
            return _error(401, self.words(request).t(_SIGN_IN))
        return JSONResponse({"referee": who, "event": self.event_name})

    async def table_data(self, request: Request) -> Response:
        if self.referee(request) is None:
            return _error(401, self.words(request).t(_SIGN_IN))
        table = request.path_params["table"]
        view, text = await self._shared(table).get()
        if view is None:
            return _error(404, f"no table {table!r} in this event's stations.csv")
        return Response(text, media_type="application/json", headers=_NO_STORE)

    async def calls_data(self, request: Request) -> Response:
        if self.referee(request) is None:
            return _error(401, self.words(request).t(_SIGN_IN))
        return Response((await self._shared(None).get())[1], media_type="application/json", headers=_NO_STORE)

    async def stream(self, request: Request) -> Response:
        who = self.referee(request)
        if who is None:
            return _error(401, self.words(request).t(_SIGN_IN))
        token = request.cookies.get(COOKIE, "")
        table = request.query_params.get("table")
        view = self._checkin_shared() if request.query_params.get("page") == CHECK_IN else self._shared(table)
        seen = self.feed.version_of(view.key)
        first, text = await view.get()
        if first is None:
            return _error(404, f"no table {table!r} in this event's stations.csv")

        revoked = self.words(request).t(_REVOKED)

        async def events():
            # the badge is asked again before each event (a view, or the ping at least
            # every HEARTBEAT_S): a revoke in another process ends the stream within that
            async for event in stream_views(view, seen, text, self.service.clock.now_ms, MIN_INTERVAL_S):
                if self.referees.who(token) != who:
                    yield f"event: revoked\ndata: {json.dumps(revoked)}\n\n"
                    return
                yield event
        return StreamingResponse(events(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})

    # ------------------------------------------------------------ actions
    async def act(self, request: Request) -> Response:
        who, w = self.referee(request), self.words(request)
        if who is None:
            return _error(401, w.t(_SIGN_IN) + " " + w.t("Nothing was recorded."))
        problem = _cross_site(request)
        if problem:
            return _error(403, problem + "; nothing was recorded")
        try:
            raw = await read_body(request, MAX_BODY)
            if not raw:
                raise BodyRefused(f"an action is a JSON body of at most {MAX_BODY} bytes")
            body = parse_json(raw)
        except BodyRefused as e:
            return _error(400, f"{e}; nothing was recorded", close=e.close)
        except BodyDropped:
            return _error(400, w.t("the action did not come whole (the network?): nothing was recorded; "
                                   "try again"), close=True)
        if not isinstance(body, dict) or not isinstance(body.get("action"), str) \
                or not isinstance(body.get("payload", {}), dict):
            return _error(400, "expected {action, payload, why, request, seen, replace}; nothing was recorded")
        action, payload = body["action"], body.get("payload", {})
        why, request_key = body.get("why", ""), body.get("request")
        if action not in intents.REFEREE_ACTIONS:
            return _error(400, f"{action!r} is not a referee's action here (the table page does "
                               f"{', '.join(intents.REFEREE_ACTIONS)}; the rest is at the desk); "
                               "nothing was recorded")
        if not isinstance(why, str) or (request_key is not None and not isinstance(request_key, str)):
            return _error(400, "why must be text and request a text key; nothing was recorded")
        if "objection" in payload:
            return _error(400, w.t("an objection is the head referee's decision, made at the desk; nothing was "
                                   "recorded"))
        if action == "void" and not why.strip():
            return _error(400, w.t("void: say why (the reason is logged with your name); nothing was recorded"))
        seen, replace = body.get("seen"), body.get("replace") is True
        table = body.get("table") if isinstance(body.get("table"), str) else None
        return await run_in_threadpool(self._act, who, action, payload, why, request_key, seen, replace, table, w)

    def _act(self, who: str, action: str, payload: dict, why: str, key: str | None, seen: Any,
             replace: bool, table: str | None, w: Words) -> Response:
        """The action recorded, or refused in the phone's words (w): an
        intent's conflict said in them; the hub's checks' own reasons stay
        English inside them (docs/operations.md, "Languages")."""
        def precondition(comp) -> None:
            same = self.service.identical_decision(action, payload, who)
            if same is not None:                 # my own decision again (a second tap): no conflict
                raise AlreadyRecorded(same)
            intents.check(comp, action, payload, seen, replace)
        try:
            row = self.service.act(action, payload, who=who, why=why, request=key, precondition=precondition)
        except intents.IntentConflict as e:
            self._noted(who, action, payload, str(e), table)          # the desk's line: English
            said = e.said(w)
            return _error(409, w.t("{conflict}: nothing was recorded; look again and decide", conflict=said),
                          conflict=said, now=e.now, view=self._view(table) if table else None)
        except RequestConflict as e:
            self._noted(who, action, payload, str(e), table)
            return _error(409, str(e), conflict=str(e), now=None)
        except (ValueError, TypeError) as e:
            return _error(400, w.t("{reason}; nothing was recorded", reason=str(e)))
        except LogWriteFailed as e:
            return _error(503, w.t("{reason}; nothing was recorded", reason=str(e)))
        duplicate = bool(row.pop("duplicate", False))
        return JSONResponse({"row": row, "duplicate": duplicate,
                             "view": self._view(table) if table else None})


    def _noted(self, who: str, action: str, payload: dict, text: str, table: str | None) -> None:
        """The conflict for the desk and the head referee (a CONFLICT line
        until resolved); a log that cannot be written now loses only the
        note: the phone has its answer either way."""
        try:
            self.service.note_conflict("phone", who, action, payload, text, table)
        except LogWriteFailed:
            pass


def _key(table: str) -> str:
    """A table page's key in the change feed (the calls page follows every row: no key)."""
    return "t:" + table


_SIGN_IN = N_("No referee is signed in on this phone (or the badge was revoked): scan your referee badge.")
_REVOKED = N_("This badge was revoked: this phone is signed out. Ask the head referee for a new badge.")
_NO_STORE = {"Cache-Control": "no-store"}


def _cross_site(request: Request) -> str | None:
    if request.headers.get("x-tabletimer") != "1":
        return "a request without the X-TableTimer header (not from the table page)"
    if not request.headers.get("content-type", "").split(";")[0].strip() == "application/json":
        return "an action must be sent as application/json"
    origin = request.headers.get("origin")
    if origin is not None and origin != f"{request.url.scheme}://{request.headers.get('host', '')}":
        return f"a request from another site ({origin})"
    if request.headers.get("sec-fetch-site") not in (None, "same-origin", "none"):
        return f"a {request.headers.get('sec-fetch-site')} request"
    return None


def _html(text: str) -> str:
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;").replace("'", "&#39;"))


def table_path(table: str) -> str:
    """The table page's path (the table name percent-encoded)."""
    return "/t/" + quote(table, safe="")
