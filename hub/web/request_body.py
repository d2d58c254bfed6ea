"""A POST body, read as the hall's network is not trusted to send it: with
a Content-Length within a limit (no Transfer-Encoding), whole, and JSON
nested at most a few levels deep (checked before parsing: json.loads
recurses once per level).  Used by the console API and the referees' pages;
each answers the errors in its own words."""

from __future__ import annotations

import json
import re
from typing import Any

from starlette.requests import ClientDisconnect, Request

MAX_JSON_DEPTH = 32          # arrays and objects in one another, in a POST body

_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_JSON_NESTING = re.compile(rb"[\[\]{}]")


class BodyRefused(Exception):
    """A body not taken (400); close: the connection is closed after the
    answer (the body is not read, so the next request would start in it)."""

    def __init__(self, message: str, close: bool = False) -> None:
        super().__init__(message)
        self.close = close


class BodyDropped(Exception):
    """The client went, or was too slow, before the whole body came: its
    connection is closed unanswered."""


async def read_body(request: Request, limit: int) -> bytes:
    """The request's body, at most limit bytes with a Content-Length
    (BodyRefused, closing, otherwise: unread); BodyDropped if the client
    goes (or the server's deadline closes the connection) before all of it
    came."""
    headers = request.headers
    if "transfer-encoding" in headers:
        raise BodyRefused("a body must come with a Content-Length (no Transfer-Encoding)", close=True)
    try:
        n = int(headers.get("content-length") or 0)
    except ValueError:
        n = -1
    if n < 0:
        raise BodyRefused("bad Content-Length", close=True)
    if n > limit:
        raise BodyRefused(f"the body is too large ({n} bytes; at most {limit})", close=True)
    if n == 0:
        return b""
    try:
        body = await request.body()
    except ClientDisconnect:
        raise BodyDropped("the body did not come: the connection closed") from None
    if len(body) < n:                           # (h11 does not let a short body end the request)
        raise BodyDropped(f"the client closed the connection after {len(body)} of {n} bytes")
    return body


def json_depth(data: bytes) -> int:
    """How deep arrays and objects nest in a JSON text (brackets in strings
    are text), without parsing it."""
    depth = deepest = 0
    for m in _JSON_NESTING.finditer(_JSON_STRING.sub(b'""', data)):
        if m.group() in (b"[", b"{"):
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth -= 1
    return deepest


def parse_json(body: bytes) -> Any:
    """A body as JSON (an empty one: None); BodyRefused for one that is not
    JSON or that nests deeper than MAX_JSON_DEPTH."""
    deep = f"the body is nested deeper than {MAX_JSON_DEPTH} arrays and objects"
    if json_depth(body) > MAX_JSON_DEPTH:
        raise BodyRefused(deep)
    try:
        return json.loads(body or b"null")
    except RecursionError:                    # not after the check above; in case
        raise BodyRefused(deep) from None
    except ValueError as e:
        raise BodyRefused(f"the body is not JSON: {e}") from None
