"""Stored rows, told to the web layer's open pages: the service calls its
listeners from whichever thread stored the row (the MQTT thread, an HTTP
worker), with its lock held; this hands the news to the web server's event
loop without waiting, and the pages' streams wake and send the new state.

`version` counts the rows stored since the feed began; a stream remembers
the version it last sent and waits for another."""

from __future__ import annotations

import asyncio
import threading
from typing import Any


class ChangeFeed:
    def __init__(self, service: Any) -> None:
        self.version = 0
        self.last_ms: int | None = None     # when the last row told was received (hub ms)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._event: asyncio.Event | None = None
        self._lock = threading.Lock()
        self._service = service
        service.listeners.append(self._stored)

    def close(self) -> None:
        try:
            self._service.listeners.remove(self._stored)
        except ValueError:
            pass

    def _stored(self, row: dict) -> None:
        with self._lock:
            self.version += 1
            self.last_ms = row.get("received_ms", self.last_ms)
            loop = self._loop
        if loop is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(self._wake)
            except RuntimeError:           # the loop has just closed (the server stops)
                pass

    def _wake(self) -> None:
        if self._event is not None:
            self._event.set()
            self._event = asyncio.Event()

    async def wait(self, seen: int, timeout: float) -> int:
        """The version, once it is not `seen` (or after timeout seconds)."""
        if self._loop is None:
            with self._lock:
                self._loop = asyncio.get_running_loop()
        if self._event is None:
            self._event = asyncio.Event()
        event = self._event
        if self.version != seen:
            return self.version
        try:
            await asyncio.wait_for(event.wait(), timeout)
        except asyncio.TimeoutError:
            pass
        return self.version
