"""The hub's public URL: the address phones on the hall network open (e.g.
http://192.168.1.10:8765), which the referees' badges and the table cards'
QR codes carry.  Given once (`--public-url`), it is saved in the event
folder's `public-url` (one line of plain text) and reused by later commands.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

FILE = "public-url"
EXAMPLE = "http://192.168.1.10:8765"


def normalize(text: str) -> str:
    """The URL as stored: http(s)://host[:port][/path] without a trailing
    '/'; ValueError in an organizer's words for anything else."""
    url = str(text).strip()
    try:
        parts = urlsplit(url)
        parts.port                                   # raises for a port that is not a number
    except ValueError:
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{url!r} is not a web address a phone can open: give the hub's address "
                         f"on the hall network, e.g. {EXAMPLE}")
    if parts.query or parts.fragment or parts.username or parts.password:
        raise ValueError(f"{url!r}: give only the hub's address (scheme, host, port), e.g. {EXAMPLE}")
    return url.rstrip("/")


def path(folder: Path | str) -> Path:
    return Path(folder) / FILE


def saved(folder: Path | str) -> str | None:
    """The event folder's saved public URL, or None (none saved, or one
    that is not a URL)."""
    try:
        return normalize(path(folder).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def save(folder: Path | str, url: str) -> str:
    """Save url (normalized, returned) as the event folder's public URL."""
    url = normalize(url)
    path(folder).write_text(url + "\n", encoding="utf-8")
    return url


def resolve(folder: Path | str, given: str | None) -> tuple[str | None, bool]:
    """(the public URL to use, whether it was saved just now): given (saved
    when it differs from the saved one), else the saved one, else None.
    ValueError for a given one that is not a URL."""
    if given:
        url = normalize(given)
        if saved(folder) != url:
            save(folder, url)
            return url, True
        return url, False
    return saved(folder), False


NO_URL_ADVICE = (f"give --public-url with the hub's address on the hall network as phones reach "
                 f"it, e.g. --public-url {EXAMPLE} (once: it is saved in the event folder's "
                 f"{FILE} and used by `tabletimer referees` and `tabletimer cards` from then on)")
