"""A round's event log read from its folder and folded: the competition as
it stands, for what the outputs print (nothing is added to the log)."""

from __future__ import annotations

from ..event.fold.competition import Competition
from ..event.folder import event_folder
from ..event.log.store import EventStore


def folded_log(ev: event_folder.EventFolder) -> Competition:
    """The round's log (its file there) folded: the competition as it stands."""
    comp = Competition(ev.format, ev.entrants, ev.stations)
    store = EventStore(ev.db)
    try:
        for row in store.events():
            comp.apply(row)
    finally:
        store.close()
    return comp
