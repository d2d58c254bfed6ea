"""The hall's public pages (no sign-in), Starlette routes for the web server:

    GET  /hall               the projector (1920x1080): the round clock, the
                             next signal, the standings paging by themselves
                             (?screen=TOKEN: the event's screen token,
                             screens.py: a stream of the screens' own)
    GET  /standings          the same on a phone: search by name, follow one
    GET  /rotate?screens=A,B&every=S   several categories on one screen: each
                             category's hub's /hall in a frame, shown in turn
    GET  /results            the results sheet (as `tabletimer results --html`),
                             provisional or final, with the time of the last
                             change; /results.csv and /results.json to download
    GET  /h/api/standings    the standings as JSON (hall_view.py): what a page
                             polls every few seconds when its stream is refused
    GET  /h/api/stream       the same by server-sent events: at every change
                             (at most MIN_INTERVAL_S apart), a ping between
                             (both: ?screen=TOKEN as /hall; a wrong token 403)
    GET  /h/static/{file}    the pages' scripts and styles

Nothing secret: hall_view.py shows names, places, times, tables; no board
id, token, alert or log line.  A crowd cannot slow the boards: requests are
limited per client address (rate_limit.py: 429), streams per address and
in all (503: the page then polls /h/api/standings, common.js), and every
stream is sent the same view, made once per change (outside the service's
lock: HubService.snapshot ranks after letting it go).  A screen with the
event's screen token is not limited: its streams are counted apart
(SCREENS_IN_ALL), and its connections may use the web server's reserve
(`privileged`).  The organizer turns the pages off with `--hall-pages off`.
"""

from __future__ import annotations

import re
import threading
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from urllib.parse import quote

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from ..outputs.results import in_progress_text, results_csv, results_html, results_json
from . import screens
from .changes import ChangeFeed, SharedView, stream_views
from .hall_view import hall_view
from .rate_limit import RateLimit

PAGES = Path(__file__).parent / "pages"
STATIC = {"hall.css": "text/css", "hall.js": "text/javascript", "standings.js": "text/javascript",
          "results.js": "text/javascript", "common.js": "text/javascript", "rotate.js": "text/javascript"}
MIN_INTERVAL_S = 0.5         # a stream's views at most this often (a burst of presses: one view;
                             # 300 pages of 300 entrants at 4 views a second were 86 MB/s)
_NO_STORE = {"Cache-Control": "no-store"}
# every path the pages answer (hall_process.py: the hub's own server sends them on)
PATHS = ("/hall", "/standings", "/rotate", "/results", "/results.csv", "/results.json",
         "/h/api/standings", "/h/api/stream", "/h/static/{name}")


_WRONG_SCREEN = ("this screen's token is not the event's (an old one?): open the projector's address "
                 "the hub prints (hall pages ... the projector: .../hall?screen=...); shown as a spectator's page")


