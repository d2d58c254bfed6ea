"""The web server and the hall's pages as a running hub starts them
(hub_runtime.py): the referees' pages on the event's referees, the hall's
pages in a process of their own, and the lines that say where phones,
consoles and the projector open them (never a token: a file's path)."""

from __future__ import annotations

from pathlib import Path

from ..core.service import HubService


def web_server(service: HubService, event: dict, data: Path, listen: tuple[str, int], say,
                extra_routes=(), credentials=()):
    """The hub's web server: the API for consoles on other laptops, and
    extra_routes (None if its port is taken: the hub runs without it);
    credentials: what else may use its reserve of connections (server.py).
    What it says names the token's file, never the token: the screen, the
    console's event log and a terminal's scrollback are seen by others."""
    from ..web.console_api import console_token, token_path
    from ..web.server import DEFAULT_PORT, start_hub_web

    host, port = listen
    try:
        server = start_hub_web(service, event, console_token(data), host, port, extra_routes,
                               privileged=credentials)
    except OSError as e:
        say(f"warning: no remote consoles: cannot listen on {host}:{port} "
            f"({e.strerror or e}); choose another with --web-listen HOST:PORT")
        return None
    command = server.command(token_path(data))
    if server.address[0] in ("127.0.0.1", "localhost", "::1"):
        where = f" (this machine only; for another laptop: --web-listen 0.0.0.0:{port or DEFAULT_PORT})"
    else:
        where = (" (on the other laptop: a copy of the token file there, or its text in "
                 "$TABLETIMER_CONSOLE_TOKEN instead of --token-file)")
    say(f"remote console{where}:\n  {command}")
    service.note(f"remote console: {command}")
    return server


def referee_pages(service: HubService, data: Path, event: dict):
    """The referees' pages, for the event folder's referees (referees.json)."""
    from ..web.referee_pages import RefereePages
    from ..web.referees import RefereeBook, book_path

    from ..web.hall_process import language_of

    return RefereePages(service, RefereeBook(book_path(data)), event.get("name", ""), language_of(data))


def hall_process(args, service: HubService, data: Path, event: dict, web_listen: tuple[str, int], say):
    """The hall's pages in a process of their own (web/hall_process.py), on
    --hall-listen (default: the web server's host, its port + 1); None, and
    a warning, if they cannot start: the hub runs without them."""
    from ..web.hall_process import HallProcess
    from ..web.server import parse_listen

    host, port = web_listen
    given = getattr(args, "hall_listen", None)
    listen = parse_listen(given, host) if given else (host, port + 1 if port else 0)
    if listen is None:
        return None
    description = dict(event, auto_stations=service.competition.auto_stations)   # as the console API's /event
    from ..web.round_views import hall_title
    from ..web.screens import token_path
    # the projector's title: the event's, and in an event of several rounds which one is live
    title = hall_title(event, service.competition.format.title)
    folder = None if event.get("demo") else data          # the event folder: its other rounds (?round=)
    try:
        return HallProcess(service.store.path, description, listen, title, data / "hall-pages.log",
                           token_path(data), folder, data).start()
    except (RuntimeError, OSError) as e:
        say(f"warning: no hall pages: {e}")
        return None


def hall_base(data: Path, hall) -> str:
    """Where phones open the hall's pages: the public URL's host (the one
    the cards carry) on the hall's port, else the hall server's own."""
    from urllib.parse import urlsplit

    from ..web import public_url
    from ..web.server import url_of

    saved = public_url.saved(data)
    if saved is None:
        return hall.url()
    parts = urlsplit(saved)
    return url_of(parts.hostname or hall.host, hall.port, parts.scheme)


def _public_base(data: Path, server) -> str:
    """Where phones open the hub: the public URL the cards carry, else the server's own."""
    from ..web import public_url

    return public_url.saved(data) or server.url()


def say_referee_urls(service: HubService, server, pages, data: Path, say, demo_referee: bool) -> None:
    """Where referees' phones open the hub: the calls page and a table's
    page, at the public URL the cards carry (or the server's own); with
    demo_referee (`tabletimer demo`), a sign-in for a made-up referee, so
    that a newcomer opens the pages at once (a real event's badges are
    printed by `tabletimer referees DIR add NAME`, and no token is shown)."""
    from ..outputs.table_cards import table_url
    from ..web.table_view import tables

    base = _public_base(data, server)
    names = service.read(lambda comp, now: tables(comp))
    lines = [f"referees' pages: {base}/calls (the calls waiting)"]
    if names:
        lines.append(f"  a table's page: {table_url(base, names[0])} (each table card's QR code)")
    book = pages.referees                  # the pages' own book (referees.json)
    if demo_referee:
        name = "Demo referee"
        if any(r[0] == name and r[1] for r in book.referees()):
            book.revoke(name)           # a new sign-in at every demo (the book never shows a token again)
        token = book.add(name)
        lines.append(f"  sign this browser in as '{name}' (demo only): {base}/signin?token={token}")
    else:
        active = sum(1 for r in book.referees() if r[1])
        lines.append(f"  {active} referee badge(s) active; more: tabletimer referees {data} add NAME")
    for line in lines:
        say(line)
        service.note(line.strip())       # the console's event log: a terminal's console covers the lines above
