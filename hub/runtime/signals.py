"""A running hub's signals: SIGTERM (kill) and SIGHUP (a closed terminal)
stop it from the start, Ctrl-C (SIGINT) too once it serves; a stop request,
never an exception between two bytecodes; and the open-files room it asks
for its connections."""

from __future__ import annotations

import signal
import threading

from ..broker.open_files import room_for


def room_for_connections(want: int) -> int | None:
    """Raise this process's open-files limit towards want (broker/open_files.py);
    the soft limit now (None: no such limit here, Windows).  What does not
    fit is refused where it is opened (the web server answers 503)."""
    return room_for(want)


def stop_on_signals(stop: threading.Event, signals: tuple = (signal.SIGTERM, signal.SIGHUP),
                    said: list | None = None) -> None:
    """SIGTERM (kill) and SIGHUP (a closed terminal), or the signals given
    (a serving hub's: SIGINT too), set stop, from a thread of their own; the
    signal's name is appended to said (why it stopped).  A handler runs on
    the main thread between two of its bytecodes, and the main thread spends
    its time in stop.wait(): there it may hold the Event's lock (re-taken as
    a wait times out), and a stop.set() in the handler would wait for that
    lock forever.  A hub did so once in a test under load (2026-12-04:
    SIGTERM ignored for an hour; py-spy showed the handler's Event.set
    inside Condition.wait).  Nor does a handler raise: an exception raised
    between two bytecodes of whatever the main thread runs (a
    KeyboardInterrupt) leaves that half done."""
    def handler(signum, frame) -> None:
        if said is not None and not said:
            said.append(signal.Signals(signum).name)
        if not stop.is_set():                 # (is_set takes no lock)
            threading.Thread(target=stop.set, name="stop-on-signal", daemon=True).start()
    for sig in signals:
        signal.signal(sig, handler)


# a hub's last line at start off a terminal: from then on a signal is a stop request
SERVING = "serving: Ctrl-C (SIGINT), SIGTERM or SIGHUP stops the hub in order"


def serving(stop: threading.Event, said: list, on_terminal: bool) -> None:
    """A hub that has started: Ctrl-C (SIGINT) sets stop as SIGTERM and
    SIGHUP do (stop_on_signals), and the hub stops in order at its next
    tick; off a terminal, SERVING said.  A KeyboardInterrupt raised between
    two bytecodes of whatever the main thread ran (a tick's catch-up, a log
    transaction's end, a hall process started again) left that half done,
    and the shutdown after it could wait on it (issue 45, item 16: a hub
    started with SIGINT ignored, stopped by a SIGINT, failed once in a full
    test run)."""
    stop_on_signals(stop, (signal.SIGINT, signal.SIGTERM, signal.SIGHUP), said=said)
    if not on_terminal:
        print(SERVING, flush=True)
