"""The console's screens: the main screen (its widgets and keys; what it
shows is view.py), the form of an operator action, the question before a
destructive one is recorded, the operator's name, and the hall check."""

from __future__ import annotations

from typing import Callable

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Button, Footer, Input, Label, Log, Static

from .forms import ActionForm, Desk
from .table import LiveTable
from .view import LOG_LINES
from ..event.log.log_health import LogWriteFailed


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

    def __init__(self, form: ActionForm, console: Desk) -> None:
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
        if self.form.run is not None:
            self._run(vals, why)
            return
        try:
            if self.form.why_required and not why:
                raise ValueError(self.form.why_missing or f"{self.form.key}: a reason (why) is needed")
            action, payload = self.form.build(vals)
            self.console.check(action, payload)
        except ValueError as e:
            self.show_error(str(e))
            return
        seen = self.console.service.latest_decision_row(action, payload)
        if seen is not None:        # the decision the desk looks at now: one recorded since is a conflict
            payload = dict(payload, seen=seen)
        doubt = self.form.doubt(vals) if self.form.doubt is not None else None
        if not doubt and not self.form.destructive and not self.console.service.consequences(action, payload):
            self._record(action, payload, why)
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self._record(action, payload, why)
        question = self.console.describe(action, payload)
        self.app.push_screen(ConfirmScreen(f"Careful: {doubt}.\n{question}" if doubt else question), answered)

    def _run(self, vals: dict[str, str], why: str) -> None:
        """A form that does its work itself (the draw, the seating): its
        result shown in a dialog (with "again" where the form has it)."""
        run, again = self.form.run, self.form.again
        assert run is not None
        try:
            text = run(vals, why)
        except (ValueError, LogWriteFailed) as e:
            self.show_error(str(e))
            return
        self.dismiss(True)
        self.app.push_screen(ResultScreen(self.form.title, text,
                                          (lambda: run(again(vals), why)) if again is not None else None))

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


class ResultScreen(ModalScreen[None]):
    """What a form that does its work itself made (a draw's number and
    teams); `again` (a): do it once more (the draw again: a new number),
    shown in place of the first."""
    BINDINGS = [Binding("escape", "close", "close"), Binding("enter", "close", "close", show=False),
                Binding("a", "again", "again")]

    def __init__(self, title: str, text: str, again: Callable[[], str] | None = None) -> None:
        super().__init__()
        self.title_text, self.text, self.again = title, text, again

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(f"[b]{self.title_text}[/b]")
            with VerticalScroll(id="result-box"):
                yield Static(Text(self.text), id="result")
            yield Label("", id="error")
            with Horizontal(id="buttons"):
                if self.again is not None:
                    yield Button("Again: a new number (a)", variant="warning", id="again")
                yield Button("Close (Esc)", variant="primary", id="close")

    def on_mount(self) -> None:
        self.query_one("#close", Button).focus()

    @on(Button.Pressed, "#again")
    def action_again(self) -> None:
        if self.again is None:
            return
        try:
            self.text = self.again()
        except (ValueError, LogWriteFailed) as e:
            self.query_one("#error", Label).update(Text(str(e), style="bold red"))
            return
        self.query_one("#error", Label).update("")
        self.query_one("#result", Static).update(Text(self.text))

    @on(Button.Pressed, "#close")
    def action_close(self) -> None:
        self.dismiss(None)


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
        Binding("a", "replace", "replace absent"),
        Binding("k", "check_in", "check in"),
        Binding("i", "identify", "identify"),
        Binding("t", "correct", "correct time"),
        Binding("o", "resolve", "resolve conflict"),
        Binding("w", "who", "operator"),
        Binding("h", "hall_check", "hall check"),
        Binding("d", "draw", "team draw"),
        Binding("e", "seat", "seating"),
        Binding("f", "official", "official results"),
        Binding("u", "reopen", "reopen results"),
        Binding("slash", "filter", "filter log"),
        Binding("escape", "unfilter", "back", show=False),
        Binding("q", "app.quit", "quit"),
    ]

    def compose(self) -> ComposeResult:
        yield Static(id="header")
        with Horizontal(id="body"):
            with Vertical(id="left"):
                yield Label("Calls waiting for a referee (oldest first)", classes="title")
                yield LiveTable("waiting", "pressed", "table", "entrant", "puzzle", "call", "press id", id="calls",
                                zebra_stripes=True)
                yield Label("Standings", classes="title")
                yield LiveTable("place", "award", "name", "status", "time", "penalty", "net", "pieces", "referee",
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
    def action_replace(self) -> None: self.app.open_form("replace")        # type: ignore[attr-defined]
    def action_check_in(self) -> None: self.app.open_form("check_in")      # type: ignore[attr-defined]
    def action_identify(self) -> None: self.app.open_form("identify")      # type: ignore[attr-defined]
    def action_correct(self) -> None: self.app.open_form("correct")        # type: ignore[attr-defined]
    def action_resolve(self) -> None: self.app.open_form("resolve")        # type: ignore[attr-defined]
    def action_draw(self) -> None: self.app.open_form("draw")              # type: ignore[attr-defined]
    def action_seat(self) -> None: self.app.open_form("seat")              # type: ignore[attr-defined]
    def action_official(self) -> None: self.app.open_form("official")      # type: ignore[attr-defined]
    def action_reopen(self) -> None: self.app.open_form("reopen")          # type: ignore[attr-defined]
    def action_who(self) -> None: self.app.ask_who()                       # type: ignore[attr-defined]
    def action_hall_check(self) -> None: self.app.push_screen(HallCheckScreen())

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


# ------------------------------------------------------------------ the hall check

CHECK_REDRAW_S = 0.5      # the check is read from the log's rows since it began: not every frame

class HallCheckScreen(Screen):
    """The latest hall check (`tabletimer check-hall`, fleet/hall_check.py)
    as its checklist: the hall's verdict, a line per board with what is
    still missing; redrawn as the boards answer (every CHECK_REDRAW_S).  The
    desk watches it while volunteers press the buttons."""
    BINDINGS = [Binding("escape", "back", "back"), Binding("h", "back", "back", show=False),
                Binding("q", "app.quit", "quit")]

    def compose(self) -> ComposeResult:
        yield Label("Hall check (h or Escape: back)", classes="title")
        yield VerticalScroll(Static(id="checklist"), id="checklist-box")
        yield Footer()

    def on_mount(self) -> None:
        self.redraw()
        self.set_interval(CHECK_REDRAW_S, self.redraw)

    def redraw(self) -> None:
        self.query_one("#checklist", Static).update(Text(self.app.hall_check_text()))   # type: ignore[attr-defined]

    def action_back(self) -> None:
        self.app.pop_screen()
