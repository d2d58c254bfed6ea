"""The hall's public pages (hall_pages.py) in a process of their own, so that
a crowd on them never costs the hub's process a cycle: the boards' acks and
the referees' actions do not wait for 300 spectators' streams.

The hub (`HallProcess`) starts `python -m tabletimer.hub.web.hall_process
--log EVENTS.sqlite --listen HOST:PORT --title T [--screen-token-file F]
[--event DIR [--round NAME]]` (F: the event's screen token, web/screens.py:
read from the file, never on the command line, which other users of the
machine can see; DIR: the event folder, whose other rounds the pages show
with ?round=, round_views.py, and whose site-url the projector and the
results sheet show; NAME: the live one's), writes it the event's
description (event/fold/description.py, as the console API's /event) as the
first line of its stdin, and then a byte every HEARTBEAT_S.  The process
builds the event's Competition from the description, follows the hub's log
read-only (event/log/followed_log.py; new rows every FOLLOW_S), serves the
pages on its own port (web/server.py's WebServer: the same limits; the
other rounds a page asked for: their logs every round_views.OTHERS_S), and
answers `ready HOST PORT` (or `error: WHY`) on its stdout.  It ends when
its stdin closes (the hub stopped, however: SIGKILL too) or stays silent
for HUB_SILENT_S (the hub hangs): its pages' streams end, and the pages say
they lost the hub instead of showing stale standings as current.

On the hub's own web server the same paths answer 307 to the hall's port
(`redirect_routes`), so the addresses people know keep working.  If the
process dies, the hub's tick (`check`) says so and starts it again on the
same port.  Its stderr (errors only) goes to a file in the event's folder.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import selectors
import subprocess
import sys
import threading
import time
from pathlib import Path

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

FOLLOW_S = 0.05          # the process reads the log's new rows this often
HEARTBEAT_S = 1.0        # the hub writes the process a byte this often
HUB_SILENT_S = 5.0       # and the process ends after this long without one
READY_S = 60.0           # the process answers ready within this (it replays the whole log first)
RESTART_AFTER_S = 5.0    # a process that died is started again, at most this often
NICE = 10                # its CPU priority below the hub's where SCHED_IDLE is not (macOS)
log = logging.getLogger(__name__)


# ------------------------------------------------------------ the process

def lowest_priority() -> str:
    """This process only takes the CPU nobody else wants: Linux's SCHED_IDLE
    (a waking hub always goes first), else nice NICE; what it got."""
    try:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))     # type: ignore[attr-defined]
        return "SCHED_IDLE"
    except (AttributeError, OSError):                   # macOS: no SCHED_IDLE
        pass
    try:
        os.nice(NICE)
        return f"nice {NICE}"
    except (AttributeError, OSError):
        return "the hub's priority"


def _heard(stdin_fd: int, heard: list[float], gone: threading.Event) -> None:
    """Read the hub's heartbeats until its end of the pipe closes."""
    while True:
        try:
            data = os.read(stdin_fd, 64)
        except OSError:
            data = b""
        if not data:
            gone.set()
            return
        heard[0] = time.monotonic()


def language_of(folder: str | Path | None):
    """The event's language, asked at each page (`tabletimer language` shows at
    the next page); a language file gone bad: the last good one, else English."""
    from ..event.folder.event_folder import EventFolderError, event_language
    last = ["en"]

    def now() -> str:
        if folder is None:
            return last[0]
        try:
            last[0] = event_language(folder)
        except EventFolderError:
            pass
        return last[0]
    return now


