"""Stored rows, told to the web layer's open pages: the service tells RowApplied
(core/changes.py) from whichever thread stored the row (the MQTT thread, an HTTP
worker), with its lock held; this hands the news to the web server's event
loop without waiting, and the pages' streams wake and send the new state.

`version` counts the rows stored since the feed began.  A row may also be
told by the keys of what it touches (`keys_of`: a table page's key, so that
a press at table 7 does not make the 59 other tables' pages compute a view
again); a row without keys (None) touches everything.  A stream remembers
the version it last sent (`version_of` its key) and waits for another.

`SharedView` makes a page's view once per change for all the pages open on
it; `stream_views` is a page's stream of them (the referees' and the hall's
pages alike)."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from typing import Any, AsyncIterator, Callable, Iterable

from ..core.changes import RowApplied

KeysOf = Callable[[dict], "Iterable[str] | None"]


class ChangeFeed:
    def __init__(self, service: Any, keys_of: KeysOf | None = None) -> None:
        self.version = 0
        self.last_ms: int | None = None     # when the last row told was received (hub ms)
        self._keys_of = keys_of
        self._versions: dict[str, int] = {}  # key -> the last row (version) that touched it
        self._all = 0                        # the last row that touched everything
        self._loop: asyncio.AbstractEventLoop | None = None
        self._events: dict[str | None, asyncio.Event] = {}   # key -> the event its streams wait on
        self._lock = threading.Lock()
        self._service = service
        self._sub = service.changes.subscribe(RowApplied, lambda n: self._stored(n.row))

    def close(self) -> None:
        self._sub.cancel()

    def version_of(self, key: str | None) -> int:
        """The last row that touched key (None: any row)."""
        if key is None:
            return self.version
        return max(self._versions.get(key, 0), self._all)

    def _stored(self, row: dict) -> None:
        keys = self._keys_of(row) if self._keys_of is not None else None
        with self._lock:
            self.version += 1
            if keys is None:
                self._all = self.version
            else:
                keys = list(keys)
                for k in keys:
                    self._versions[k] = self.version
            self.last_ms = row.get("received_ms", self.last_ms)
            loop = self._loop
        if loop is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(self._wake, keys)
            except RuntimeError:           # the loop has just closed (the server stops)
                pass

    def _wake(self, keys: list[str] | None) -> None:
        """Wake the streams waiting on what changed (and those waiting on
        any row): only the pages of the table a press was made at (60
        pages woken at every row of a burst cost the boards' acks more
        than the views did)."""
        wake = list(self._events) if keys is None else [None, *keys]
        for k in wake:
            event = self._events.pop(k, None)
            if event is not None:
                event.set()

    async def wait(self, seen: int, timeout: float, key: str | None = None) -> int:
        """version_of(key), once it is not `seen` (or after timeout seconds)."""
        if self._loop is None:
            with self._lock:
                self._loop = asyncio.get_running_loop()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            event = self._events.get(key)
            if event is None:
                event = self._events[key] = asyncio.Event()
            now = self.version_of(key)
            if now != seen:
                return now
            left = deadline - loop.time()
            if left <= 0:
                return now
            try:
                await asyncio.wait_for(event.wait(), left)
            except asyncio.TimeoutError:
                return self.version_of(key)


HEARTBEAT_S = 3.0         # a stream's ping at least this often (a page without one says it lost the hub)
REFRESH_S = 10.0          # and its view at least this often (the clock-driven parts: time-up)


class SharedView:
    """One page's view (of one key of the feed), made once per change for
    every page open on it and kept fresh_s at most: a burst of presses with
    60 pages open made a view per page per row, each under the service's
    lock, and the boards' acks waited.  make() runs in a worker thread;
    gate (shared by views) bounds how many are made at once."""

    def __init__(self, feed: ChangeFeed, key: str | None, make: Callable[[], "dict | None"],
                 fresh_s: float, gate: asyncio.Semaphore | None = None) -> None:
        self.feed, self.key, self._make, self.fresh_s = feed, key, make, fresh_s
        self._gate = gate
        self._lock = asyncio.Lock()
        self._made: tuple[int, float, dict | None, str] | None = None    # (version, when, view, JSON)

    async def get(self) -> tuple["dict | None", str]:
        """The view as of the feed's version now, and its JSON text."""
        from starlette.concurrency import run_in_threadpool

        async with self._lock:
            version = self.feed.version_of(self.key)
            made = self._made
            if made is not None and made[0] == version and time.monotonic() - made[1] < self.fresh_s:
                return made[2], made[3]
            if self._gate is None:
                view = await run_in_threadpool(self._make)
            else:
                async with self._gate:
                    view = await run_in_threadpool(self._make)
            text = json.dumps(view, separators=(",", ":")) if view is not None else ""
            self._made = (version, time.monotonic(), view, text)
            return view, text


async def stream_views(view: SharedView, seen: int, first: str, now_ms: Callable[[], int],
                       min_interval: float) -> AsyncIterator[str]:
    """A page's server-sent events: `first` (the view's JSON, made at
    version `seen`), then the view again whenever a row touches its key, at
    most every min_interval (the rows of a burst: one fuller view), and at
    least every REFRESH_S; between views a `ping` with the hub's time at
    least every HEARTBEAT_S.  Ends when the view is gone (None)."""
    feed, key = view.feed, view.key
    sent = time.monotonic()
    yield f"data: {first}\n\n"
    while True:
        version = await feed.wait(seen, HEARTBEAT_S, key)
        if version == seen and time.monotonic() - sent < REFRESH_S:
            yield f"event: ping\ndata: {now_ms()}\n\n"
            continue
        wait = sent + min_interval - time.monotonic()
        if wait > 0:
            await asyncio.sleep(wait)
        seen = feed.version_of(key)
        data, text = await view.get()
        if data is None:
            return
        sent = time.monotonic()
        yield f"data: {text}\n\n"
