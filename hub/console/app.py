"""The organizer console (Textual): what the head referee sees and does
during a round, in the hub's own process.

One screen: a header (round clock, next signal, boards online, rejected
messages), the calls waiting for a referee, the standings, the hall (every
station's state), alerts and the event log with a filter.  Operator actions
are keys; each opens a small form whose input goes through
`HubService.act` (who = the operator name, why = the form's reason), so an
action from here is exactly one from `tabletimer act`: a row in the log.

Threads: the service calls its listeners from the MQTT thread with its lock
held, so the listener here only posts a message (never waits for the UI);
the screen redraws from the service's snapshot (boards/snapshot.py), at most
four times a second and whenever a stored event arrives.
"""

from __future__ import annotations

import gc
import threading
from dataclasses import dataclass
from typing import Any, Callable

from rich.text import Text
from textual import on
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.css.query import NoMatches
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.screen import ModalScreen, Screen
from textual.widgets import Button, Footer, Input, Label, Log, Static

from .table import LiveTable
from ..rules.formats import fmt_duration
from ..boards.service import HubService, LogWriteFailed
from ..boards.snapshot import Snapshot
from ..rules.timetext import parse_clock_time, parse_duration_ms

CALL_LATE_MS = 60_000        # a call waiting longer than this is highlighted
DEFAULT_WHO = "head referee"
REFRESH_S = 0.25
LOG_LINES = 200             # event log lines the console shows



def round_clock(s: Snapshot) -> str:
    if s.start is None:
        return "round not started"
    if s.now < s.start:
        return f"starts in {fmt_duration(s.start - s.now)}"
    assert s.end is not None
    if s.now >= s.end:
        return f"TIME UP - elapsed {fmt_duration(s.now - s.start)} (limit {fmt_duration(s.end - s.start)})"
    return (f"elapsed {fmt_duration(s.now - s.start)}  remaining {fmt_duration(s.end - s.now)}"
            f"  (limit {fmt_duration(s.end - s.start)})")


# ------------------------------------------------------------------ parsing

def parse_int(text: str, what: str, default: int | None = None) -> int | None:
    t = text.strip()
    if not t:
        return default
    try:
        return int(t)
    except ValueError:
        raise ValueError(f"{what}: a whole number, not {text!r}") from None


# ------------------------------------------------------------------ forms

@dataclass
class FormField:
    name: str
    label: str
    default: str = ""
    placeholder: str = ""


@dataclass
class ActionForm:
    """One operator action: its fields, how they become (action, payload),
    and whether it must be confirmed before it is recorded."""
    key: str
    title: str
    fields: list[FormField]
    build: Callable[[dict[str, str]], tuple[str, dict]]
    destructive: bool = False
    why_required: bool = False
    note: str = ""


class ConfirmScreen(ModalScreen[bool]):
    BINDINGS = [Binding("escape", "no", "cancel"), Binding("y", "yes", "yes"), Binding("n", "no", "no")]

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(self.question, id="question")
            with Horizontal(id="buttons"):
                yield Button("Yes, record it (y)", variant="error", id="yes")
                yield Button("No (n)", id="no")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    @on(Button.Pressed, "#yes")
    def action_yes(self) -> None:
        self.dismiss(True)

    @on(Button.Pressed, "#no")
    def action_no(self) -> None:
        self.dismiss(False)


