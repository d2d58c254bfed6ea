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
through it (cli/serve.py parses, calls, prints); `tabletimer standby`
runs StandbyRuntime: the idle broker, the follower, the same loop;
`tabletimer console`, desk_console.py.

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
from typing import Any, Callable

from ..core.changes import RowApplied
from ..core.service import HubService
from ..core.timekeeper import other_round_anchors
from ..fleet.firmware_build import installed_firmware_version
from ..link.mqtt_adapter import HubMqtt
from .brokers import Broker, dead_broker_alert, follow_keys, restart_child, start_broker
from .keep_awake import Awake, keep_awake
from .log_sentences import describe
from .main_loop import MainLoop
from .signals import room_for_connections, serving, stop_on_signals
from .site_start import start_site
from .web_start import hall_base, hall_process, referee_pages, say_referee_urls, web_server

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
        self.broker: Broker | None = None
        self.link: HubMqtt | None = None
        self.awake: Awake | None = None
        self.web: Any = None              # the web server (web/server.py), the referees' pages, the hall's
        self.pages: Any = None            # pages' process, the old primary's watch: None until started
        self.hall: Any = None
        self.watch: Any = None
        self.site: Any = None             # the public site's publisher (site_start.py; --publish)
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
        broker = self.broker = start_broker(self.options, service.keys, self.data)
        address = broker.address
        say(broker.line)
        say(f"event log {service.store.path}")
        self._dead = broker_gone(broker, service, self.on_terminal)
        awake = self.awake = keep_awake()
        say(awake.said)
        for line in _start_clock(service):
            say(f"warning: {line}")
        link = self.link = HubMqtt(service, address.host, address.port, address.user, address.password)
        link.start(while_waiting=self._dead)    # a child broker dying meanwhile is said and started again
        if web_listen and self.event:
            self._start_web(web_listen, self.event)
        self.site = start_site(getattr(self.options, "publish", None), service, self.data, self.event, say)
        if self.site is not None and self.pages is not None:
            self.pages.status_line = self.site.line          # the head referee's calls page
        self.watch = _old_primary_watch(service, self.on_terminal)     # a takeover's: hubs watch each other
        if self.start_sims:
            self.sims = self.start_sims(address, self.stop_event)

    def _start_web(self, web_listen: tuple[str, int], event: dict) -> None:
        from ..web import screens

        service, say, data = self.service, self.say, self.data
        pages = self.pages = referee_pages(service, data, event)
        routes = pages.routes()
        screen = None                   # the hall's screens' token (web/screens.py)
        if getattr(self.options, "hall_pages", "on") == "on":
            screen = screens.screen_token(data)
            self.hall = hall_process(self.options, service, data, event, web_listen, say)
            if self.hall is not None:
                from ..web.hall_pages import PATHS
                routes += self.hall.redirect_routes(PATHS)     # the addresses people know, sent on
        # the web server's reserve of connections: signed-in referees, the consoles, the screens
        credentials = [pages.signed_in, lambda scope: screens.carried(scope, screen)]
        self.web = web_server(service, event, data, web_listen, say, routes, credentials)
        if self.web is not None:
            say_referee_urls(service, self.web, self.pages, data, say,
                              getattr(self.options, "demo_referee", False))
        if self.hall is not None and screen is not None:
            base = hall_base(data, self.hall)
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
        for part in (self.hall, self.site):
            said = part.check() if part else None
            if said:
                tell(said)
        broker = self.broker
        if broker is not None and follow_keys(broker, service.keys, self.data, broker.address.password or ""):
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
        for part, how in ((self.watch, "stop"), (self.site, "stop"), (self.web, "stop"), (self.pages, "close"), (self.hall, "stop"),
                          (self.link, "stop"), (self.broker, "stop"), (self.awake, "release")):
            if part:
                getattr(part, how)()
        if self._sub is not None:
            self._sub.cancel()
        return True


