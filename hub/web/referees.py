"""The event's referees and their sign-in tokens (`tabletimer referees DIR
add|list|revoke`): `referees.json` in the event folder, written whole and
atomically replaced, readable by its owner only from the first byte
(event/folder/private_file.py).

    {"version": 1,
     "referees": [{"name": "Anna", "token": "...", "tag": "3f9a0c",
                   "added_ms": 1796000000000, "revoked_ms": null}, ...]}

A referee signs a phone in with the token (the QR code of their printed
badge).  `tag` is the first 6 hex digits of sha256(token): what a log may
show to tell two sign-ins apart without holding the secret.  A revoked
referee stays in the file with the time of the revoke, so that names in the
event log stay explainable; a name can be added again after its revoke (a
new token, a new entry).

Names are compared without regard to case ("Anna" and "anna" are one
referee): two badges that read alike would be one person to the hall.

The pure part (parse, render, add, revoke, look up) works on tuples of
`Referee`; `RefereeBook` is the file at the edge.  A running hub asks
`who(token)`, which re-reads the file when its stat changed, so an `add` or
a `revoke` in another process takes effect at the next request.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import re
import secrets
import time
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from ..event.folder.private_file import write_private

log = logging.getLogger(__name__)

FILE = "referees.json"
VERSION = 1
MAX_NAME = 60


@dataclass(frozen=True)
class Referee:
    name: str
    token: str
    tag: str
    added_ms: int
    revoked_ms: int | None = None

    @property
    def active(self) -> bool:
        return self.revoked_ms is None


# ------------------------------------------------------------------ pure helpers

def clean_name(name: str) -> str:
    """The name as stored (trimmed); ValueError in an organizer's words."""
    text = str(name).strip()
    if not text:
        raise ValueError("a referee needs a name (e.g. Anna, or Anna K. when there are two)")
    if len(text) > MAX_NAME:
        raise ValueError(f"the referee's name is {len(text)} characters long: at most {MAX_NAME}, "
                         "please (it goes on the badge and in the log)")
    if not text.isprintable():
        raise ValueError(f"the referee's name {text!r} has a control character or line break: "
                         "type it on one line")
    return text


