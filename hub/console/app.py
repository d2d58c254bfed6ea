"""The organizer console (Textual): what the head referee sees and does
during a round, in the hub's own process.

One screen: a header (round clock, next signal, boards online, rejected
messages), the calls waiting for a referee, the standings, the hall (every
station's state), alerts and the event log with a filter.  Operator actions
are keys; each opens a small form whose input goes through
`HubService.act` (who = the operator name, why = the form's reason), so an
action from here is exactly one from `tabletimer act`: a row in the log.
The screens are screens.py, the forms forms.py, the drawing view.py; this
module is the app that holds them and the service.

Threads: the service tells RowApplied (core/changes.py) from the MQTT thread
with its lock held, so the subscriber here only posts a message (never waits for the UI);
the screen redraws from the service's snapshot (core/snapshot.py), at most
four times a second and whenever a stored event arrives.
"""

from __future__ import annotations

import gc
import threading
from typing import Callable

from textual.app import App
from textual.binding import Binding
from textual.css.query import NoMatches
from textual.message import Message

from .forms import ActionForm, action_forms, before_start_forms
from .screens import ConfirmScreen, FormScreen, MainScreen, NameScreen, ResultScreen
from .table import LiveTable
from .view import MainView
from ..fleet.hall_check import checklist
from ..core.changes import RowApplied, Subscription
from ..core.service import HubService
from ..core.snapshot import Snapshot

# the screens and forms are in screens.py and forms.py, the drawing in view.py; the screens'
# names here too, for those who drive the console
__all__ = ["ConfirmScreen", "ConsoleApp", "FormScreen", "MainScreen", "NameScreen", "ResultScreen", "run_console"]

DEFAULT_WHO = "head referee"
REFRESH_S = 0.25


