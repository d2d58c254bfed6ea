"""The public site published as the event goes (issue 49): the rounds read
(site_source: the running hub's live round, the others from their logs),
rendered (public_site.py) on a change, debounced, on a thread of its own,
and handed to the outbox (site_outbox.py), whose own thread sends them
(rclone_remote.py).  The hub's threads only set an event: nothing of the
hub waits on a rendering or on the internet.

    SitePublisher(SiteSource(folder, live), outbox).start()
    service.changes.subscribe(RowApplied, publisher.changed)

The outbox's state is written to DIR/publish-status.json (at most every
STATUS_S, and at each change of it) for `tabletimer publish DIR --status`;
`tabletimer publish DIR --all` while the hub runs leaves DIR/publish-all
(a token), which the publisher takes as "everything again"; the status
file's "all_done" names the token once the remote has every file of it."""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any, Callable

from ..event.folder import event_folder, rounds
from ..event.folder.site_address import site_url
from .public_site import RoundPage, render_site
from .round_views import EventRounds, RoundUnavailable, RoundView
from .site_outbox import Outbox, OutboxStatus, OutboxThread

DEBOUNCE_S = 1.0        # a change is published after this long (the changes meanwhile with it)
FRESH_S = 15.0          # rendered again after this long without a change (the round's time-up)
STATUS_S = 5.0          # the status file written at least this often while the hub runs
STATUS_FILE = "publish-status.json"
ALL_FILE = "publish-all"
log = logging.getLogger(__name__)


class SiteSource:
    """The event's rounds as the site shows them: live_view, the running
    hub's live round (a RoundView on its service); every other round (all
    of them without one: `tabletimer publish`) from its own log, read-only
    (round_views.EventRounds)."""

    def __init__(self, folder: str | Path, live: str | None = None, live_view: RoundView | None = None) -> None:
        self.folder = Path(folder)
        self.rounds = EventRounds(self.folder, live or rounds.live(self.folder))
        self.live_view = live_view

    @property
    def live(self) -> str:
        return self.rounds.live

    def title(self) -> str:
        return event_folder.event_title(self.folder)

    def pages(self) -> tuple[list[RoundPage], int]:
        """Every round that can be shown now, and the site's version (the live round's last row)."""
        self.rounds.follow()
        out, version = [], 0
        for name in self.rounds.names():
            try:
                view = self.live_view if self.live_view is not None and name == self.live \
                    else self.rounds.view(name)
            except RoundUnavailable as e:
                log.warning("the public site leaves round %s out: %s", name, e)
                continue
            shown = view.make()
            entrants = rounds.round_dir(self.folder, name) / "entrants.csv"
            try:
                hidden = event_folder.unpublished(entrants) if entrants.exists() else frozenset()
            except event_folder.EventFolderError as e:        # cannot read who opted out: nobody named
                log.warning("round %s's entrants.csv: %s: the site shows no names of it", name, e)
                hidden = frozenset(r["entrant"] for r in shown["rows"])
            out.append(RoundPage(name, shown, view.results(), hidden))
            if name == self.live:
                version = shown.get("row") or 0
        return out, version

    def language(self) -> str:
        """The event's language, read each time (`tabletimer language` may
        change it during the day); English when its file is not one the
        hub speaks (the hall's pages say so)."""
        try:
            return event_folder.event_language(self.folder)
        except event_folder.EventFolderError as e:
            log.warning("the public site speaks English: %s", e)
            return "en"

    def files(self, url: str | None = None) -> tuple[dict[str, bytes], int]:
        pages, version = self.pages()
        return render_site(self.title(), pages, self.live, version, url, lang=self.language()), version

    def close(self) -> None:
        self.rounds.close()


def write_status(folder: str | Path, status: OutboxStatus, remote: str, stopped: bool = False,
                 all_done: str | None = None) -> None:
    """DIR/publish-status.json, whole (a reader never sees half of it);
    stopped: the hub's last (it publishes no more); all_done: the token of
    the last `publish --all` whose files the remote has (request_all)."""
    path = Path(folder) / STATUS_FILE
    tmp = path.with_name(path.name + ".tmp")
    doc = {**asdict(status), "line": status.line(), "remote": remote, "written": time.time(), "pid": os.getpid(),
           "stopped": stopped, "all_done": all_done}
    tmp.write_text(json.dumps(doc), encoding="utf-8")
    os.replace(tmp, path)


