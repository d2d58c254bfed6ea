"""An event folder's log as the tests read it: every stored row, in order
(the store opened, read and closed: another process may be writing it)."""

from __future__ import annotations

from pathlib import Path

from tabletimer.hub.event.log.store import EventStore


def rows(ev: Path) -> list[dict]:
    """The rows of ev's events.sqlite (ev: an event or round folder)."""
    store = EventStore(ev / "events.sqlite")
    try:
        return store.events()
    finally:
        store.close()