class ConsoleApp(App):
    """The head referee's console for one HubService."""

    CSS = """
    #header { height: 3; background: $boost; padding: 0 1; }
    #body { height: 1fr; }
    #left { width: 3fr; }
    #right { width: 2fr; }
    .title { text-style: bold; color: $accent; }
    #calls { height: 9; }
    #standings { height: 1fr; }
    #hall { height: 1fr; }
    #alerts-box { height: 6; }
    #logbox { height: 12; }
    #logbar { height: 1; }
    #filter { height: 1; border: none; width: 1fr; padding: 0; }
    #log { height: 1fr; }
    FormScreen, ConfirmScreen, NameScreen, ResultScreen { align: center middle; }
    #result-box { height: auto; max-height: 24; }
    #dialog { width: 72; height: auto; max-height: 90%; border: thick $primary; background: $surface;
              padding: 1 2; }
    #dialog Input { margin-bottom: 0; }
    #dialog Label { width: 100%; }      /* a long question or label wraps, not cut at the edge */
    #error { color: $error; width: 100%; }
    .note { color: $text-muted; }
    #buttons { height: auto; margin-top: 1; }
    #buttons Button { margin-right: 2; }
    """
    BINDINGS = [Binding("ctrl+c", "quit", "quit", priority=True, show=False)]

    class Stored(Message):
        """A stored event (from any thread)."""

    def __init__(self, service: HubService, title: str, stop_event: threading.Event | None = None,
                 tick: Callable[[], None] | None = None, who: str = DEFAULT_WHO, hub_fw: str | None = None) -> None:
        super().__init__()
        self.service = service
        self.hub_fw = hub_fw                    # the firmware this hub flashes: an older board's is a note
        self.event_title = title
        self.stop_event = stop_event
        self.tick_fn = tick
        self.who = who
        self.snap: Snapshot | None = None
        self._pending = threading.Event()       # a Stored message or a redraw is on its way
        self._dirty = False                     # stored events not drawn yet
        self._view = MainView()                 # what the main screen last showed
        self._listening: Subscription | None = None

    # ---------------------------------------------------------- life cycle
    def on_mount(self) -> None:
        self.title = self.event_title
        self.push_screen(MainScreen())
        self._listening = self.service.changes.subscribe(RowApplied, lambda n: self._on_stored(n.row))
        self.refresh_view()
        self.set_interval(REFRESH_S, self._on_timer)
        # what exists now (the service's state, Textual's widgets) lives as
        # long as the console: keep it out of the collector's full passes,
        # which otherwise stall a frame for ~80-100 ms every few seconds
        self.call_after_refresh(gc.freeze)

    def on_unmount(self) -> None:
        self._stop_listening()
        gc.unfreeze()             # back to the collector (a test runs many consoles in one process)

    def _stop_listening(self) -> None:
        if self._listening:
            self._listening.cancel()
            self._listening = None

    def _on_stored(self, ev: dict) -> None:
        """Called by the service, possibly in another thread with its lock
        held: never wait for the UI here (it may be waiting for that lock)."""
        self._dirty = True
        if not self._pending.is_set():
            self._pending.set()
            self.post_message(self.Stored())

    def on_console_app_stored(self, _msg: Stored) -> None:
        # draw, then take the next events only once that is on screen: a
        # burst is drawn once per frame, not once per event (every draw
        # costs ~10 ms at 300 stations, and a frame waits for them all)
        self._dirty = False
        self.refresh_view()
        if not self.call_after_refresh(self._painted):     # closing: take events as they come
            self._pending.clear()

    def _painted(self) -> None:
        self._pending.clear()
        if self._dirty:           # events came while drawing (a second Stored is harmless)
            self._pending.set()
            self.post_message(self.Stored())

    def _on_timer(self) -> None:
        if self.stop_event is not None and self.stop_event.is_set():
            self.exit()
            return
        if self.tick_fn is not None:
            try:
                self.tick_fn()
            except Exception as e:       # keep the console up; say what failed
                self.service.note(f"console: tick failed: {e!r}")
        self.refresh_view()

    # ---------------------------------------------------------- drawing
    def main(self) -> MainScreen | None:
        for s in self.screen_stack:
            if isinstance(s, MainScreen):
                return s
        return None

    def refresh_view(self) -> None:
        main = self.main()
        if main is None or not main.is_mounted:
            return
        try:
            self._draw(main)
        except NoMatches:            # composing or closing
            pass

    def _draw(self, main: MainScreen) -> None:
        s = self.snap = self.service.snapshot()
        self._view.draw(main, s, self.event_title, self.who, self.service.competition.format.resolution_ms)

    # ---------------------------------------------------------- actions
    def selected(self, table_id: str) -> str | None:
        main = self.main()
        return main.query_one(f"#{table_id}", LiveTable).selected_key() if main else None

    def selected_entrant(self) -> str:
        """The entrant of the focused table's selected row (else of the
        selected call), to fill in forms."""
        main = self.main()
        if main is None:
            return ""
        focused = self.focused.id if self.focused is not None else None
        if focused == "standings":
            return self.selected("standings") or ""
        if focused == "hall":
            key = self.selected("hall")
            row = next((h for h in (self.snap.hall if self.snap else [])
                        if key == f"{h.board}#{h.button}"), None)
            return row.entrant if row and row.entrant != "-" else ""
        pid = self.selected("calls")
        call = next((c for c in (self.snap.calls if self.snap else []) if c[1] == pid), None)
        return call[2] if call else ""

    def selected_board(self) -> str:
        key = self.selected("hall")
        return key.split("#")[0] if key else ""

    def entrant_id(self, text: str) -> str:
        """An entrant by id, or by its name (case-insensitive) when unique."""
        t = text.strip()
        comp = self.service.competition
        if any(e.id == t for e in comp.entrants):
            return t
        by_name = [e.id for e in comp.entrants if e.name and e.name.lower() == t.lower()]
        if len(by_name) == 1:
            return by_name[0]
        if not t:
            raise ValueError("entrant is needed")
        return t             # check_action names it: "no entrant ..."

    def check(self, action: str, payload: dict) -> None:
        self.service.check_action(action, payload, who=self.who)

    def perform(self, action: str, payload: dict, why: str) -> dict:
        row = self.service.act(action, payload, who=self.who, why=why)
        self.notify(f"recorded: {action}", timeout=3)
        self.refresh_view()
        return row

    def describe(self, action: str, payload: dict) -> str:
        names = self.snap.names if self.snap else {}
        shown = ", ".join(f"{k}={names.get(v, v) if k == 'entrant' else v}" for k, v in payload.items()
                          if v is not None and k != "seen")
        changes = "".join(f"\nThis {c}." for c in self.service.consequences(action, payload))
        return (f"Record {action.upper()} ({shown}) as {self.who}?{changes}\n"
                "It goes into the log; undo only by a new entry.")

    def ask_who(self) -> None:
        def done(name: str | None) -> None:
            if name:
                self.who = name
                self.refresh_view()
        self.push_screen(NameScreen(self.who), done)

    def open_form(self, key: str) -> None:
        form = self.forms().get(key)
        if form is None:
            return
        if key in ("confirm", "void") and not self.selected("calls"):
            self.notify("select a waiting call first (the calls table)", severity="warning")
            return
        self.push_screen(FormScreen(form, self), lambda _ok: self.refresh_view())

    def forms(self) -> dict[str, ActionForm]:
        return action_forms(self) | before_start_forms(self)

    def hall_check_text(self) -> str:
        """The latest hall check as its checklist (judged by the limits it
        began with), or how to begin one."""
        check = self.service.hall_check(self.hub_fw)
        if check.began_ms is None:
            return ("No hall check begun. `tabletimer check-hall DIR` begins one (on any laptop with the "
                    "event folder, the hub running): then press every button of every table once.")
        return checklist(check, self.event_title)


def run_console(service: HubService, title: str, stop_event: threading.Event | None = None,
                tick: Callable[[], None] | None = None, *, headless: bool = False,
                hub_fw: str | None = None) -> None:
    """Run the console in the foreground until the operator quits (q,
    Ctrl-C) or stop_event is set; tick() is called every 250 ms.
    headless: no terminal (tests).  hub_fw: the firmware version the hub
    flashes (the hall check's screen judges the boards' against it)."""
    app = ConsoleApp(service, title, stop_event, tick, hub_fw=hub_fw)
    try:
        app.run(headless=headless)
    finally:
        app._stop_listening()