def read_status(folder: str | Path) -> dict | None:
    try:
        return json.loads((Path(folder) / STATUS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def request_all(folder: str | Path) -> str:
    """Ask the running hub for everything again; the request's token, which
    its status file's "all_done" names once the remote has every file."""
    token = f"{os.getpid()}-{time.time_ns()}"
    path = Path(folder) / ALL_FILE
    tmp = path.with_name(f"{ALL_FILE}.{token}.tmp")
    tmp.write_text(token + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return token


def take_request(folder: str | Path) -> str | None:
    """The token of a `publish --all` waiting (the file taken away), or None."""
    path = Path(folder) / ALL_FILE
    taken = path.with_name(ALL_FILE + ".taken")
    try:
        os.replace(path, taken)          # at once: a request written meanwhile is the next one's
        token = taken.read_text(encoding="utf-8").strip()
        os.remove(taken)
    except OSError:
        return None
    return token or "all"


class SitePublisher:
    def __init__(self, source: SiteSource, outbox: Outbox, remote: str, url: str | None = None,
                 debounce_s: float = DEBOUNCE_S, fresh_s: float = FRESH_S,
                 say: Callable[[str], None] = lambda text: None) -> None:
        """url: the followers' address the pages carry; None: DIR/site-url's,
        read at each rendering (`publish --url` while the hub runs).  say: a
        line for the operator when the publishing's state changes (published
        again after a failure, a failure)."""
        self.source, self.outbox, self.remote, self.url = source, outbox, remote, url
        self._fixed_url = url
        self.debounce_s, self.fresh_s, self.say = debounce_s, fresh_s, say
        self.sender = OutboxThread(outbox)
        self._dirty = threading.Event()
        self._stop = threading.Event()
        self._force = False
        self._asked: str | None = None                      # a `publish --all` to render for
        self._all_sent: tuple[str, int] | None = None       # ... rendered: its token, the outbox's put
        self.all_done: str | None = None                    # ... whose files the remote has: its token
        self._thread = threading.Thread(target=self._run, name="site-publisher", daemon=True)
        self.renders = 0
        self.render_s = 0.0
        self._said: str | None = None
        self._said_kind: str | None = None    # the failure last said (None: healthy)
        self._status_at = 0.0

    def start(self, everything: bool = True) -> SitePublisher:
        """Everything is sent at the start (the remote may have an old site)."""
        self._force = everything
        self._dirty.set()
        self.sender.start()
        self._thread.start()
        return self

    def changed(self, _note: Any = None) -> None:
        """A row was stored (a RowApplied subscriber: only an event is set)."""
        self._dirty.set()

    def republish(self, token: str | None = None) -> None:
        """Everything again (`publish --all`; token: its request's, named in
        the status file's "all_done" once the remote has every file)."""
        self._asked = token
        self._force = True
        self._dirty.set()

    def status(self) -> OutboxStatus:
        return self.outbox.status()

    def line(self) -> str:
        return f"public site ({self.remote}): {self.outbox.status().line()}"

    def status_line(self) -> tuple[str, bool]:
        """The console header's line and whether all is well (a Queries status source)."""
        status = self.outbox.status()
        return f"public site: {status.line()}", status.ok

    def _run(self) -> None:
        while not self._stop.is_set():
            changed = self._dirty.wait(self.fresh_s)
            if self._stop.is_set():
                return
            if changed and self._stop.wait(self.debounce_s):     # the changes meanwhile come with it
                return
            self._dirty.clear()
            force, self._force = self._force, False
            try:
                self.render(force)
            except Exception:                      # a rendering that fails must not end the publishing
                log.exception("rendering the public site")

    def render(self, force: bool = False) -> int:
        """Render now and hand the files to the outbox; how many wait."""
        began = time.perf_counter()
        self.url = self._fixed_url or site_url(self.source.folder)     # `publish --url` meanwhile: the next page
        files, version = self.source.files(self.url)
        self.renders += 1
        self.render_s += time.perf_counter() - began
        waiting = self.outbox.put(files, version, force=force)
        asked, self._asked = (self._asked, None) if force else (None, self._asked)
        if asked is not None:
            self._all_sent = (asked, self.outbox.last_put())
        self.sender.kick()
        return waiting

    def check(self) -> str | None:
        """From the hub's main loop: the status file kept, a `publish --all`
        taken, and the line to say when the publishing's health changed."""
        folder = self.source.folder
        token = take_request(folder)
        if token is not None:
            self.republish(token)
        status = self.outbox.status()
        sent, done = self._all_sent, False
        if sent is not None and status.taken_put >= sent[1]:
            self.all_done, self._all_sent, done = sent[0], None, True
        now = time.monotonic()
        if now - self._status_at >= STATUS_S or status.line() != self._said or done:
            self._status_at = now
            try:
                write_status(folder, status, self.remote, all_done=self.all_done)
            except OSError:
                pass
        said = None
        key = status.kind or ""
        if key != (self._said_kind or "") and not status.sending:
            said = f"public site: {status.line()}" if status.kind else (
                f"public site published again: {status.line()}" if self._said_kind else None)
            self._said_kind = status.kind
        self._said = status.line()
        return said

    def alerts(self) -> list[str]:
        """An alert while the site cannot be published (a Queries source)."""
        status = self.outbox.status()
        return [] if status.ok else [f"PUBLIC SITE: {status.line()}"]

    def stop(self) -> None:
        self._stop.set()
        self._dirty.set()
        if self._thread.is_alive():
            self._thread.join(10)
        self.sender.stop()
        try:
            write_status(self.source.folder, self.outbox.status(), self.remote, stopped=True, all_done=self.all_done)
        except OSError:
            pass
