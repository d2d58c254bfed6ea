"""The rounds the hall's pages show (hall_pages.py): the live one, the round
the hub runs, and with ?round=NAME any other round of the event folder
(event/folder/rounds.py), each from its own log, read-only.

`RoundView` is one round as the pages see it: a HubService following the
round's log, its change feed, and the one view every page open on the
round is sent (made once per change), titled as the hub titles the live
round ("Title — NAME").  `EventRounds` is the event's other rounds: one is
opened at the first page that asks for it (its description built from its
folder as the hub builds the live one's: console_api.folder_event,
event/fold/description.py), and followed from then on every OTHERS_S (a board's
journal press of an earlier round lands in that round's log).  A round
that has not started may have no log yet: it shows "not started" and its
entrants, and is read once the log is there."""

from __future__ import annotations

import html
import logging
import threading
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ..protocol.keys import BoardKeys
from ..core.service import HubService
from ..event.folder import rounds
from ..event.folder.event_folder import event_title
from ..event.fold.description import competition_of
from ..event.log.followed_log import FollowedLog
from ..event.log.rows import RowKind, kind_of
from .changes import ChangeFeed, SharedView
from .console_api import folder_event
from .draw_view import draw_view
from .hall_view import hall_view
from ..outputs.advancement_outlook import AdvanceOutlook
from ..outputs.result_marks import result_marks

FRESH_S = 5.0        # a view made again after this long without a change (the clock-driven parts)
OTHERS_S = 1.0       # the other rounds' logs read this often (the live one's: hall_process.FOLLOW_S)
NAMES_S = 2.0        # the folder's rounds read again at most this often (for a name not known)
RETRY_S = 5.0        # a round whose files did not load is tried again after this long
log = logging.getLogger(__name__)


def hall_title(event: dict, format_title: str) -> str:
    """The pages' title of a round, from its description (as /event): the
    event's title (DIR/title, else the folder's name; the category is the
    format's title) and the round's name in an event of several."""
    title = event.get("title") or event.get("name") or format_title
    return f"{title} \u2014 {event['round']}" if event.get("round") else title


class RoundUnavailable(Exception):
    """A round of the event that cannot be shown now (its files do not load); the text is a page's."""


def _tables_members_last(comp: Any, now: int) -> tuple[dict[str, str], dict[str, list[str]], int]:
    """Entrant id -> its table's name, entrant id -> its members' names (the
    stations and entrants as the fold leaves them), the last row's id."""
    comp.facts()            # folded up to the last row: its replacements given
    return ({s.entrant: s.table for s in reversed(comp.stations)},
            {e.id: [m.name for m in e.members] for e in comp.entrants}, comp.last_row_id())


def _offsets(comp: Any, now: int) -> dict[str, int]:
    """Entrant id -> its start offset (a format with start offsets; else none)."""
    return {e.id: comp.offset_of(e.id) for e in comp.entrants} if comp.format.start_offsets else {}


class DrawLog:
    """A round's team draws as its log holds them, for the /draw page
    (draw_view.py): the log's rows stored since read at each call, its
    `draw` rows kept, and whether a round start is recorded.  Apart from
    the round's view: a round just drawn and not yet seated (its stations
    name the entrants before the draw) shows its draw all the same."""

    def __init__(self, store: Any, title: str) -> None:
        """store: the round's log (an EventStore, or a FollowedLog that may wait for it)."""
        self.store, self.title = store, title
        self._draws: list[dict] = []
        self._started = False
        self._after = 0
        self._lock = threading.Lock()

    def view(self) -> dict:
        """The page's data (a worker thread's: it reads the log)."""
        with self._lock:
            look = getattr(self.store, "look", None)
            if look is None or look():
                new = self.store.events(after=self._after)
                if new:
                    self._after = new[-1]["id"]
                    kinds = [(r, kind_of(r)) for r in new]
                    self._draws += [r for r, k in kinds if k is RowKind.OP_DRAW]
                    self._started = self._started or any(k is RowKind.OP_ROUND_START for _, k in kinds)
            return draw_view(list(self._draws), self.title, self._started)


