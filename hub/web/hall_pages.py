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
    GET  /draw               the round's team draw (draw_view.py): its number
                             (the seed) and each team with its members, the
                             draws it superseded listed; /h/api/draw its data,
                             which the page asks for every few seconds
    GET  /h/api/standings    the standings as JSON (hall_view.py): what a page
                             polls every few seconds when its stream is refused
    GET  /h/api/stream       the same by server-sent events: at every change
                             (at most MIN_INTERVAL_S apart), a ping between
                             (both: ?screen=TOKEN as /hall; a wrong token 403)
    GET  /h/static/{file}    the pages' scripts and styles

Every page and its data take ?round=NAME: that round of the event
(round_views.py: from its own log; a name that is not one of the event's
rounds: 404, naming them); without it, the live round.  /standings and
/results link each round when the event has several, and a page's
scripts keep its ?round= on their calls.

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
from pathlib import Path
from typing import Any, Callable
from urllib.parse import quote

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from ..outputs.results import in_progress_text, results_csv, results_html, results_json, starts_in_ms
from ..i18n.catalogue import SOURCE
from ..i18n.local_format import clock
from ..outputs.site_link import site_link_html
from . import screens
from .page_words import catalogue_script, hall_language, html, render, words
from .changes import stream_views
from .rate_limit import RateLimit
from .round_views import DrawLog, EventRounds, RoundUnavailable, RoundView

PAGES = Path(__file__).parent / "pages"
STATIC = {"hall.css": "text/css", "hall.js": "text/javascript", "standings.js": "text/javascript",
          "results.js": "text/javascript", "common.js": "text/javascript", "translate.js": "text/javascript",
          "rotate.js": "text/javascript",
          "draw.js": "text/javascript"}
MIN_INTERVAL_S = 0.5         # a stream's views at most this often (a burst of presses: one view;
                             # 300 pages of 300 entrants at 4 views a second were 86 MB/s)
_NO_STORE = {"Cache-Control": "no-store"}
# every path the pages answer (hall_process.py: the hub's own server sends them on)
PATHS = ("/hall", "/standings", "/rotate", "/results", "/results.csv", "/results.json",
         "/h/api/standings", "/h/api/stream", "/h/static/{name}", "/draw", "/h/api/draw", "/h/words/{lang}.js")


SITE_SLOT = '<aside id="site"></aside>'          # hall.html's place for the public site's QR code
_LINKS = re.compile(r'href="(/hall|/standings|/results|/draw)"')     # a page's links to the others
_WRONG_SCREEN = ("this screen's token is not the event's (an old one?): open the projector's address "
                 "the hub prints (hall pages ... the projector: .../hall?screen=...); shown as a spectator's page")


