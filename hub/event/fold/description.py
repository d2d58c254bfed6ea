"""An event as the hub describes it to its other processes (the console API's
/event, the hall's pages' process): the event folder's definition files as
the hub loaded them, or the demo's format and arguments, and whether boards
that report get stations by themselves.  `competition_of` makes from one the
Competition the hub runs, loaded as the hub loaded it."""

from __future__ import annotations

import tempfile
from pathlib import Path

from ..folder import event_folder
from .competition import Competition


class DescriptionError(ValueError):
    """The description cannot be made into an event (the message says why)."""


def competition_of(event: dict) -> Competition:
    """The Competition of a description (DescriptionError if it is not one;
    FormatError / EventFolderError if its files do not load here)."""
    from ..folder.demo import demo_event

    files = event.get("files")
    if not isinstance(files, dict) or not files:
        raise DescriptionError("the hub's /event has no files")
    with tempfile.TemporaryDirectory(prefix="tabletimer-event-") as tmp:
        for name, text in files.items():
            if Path(name).name != name or name.startswith("."):
                raise DescriptionError(f"the hub's /event has a strange file name {name!r}")
            (Path(tmp) / name).write_text(text, encoding="utf-8")
        demo = event.get("demo")
        if demo:
            fmt, entrants, stations = demo_event(str(Path(tmp) / demo["format"]), demo["boards"],
                                                 demo["stations"], demo["speed"])
        else:
            ev = event_folder.load(tmp)
            fmt, entrants, stations = ev.format, ev.entrants, ev.stations
    return Competition(fmt, entrants, stations, auto_stations=bool(event.get("auto_stations")))
