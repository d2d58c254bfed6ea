"""The serving loop (`tabletimer run` and `demo`): broker, hub, the web server (the API for
remote consoles), the console or a line per stored event, until stopped."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections import deque
from pathlib import Path

from ..link.mqtt_adapter import HubMqtt
from ..core.changes import RowApplied
from ..core.service import HubService
from ..core.timekeeper import other_round_anchors
from .brokers import dead_broker_alert, follow_keys, restart_child, start_broker
from .common import print_final, room_for_connections, serving, stop_on_signals
from .hall_check import firmware_version
from .keep_awake import keep_awake
from .log_sentences import describe
from ..runtime.main_loop import MainLoop
from .options import FENCED


def console_title(event: dict | None, format_title: str) -> str:
    """The hub's console's title: the event's and the format's, and the
    round's name in an event of several (its /event's "round")."""
    title = (f"{event['title']} - {format_title}" if event and event.get("title")
             else f"TableTimer - {format_title}")
    return title + (f" (round {event['round']})" if event and event.get("round") else "")


def serve(args, service: HubService, data: Path, start_sims=None, event: dict | None = None,
          stop: threading.Event | None = None, boards_stay: bool = False) -> int:
    """Broker (brokers.py: Mosquitto as a child process when installed, else
    the embedded one; none with --broker), hub, the web server (--web-listen:
    the API for remote consoles; event: its /event), the console (or a line
    per event when not on a terminal), until Ctrl-C / SIGTERM / SIGHUP /
    --duration, or stop set (a rehearsed day's next round).  start_sims(address,
    stop): the simulated boards, stopped at the end unless boards_stay."""
    from rich.console import Console

    from ..web.server import parse_listen

    console = Console()
    room_for_connections(4096)    # the web server's 1024 connections, the broker's and the log's files
    stop = stop or threading.Event()
    why: list[str] = []                              # the signal that stopped it
    stop_on_signals(stop, said=why)                  # kill, closed terminal: stop cleanly
    # Ctrl-C stops the hub even when it was started with SIGINT ignored (a script's background
    # job, nohup): Python leaves an inherited ignore as it is, and the hub then ran on. While
    # it starts, a KeyboardInterrupt (a start that waits is left at once); then: serving()
    signal.signal(signal.SIGINT, signal.default_int_handler)
    sims: list = []
    broker = hub = remote = pages = hall = awake = watch = None
    failed = False
    fenced: list[str] = []     # why this hub stopped: another took over from its log
    title = console_title(event, service.competition.format.title)
    done = threading.Lock()
    # the events stored, for the line per event printed off a terminal:
    # listened to before the hub starts, so that what it stores at once (the
    # boards' retained statuses, a rehearsed day's boards already connected
    # when the next round's hub subscribes) is printed too
    stored: deque[dict] = deque()
    if not console.is_terminal:
        service.changes.subscribe(RowApplied, lambda n: stored.append(n.row))

    def shut_down() -> bool:
        """Stop boards, hub and broker, once (False if already done)."""
        if not done.acquire(blocking=False):
            return False
        stop.set()
        for sim in [] if boards_stay else sims:
            sim.stop()
        if watch:
            watch.stop()
        if remote:
            remote.stop()
        if pages:
            pages.close()
        if hall:
            hall.stop()
        if hub:
            hub.stop()
        if broker:
            broker.stop()
        if awake:
            awake.release()
        return True

    def watchdog() -> None:
        # a console whose terminal has gone (closed window, killed tmux) may
        # never return: once asked to stop, give it a few seconds, then shut
        # everything down from here and leave
        stop.wait()
        time.sleep(3)           # grace for the normal way out; not synchronisation
        if shut_down():
            os._exit(0)
    try:
        web_listen = parse_listen(args.web_listen)
        broker = start_broker(args, service.keys, data)
        address = broker.address
        console.print(broker.line, markup=False, highlight=False, soft_wrap=True)
        console.print(f"event log {service.store.path}", markup=False, highlight=False, soft_wrap=True)
        dead = broker_gone(broker, service, console.is_terminal)
        awake = keep_awake()
        console.print(awake.said, markup=False, highlight=False, soft_wrap=True)
        for line in _start_clock(service):
            console.print(f"warning: {line}", markup=False, highlight=False, soft_wrap=True)
        hub = HubMqtt(service, address.host, address.port, address.user, address.password)
        hub.start(while_waiting=dead)    # a child broker dying meanwhile is said and started again
        if web_listen and event:
            say = lambda text: console.print(text, markup=False, highlight=False,   # noqa: E731
                                              soft_wrap=True)     # a command or URL to copy: no wrapping
            from ..web import screens

            pages = _referee_pages(service, data, event)
            routes = pages.routes()
            screen = None                   # the hall's screens' token (web/screens.py)
            if getattr(args, "hall_pages", "on") == "on":
                screen = screens.screen_token(data)
                hall = _hall_process(args, service, data, event, web_listen, say)
                if hall is not None:
                    from ..web.hall_pages import PATHS
                    routes += hall.redirect_routes(PATHS)     # the addresses people know, sent on
            # the web server's reserve of connections: signed-in referees, the consoles, the screens
            credentials = [pages.signed_in, lambda scope: screens.carried(scope, screen)]
            remote = _web_server(service, event, data, web_listen, say, routes, credentials)
            if remote is not None:
                _say_referee_urls(service, remote, pages, data, say, getattr(args, "demo_referee", False))
            if hall is not None:
                base = _hall_base(data, hall)
                line = (f"hall pages (public, no sign-in; a process of their own): {base}/hall, "
                        f"{base}/standings (spectators' phones), {base}/results")
                projector = (f"  the projector: {screens.projector_url(base, screen)} (its place kept "
                             f"from the crowd; the token: {screens.token_path(data)})")
                for text in (line, projector):
                    say(text)
                    service.note(text.strip())
        watch = _old_primary_watch(service, console.is_terminal)     # a takeover's: hubs watch each other
        if start_sims:
            sims = start_sims(address, stop)
        deadline = time.monotonic() + args.duration if args.duration else None
        serving(stop, why, console.is_terminal)      # a signal is a stop request from now on

        def tick() -> None:
            if service.fenced and not fenced:
                # a board has seen a higher term: another hub took over from this log (an old
                # primary started again, or waking from a network split). It stops, its broker
                # with it, so that no board stays on it: they go to the hub that took over
                fenced.append(service.fenced)
                stop.set()
                return
            service.catch_up()                       # operator actions from `tabletimer act`
            service.keep_time()                      # a sleep, a stepped clock, the boards' time base
            service.split.check()                    # the standby lost, or heard again: a row
            _report_dead_sims(sims, service.note if console.is_terminal else print)
            dead()
            said = hall.check() if hall else None
            if said:
                (service.note if console.is_terminal else print)(said)
            if follow_keys(broker, service.keys, data, address.password or ""):
                (service.note if console.is_terminal else print)(
                    "broker: the board keys changed: Mosquitto's logins written again and reloaded")

        if console.is_terminal:               # the organizer console (Textual)
            from ..console.app import run_console

            if args.duration:
                timer = threading.Timer(args.duration, stop.set)
                timer.daemon = True
                timer.start()
            threading.Thread(target=watchdog, daemon=True).start()
            loop = MainLoop(service.note)            # Textual's timer paces it; measured all the same
            run_console(service, title, stop, lambda: loop.run_pass(tick), hub_fw=firmware_version())
        else:   # a log, not a screen: one line per stored event
            # printed here, not by the thread that stores it (a ranking per
            # line cost the commit thread half its time in a burst): the
            # events stored since the last tick, ranked once, places as now
            def print_stored() -> None:
                if stored:
                    ranked = {r.entrant: r for r in service.standings()}
                    while stored:
                        print(describe(service, stored.popleft(), ranked), flush=True)

            def one_pass() -> None:
                tick()
                print_stored()

            MainLoop(print).run(one_pass, stop.wait,
                                lambda: stop.is_set() or bool(deadline and time.monotonic() > deadline))
            print_stored()
            if why:
                print(f"stopping: {why[0]}", flush=True)
    except KeyboardInterrupt:
        pass
    except (RuntimeError, ConnectionError, ValueError) as e:
        console.print(f"[red]error:[/red] {e}")
        failed = True
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)   # a second Ctrl-C must not leave strays
        shut_down()
    if failed:
        return 2
    if fenced:
        console.print(f"FENCED: {fenced[0]}.\nThis hub has stopped, and its broker with it: the boards that "
                      "reached it go to the hub that took over (after their failover time), which holds the "
                      "event's log now; this laptop's log stays as it was. To follow that hub from here: "
                      "`tabletimer standby` on this event folder, --primary its address "
                      "(docs/operations.md, \"The hub laptop died\")",
                      markup=False, highlight=False, soft_wrap=True)
        for line in service.split.fenced_lines():       # its desk actions the event's log lacks
            console.print(line, markup=False, highlight=False, soft_wrap=True)
        return FENCED
    console.print("\nstopped; standings:")
    print_final(service)
    return 0


def _start_clock(service: HubService) -> list[str]:
    """The hub's time base written to its log (this boot's, of its own log or of
    another round's, else the wall clock's): what the operator must know."""
    from ..event.log.log_health import LogWriteFailed

    try:
        return service.start_clock(other_round_anchors(service.other_rounds))
    except LogWriteFailed as e:
        return [f"the hub's time base was not written to the log ({e}): it is taken again at the next start"]


def _old_primary_watch(service: HubService, on_terminal: bool):
    """A hub that took over (its term is a takeover's in its log) asks the
    old primary's address until it answers: it is then fenced, and its desk
    actions kept here to redo (console/old_primary.py); None otherwise."""
    from ..console.old_primary import OldPrimaryWatch

    if not OldPrimaryWatch.wanted(service):
        return None

    def say(text: str) -> None:
        service.note(text)
        if not on_terminal:
            print(text, flush=True)
    return OldPrimaryWatch(service, say).start()


def _web_server(service: HubService, event: dict, data: Path, listen: tuple[str, int], say,
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


def _referee_pages(service: HubService, data: Path, event: dict):
    """The referees' pages, for the event folder's referees (referees.json)."""
    from ..web.referee_pages import RefereePages
    from ..web.referees import RefereeBook, book_path

    return RefereePages(service, RefereeBook(book_path(data)), event.get("name", ""))


def _hall_process(args, service: HubService, data: Path, event: dict, web_listen: tuple[str, int], say):
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
                           token_path(data), folder).start()
    except (RuntimeError, OSError) as e:
        say(f"warning: no hall pages: {e}")
        return None


def _hall_base(data: Path, hall) -> str:
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


def _say_referee_urls(service: HubService, server, pages, data: Path, say, demo_referee: bool) -> None:
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


BROKER_RESTART_S = 5.0      # a dead child broker is started again at most this often


def broker_gone(broker, service: HubService, on_terminal: bool):
    """A check for tick(): a child broker that has died is said (a line in
    the log / on stdout) and started again, every BROKER_RESTART_S until it
    starts; meanwhile an alert on the console."""
    down: list[str] = []           # while it is down: what died, and the alert
    tried = [0.0]

    def alerts() -> list[str]:
        return down[1:2]

    service.queries.add_alerts("the broker", alerts)

    def say(text: str, error: bool = False) -> None:
        service.note(text)
        if not on_terminal:
            print(f"error: {text}" if error else text, flush=True)

    def check() -> None:
        if not down:
            text = dead_broker_alert(broker)
            if not text:
                return
            down[:] = [text, text]
            say(f"{text}. The hub starts it again", error=True)
        if time.monotonic() - tried[0] < BROKER_RESTART_S:
            return
        tried[0] = time.monotonic()
        try:
            said = restart_child(broker)
        except (RuntimeError, OSError) as e:
            down[1] = f"{down[0]}; starting it again failed: {e}; trying again every {BROKER_RESTART_S:g} s"
            return
        down.clear()
        say(said)
    return check


def _report_dead_sims(sims: list, say) -> None:
    """A simulated board that exits by itself is a bug or a broken set-up:
    say so once, with what it printed last."""
    for sim in sims:
        if not sim.alive and not getattr(sim, "reported", False):
            sim.reported = True
            say(f"simulated board {sim.board_id} exited: {' | '.join(sim.stderr_tail[-3:])}")
