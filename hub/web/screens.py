"""The hall's screens (the projector; a rotation's frames) have a place of
their own that no crowd can take: the event's screen token on the screen's
address, `/hall?screen=TOKEN`.  With it a screen's connection may use the
web servers' reserve (server.py) and its stream is one of SCREEN_STREAMS
kept apart from the spectators' (hall_pages.py, rate_limit.py).

The token is made once per event folder (`screen-token`, readable by its
owner only from its first byte: event/folder/private_file.py) and printed by the
hub in the projector's address.  It is a small secret: whoever has it can
take the screens' places (SCREEN_STREAMS of them), nothing more -- it reads
only what the public pages show.  A new one: delete the file and restart
the hub (and open the projector's new address)."""

from __future__ import annotations

import hmac
import secrets
from pathlib import Path
from urllib.parse import parse_qs

from ..event.folder.private_file import write_private

FILE = "screen-token"
PARAM = "screen"


def token_path(folder: Path) -> Path:
    return Path(folder).resolve() / FILE


def screen_token(folder: Path) -> str:
    """The event folder's screen token, made on first use (mode 0600)."""
    path = token_path(folder)
    if not path.exists():
        write_private(path, secrets.token_urlsafe(18) + "\n")
    return path.read_text().strip()


def read_token(path: Path | str | None) -> str | None:
    """The token in path (None: no path, or no token in it)."""
    if path is None:
        return None
    text = Path(path).read_text().strip()
    return text or None


def given(query_string: bytes | str) -> str | None:
    """The screen token a request's query string names (None: none)."""
    if isinstance(query_string, bytes):
        query_string = query_string.decode("latin-1")
    values = parse_qs(query_string).get(PARAM)
    return values[-1] if values else None


def valid(token: str | None, expected: str | None) -> bool:
    """token is the event's screen token (compared in constant time)."""
    if not token or not expected:
        return False
    return hmac.compare_digest(token.encode("utf-8"), expected.encode("utf-8"))


def carried(scope: dict, expected: str | None) -> bool:
    """A request (its ASGI scope) names the event's screen token."""
    return valid(given(scope.get("query_string", b"")), expected)


def projector_url(base: str, token: str) -> str:
    """The projector's address on the hall's server at base."""
    return f"{base}/hall?{PARAM}={token}"