def serve_hall(argv: list[str] | None = None) -> int:
    from ..protocol.keys import BoardKeys
    from ..core.service import HubService
    from ..event.fold.description import competition_of
    from ..event.folder.site_address import site_url
    from ..event.log.followed_log import FollowedLog
    from .app import build_hall_app
    from .hall_pages import HallPages
    from .round_views import OTHERS_S, EventRounds
    from .screens import read_token
    from .server import WebServer, parse_listen

    ap = argparse.ArgumentParser(prog="python -m tabletimer.hub.web.hall_process",
                                 description="The hall's pages, following the hub's log (started by the hub).")
    ap.add_argument("--log", required=True, help="the hub's event log (SQLite), read only")
    ap.add_argument("--listen", required=True, metavar="HOST:PORT")
    ap.add_argument("--title", default="")
    ap.add_argument("--screen-token-file", help="the event's screen token (screens.py): the projector's place")
    ap.add_argument("--event", help="the event folder: its other rounds shown with ?round=NAME")
    ap.add_argument("--round", help="the live round's name (an event of several)")
    ap.add_argument("--language-of", metavar="DIR", help="the event folder whose language (DIR/language) the "
                                                        "pages speak, read at each page; none: English")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    lowest_priority()
    line = sys.stdin.buffer.readline()
    if not line:
        return 0                                  # the hub went before it said what to serve
    others = None
    try:
        host, port = parse_listen(args.listen) or ("127.0.0.1", 0)
        followed = FollowedLog(args.log)
        service = HubService(followed, BoardKeys(), competition_of(json.loads(line)))   # type: ignore[arg-type]
        others = EventRounds(args.event, args.round) if args.event else None
        pages = HallPages(service, args.title, screen_token=read_token(args.screen_token_file), rounds=others,
                          language=language_of(args.language_of),
                          site_url=(lambda: site_url(args.event)) if args.event else None)
        try:
            server = WebServer(build_hall_app(pages.routes()), host, port, privileged=pages.privileged).start()
        except OSError as e:
            raise ValueError(f"cannot listen on {host}:{port} ({e.strerror or e}); choose another "
                             f"port with --hall-listen HOST:PORT") from None
    except Exception as e:            # what it says is what the organizer reads
        print(f"error: {e}", flush=True)
        return 2
    print("ready %s %d" % server.address, flush=True)
    heard, gone = [time.monotonic()], threading.Event()
    threading.Thread(target=_heard, args=(sys.stdin.fileno(), heard, gone), daemon=True).start()
    failing = ""                        # the read's error now (logged once, not 20 times a second)
    others_at = time.monotonic()
    try:
        while not gone.wait(FOLLOW_S):
            if time.monotonic() - heard[0] > HUB_SILENT_S:
                print(f"the hub has not been heard for {HUB_SILENT_S:g} s: the hall's pages stop",
                      file=sys.stderr, flush=True)
                break
            try:
                service.catch_up()
                if failing:
                    log.warning("the hub's log is read again")
                failing = ""
            except Exception as e:      # never let one bad read end the pages; the next tick reads again
                if repr(e) != failing:
                    log.exception("reading the hub's log")
                failing = repr(e)
            if others is not None and time.monotonic() - others_at >= OTHERS_S:
                others.follow()         # the other rounds a page asked for (each logs its own errors)
                others_at = time.monotonic()
    finally:
        server.stop()
        pages.close()
        if others is not None:
            others.close()
        followed.close()
    return 0


# ------------------------------------------------------------ the hub's side