class FormScreen(ModalScreen[bool]):
    """A small form: Enter or OK records the action; a ValueError (from the
    parsing here or from HubService.act) is shown in the form and nothing
    is stored."""
    BINDINGS = [Binding("escape", "cancel", "cancel")]

    def __init__(self, form: ActionForm, console: "ConsoleApp") -> None:
        super().__init__()
        self.form = form
        self.console = console

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(f"[b]{self.form.title}[/b]  (as {self.console.who})", id="form-title")
            if self.form.note:
                yield Label(self.form.note, classes="note")
            for f in self.form.fields:
                yield Label(f.label)
                yield Input(value=f.default, placeholder=f.placeholder, id=f"f-{f.name}")
            yield Label("why" + (" (required)" if self.form.why_required else ""))
            yield Input(placeholder="reason, recorded with the action", id="f-why")
            yield Label("", id="error")
            with Horizontal(id="buttons"):
                yield Button("OK (Enter)", variant="primary", id="ok")
                yield Button("Cancel (Esc)", id="cancel")

    def on_mount(self) -> None:
        first = self.query(Input).first()
        first.focus()

    def values(self) -> dict[str, str]:
        return {i.id[2:]: i.value for i in self.query(Input) if i.id}

    def show_error(self, text: str) -> None:
        self.query_one("#error", Label).update(Text(text, style="bold red"))

    @on(Input.Submitted)
    @on(Button.Pressed, "#ok")
    def submit(self) -> None:
        vals = self.values()
        why = vals.pop("why", "").strip()
        try:
            if self.form.why_required and not why:
                raise ValueError(f"{self.form.key}: a reason (why) is needed")
            action, payload = self.form.build(vals)
            self.console.check(action, payload)
        except ValueError as e:
            self.show_error(str(e))
            return
        if not self.form.destructive and not self.console.service.consequences(action, payload):
            self._record(action, payload, why)
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self._record(action, payload, why)
        self.app.push_screen(ConfirmScreen(self.console.describe(action, payload)), answered)

    def _record(self, action: str, payload: dict, why: str) -> None:
        try:
            self.console.perform(action, payload, why)
        except (ValueError, LogWriteFailed) as e:     # LogWriteFailed: nothing was recorded
            self.show_error(str(e))
            return
        self.dismiss(True)

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(False)


class NameScreen(ModalScreen[str | None]):
    BINDINGS = [Binding("escape", "cancel", "cancel")]

    def __init__(self, who: str) -> None:
        super().__init__()
        self.who = who

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label("[b]Operator name[/b] (recorded as who with every action)")
            yield Input(value=self.who, id="f-who")
            yield Label("", id="error")

    @on(Input.Submitted)
    def submit(self, event: Input.Submitted) -> None:
        name = event.value.strip()
        if not name:
            self.query_one("#error", Label).update(Text("a name is needed", style="bold red"))
            return
        self.dismiss(name)

    def action_cancel(self) -> None:
        self.dismiss(None)


# ------------------------------------------------------------------ main screen

class MainScreen(Screen):
    BINDINGS = [
        Binding("s", "start", "start round"),
        Binding("c", "confirm", "confirm call"),
        Binding("v", "void", "void call"),
        Binding("p", "count", "pieces"),
        Binding("r", "offset", "restart clock"),
        Binding("n", "dns", "DNS"),
        Binding("x", "dq", "DQ"),
        Binding("i", "identify", "identify"),
        Binding("t", "correct", "correct time"),
        Binding("w", "who", "operator"),
        Binding("slash", "filter", "filter log"),
        Binding("escape", "unfilter", "back", show=False),
        Binding("q", "app.quit", "quit"),
    ]

    def compose(self) -> ComposeResult:
        yield Static(id="header")
        with Horizontal(id="body"):
            with Vertical(id="left"):
                yield Label("Calls waiting for a referee (oldest first)", classes="title")
                yield LiveTable("waiting", "pressed", "table", "entrant", "puzzle", "press id", id="calls",
                                zebra_stripes=True)
                yield Label("Standings", classes="title")
                yield LiveTable("place", "award", "name", "status", "time", "penalty", "pieces", "referee",
                                id="standings", zebra_stripes=True)
            with Vertical(id="right"):
                yield Label("Hall", classes="title")
                yield LiveTable("board", "btn", "table", "entrant", "state", "sync ms", id="hall")
                yield Label("Alerts", classes="title")
                yield VerticalScroll(Static(id="alerts"), id="alerts-box")
        with Vertical(id="logbox"):
            with Horizontal(id="logbar"):
                yield Label("Event log  ", classes="title")
                yield Input(placeholder="filter (/): text the lines must contain", id="filter")
            yield Log(id="log", max_lines=LOG_LINES)
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#calls", LiveTable).focus()
        # draw now, not at the first timer tick: the app's own refresh in its
        # on_mount ran before this screen was mounted and drew nothing, so the
        # header, the tables and the cursor were empty for up to REFRESH_S
        self.call_later(self.app.refresh_view)                             # type: ignore[attr-defined]

    # actions are the app's
    def action_start(self) -> None: self.app.open_form("start")            # type: ignore[attr-defined]
    def action_confirm(self) -> None: self.app.open_form("confirm")        # type: ignore[attr-defined]
    def action_void(self) -> None: self.app.open_form("void")              # type: ignore[attr-defined]
    def action_count(self) -> None: self.app.open_form("count")            # type: ignore[attr-defined]
    def action_offset(self) -> None: self.app.open_form("start_offset")    # type: ignore[attr-defined]
    def action_dns(self) -> None: self.app.open_form("dns")                # type: ignore[attr-defined]
    def action_dq(self) -> None: self.app.open_form("dq")                  # type: ignore[attr-defined]
    def action_identify(self) -> None: self.app.open_form("identify")      # type: ignore[attr-defined]
    def action_correct(self) -> None: self.app.open_form("correct")        # type: ignore[attr-defined]
    def action_who(self) -> None: self.app.ask_who()                       # type: ignore[attr-defined]

    def action_filter(self) -> None:
        self.query_one("#filter", Input).focus()

    def action_unfilter(self) -> None:
        self.query_one("#calls", LiveTable).focus()

    @on(Input.Changed, "#filter")
    def filter_changed(self) -> None:
        self.app.refresh_view()                                            # type: ignore[attr-defined]

    @on(Input.Submitted, "#filter")
    def filter_done(self) -> None:
        self.query_one("#calls", LiveTable).focus()


