"""The followers' address of the event's public site (issue 49), kept in
the event folder's `site-url` (`tabletimer publish DIR --url URL`): the
projector and the results sheet show it with its QR code, the public
site's event.json carries it.

    save_site_url(folder, "https://cup.example.org/")   checked, then written
    site_url(folder)                                     the address, or None

Only a web address a phone opens: http or https, a host, no spaces or
control characters, at most MAX_LEN characters (a QR code of it stays
readable from the hall's seats)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

SITE_URL_FILE = "site-url"
MAX_LEN = 300


def check_site_url(text: str) -> str:
    """The address as it is kept (stripped), or ValueError saying what to give."""
    url = text.strip()
    if not url:
        raise ValueError("the address is empty: give the followers' address, e.g. https://cup.example.org/")
    if len(url) > MAX_LEN:
        raise ValueError(f"the address is {len(url)} characters long (at most {MAX_LEN}): a shorter one, "
                         "e.g. the site's own domain, makes a QR code phones read from afar")
    if any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in url):
        raise ValueError(f"the address {url!r} holds a space or a control character: give it as a browser shows it")
    try:
        parts = urlsplit(url)
    except ValueError as e:
        raise ValueError(f"{url!r} is not a web address ({e})") from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{url!r} is not a web address a phone opens: give it with https:// "
                         "(e.g. https://cup.example.org/)")
    return url


def save_site_url(folder: str | Path, text: str) -> str:
    """Checked, then written to DIR/site-url (nothing written when refused)."""
    url = check_site_url(text)
    (Path(folder) / SITE_URL_FILE).write_text(url + "\n", encoding="utf-8")
    return url


def site_url(folder: str | Path | None) -> str | None:
    """The address saved (None: none, or one that is not an address: a file
    edited by hand is not shown as a QR code of something else)."""
    if folder is None:
        return None
    try:
        text = (Path(folder) / SITE_URL_FILE).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    try:
        return check_site_url(text)
    except ValueError:
        return None
