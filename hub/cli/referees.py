"""`tabletimer referees DIR add|list|revoke`: the event's referees, each
with a printable badge whose QR code signs a phone in (hub/web/referees.py,
hub/outputs/referee_badge.py).  A token is printed on no screen: it is in
the event folder's referees.json and in the badge's code, both readable by
their owner only."""

from __future__ import annotations

import sys
from datetime import datetime
from pathlib import Path

from ..event.folder.private_file import write_private
from ..event.folder import event_folder
from ..outputs.referee_badge import badge_html
from ..web import public_url as hub_url
from ..web.referees import RefereeBook, slug
from .outputs import sheet_language

BADGES = "badges"


def _folder(path: str) -> Path | None:
    """The event folder, or None after saying why it is not one."""
    from ..event.folder import rounds

    p = Path(path)
    if not rounds.names(p):
        print(f"error: {p}: not an event folder (no format.toml, no rounds); create one with "
              "`tabletimer init DIR --format PRESET`", file=sys.stderr)
        return None
    return p


def default_badge(folder: Path, name: str) -> Path:
    """DIR/badges/<slug>.html, or <slug>-2.html ... when that one exists (a
    revoked referee's old badge, or another name with the same letters)."""
    stem, n = slug(name), 1
    while True:
        p = folder / BADGES / (f"{stem}.html" if n == 1 else f"{stem}-{n}.html")
        if not p.exists():
            return p
        n += 1


def _when(ms: int | None) -> str:
    if ms is None:
        return ""
    return datetime.fromtimestamp(ms / 1000).astimezone().strftime("%Y-%m-%d %H:%M")


def cmd_add(args) -> int:
    folder = _folder(args.dir)
    if folder is None:
        return 2
    try:
        url, saved = hub_url.resolve(folder, args.public_url)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"error: {e.filename or ''}: {e.strerror or e}", file=sys.stderr)
        return 2
    if url is None:
        print("error: the badge's QR code needs the address phones open the hub at: "
              + hub_url.NO_URL_ADVICE, file=sys.stderr)
        return 2
    if saved:
        print(f"saved the public URL {url} in {hub_url.path(folder)}")
    book = RefereeBook(folder)
    try:
        token = book.add(args.name)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"error: {e.filename or ''}: {e.strerror or e}", file=sys.stderr)
        return 2
    name = book.who(token) or args.name.strip()
    badge = Path(args.badge) if args.badge else default_badge(folder, name)
    event = args.title or event_folder.event_title(folder)
    try:
        badge.parent.mkdir(parents=True, exist_ok=True)
        write_private(badge, badge_html(event, name, url, token, sheet_language(folder)))
    except OSError as e:
        book.revoke(name)
        print(f"error: {e.filename or badge}: {e.strerror or e}; the referee {name!r} is revoked "
              "again (no badge, no sign-in): add them again", file=sys.stderr)
        return 2
    print(f"referee {name} added; badge: {badge} (print it; its QR code signs a phone in)")
    return 0


def cmd_list(args) -> int:
    folder = _folder(args.dir)
    if folder is None:
        return 2
    book = RefereeBook(folder)
    rows = book.referees()
    url = hub_url.saved(folder)
    print(f"public URL: {url}" if url else f"public URL: none saved ({hub_url.NO_URL_ADVICE})")
    if not rows:
        print(f"no referees yet: tabletimer referees {args.dir} add NAME")
        return 0
    tags = book.tags()
    width = max(len(r[0]) for r in rows)
    for name, active, added, revoked in rows:
        state = f"active   tag {tags.get(name, '')}" if active else f"revoked {_when(revoked)}"
        print(f"{name:<{width}}  added {_when(added)}  {state}")
    return 0


def cmd_revoke(args) -> int:
    folder = _folder(args.dir)
    if folder is None:
        return 2
    try:
        name = RefereeBook(folder).revoke(args.name)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"error: {e.filename or ''}: {e.strerror or e}", file=sys.stderr)
        return 2
    print(f"referee {name} revoked: their badge signs no phone in from now on "
          "(a running hub sees it at its next request); the name stays in referees.json as revoked")
    return 0


def add_subcommands(sub) -> None:
    """Register `referees` on the subparsers object of the `tabletimer` command."""
    r = sub.add_parser(
        "referees", help="the event's referees and their badges (a QR code that signs a phone in)",
        description="The event's referees: each gets a printable badge whose QR code signs a phone "
                    "in as them (PUBLIC_URL/signin?token=...). Tokens are kept in DIR/referees.json "
                    "(readable by its owner only) and shown on no screen.")
    r.add_argument("dir", help="the event folder")
    rsub = r.add_subparsers(dest="referees_cmd", required=True)
    a = rsub.add_parser("add", help="add a referee and write their badge")
    a.add_argument("name", help="the referee's name as on the badge (1 to 60 characters)")
    a.add_argument("--public-url", metavar="URL",
                   help="the hub's address as phones on the hall network reach it, e.g. "
                        "http://192.168.1.10:8765 (saved in DIR/public-url for later commands)")
    a.add_argument("--badge", metavar="FILE.html",
                   help="where to write the badge (default: DIR/badges/<name>.html)")
    a.add_argument("--title", help="the event's name on the badge (default: the event's title, DIR/title, "
                                   "else the folder's name)")
    a.set_defaults(func=cmd_add)
    ls = rsub.add_parser("list", help="the referees, active and revoked")
    ls.set_defaults(func=cmd_list)
    rv = rsub.add_parser("revoke", help="revoke a referee: their badge signs no phone in any more")
    rv.add_argument("name")
    rv.set_defaults(func=cmd_revoke)