class RoundView:
    def __init__(self, service: Any, title: str = "", name: str | None = None,
                 outlook: AdvanceOutlook | None = None) -> None:
        """service: a HubService on the round's log; name: the round's (None: the only one);
        outlook: the round's advancement marks for a later round it feeds (None: none shown)."""
        self.service = service
        self.name = name
        self.outlook = outlook
        self.title = title or service.competition.format.title
        self.feed = ChangeFeed(service)
        # one view for every page, made again at a change, or after FRESH_S for the
        # clock-driven parts (running -> unfinished at time-up change without a row)
        self.view = SharedView(self.feed, None, self.make, fresh_s=FRESH_S)
        self.draws = DrawLog(service.store, self.title)
        last = service.read(lambda comp, now: comp.last_row_id())
        if last:
            rows = service.store.events(after=last - 1)
            self.feed.last_ms = rows[-1]["received_ms"] if rows else None

    def make(self) -> dict:
        snap = self.service.snapshot()
        # the tables as the fold has them now: a replacement's station is the new entrant's (the
        # absent one keeps none), an entrant the replacement added has its members
        tables, members, last = self.service.read(_tables_members_last)
        fmt = self.service.competition.format
        ahead = None
        if self.outlook is not None:        # who advances to the round this one feeds (in this worker thread)
            offsets = self.service.read(_offsets)
            ahead = self.outlook.outlook(snap.standings, fmt.order, snap.start, snap.now, offsets)
        return hall_view(snap, fmt, self.title, tables, members, last, self.feed.last_ms, ahead)

    def results(self) -> tuple:
        """(format, standings, last change, entrants, start, time left, last row): the results sheet's."""
        svc = self.service
        comp = svc.competition
        row = svc.read(lambda comp, now: comp.last_row_id())   # before the snapshot: never newer than it
        snap = svc.snapshot()
        left = snap.end - snap.now if snap.start is not None and snap.end is not None and snap.now < snap.end else None
        changed = self.feed.last_ms
        when = datetime.fromtimestamp((changed or snap.now) / 1000, timezone.utc).astimezone()
        marks = svc.read(lambda comp, now: result_marks(comp))
        return comp.format, snap.standings, when, comp.entrants, snap.start, left, row, marks

    def follow(self) -> None:
        """The rows the hub stored since (a round's log made since: opened)."""
        store = self.service.store
        if not store.there:
            if not store.look():
                return
            # nothing was applied before: the round's rows are checked against its own event id,
            # as the hub checks them (a press of another event's schedule is flagged)
            self.service.log_opened()
        self.service.catch_up()

    def close(self) -> None:
        self.feed.close()