def tag_of(token: str) -> str:
    """6 hex digits of sha256(token): names a token in logs without revealing it."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()[:6]


def _same(a: str, b: str) -> bool:
    return a.casefold() == b.casefold()


def parse(text: str) -> tuple[Referee, ...]:
    """The referees of a referees.json text; ValueError if it is not one."""
    data = json.loads(text)
    if not isinstance(data, dict) or data.get("version") != VERSION \
            or not isinstance(data.get("referees"), list):
        raise ValueError(f"not a version {VERSION} referees file")
    out = []
    for i, r in enumerate(data["referees"]):
        if not isinstance(r, dict):
            raise ValueError(f"referee {i + 1} is not an object")
        name, token, added, revoked = r.get("name"), r.get("token"), r.get("added_ms"), r.get("revoked_ms")
        if not (isinstance(name, str) and isinstance(token, str) and token
                and isinstance(added, int) and (revoked is None or isinstance(revoked, int))):
            raise ValueError(f"referee {i + 1} needs a name, a token, added_ms and revoked_ms")
        out.append(Referee(name, token, tag_of(token), added, revoked))
    return tuple(out)


def render(referees: Iterable[Referee]) -> str:
    """The referees.json text of a book."""
    return json.dumps({"version": VERSION,
                       "referees": [{"name": r.name, "token": r.token, "tag": r.tag,
                                     "added_ms": r.added_ms, "revoked_ms": r.revoked_ms}
                                    for r in referees]},
                      ensure_ascii=False, indent=2) + "\n"


def with_added(referees: tuple[Referee, ...], name: str, token: str, now_ms: int) -> tuple[Referee, ...]:
    """The book with a new referee; ValueError for a bad name or one in use."""
    name = clean_name(name)
    for r in referees:
        if r.active and _same(r.name, name):
            raise ValueError(f"there is already a referee called {r.name!r}: revoke theirs first "
                             f"(tabletimer referees DIR revoke {r.name!r}) or pick another name "
                             f"(e.g. {name + ' 2'!r})")
    return referees + (Referee(name, token, tag_of(token), now_ms),)


def with_revoked(referees: tuple[Referee, ...], name: str, now_ms: int) -> tuple[Referee, ...]:
    """The book with the active referee called name revoked; ValueError if
    there is none."""
    name = str(name).strip()
    for i, r in enumerate(referees):
        if r.active and _same(r.name, name):
            return referees[:i] + (Referee(r.name, r.token, r.tag, r.added_ms, now_ms),) + referees[i + 1:]
    active = [r.name for r in referees if r.active]
    known = ", ".join(active) if active else "none"
    if any(_same(r.name, name) for r in referees):
        raise ValueError(f"the referee {name!r} is already revoked (active referees: {known})")
    raise ValueError(f"no referee called {name!r} (active referees: {known})")


def find(referees: Iterable[Referee], token: str) -> Referee | None:
    """The active referee whose token this is, or None.  Every active token
    is compared, in constant time each (hmac.compare_digest), so the time
    taken says nothing about which one nearly matched."""
    given = str(token).encode("utf-8")
    found = None
    for r in referees:
        if hmac.compare_digest(given, r.token.encode("utf-8")) and r.active:
            found = r
    return found


def slug(name: str) -> str:
    """A file name's stem for a referee's badge: 'Åse Øvrebø' -> 'ase-ovrebo'."""
    folded = unicodedata.normalize("NFKD", name.replace("ø", "o").replace("Ø", "O")
                                   .replace("ł", "l").replace("Ł", "L").replace("ß", "ss"))
    text = re.sub(r"[^a-z0-9]+", "-", folded.encode("ascii", "ignore").decode().lower()).strip("-")
    return text[:40].strip("-") or "referee"


# ------------------------------------------------------------------ the file

def book_path(path: Path | str) -> Path:
    """referees.json of an event folder, or path itself if it names a file."""
    p = Path(path)
    return p / FILE if p.is_dir() else p


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


class RefereeBook:
    """The event's referees.json.  path: the file, or the event folder."""

    def __init__(self, path: Path | str, now_ms=_now_ms) -> None:
        self.path = book_path(path)
        self._now_ms = now_ms
        self._stat: tuple[int, int, int] | None = None
        self._referees: tuple[Referee, ...] = ()
        self._refresh()

    # reading -----------------------------------------------------------

    def _stat_of(self) -> tuple[int, int, int] | None:
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return None
        return (st.st_mtime_ns, st.st_size, st.st_ino)

    def _refresh(self) -> None:
        """Re-read the file if its stat changed.  A file that does not parse
        keeps the last good state (with a warning); a missing file is an
        empty book (deleting it removes every referee)."""
        try:
            stat = self._stat_of()
        except OSError as e:
            log.warning("referees: cannot read %s (%s): keeping the %d referee(s) read before",
                        self.path, e, len(self._referees))
            return
        if stat == self._stat:
            return
        if stat is None:
            if self._referees:
                log.warning("referees: %s is gone: no referee can sign in", self.path)
            self._stat, self._referees = None, ()
            return
        try:
            referees = parse(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError, UnicodeDecodeError) as e:
            log.warning("referees: %s does not read as a referees file (%s): keeping the %d "
                        "referee(s) read before", self.path, e, len(self._referees))
            self._stat = stat            # warn once per change, not at every request
            return
        self._stat, self._referees = stat, referees

    def _read_for_change(self) -> tuple[Referee, ...]:
        """The file as it is now, for a change: a file that does not parse is
        an error here (ValueError), not something to write over."""
        if not self.path.exists():
            return ()
        try:
            return parse(self.path.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError) as e:
            raise ValueError(f"{self.path} does not read as a referees file ({e}): fix or move "
                             "it away first") from None

    def who(self, token: str) -> str | None:
        """The name of the active referee with this token, or None."""
        r = self.identify(token)
        return r.name if r else None

    def identify(self, token: str) -> Referee | None:
        """The active referee with this token (name and tag), or None."""
        self._refresh()
        return find(self._referees, token)

    def referees(self) -> list[tuple[str, bool, int, int | None]]:
        """(name, active, added_ms, revoked_ms) of every referee, in the order added."""
        self._refresh()
        return [(r.name, r.active, r.added_ms, r.revoked_ms) for r in self._referees]

    def tags(self) -> dict[str, str]:
        """Active referees' names -> their tags (for logs)."""
        self._refresh()
        return {r.name: r.tag for r in self._referees if r.active}

    # changing ----------------------------------------------------------

    def _write(self, referees: tuple[Referee, ...]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_private(self.path, render(referees))
        self._stat, self._referees = self._stat_of(), referees

    def add(self, name: str) -> str:
        """Add a referee; their new token (ValueError: a bad name or one in use)."""
        token = secrets.token_urlsafe(24)
        self._write(with_added(self._read_for_change(), name, token, self._now_ms()))
        return token

    def revoke(self, name: str) -> str:
        """Revoke the active referee called name (ValueError: none such);
        their name as stored."""
        before = self._read_for_change()
        after = with_revoked(before, name, self._now_ms())
        self._write(after)
        return next(a.name for a, b in zip(after, before) if a != b)
