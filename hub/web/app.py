"""The hub's web app: the console API's routes (web/console_api.py) and
whatever other routes the hub serves from the same server (the referees'
pages), one Starlette app for web/server.py's WebServer."""

from __future__ import annotations

from typing import Sequence

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute

from .console_api import ConsoleApi, console_routes, error_response, not_found


def _announces_body(request: Request) -> bool:
    return "transfer-encoding" in request.headers or request.headers.get("content-length", "0") not in ("", "0")


async def _no_route(request: Request, exc: Exception) -> Response:
    """404 (and 405: a method no route of the path has) as JSON, in the
    console API's words; an announced body is not read: the connection is
    closed after the answer."""
    if isinstance(exc, HTTPException) and exc.status_code not in (404, 405):
        return error_response(exc.status_code, str(exc.detail), _announces_body(request))
    return not_found(request.method, request.url.path, _announces_body(request))


def build_app(console_api: ConsoleApi, extra_routes: Sequence[BaseRoute] = ()) -> Starlette:
    """The app: the console API's routes, then extra_routes."""
    return Starlette(routes=[*console_routes(console_api), *extra_routes],
                     exception_handlers={404: _no_route, 405: _no_route})


def build_hall_app(routes: Sequence[BaseRoute]) -> Starlette:
    """The hall's pages' own app (web/hall_process.py): routes, with the
    same JSON 404 and 405."""
    return Starlette(routes=list(routes), exception_handlers={404: _no_route, 405: _no_route})