def _appended(old: list[str], new: list[str]) -> list[str] | None:
    """The lines a bounded log (oldest lines drop off the front) gained from
    old to new; None when new does not continue old."""
    for dropped in range(len(old)):
        kept = old[dropped:]
        if new[:len(kept)] == kept:
            return new[len(kept):]
    return None         # nothing in common: more lines came than the log keeps


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
    FormScreen, ConfirmScreen, NameScreen { align: center middle; }
    #dialog { width: 72; height: auto; max-height: 90%; border: thick $primary; background: $surface;
              padding: 1 2; }
    #dialog Input { margin-bottom: 0; }
    #error { color: $error; width: 100%; }
    .note { color: $text-muted; }
    #buttons { height: auto; margin-top: 1; }
    #buttons Button { margin-right: 2; }
    """
    BINDINGS = [Binding("ctrl+c", "quit", "quit", priority=True, show=False)]

    class Stored(Message):
        """A stored event (from any thread)."""

    def __init__(self, service: HubService, title: str, stop_event: threading.Event | None = None,
                 tick: Callable[[], None] | None = None, who: str = DEFAULT_WHO) -> None:
        super().__init__()
        self.service = service
        self.event_title = title
        self.stop_event = stop_event
        self.tick_fn = tick
        self.who = who
        self.snap: Snapshot | None = None
        self._pending = threading.Event()       # a Stored message or a redraw is on its way
        self._dirty = False                     # stored events not drawn yet
        self._shown: dict[str, Any] = {}        # header and alerts as last shown
        self._log_shown: tuple[str, list[str]] = ("", [])     # (filter, lines) in the event log
        self._listening = False

    # ---------------------------------------------------------- life cycle
    def on_mount(self) -> None:
        self.title = self.event_title
        self.push_screen(MainScreen())
        self.service.listeners.append(self._on_stored)
        self._listening = True
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
            self._listening = False
            try:
                self.service.listeners.remove(self._on_stored)
            except ValueError:
                pass

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
        res = self.service.competition.format.resolution_ms

        header = Text.assemble((self.event_title, "bold"), "   ", (round_clock(s), "bold reverse" if (
            s.end is not None and s.now >= s.end) else "bold"))
        header.append("\n")
        if s.next_signal is not None:
            at, kind = s.next_signal
            header.append(f"next signal: {kind.replace('_', ' ')} in {fmt_duration(at - s.now)}   ")
        else:
            header.append("next signal: none   ")
        header.append(f"boards online {s.online}/{s.boards_total}   ",
                      "red" if s.online < s.boards_total else "")
        header.append(f"rejected {s.rejected}", "bold red" if s.rejected else "")
        header.append(f"   duplicates {s.duplicates}   calls waiting {len(s.calls)}")
        header.append(f"\noperator: {self.who}", "dim")
        if header != self._shown.get("header"):
            # fixed height: no layout of the screen for a new header
            main.query_one("#header", Static).update(header, layout=False)
            self._shown["header"] = header

        calls = []
        for at, pid, entrant, puzzle, table in s.calls:
            wait = s.now - at
            style = "bold red" if wait > CALL_LATE_MS else ""
            pressed = fmt_duration(at - s.start) if s.start is not None else str(at)
            calls.append((pid, [Text(fmt_duration(max(0, wait)), style), pressed, table,
                                Text(s.names.get(entrant, entrant), style), str(puzzle), pid]))
        main.query_one("#calls", LiveTable).set_rows(calls)

        rows = []
        for r in s.standings:
            ref = ("provisional" if r.provisional else "confirmed") if r.status == "finished" else ""
            style = ("green" if r.status == "finished" and not r.provisional
                     else "yellow" if r.status == "finished" else "")
            rows.append((r.entrant, [
                str(r.place) if r.place is not None else "-",
                str(r.award_place) if r.award_place is not None else ("unofficial" if not r.official else ""),
                Text(r.name or r.entrant, style), r.status + (f" ({r.reason})" if r.reason else ""),
                fmt_duration(r.net_time_ms if r.net_time_ms is not None else r.time_ms, res),
                fmt_duration(r.penalty_ms, res) if r.penalty_ms else "",
                str(r.pieces) if r.pieces else "", Text(ref, style)]))
        main.query_one("#standings", LiveTable).set_rows(rows)

        hall = []
        for h in s.hall:
            style = ("bold red" if "offline" in h.state or "not seen" in h.state or "poor" in h.state
                     else "bold yellow" if "called" in h.state else
                     "green" if "confirmed" in h.state else "")
            key = f"{h.board}#{h.button}" if h.button is not None else h.board
            hall.append((key, [h.board, str(h.button) if h.button is not None else "-", h.table, h.name,
                               Text(h.state, style), h.sync]))
        main.query_one("#hall", LiveTable).set_rows(hall)

        if s.alerts != self._shown.get("alerts"):
            main.query_one("#alerts", Static).update(
                Text("\n".join(s.alerts), style="red") if s.alerts else Text("none", style="dim"))
            self._shown["alerts"] = s.alerts

        needle = main.query_one("#filter", Input).value.strip().lower()
        lines = [ln for ln in s.activity if needle in ln.lower()] if needle else s.activity
        lines = lines[-LOG_LINES:]
        last_needle, last_lines = self._log_shown
        if (needle, lines) != (last_needle, last_lines):
            # append what is new (a log widget draws only what it shows; a
            # 200-line text redrawn on every event costs a full layout)
            log = main.query_one("#log", Log)
            added = _appended(last_lines, lines) if needle == last_needle and last_lines else None
            if added is None:
                log.clear()
                log.write_lines(lines or ["(nothing matches)" if needle else "(nothing yet)"])
            else:
                log.write_lines(added)
            self._log_shown = (needle, lines)

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
                          if v is not None)
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
        svc = self.service
        now = svc.clock.now_ms()
        comp = svc.competition
        call = self.selected("calls") or ""
        entrant = self.selected_entrant()

        def start(v: dict[str, str]) -> tuple[str, dict]:
            if v["at"].strip() and v["in_s"].strip():
                raise ValueError("round_start: give either 'at' or 'in seconds', not both")
            at = now
            if v["at"].strip():
                at = parse_clock_time(v["at"], now)
            elif v["in_s"].strip():
                at = now + parse_duration_ms(v["in_s"], "in")
            duration = parse_duration_ms(v["limit"], "limit") if v["limit"].strip() else None
            warnings = []
            for w in v["warn"].replace(",", " ").split():
                warnings.append(parse_duration_ms(w, "warnings"))
            return "round_start", {"at": at, "duration": duration, "warnings": warnings}

        def confirm(v: dict[str, str]) -> tuple[str, dict]:
            return "confirm", {"press_id": v["press_id"].strip(),
                               "missing_found": parse_int(v["found"], "found", 0),
                               "missing_lost": parse_int(v["lost"], "lost", 0),
                               "missing_adjacent": parse_int(v["adjacent"], "adjacent", 0)}

        def void(v: dict[str, str]) -> tuple[str, dict]:
            return "void", {"press_id": v["press_id"].strip()}

        def count(v: dict[str, str]) -> tuple[str, dict]:
            return "count", {"entrant": self.entrant_id(v["entrant"]),
                             "puzzle": parse_int(v["puzzle"], "puzzle", 1),
                             "placed": parse_int(v["placed"], "placed"),
                             "remaining": parse_int(v["remaining"], "remaining")}

        def offset(v: dict[str, str]) -> tuple[str, dict]:
            start_ms = comp.start_ms
            if v["offset"].strip():
                off = parse_duration_ms(v["offset"], "offset")
            elif start_ms is None:
                raise ValueError("start_offset: the round has not started")
            else:
                off = now - start_ms
            return "start_offset", {"entrant": self.entrant_id(v["entrant"]), "offset_ms": off}

        def entrant_only(action: str) -> Callable[[dict[str, str]], tuple[str, dict]]:
            return lambda v: (action, {"entrant": self.entrant_id(v["entrant"])})

        def dq(v: dict[str, str]) -> tuple[str, dict]:
            return "dq", {"entrant": self.entrant_id(v["entrant"]), "reason": v["reason"].strip()}

        def identify(v: dict[str, str]) -> tuple[str, dict]:
            if not v["board"].strip():
                raise ValueError("identify: board is needed")
            return "identify", {"board": v["board"].strip()}

        def correct(v: dict[str, str]) -> tuple[str, dict]:
            t = v["time"].strip()
            if not t:
                raise ValueError("correct: the new time is needed")
            if t.isdigit() and len(t) >= 11:
                at = int(t)
            else:
                if comp.start_ms is None:
                    raise ValueError("correct: the round has not started (give hub ms)")
                at = comp.start_ms + parse_duration_ms(t, "time")
            return "correct", {"press_id": v["press_id"].strip(), "at": at}

        E = FormField("entrant", "entrant (id or name)", entrant)
        return {
            "start": ActionForm("round_start", "Start the round", [
                FormField("in_s", "in (seconds or m:ss from now; blank = now)", "", "e.g. 120"),
                FormField("at", "or at (local clock HH:MM[:SS], or hub ms)", "", "e.g. 10:30"),
                FormField("limit", "limit (h:mm:ss; blank = the format's "
                          f"{fmt_duration(comp.format.time_limit_ms)})", ""),
                FormField("warn", "warnings before the end (h:mm:ss, space separated)", "", "e.g. 10:00 1:00"),
            ], start, destructive=comp.round_start_row() is not None,
                note="a new start replaces the armed/running one" if comp.round_start_row() else ""),
            "confirm": ActionForm("confirm", "Confirm the selected call", [
                FormField("press_id", "press id", call),
                FormField("found", "missing pieces found", "0"),
                FormField("lost", "missing pieces lost", "0"),
                FormField("adjacent", "missing adjacent (production fault)", "0"),
            ], confirm),
            "void": ActionForm("void", "Void the selected call", [FormField("press_id", "press id", call)],
                               void, destructive=True),
            "count": ActionForm("count", "Piece count", [
                E, FormField("puzzle", f"puzzle (1..{len(comp.format.puzzles)})", "1"),
                FormField("placed", "placed (or leave blank and give remaining)", ""),
                FormField("remaining", "remaining", ""),
            ], count),
            "start_offset": ActionForm("start_offset", "Restart an entrant's clock", [
                E, FormField("offset", "start after the round start (h:mm:ss; blank = now)", ""),
            ], offset, note="" if comp.format.start_offsets else
                "this format has no per-entrant start: the offset is recorded but ignored"),
            "dns": ActionForm("dns", "Did not start", [E], entrant_only("dns"), destructive=True),
            "dq": ActionForm("dq", "Disqualify", [E, FormField("reason", "reason (required)", "")], dq,
                             destructive=True),
            "identify": ActionForm("identify", "Identify a board (buzz and blink)", [
                FormField("board", "board", self.selected_board())], identify),
            "correct": ActionForm("correct", "Correct a time", [
                FormField("press_id", "press id", call),
                FormField("time", "new time since the round start (h:mm:ss[.fff]) or hub ms", ""),
            ], correct, destructive=True, why_required=True),
        }


def run_console(service: HubService, title: str, stop_event: threading.Event | None = None,
                tick: Callable[[], None] | None = None, *, headless: bool = False) -> None:
    """Run the console in the foreground until the operator quits (q,
    Ctrl-C) or stop_event is set; tick() is called every 250 ms.
    headless: no terminal (tests)."""
    app = ConsoleApp(service, title, stop_event, tick)
    try:
        app.run(headless=headless)
    finally:
        app._stop_listening()