class HallPages:
    def __init__(self, service: Any, title: str = "", limit: RateLimit | None = None,
                 clock=time.monotonic, screen_token: str | None = None,
                 rounds: EventRounds | None = None, language: Callable[[], str] = lambda: SOURCE,
                 site_url: Callable[[], str | None] | None = None) -> None:
        """screen_token: the event's (screens.py); None: no screen has a place of its own.
        rounds: the event's other rounds (?round=NAME); None: the live one only.
        language: the event's (asked at each page: page_words.hall_language).
        site_url: the public site's address now (event/folder/site_address.py), read at each
        page: the projector and the results sheet show its QR code; None: none."""
        self.language = language
        self.live = RoundView(service, title, outlook=rounds.outlook(rounds.live) if rounds else None)
        self.service, self.title = service, self.live.title        # the live round's
        self.rounds = rounds
        self.screen_token = screen_token
        self.site_url = site_url or (lambda: None)
        self.limit = limit or RateLimit()            # one for every round: a device's limits are its own
        self._clock = clock
        self._limit_lock = threading.Lock()

    def routes(self) -> list[Route]:
        serve = {"/hall": self.page("hall.html"), "/standings": self.page("standings.html"),
                 "/rotate": self.page("rotate.html"), "/results": self.results_page,
                 "/results.csv": self.results_file("csv"), "/results.json": self.results_file("json"),
                 "/h/api/standings": self.standings, "/h/api/stream": self.stream,
                 "/h/static/{name}": self.static, "/draw": self.page("draw.html"), "/h/api/draw": self.draw,
                 "/h/words/{lang}.js": catalogue_script}
        assert tuple(serve) == PATHS
        return [Route(path, fn, methods=["GET"]) for path, fn in serve.items()]

    def close(self) -> None:
        self.live.close()

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

    # ------------------------------------------------------------ the round
    async def _round(self, request: Request) -> RoundView | Response:
        """The round asked for (?round=NAME; none: the live one), or the
        answer refusing it: 404 for a name that is not one of the event's
        rounds, 503 for one that cannot be shown now."""
        name = request.query_params.get("round")
        if name is None:
            return self.live
        rounds = self.rounds
        if rounds is None:
            return JSONResponse({"error": "the hall's pages here show one round: open them without ?round=",
                                 "rounds": []}, status_code=404)
        if not rounds.known(name):
            return JSONResponse({"error": rounds.unknown(name), "rounds": rounds.names(), "live": rounds.live},
                                status_code=404)
        if name == rounds.live:
            return self.live
        try:
            return await run_in_threadpool(rounds.view, name)
        except RoundUnavailable as e:
            return JSONResponse({"error": str(e)}, status_code=503, headers={"Retry-After": "5"})

    def _drawn(self, request: Request) -> DrawLog | Response:
        """The draws of the round asked for (?round=NAME; none: the live
        one), or the 404 refusing a name that is not one of the event's
        rounds.  Not its whole view: a round drawn and not yet seated has
        files that do not load together, and its draw is shown all the same."""
        name, rounds = request.query_params.get("round"), self.rounds
        if name is None:
            return self.live.draws
        if rounds is None or not rounds.known(name):
            return JSONResponse({"error": rounds.unknown(name) if rounds else
                                 "the hall's pages here show one round: open them without ?round=",
                                 "rounds": rounds.names() if rounds else []}, status_code=404)
        return self.live.draws if name == rounds.live else rounds.draw_log(name)

    def _keep(self, request: Request) -> str:
        """The page's screen token as a query for its links ('' if none)."""
        token = request.query_params.get(screens.PARAM)
        return f"{screens.PARAM}={quote(token, safe='')}" if token is not None else ""

    def _picker(self, request: Request, path: str) -> str:
        if self.rounds is None:
            return ""
        return self.rounds.picker(path, request.query_params.get("round"), self._keep(request))

    # ------------------------------------------------------------ routes
    def page(self, name: str):
        async def serve(request: Request) -> Response:
            refused = self._allowed(request, wrong_screen_refused=False)
            if refused:
                return refused
            shown = self._drawn(request) if name == "draw.html" else await self._round(request)
            if isinstance(shown, Response):
                return shown
            text = render((PAGES / name).read_text(), self.words(request))
            if "round" in request.query_params:         # its links to the other pages: the same round
                text = _LINKS.sub(rf'href="\1?round={quote(request.query_params["round"], safe="")}"', text)
            text = text.replace('<nav id="rounds"></nav>', self._picker(request, request.url.path), 1)
            url = self.site_url() if name == "hall.html" else None
            if url:                                  # the way to the public site, on the projector
                text = text.replace(SITE_SLOT, f'<aside id="site">{site_link_html(url, "projector")}</aside>', 1)
            if self._screen(request):
                # a screen's scripts and styles with its token too: the reserve's connections
                # serve them while a crowd takes the rest (a projector reloaded in a flood)
                token = quote(request.query_params[screens.PARAM], safe="")
                text = re.sub(r'"/h/static/([a-z]+\.[a-z]+)"', rf'"/h/static/\1?{screens.PARAM}={token}"', text)
            return HTMLResponse(text, headers=_NO_STORE)
        return serve

    def words(self, request: Request):
        """The words of the event's language (or the page's ?lang=)."""
        return words(hall_language(request, self.language()))

    async def static(self, request: Request) -> Response:
        name = request.path_params["name"]
        if name not in STATIC:
            return JSONResponse({"error": f"no file {name!r}"}, status_code=404)
        return FileResponse(PAGES / name, media_type=STATIC[name], headers={"Cache-Control": "no-cache"})

    async def standings(self, request: Request) -> Response:
        refused = self._allowed(request)
        if refused:
            return refused
        shown = await self._round(request)
        if isinstance(shown, Response):
            return shown
        _, text = await shown.view.get()
        return Response(text, media_type="application/json", headers=_NO_STORE)

    async def stream(self, request: Request) -> Response:
        refused = self._allowed(request)
        if refused:
            return refused
        shown = await self._round(request)
        if isinstance(shown, Response):
            return shown
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
            seen = shown.feed.version
            _, text = await shown.view.get()
        except BaseException:
            close()
            raise

        async def events():
            try:
                async for event in stream_views(shown.view, seen, text, shown.service.clock.now_ms,
                                                MIN_INTERVAL_S):
                    yield event
            finally:
                close()
        return StreamingResponse(events(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})

    async def draw(self, request: Request) -> Response:
        refused = self._allowed(request)
        if refused:
            return refused
        drawn = self._drawn(request)
        if isinstance(drawn, Response):
            return drawn
        return JSONResponse(await run_in_threadpool(drawn.view), headers=_NO_STORE)

    # ------------------------------------------------------------ results
    async def results_page(self, request: Request) -> Response:
        refused = self._allowed(request)
        if refused:
            return refused
        shown = await self._round(request)
        if isinstance(shown, Response):
            return shown
        fmt, rows, when, entrants, start, left, row, marks = await run_in_threadpool(shown.results)
        ahead = starts_in_ms(start, shown.service.clock.now_ms())
        w = self.words(request)
        sheet = results_html(shown.title, fmt, rows, when, entrants, start, left, starts_in=ahead, marks=marks,
                             site_url=await run_in_threadpool(self.site_url), lang=w.lang)
        state = (w.t("Provisional:") + " " + in_progress_text(left, ahead, w.lang)) if left is not None else (
            w.t("Provisional: some results wait for a referee") if any(r.provisional for r in rows) else
            w.t("Official") if marks.official is not None else w.t("Final"))
        asked = request.query_params.get("round")
        query = "" if asked is None else f"?round={quote(asked, safe='')}"
        picker = self._picker(request, "/results")
        bar = (f'<div class="live-bar" id="live-bar" style="font:14px system-ui;padding:6px 10px;'
               f'background:#eef" data-row="{row}"><b id="results-state">{html(state)}</b> · '
               f'{html(w.t("last change {time}", time=clock(when, w.lang)))} · <a href="/results.csv{query}">CSV</a> · '
               f'<a href="/results.json{query}">JSON</a> · <span id="link">{html(w.t("live"))}</span>'
               + (f'<div style="margin-top:4px">{picker}</div>' if picker else "") + "</div>")
        sheet = sheet.replace("<body>", "<body>" + bar, 1).replace(
            "</body>", f'<script src="/h/words/{w.lang}.js"></script>'
                       '<script src="/h/static/translate.js"></script><script src="/h/static/common.js"></script>'
                       '<script src="/h/static/results.js">'
                       "</script></body>", 1)
        return HTMLResponse(sheet, headers=_NO_STORE)

    def results_file(self, kind: str):
        async def serve(request: Request) -> Response:
            refused = self._allowed(request)
            if refused:
                return refused
            shown = await self._round(request)
            if isinstance(shown, Response):
                return shown
            fmt, rows, when, entrants, start, left, _, marks = await run_in_threadpool(shown.results)
            asked = request.query_params.get("round")
            name = "results" if asked is None else "results-" + re.sub(r"[^A-Za-z0-9_-]", "_", asked)
            if kind == "csv":
                return Response(results_csv(rows, fmt, entrants), media_type="text/csv; charset=utf-8",
                                headers={"Content-Disposition": f'attachment; filename="{name}.csv"', **_NO_STORE})
            return Response(results_json(shown.title, fmt, rows, when, entrants, start, left, marks=marks),
                            media_type="application/json",
                            headers={"Content-Disposition": f'attachment; filename="{name}.json"', **_NO_STORE})
        return serve
