"""The hub's composition root: one place that starts, in order, and stops,
in reverse and once, every part of a running hub -- the broker (brokers.py),
the laptop kept awake, the hub's clock, the MQTT link (link/mqtt_adapter.py),
the web server with the referees' pages (web/), the hall's pages in a
process of their own (web/hall_process.py), the watch a hub that took over
keeps on the old primary (console/old_primary.py), the simulated boards of
a rehearsal -- and runs the measured main loop (main_loop.py) under the
organizer console (Textual) or, off a terminal, a line per stored row.  A
watchdog ends the process when a console whose terminal is gone does not
return.  `tabletimer run`, `demo`, `rehearse` and `takeover` run a hub
through it (cli/serve.py parses, calls, prints); the standby's idle broker
is started by the same brokers.py.

The service (core/) is given: its log opened, its rounds followed, by the
caller.  What the hub says goes to `say` (a terminal's console or standard
output); nothing here parses arguments: `options` carries the serving
options by name (broker, broker_kind, web_listen, hall_pages, hall_listen,
duration, demo_referee)."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ..core.changes import RowApplied
from ..core.service import HubService
from ..core.timekeeper import other_round_anchors
from ..fleet.firmware_build import installed_firmware_version
from ..link.mqtt_adapter import HubMqtt
from .brokers import dead_broker_alert, follow_keys, restart_child, start_broker
from .keep_awake import keep_awake
from .log_sentences import describe
from .main_loop import MainLoop
from .signals import room_for_connections, serving, stop_on_signals

SHUTDOWN_GRACE_S = 3.0     # a console asked to stop that has not returned by then: the watchdog ends the process


@dataclass
class Ran:
    """How a hub's run ended: failed (why), fenced (why: another hub took
    over from its log), else stopped (why: the signal, when one did)."""
    failed: str | None = None
    fenced: str | None = None
    signal: str | None = None
    fenced_lines: list[str] = field(default_factory=list)


class HubRuntime:
    def __init__(self, options, service: HubService, data: Path, *, event: dict | None = None,
                 start_sims: Callable | None = None, stop: threading.Event | None = None,
                 boards_stay: bool = False, title: str = "", on_terminal: bool = False,
                 say: Callable[[str], None] = print) -> None:
        """options: the serving options (module docstring); data: the event
        folder (its broker's files, tokens, referees); event: its /event
        (None: no web server); start_sims(address, stop): simulated boards,
        stopped at the end unless boards_stay; stop: set to end the run
        (a rehearsed day's next round); on_terminal: the organizer console,
        else a line per stored row."""
        self.options, self.service, self.data, self.event = options, service, data, event
        self.start_sims, self.boards_stay, self.title = start_sims, boards_stay, title
        self.stop_event = stop or threading.Event()
        self.on_terminal, self.say = on_terminal, say
        self.broker = self.link = self.web = self.pages = self.hall = self.awake = self.watch = None
        self.sims: list = []
        self.why: list[str] = []          # the signal that stopped it
        self.fenced: list[str] = []       # why this hub stopped: another took over from its log
        self.loop = MainLoop(service.note if on_terminal else print)
        self._done = threading.Lock()
        self._dead: Callable[[], None] = lambda: None
        # the rows stored, for the line per row printed off a terminal: subscribed before the
        # hub starts, so that what it stores at once (the boards' retained statuses, a rehearsed
        # day's boards already connected when the next round's hub subscribes) is printed too
        self._stored: deque[dict] = deque()
        self._sub = None if on_terminal else service.changes.subscribe(RowApplied,
                                                                      lambda n: self._stored.append(n.row))

    # ------------------------------------------------------------ the run
    def run(self) -> Ran:
        """Start every part, run the main loop until stopped (Ctrl-C,
        SIGTERM, SIGHUP, --duration, stop set, fenced), stop every part."""
        room_for_connections(4096)    # the web server's 1024 connections, the broker's and the log's files
        stop_on_signals(self.stop_event, said=self.why)   # kill, closed terminal: stop cleanly
        # Ctrl-C stops the hub even when it was started with SIGINT ignored (a script's background
        # job, nohup): Python leaves an inherited ignore as it is, and the hub then ran on. While
        # it starts, a KeyboardInterrupt (a start that waits is left at once); then: serving()
        signal.signal(signal.SIGINT, signal.default_int_handler)
        failed = None
        try:
            self.start()
            serving(self.stop_event, self.why, self.on_terminal)   # a signal is a stop request from now on
            self.serve()
        except KeyboardInterrupt:
            pass
        except (RuntimeError, ConnectionError, ValueError) as e:
            failed = str(e)
        finally:
            signal.signal(signal.SIGINT, signal.SIG_IGN)   # a second Ctrl-C must not leave strays
            self.shut_down()
        return Ran(failed=failed, fenced=self.fenced[0] if self.fenced else None,
                   signal=self.why[0] if self.why else None,
                   fenced_lines=self.service.split.fenced_lines() if self.fenced else [])

    def start(self) -> None:
        """The parts, in order: broker, keep-awake, clock, MQTT link, web
        server and pages, hall process, the old primary's watch, the boards."""
        from ..web.server import parse_listen

        service, say = self.service, self.say
        web_listen = parse_listen(self.options.web_listen)
        self.broker = start_broker(self.options, service.keys, self.data)
        address = self.broker.address
        say(self.broker.line)
        say(f"event log {service.store.path}")
        self._dead = broker_gone(self.broker, service, self.on_terminal)
        self.awake = keep_awake()
        say(self.awake.said)
        for line in _start_clock(service):
            say(f"warning: {line}")
        self.link = HubMqtt(service, address.host, address.port, address.user, address.password)
        self.link.start(while_waiting=self._dead)    # a child broker dying meanwhile is said and started again
        if web_listen and self.event:
            self._start_web(web_listen)
        self.watch = _old_primary_watch(service, self.on_terminal)     # a takeover's: hubs watch each other
        if self.start_sims:
            self.sims = self.start_sims(address, self.stop_event)

    def _start_web(self, web_listen: tuple[str, int]) -> None:
        from ..web import screens

        service, say, event, data = self.service, self.say, self.event, self.data
        self.pages = _referee_pages(service, data, event)
        routes = self.pages.routes()
        screen = None                   # the hall's screens' token (web/screens.py)
        if getattr(self.options, "hall_pages", "on") == "on":
            screen = screens.screen_token(data)
            self.hall = _hall_process(self.options, service, data, event, web_listen, say)
            if self.hall is not None:
                from ..web.hall_pages import PATHS
                routes += self.hall.redirect_routes(PATHS)     # the addresses people know, sent on
        # the web server's reserve of connections: signed-in referees, the consoles, the screens
        credentials = [self.pages.signed_in, lambda scope: screens.carried(scope, screen)]
        self.web = web_server(service, event, data, web_listen, say, routes, credentials)
        if self.web is not None:
            _say_referee_urls(service, self.web, self.pages, data, say,
                              getattr(self.options, "demo_referee", False))
        if self.hall is not None:
            base = _hall_base(data, self.hall)
            line = (f"hall pages (public, no sign-in; a process of their own): {base}/hall, "
                    f"{base}/standings (spectators' phones), {base}/results")
            projector = (f"  the projector: {screens.projector_url(base, screen)} (its place kept "
                         f"from the crowd; the token: {screens.token_path(data)})")
            for text in (line, projector):
                say(text)
                service.note(text.strip())

    def tick(self) -> None:
        """One pass of the main loop: fenced, the operators' actions caught
        up, the clock kept, the standby checked, the parts watched."""
        service = self.service
        if service.fenced and not self.fenced:
            # a board has seen a higher term: another hub took over from this log (an old
            # primary started again, or waking from a network split). It stops, its broker
            # with it, so that no board stays on it: they go to the hub that took over
            self.fenced.append(service.fenced)
            self.stop_event.set()
            return
        tell = service.note if self.on_terminal else print
        service.catch_up()                       # operator actions from `tabletimer act`
        service.keep_time()                      # a sleep, a stepped clock, the boards' time base
        service.split.check()                    # the standby lost, or heard again: a row
        _report_dead_sims(self.sims, tell)
        self._dead()
        said = self.hall.check() if self.hall else None
        if said:
            tell(said)
        address = self.broker.address
        if follow_keys(self.broker, service.keys, self.data, address.password or ""):
            tell("broker: the board keys changed: Mosquitto's logins written again and reloaded")

    def serve(self) -> None:
        """The main loop until stopped: under the organizer console (its
        timer paces the passes, measured all the same), else a pass every
        period and the rows stored since printed, a line each."""
        stop, duration = self.stop_event, getattr(self.options, "duration", None)
        if self.on_terminal:               # the organizer console (Textual)
            from ..console.app import run_console

            if duration:
                timer = threading.Timer(duration, stop.set)
                timer.daemon = True
                timer.start()
            threading.Thread(target=self._watchdog, name="hub-watchdog", daemon=True).start()
            run_console(self.service, self.title, stop, lambda: self.loop.run_pass(self.tick),
                        hub_fw=installed_firmware_version())
            return
        deadline = time.monotonic() + duration if duration else None

        def one_pass() -> None:
            self.tick()
            self._print_stored()
        self.loop.run(one_pass, stop.wait, lambda: stop.is_set() or bool(deadline and time.monotonic() > deadline))
        self._print_stored()
        if self.why:
            print(f"stopping: {self.why[0]}", flush=True)

    def _print_stored(self) -> None:
        """The rows stored since the last pass, a line each: printed here, not
        by the thread that stores them (a ranking per line cost the commit
        thread half its time in a burst), ranked once, places as now."""
        if self._stored:
            ranked = {r.entrant: r for r in self.service.standings()}
            while self._stored:
                print(describe(self.service, self._stored.popleft(), ranked), flush=True)

    def _watchdog(self) -> None:
        # a console whose terminal has gone (closed window, killed tmux) may
        # never return: once asked to stop, give it a few seconds, then shut
        # everything down from here and leave
        self.stop_event.wait()
        time.sleep(SHUTDOWN_GRACE_S)           # grace for the normal way out; not synchronisation
        if self.shut_down():
            os._exit(0)

    def shut_down(self) -> bool:
        """Stop the boards, the watch, the web, the hall, the link and the
        broker, in that order, once (False if already done)."""
        if not self._done.acquire(blocking=False):
            return False
        self.stop_event.set()
        for sim in [] if self.boards_stay else self.sims:
            sim.stop()
        for part, how in ((self.watch, "stop"), (self.web, "stop"), (self.pages, "close"), (self.hall, "stop"),
                          (self.link, "stop"), (self.broker, "stop"), (self.awake, "release")):
            if part:
                getattr(part, how)()
        if self._sub is not None:
            self._sub.cancel()
        return True


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