class EventRounds:
    """The event folder's rounds besides the live one, as the hall's pages open them."""

    def __init__(self, folder: str | Path, live: str | None, clock=time.monotonic) -> None:
        """live: the round the hub runs (None: the folder's only one)."""
        self.folder = Path(folder)
        self._clock = clock
        self._names = rounds.names(self.folder)
        self._read_at = clock()
        self.live = live or (self._names[0] if self._names else rounds.MAIN)
        self._open: dict[str, RoundView] = {}
        self._failed: dict[str, tuple[float, str]] = {}      # name -> (when, why)
        self._said: dict[str, str] = {}                      # name -> the follow error logged
        self._draw_logs: dict[str, DrawLog] = {}             # name -> its draws (the /draw page)
        self._lock = threading.Lock()

    def names(self) -> list[str]:
        return list(self._names)

    def known(self, name: str) -> bool:
        """Is name one of the event's rounds (the folder read again, at most
        every NAMES_S, for a name not known: a round added meanwhile)?"""
        if name in self._names:
            return True
        try:
            rounds.check_name(name)
        except rounds.RoundError:
            return False                         # not a name: the folder is not read for it
        if self._clock() - self._read_at >= NAMES_S:
            self._names, self._read_at = rounds.names(self.folder), self._clock()
        return name in self._names

    def unknown(self, name: str) -> str:
        """What a page asking for a round that is not one is told."""
        return (f"this event has no round {name!r}: its rounds are {', '.join(self._names)} "
                f"(the live one: {self.live}); without ?round= the pages show the live one")

    def view(self, name: str) -> RoundView:
        """The round's view (a known round, not the live one), opened at the
        first call (it reads the round's whole log: call it from a worker
        thread); RoundUnavailable if its files do not load."""
        with self._lock:
            got = self._open.get(name)
            if got is not None:
                return got
            failed = self._failed.get(name)
            if failed is not None and self._clock() - failed[0] < RETRY_S:
                raise RoundUnavailable(failed[1])
            try:
                got = self._opened(name)
            except Exception as e:            # the why in the organizer's log, not on a public page
                log.warning("round %s cannot be shown on the hall's pages: %s", name, e)
                why = (f"round {name!r} cannot be shown now: its files do not load (the event folder's "
                       f"hall-pages.log says why); try again in a minute")
                self._failed[name] = (self._clock(), why)
                raise RoundUnavailable(why) from None
            self._failed.pop(name, None)
            self._open[name] = got
            return got

    def draw_log(self, name: str) -> DrawLog:
        """A known round's draws (not the live one's), its log followed from
        the first call (read once it is made)."""
        with self._lock:
            got = self._draw_logs.get(name)
            if got is None:
                title = f"{event_title(self.folder)} \u2014 {name}"
                got = self._draw_logs[name] = DrawLog(
                    FollowedLog(rounds.round_dir(self.folder, name) / "events.sqlite", wait=True), title)
            return got

    def _opened(self, name: str) -> RoundView:
        d = rounds.round_dir(self.folder, name)
        event = folder_event(self.folder, d, name)         # as the hub describes its live round
        comp = competition_of(event)
        followed = FollowedLog(d / "events.sqlite", wait=True)
        try:
            service = HubService(followed, BoardKeys(), comp)     # type: ignore[arg-type]
        except BaseException:
            followed.close()
            raise
        return RoundView(service, hall_title(event, comp.format.title), name, self.outlook(name))

    def outlook(self, name: str) -> AdvanceOutlook:
        """A round's advancement marks (made at its views: none when no round is fed by it)."""
        return AdvanceOutlook(self.folder, name, self._clock)

    def follow(self) -> None:
        """Read every opened round's new rows (from the hall process's loop);
        a failing read is logged once and tried again next time."""
        with self._lock:
            opened = list(self._open.items())
        for name, view in opened:
            try:
                view.follow()
                if self._said.pop(name, None):
                    log.warning("round %s's log is read again", name)
            except Exception as e:
                if self._said.get(name) != repr(e):
                    log.exception("reading round %s's log", name)
                self._said[name] = repr(e)

    def close(self) -> None:
        with self._lock:
            opened, self._open = list(self._open.values()), {}
            drawn, self._draw_logs = list(self._draw_logs.values()), {}
        for view in opened:
            view.close()
            view.service.store.close()
        for d in drawn:
            d.store.close()

    def picker(self, path: str, shown: str | None, keep: str = "") -> str:
        """Links to path for each round (the live one without ?round=, and
        marked), the one shown (None: the live one) marked as the page's;
        keep: more of the query for every link (screen=...).  '' for an
        event of one round."""
        if len(self._names) < 2:
            return ""
        shown = shown or self.live
        links = []
        for name in self._names:
            query = "&".join(q for q in ("" if name == self.live else f"round={quote(name)}", keep) if q)
            href = html.escape(path + ("?" + query if query else ""))
            current = ' aria-current="page"' if name == shown else ""
            live = ' <span class="live-mark">(live)</span>' if name == self.live else ""
            links.append(f'<a href="{href}" data-round="{html.escape(name)}"{current}>{html.escape(name)}</a>{live}')
        return '<nav class="rounds" id="rounds" aria-label="rounds">Rounds: ' + " · ".join(links) + "</nav>"