class HallPages:
    def __init__(self, service: Any, title: str = "", limit: RateLimit | None = None,
                 clock=time.monotonic, screen_token: str | None = None) -> None:
        """screen_token: the event's (screens.py); None: no screen has a place of its own."""
        self.service = service
        self.screen_token = screen_token
        self.title = title or service.competition.format.title
        self.limit = limit or RateLimit()
        self.feed = ChangeFeed(service)
        self._clock = clock
        self._limit_lock = threading.Lock()
        # one view for every page, made again at a change, or after 5 s for the
        # clock-driven parts (running -> unfinished at time-up change without a row)
        self.view = SharedView(self.feed, None, self._make, fresh_s=5.0)
        with_tables = service.read(lambda comp, now: (
            {s.entrant: s.table for s in reversed(comp.stations)},
            {e.id: [m.name for m in e.members] for e in comp.entrants}, comp.last_row_id()))
        self._tables, self._members, last = with_tables
        if last:
            rows = service.store.events(after=last - 1)
            self.feed.last_ms = rows[-1]["received_ms"] if rows else None

    def routes(self) -> list[Route]:
        serve = {"/hall": self.page("hall.html"), "/standings": self.page("standings.html"),
                 "/rotate": self.page("rotate.html"), "/results": self.results_page,
                 "/results.csv": self.results_file("csv"), "/results.json": self.results_file("json"),
                 "/h/api/standings": self.standings, "/h/api/stream": self.stream,
                 "/h/static/{name}": self.static}
        assert tuple(serve) == PATHS
        return [Route(path, fn, methods=["GET"]) for path, fn in serve.items()]

    def close(self) -> None:
        self.feed.close()

    # ------------------------------------------------------------ limits
    def _client(self, request: Request) -> str:
        return request.client.host if request.client else "?"

    def privileged(self, scope: dict) -> bool:
        """A request (ASGI scope) of a screen with the event's token: for the
        web server's reserve of connections."""
        return screens.carried(scope, self.screen_token)

    def _screen(self, request: Request) -> bool | None:
        """True: a screen with the event's token; None: no token given;
        False: a wrong one."""
        token = request.query_params.get(screens.PARAM)
        if token is None:
            return None
        return screens.valid(token, self.screen_token)

    def _allowed(self, request: Request, wrong_screen_refused: bool = True) -> Response | None:
        """None, or the answer refusing the request: 429 (too often), 403 (a
        wrong screen token: the data's paths; a page is served, its script
        says so)."""
        screen = self._screen(request)
        if screen is False and wrong_screen_refused:
            return JSONResponse({"error": _WRONG_SCREEN, "screen": "refused"}, status_code=403)
        if screen:
            return None                       # the event's own screens are not limited
        with self._limit_lock:
            ok = self.limit.request(self._client(request), self._clock())
        if ok:
            return None
        return JSONResponse({"error": "too many requests from this device: wait a few seconds"},
                            status_code=429, headers={"Retry-After": "5"})

    # ------------------------------------------------------------ the view
    def _make(self) -> dict:
        snap = self.service.snapshot()
        last = self.service.read(lambda comp, now: comp.last_row_id())
        return hall_view(snap, self.service.competition.format, self.title, self._tables, self._members,
                         last, self.feed.last_ms)

    # ------------------------------------------------------------ routes
    def page(self, name: str):
        async def serve(request: Request) -> Response:
            refused = self._allowed(request, wrong_screen_refused=False)
            if refused:
                return refused
            text = (PAGES / name).read_text()
            if self._screen(request):
                # a screen's scripts and styles with its token too: the reserve's connections
                # serve them while a crowd takes the rest (a projector reloaded in a flood)
                token = quote(request.query_params[screens.PARAM], safe="")
                text = re.sub(r'"/h/static/([a-z]+\.[a-z]+)"', rf'"/h/static/\1?{screens.PARAM}={token}"', text)
            return HTMLResponse(text, headers=_NO_STORE)
        return serve

    async def static(self, request: Request) -> Response:
        name = request.path_params["name"]
        if name not in STATIC:
            return JSONResponse({"error": f"no file {name!r}"}, status_code=404)
        return FileResponse(PAGES / name, media_type=STATIC[name], headers={"Cache-Control": "no-cache"})

    async def standings(self, request: Request) -> Response:
        refused = self._allowed(request)
        if refused:
            return refused
        _, text = await self.view.get()
        return Response(text, media_type="application/json", headers=_NO_STORE)

    async def stream(self, request: Request) -> Response:
        refused = self._allowed(request)
        if refused:
            return refused
        client, screen = self._client(request), bool(self._screen(request))
        with self._limit_lock:
            why = self.limit.open_screen() if screen else self.limit.open_stream(client)
        if why:
            return JSONResponse({"error": why + " (the page asks every few seconds meanwhile)"},
                                status_code=503, headers={"Retry-After": "30"})

        def close() -> None:
            with self._limit_lock:
                if screen:
                    self.limit.close_screen()
                else:
                    self.limit.close_stream(client)
        try:
            seen = self.feed.version
            _, text = await self.view.get()
        except BaseException:
            close()
            raise

        async def events():
            try:
                async for event in stream_views(self.view, seen, text, self.service.clock.now_ms, MIN_INTERVAL_S):
                    yield event
            finally:
                close()
        return StreamingResponse(events(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})

    # ------------------------------------------------------------ results
    def _results(self) -> tuple:
        svc = self.service
        comp = svc.competition
        row = svc.read(lambda comp, now: comp.last_row_id())   # before the snapshot: never newer than it
        snap = svc.snapshot()
        left = snap.end - snap.now if snap.start is not None and snap.end is not None and snap.now < snap.end else None
        changed = self.feed.last_ms
        when = datetime.fromtimestamp((changed or snap.now) / 1000, timezone.utc).astimezone()
        return comp.format, snap.standings, when, comp.entrants, snap.start, left, row

    async def results_page(self, request: Request) -> Response:
        refused = self._allowed(request)
        if refused:
            return refused
        fmt, rows, when, entrants, start, left, row = await run_in_threadpool(self._results)
        html = results_html(self.title, fmt, rows, when, entrants, start, left)
        state = ("Provisional: " + in_progress_text(left)) if left is not None else (
            "Provisional: some results wait for a referee" if any(r.provisional for r in rows) else "Final")
        bar = (f'<div class="live-bar" id="live-bar" style="font:14px system-ui;padding:6px 10px;'
               f'background:#eef" data-row="{row}"><b id="results-state">{state}</b> · last change '
               f'{when.strftime("%H:%M:%S")} · <a href="/results.csv">CSV</a> · '
               f'<a href="/results.json">JSON</a> · <span id="link">live</span></div>')
        html = html.replace("<body>", "<body>" + bar, 1).replace(
            "</body>", '<script src="/h/static/common.js"></script><script src="/h/static/results.js">'
                       "</script></body>", 1)
        return HTMLResponse(html, headers=_NO_STORE)

    def results_file(self, kind: str):
        async def serve(request: Request) -> Response:
            refused = self._allowed(request)
            if refused:
                return refused
            fmt, rows, when, entrants, start, left, _ = await run_in_threadpool(self._results)
            if kind == "csv":
                return Response(results_csv(rows, fmt, entrants), media_type="text/csv; charset=utf-8",
                                headers={"Content-Disposition": 'attachment; filename="results.csv"', **_NO_STORE})
            return Response(results_json(self.title, fmt, rows, when, entrants, start, left),
                            media_type="application/json",
                            headers={"Content-Disposition": 'attachment; filename="results.json"', **_NO_STORE})
        return serve