class HallProcess:
    """The hall's pages' process, as the hub starts, watches and stops it."""

    def __init__(self, log_path: Path, event: dict, listen: tuple[str, int], title: str,
                 errors: Path, screen_token_file: Path | None = None, folder: Path | None = None,
                 language_of: Path | None = None) -> None:
        """event: the description (as /event); listen: (host, port; 0: a
        free one); errors: the file its stderr goes to; screen_token_file:
        the event's screen token (web/screens.py); folder: the event folder
        (its other rounds on the pages; event's "round": the live one)."""
        self._args = [sys.executable, "-m", "tabletimer.hub.web.hall_process", "--log", str(log_path),
                      "--title", title]
        if screen_token_file is not None:
            self._args += ["--screen-token-file", str(screen_token_file)]
        if language_of is not None:
            self._args += ["--language-of", str(language_of)]
        if folder is not None:
            self._args += ["--event", str(folder)] + (["--round", event["round"]] if event.get("round") else [])
        self._event = (json.dumps(event) + "\n").encode()
        self.host, self.port = listen
        self._errors = errors
        self.proc: subprocess.Popen | None = None
        self.restarts = 0
        self._died_at: float | None = None
        self._lock = threading.Lock()
        self._stopping = threading.Event()

    def url(self) -> str:
        from .server import base_url
        return base_url(self.host, self.port)

    def start(self, timeout: float = READY_S) -> "HallProcess":
        """Start it and wait for its ready (RuntimeError with what it said
        if it does not start)."""
        from ..event.folder.private_file import append_private
        with append_private(self._errors) as err:          # client addresses: the owner's only
            proc = subprocess.Popen([*self._args, "--listen", f"{self.host}:{self.port}"],
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err,
                                    start_new_session=True)   # a terminal's Ctrl-C reaches the hub only
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(self._event)
            proc.stdin.flush()
            answer = _first_line(proc, timeout)
        except BaseException:
            proc.kill()
            proc.wait(5)
            raise
        words = answer.split()
        if words[:1] != ["ready"] or len(words) != 3:
            proc.kill()
            proc.wait(5)
            why = answer[len("error: "):] if answer.startswith("error: ") else (
                answer or f"it ended without a word (see {self._errors})")
            raise RuntimeError(f"the hall's pages did not start: {why}")
        self.host, self.port = words[1], int(words[2])
        self.proc = proc
        threading.Thread(target=self._beat, args=(proc,), name="hall-heartbeat", daemon=True).start()
        return self

    def _beat(self, proc: subprocess.Popen) -> None:
        while not self._stopping.wait(HEARTBEAT_S) and proc.poll() is None:
            try:
                proc.stdin.write(b".")           # type: ignore[union-attr]
                proc.stdin.flush()               # type: ignore[union-attr]
            except (OSError, ValueError):         # it has gone: check() says so
                return

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def check(self) -> str | None:
        """From the hub's tick: if the process has died, start it again (on
        the same port) and say what happened; None while it runs."""
        with self._lock:
            if self._stopping.is_set() or self.proc is None or self.proc.poll() is None:
                return None
            now = time.monotonic()
            if self._died_at is None:
                self._died_at = now
            if now - self._died_at < RESTART_AFTER_S * min(self.restarts, 1):
                return None                       # the second time on: a pause first
            code = self.proc.returncode
            _close_pipes(self.proc)
            try:
                self.start()
            except (RuntimeError, OSError) as e:
                self._died_at = now
                self.restarts += 1
                return f"the hall's pages stopped (exit {code}) and could not start again: {e}"
            self._died_at = None
            self.restarts += 1
            return f"the hall's pages stopped (exit {code}); started again at {self.url()}"

    def stop(self, timeout: float = 5.0) -> None:
        """Close its stdin (it stops its server and ends), kill it if it does not."""
        self._stopping.set()
        proc = self.proc
        if proc is None:
            return
        _close_pipes(proc)                      # its stdin closed: it ends
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)

    # -------------------------------------------------------- on the hub's web server
    def redirect_routes(self, paths) -> list[Route]:
        """The hall's paths on the hub's web server: 307 to the same path on
        the hall's port, at the host name the phone used to reach the hub."""
        async def redirect(request: Request) -> Response:
            if not self.alive():
                return JSONResponse({"error": "the hall's pages are starting again: try in a few seconds"},
                                    status_code=503, headers={"Retry-After": "5"})
            from .server import url_of
            query = f"?{request.url.query}" if request.url.query else ""
            base = url_of(request.url.hostname or self.host, self.port, request.url.scheme)
            return RedirectResponse(f"{base}{request.url.path}{query}", status_code=307,
                                    headers={"Cache-Control": "no-store"})
        return [Route(p, redirect, methods=["GET"]) for p in paths]


def _close_pipes(proc: subprocess.Popen) -> None:
    for pipe in (proc.stdin, proc.stdout):
        if pipe is not None:
            try:
                pipe.close()
            except OSError:                      # a heartbeat it never read: broken pipe
                pass


def _first_line(proc: subprocess.Popen, timeout: float) -> str:
    """The process's first line on stdout, within timeout (or what it said
    before it ended)."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    data = b""
    deadline = time.monotonic() + timeout
    with selectors.DefaultSelector() as sel:
        sel.register(fd, selectors.EVENT_READ)
        while b"\n" not in data:
            left = deadline - time.monotonic()
            if left <= 0:
                raise RuntimeError(f"the hall's pages did not start within {timeout:g} s")
            if not sel.select(left):
                continue
            chunk = os.read(fd, 4096)
            if not chunk:
                break
            data += chunk
    return data.decode("utf-8", "replace").split("\n", 1)[0].strip()


if __name__ == "__main__":
    sys.exit(serve_hall())