@dataclass
class StandbyRan:
    """How a standby's run ended: failed (why: its broker did not start),
    auto (the primary silent this long, --auto-after: it takes over), else
    stopped."""
    failed: str | None = None
    auto: float | None = None


class StandbyRuntime:
    """A standby laptop's parts (cli/standby.py): the event's broker started
    here and left idle (the boards' second address), the follower copying
    the primary's log (console/follower.py), its alerts and blindness on the
    service, the console or a line when the copy moves on; the same signals
    and measured loop as a hub's; --auto-after watched; stopped in reverse."""

    def __init__(self, options, service: HubService, data: Path, keys, follower, *, title: str = "",
                 on_terminal: bool = False, say: Callable[[str], None] = print) -> None:
        self.options, self.service, self.data, self.keys, self.follower = options, service, data, keys, follower
        self.title, self.on_terminal, self.say = title, on_terminal, say
        self.stop_event = threading.Event()
        self.loop = MainLoop(service.note if on_terminal else say)
        self.broker: Broker | None = None
        self._auto: list[float] = []         # the primary silent for --auto-after: take over

    def run(self) -> StandbyRan:
        try:
            broker = self.broker = start_broker(self.options, self.keys, self.data)   # idle: the boards' second address
        except (RuntimeError, OSError) as e:
            return StandbyRan(failed=str(e))
        self.say(broker.line + " (idle: the boards are the primary's)")
        service, follower, stop = self.service, self.follower, self.stop_event
        service.queries.add_alerts("the standby's follower", follower.alerts)
        service.queries.add_blind("a standby", lambda: "a standby: the boards are the primary's")
        follower.start()
        stop_on_signals(stop)                            # kill, closed terminal: stop cleanly
        threading.Thread(target=self._watch, name="standby-auto-after", daemon=True).start()
        duration = getattr(self.options, "duration", None)
        if duration:
            timer = threading.Timer(duration, stop.set)
            timer.daemon = True
            timer.start()
        try:
            if self.on_terminal:
                from ..console.app import run_console

                run_console(service, self.title, stop, lambda: self.loop.run_pass(service.catch_up))
            else:
                self.loop.run(_StandbyLines(service, follower, self.say), stop.wait, stop.is_set)
        except KeyboardInterrupt:
            pass
        finally:
            follower.stop()
            broker.stop()
        return StandbyRan(auto=self._auto[0] if self._auto else None)

    def _watch(self) -> None:
        auto_after = getattr(self.options, "auto_after", None)
        while auto_after and not self.stop_event.wait(0.25):
            silent = self.follower.silent_for()
            if silent is not None and silent >= auto_after and not self.follower.refused:
                self._auto.append(silent)
                self.stop_event.set()


class _StandbyLines:
    """Not on a terminal, a pass of the standby's loop: the copy caught up,
    and a line when it moves on, when the primary falls silent and when it
    answers again, when copying stops."""

    def __init__(self, service: HubService, follower, say: Callable[[str], None]) -> None:
        self.service, self.follower, self.say = service, follower, say
        self.copied, self.silent, self.refused = follower.copied, False, False

    def __call__(self) -> None:
        follower, say = self.follower, self.say
        self.service.catch_up()
        if follower.copied != self.copied:
            self.copied = follower.copied
            lag = follower.lag_ms()
            say(f"copied up to row #{self.copied}" + (f", {lag[0] / 1000:.2f} s after it was written at the primary "
                                                       f"(p99 of the last {lag[1]} rows: {lag[2] / 1000:.2f} s)"
                                                       if lag else ""))
        alerts = follower.alerts()
        now_silent = any(a.startswith("PRIMARY SILENT") for a in alerts)
        if now_silent and not self.silent:
            say(next(a for a in alerts if a.startswith("PRIMARY SILENT")))
        elif self.silent and not now_silent:
            say(f"the primary answers again: {follower.status()}")
        self.silent = now_silent
        if follower.refused and not self.refused:
            self.refused = True
            say(f"STANDBY STOPPED COPYING: {follower.refused}")


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
