"""An event folder's log as the tests read and write it: every stored row,
in order (the store opened, read and closed: another process may be writing
it); desk actions recorded as `tabletimer act` records them."""

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


def record(hall: Path, name: str, actions, now: int) -> None:
    """(action, payload) pairs recorded in round name's log (of event folder
    hall) as `tabletimer act --round NAME` records them, at hub time now."""
    from clocks import FixedClock
    from tabletimer.hub.core.service import HubService
    from tabletimer.hub.event.fold.competition import Competition
    from tabletimer.hub.event.folder import event_folder
    from tabletimer.hub.protocol.keys import BoardKeys

    ev = event_folder.load(hall, name)
    store = EventStore(ev.db)
    try:
        svc = HubService(store, BoardKeys(ev.keys_file), Competition(ev.format, ev.entrants, ev.stations),
                         FixedClock(now))
        for action, payload in actions:
            svc.act(action, payload, who="desk")
    finally:
        store.close()


def finish(entrant: str, at_ms: int, confirm: bool = True) -> list:
    """A finish of puzzle 1 by hand at at_ms, confirmed unless confirm is False."""
    return [("press", {"entrant": entrant, "puzzle": 1, "at": at_ms})] + (
        [("confirm", {"entrant": entrant, "puzzle": 1})] if confirm else [])
