"""The organizer console (Textual), driven with Textual's Pilot against a
HubService without a broker: every operator action through its form, the
stored rows (who/why) and the standings; a validation error; the main
screen in four states (as SVG screenshots)."""

from __future__ import annotations

import asyncio
import html
import re
import threading
import time
from pathlib import Path

import pytest

from tabletimer.hub.event.fold.competition import Competition
from tabletimer.hub.console.app import ConfirmScreen, ConsoleApp, FormScreen, NameScreen, run_console
from tabletimer.hub.console.table import LiveTable
from tabletimer.hub.event.folder.event_folder import Station
from tabletimer.hub.rules.formats import load_format
from tabletimer.hub.protocol.keys import BoardKeys
from tabletimer.hub.core.changes import RowApplied, ToBoards
from tabletimer.hub.core.service import HubService
from tabletimer.hub.rules.standings import Entrant
from tabletimer.hub.event.log.store import EventStore
from tabletimer.hub.protocol import hub_protocol
from tabletimer.shared import protocol as P
from tabletimer.shared.auth import Signer
from textual.widgets import Input, Label, Log
from waiting import settle, until_async
from clocks import FixedClock

KEYS = {"b1": "11" * 32, "b2": "22" * 32}
T0 = 1_796_000_000_000
SIZE = (120, 36)          # actions
SHOT_SIZE = (150, 44)     # screenshots


class FakeClock(FixedClock):
    """Hub time held at t (T0 at first)."""
    t = T0


class Sender:
    """Signs messages as a board would: its boot and a rising counter."""

    def __init__(self) -> None:
        self.ctr: dict[str, int] = {}

    def send(self, svc: HubService, board: str, kind: str, msg: dict, boot: int = 1) -> None:
        ctr = self.ctr[board] = self.ctr.get(board, 0) + 1
        P.stamp(msg, ctr, boot)
        topic = P.board_topic(board, kind)
        svc.handle(topic, Signer(KEYS[board]).sign(topic, P.encode(msg)), svc.clock.t)


@pytest.fixture
def hub(tmp_path: Path):
    """Three entrants on two boards (b1: Alice, Bob; b2: Carol), 500 pieces,
    90 minutes; both boards online."""
    yield from make_hub(tmp_path, "cz-championship-individuals")


def make_hub(tmp_path: Path, preset: str):
    fmt = load_format(preset)
    entrants = [Entrant("e1", "Alice"), Entrant("e2", "Bob"), Entrant("e3", "Carol")]
    stations = [Station("b1", 1, "Table 1", "e1", 1), Station("b1", 2, "Table 1", "e2", 1),
                Station("b2", 1, "Table 2", "e3", 1)]
    store = EventStore(tmp_path / "events.sqlite")
    svc = HubService(store, BoardKeys(keys=KEYS), Competition(fmt, entrants, stations), FakeClock())
    svc.sender = Sender()
    svc.seq = 0
    for b, n in (("b1", 2), ("b2", 1)):
        svc.sender.send(svc, b, P.STATUS, P.status_online(1, "1.0", n))
    yield svc
    store.close()


def press(svc: HubService, board: str = "b1", station: int = 1, after_start_ms: int = 61_000) -> str:
    svc.seq += 1
    svc.sender.send(svc, board, P.EVENT, hub_protocol.press(1, svc.seq, station, svc.competition.start_ms + after_start_ms))
    return f"{board}/1/{svc.seq}"


def ops(svc: HubService) -> list[dict]:
    return [e for e in svc.store.events() if e["source"] == "operator"]


def row(svc: HubService, entrant: str):
    return next(r for r in svc.standings() if r.entrant == entrant)


def drive(svc: HubService, script, size: tuple[int, int] = SIZE, **kw) -> None:
    """Run the console headless and play script(app, pilot) against it."""
    async def main() -> None:
        app = ConsoleApp(svc, "Test Cup", **kw)
        async with app.run_test(size=size) as pilot:
            await settle(pilot, lambda: app.snap is not None, "the main screen drawn")
            await script(app, pilot)
    asyncio.run(main())


async def fill(app: ConsoleApp, pilot, key: str, submit: bool = True, **values: str) -> FormScreen:
    """Open a form with its key, fill fields, press Enter (and wait for the
    form's answer)."""
    await pilot.press(key)
    form = await settle(pilot, lambda: isinstance(app.screen, FormScreen) and app.screen,
                        f"key {key!r} to open a form", seen=lambda: app.screen)
    for name, v in values.items():
        form.query_one(f"#f-{name}", Input).value = v
    if submit:
        form.query_one(f"#f-{next(iter(values))}" if values else "Input", Input).focus()
        await submit_form(app, pilot, form)
    return form


def error_of(form: FormScreen) -> str:
    return str(form.query_one("#error", Label).render())


async def submit_form(app: ConsoleApp, pilot, form: FormScreen) -> None:
    """Enter in the form, then wait until it answered: an error shown in
    it, or the form no longer on top (recorded, or asking first)."""
    form.query_one("#error", Label).update("")
    await pilot.press("enter")
    await settle(pilot, lambda: app.screen is not form or error_of(form), f"the {form.form.key} form to answer",
                 seen=lambda: (app.screen, error_of(form)))


async def answer(app: ConsoleApp, pilot, key: str) -> None:
    """Answer the confirmation; wait until it is gone and its answer taken:
    back in the form (no), or the form closed or showing why not (yes)."""
    confirm = app.screen
    assert isinstance(confirm, ConfirmScreen), confirm
    form = app.screen_stack[-2]
    await pilot.press(key)
    if key == "y":
        await settle(pilot, lambda: form not in app.screen_stack or (app.screen is form and error_of(form)),
                     "the confirmed action recorded", seen=lambda: app.screen_stack)
    else:
        await settle(pilot, lambda: app.screen is form, "back in the form", seen=lambda: app.screen_stack)


async def shown(app: ConsoleApp, pilot, tmp_path: Path, name: str, *needles: str) -> str:
    """The screenshot's text once it shows every needle."""
    texts = [""]

    def has_all() -> bool:
        texts[0] = svg_text(app, tmp_path, name)
        return all(n in texts[0] for n in needles)
    await settle(pilot, has_all, f"the {name} screen to show {needles}",
                 seen=lambda: ([n for n in needles if n not in texts[0]], texts[0][:400]))
    return texts[0]


def svg_text(app: ConsoleApp, tmp_path: Path, name: str) -> str:
    """The text of a screenshot saved as SVG, spaces restored."""
    path = app.save_screenshot(name + ".svg", path=str(tmp_path))
    body = Path(path).read_text()
    texts = re.findall(r"<text[^>]*>(.*?)</text>", body, flags=re.S)
    return html.unescape("".join(texts)).replace("\xa0", " ")


# ------------------------------------------------------------------ actions

def test_start_round_in_seconds_then_restart_with_new_operator_and_confirmation(hub):
    async def script(app, pilot):
        await fill(app, pilot, "s", in_s="120", warn="10:00 1:00", why="on schedule")
        assert not isinstance(app.screen, FormScreen)
        # another operator moves the armed start: a new start asks first
        await pilot.press("w")
        name = await settle(pilot, lambda: isinstance(app.screen, NameScreen) and app.screen,
                            "the operator name screen", seen=lambda: app.screen)
        name.query_one("#f-who", Input).value = "Dana"
        await pilot.press("enter")
        await settle(pilot, lambda: app.who == "Dana", "the new operator", seen=lambda: app.who)
        await fill(app, pilot, "s", at=str(T0 + 300_000), why="late bus")
        assert "This replaces the round start (armed for" in app.screen.question, app.screen.question
        await answer(app, pilot, "y")
    drive(hub, script)
    starts = ops(hub)
    assert [e["type"] for e in starts] == ["round_start", "round_start"]
    first, second = (e["payload"] for e in starts)
    assert first == {"at": T0 + 120_000, "duration": None, "warnings": [600_000, 60_000],
                     "who": "head referee", "why": "on schedule"}
    assert (second["at"], second["who"], second["why"]) == (T0 + 300_000, "Dana", "late bus")
    assert hub.competition.start_ms == T0 + 300_000


def test_confirm_the_selected_call_with_missing_pieces(hub):
    hub.start_round(T0)
    async def script(app, pilot):
        pid = press(hub)
        await settle(pilot, lambda: app.selected("calls") == pid, "the call selected",
                     seen=lambda: app.selected("calls"))
        assert row(hub, "e1").provisional
        form = await fill(app, pilot, "c", submit=False, found="1", lost="2")
        assert form.query_one("#f-press_id", Input).value == pid
        form.query_one("#f-why", Input).value = "counted twice"
        await submit_form(app, pilot, form)
        calls = app.main().query_one("#calls", LiveTable)
        await settle(pilot, lambda: calls.row_count == 0, "the call gone", seen=lambda: calls.keys)
    drive(hub, script)
    e = ops(hub)[-1]
    assert e["type"] == "confirm"
    assert e["payload"] == {"press_id": "b1/1/1", "missing_found": 1, "missing_lost": 2,
                            "missing_adjacent": 0, "who": "head referee", "why": "counted twice",
                            "seen": 0}        # the decision on the call the desk saw: none (issue #32)
    r = row(hub, "e1")
    assert (r.status, r.provisional) == ("finished", False)
    assert hub.competition.open_calls() == []


def test_the_calls_show_the_short_press_id_and_a_confirm_takes_it_typed(hub):
    """The operator reads the call's short id aloud ("b1-2": board b1's 2nd
    press) and can type it instead of the long one; the log holds the long
    one."""
    hub.start_round(T0)
    async def script(app, pilot):
        press(hub)
        second = press(hub, "b1", 2)
        calls = app.main().query_one("#calls", LiveTable)
        await settle(pilot, lambda: calls.row_count == 2, "both calls shown", seen=lambda: calls.keys)
        text = await shown(app, pilot, tmp, "calls", "b1-1", "b1-2", second)
        assert "call" in text
        form = await fill(app, pilot, "c", press_id="B1-2", found="1", why="read aloud")
        assert not isinstance(app.screen, FormScreen), error_of(form)
    tmp = Path(hub.store.path).parent
    drive(hub, script)
    e = ops(hub)[-1]
    assert (e["type"], e["payload"]["press_id"], e["payload"]["missing_found"]) == ("confirm", "b1/1/2", 1)


def test_void_needs_a_selected_call_asks_first_and_no_records_nothing(hub):
    hub.start_round(T0)
    async def script(app, pilot):
        await pilot.press("v")                      # no call waiting: no form
        assert not isinstance(app.screen, FormScreen)
        press(hub)
        await settle(pilot, lambda: app.selected("calls"), "the call selected")
        form = await fill(app, pilot, "v", why="knocked the button")
        await answer(app, pilot, "n")               # back in the form, nothing stored
        assert isinstance(app.screen, FormScreen) and ops(hub)[-1]["type"] == "round_start"
        await submit_form(app, pilot, form)
        await answer(app, pilot, "y")
        assert not isinstance(app.screen, FormScreen)
    drive(hub, script)
    e = ops(hub)[-1]
    assert (e["type"], e["payload"]) == ("void", {"press_id": "b1/1/1", "who": "head referee",
                                                  "why": "knocked the button", "seen": 0})
    assert row(hub, "e1").status == "running"


def test_piece_count_by_name_and_the_validation_error(hub):
    hub.start_round(T0)
    hub.clock.t = T0 + 5_400_000 + 1
    async def script(app, pilot):
        form = await fill(app, pilot, "p", entrant="Bob", placed="600")
        assert isinstance(app.screen, FormScreen)                 # still open, with the reason
        assert "count: placed = 600 is outside 0..500" in error_of(form)
        assert ops(hub)[-1]["type"] == "round_start"              # nothing stored
        form.query_one("#f-placed", Input).value = "311"
        form.query_one("#f-remaining", Input).value = "189"
        await submit_form(app, pilot, form)
        assert "either placed or remaining" in error_of(form)
        form.query_one("#f-remaining", Input).value = ""
        form.query_one("#f-why", Input).value = "counted at time-up"
        await submit_form(app, pilot, form)
        assert not isinstance(app.screen, FormScreen)
    drive(hub, script)
    e = ops(hub)[-1]
    assert (e["type"], e["payload"]) == ("count", {"entrant": "e2", "puzzle": 1, "placed": 311, "remaining": None,
                                                   "who": "head referee", "why": "counted at time-up",
                                                   "seen": 0})
    assert row(hub, "e2").pieces == 311


def test_restart_an_entrants_clock_from_now(tmp_path):
    hub = next(make_hub(tmp_path, "rogaland-individuals"))     # a format with per-entrant starts
    hub.start_round(T0)
    hub.clock.t = T0 + 45_000
    async def script(app, pilot):
        await fill(app, pilot, "r", entrant="e3", why="taped bag")
    drive(hub, script)
    e = ops(hub)[-1]
    assert (e["type"], e["payload"]) == ("start_offset", {"entrant": "e3", "offset_ms": 45_000,
                                                          "who": "head referee", "why": "taped bag"})
    pid = press(hub, "b2", 1, after_start_ms=45_000 + 600_000)
    assert pid and row(hub, "e3").time_ms == 600_000


def test_dns_and_dq_with_a_required_reason(hub):
    hub.start_round(T0)
    async def script(app, pilot):
        form = await fill(app, pilot, "r", submit=False)     # this format has no per-entrant start
        assert "ignored" in str(form.query_one(".note", Label).render())
        await pilot.press("escape")
        await settle(pilot, lambda: form not in app.screen_stack, "the form closed", seen=lambda: app.screen)
        await fill(app, pilot, "n", entrant="Carol", why="absent")
        await answer(app, pilot, "y")
        form = await fill(app, pilot, "x", entrant="e2", why="phone")
        assert "dq: a reason is needed" in error_of(form)
        form.query_one("#f-reason", Input).value = "used a phone"
        await submit_form(app, pilot, form)
        await answer(app, pilot, "y")
    drive(hub, script)
    dns, dq = ops(hub)[-2:]
    assert (dns["type"], dns["payload"]) == ("dns", {"entrant": "e3", "who": "head referee", "why": "absent"})
    assert (dq["type"], dq["payload"]) == ("dq", {"entrant": "e2", "reason": "used a phone",
                                                  "who": "head referee", "why": "phone"})
    assert row(hub, "e3").status == "dns" and row(hub, "e2").status == "dq"


def test_an_absent_entrants_station_given_to_a_new_one_asks_first_inside_the_window(tmp_path):
    """`a` (issue 31, item 3): the replacement's form; inside the absent
    entrant's 10 minutes the question says they may still come; a new
    entry's fields are checked in the form; recorded, the hall shows the new
    entrant at the station and the standings the absent one DNS."""
    gen = make_hub(tmp_path, "czjpa-individuals")
    hub = next(gen)
    hub.start_round(T0)
    hub.clock.t = T0 + 5 * 60_000
    async def script(app, pilot):
        form = await fill(app, pilot, "a", absent="Carol", entrant="N1", name="Jana")
        assert "eligible=yes or no is needed" in error_of(form)
        form.query_one("#f-eligible", Input).value = "yes"
        await submit_form(app, pilot, form)
        question = str(app.screen.question)                       # type: ignore[attr-defined]
        assert "REPLACE" in question and "e3's station away before e3's time to arrive is up" in question
        await answer(app, pilot, "n")
        hub.clock.t = T0 + 11 * 60_000                            # Carol's 10 minutes are up
        await submit_form(app, pilot, form)
        assert "may still come" not in str(app.screen.question)   # type: ignore[attr-defined]
        await answer(app, pilot, "y")
        hall = app.main().query_one("#hall", LiveTable)
        await settle(pilot, lambda: "b2#1" in hall.keys and app.snap and
                     any(r.entrant == "N1" for r in app.snap.standings), "Jana in the standings",
                     seen=lambda: app.snap and [r.entrant for r in app.snap.standings])
    try:
        drive(hub, script)
        stored = ops(hub)[-1]
        assert (stored["type"], stored["payload"]) == ("replace", {
            "absent": "e3", "entrant": "N1", "name": "Jana", "eligible": "yes", "who": "head referee", "why": ""})
        assert [s.entrant for s in hub.competition.stations] == ["e1", "e2", "N1"]
        assert row(hub, "e3").status == "dns" and row(hub, "e3").reason == "absent: the station went to Jana (N1)"
    finally:
        gen.close()


def test_identify_the_selected_board_and_an_unknown_one(hub):
    sent = []
    hub.changes.subscribe(ToBoards, lambda n: sent.extend(n.messages))
    async def script(app, pilot):
        hall = app.main().query_one("#hall", LiveTable)
        await settle(pilot, lambda: hall.keys == ["b1#1", "b1#2", "b2#1"], "the hall's stations",
                     seen=lambda: hall.keys)
        hall.focus()
        await pilot.press("down", "down")                 # b2's station
        await settle(pilot, lambda: app.selected("hall") == "b2#1", "b2's station selected",
                     seen=lambda: app.selected("hall"))
        form = await fill(app, pilot, "i", submit=False)
        assert form.query_one("#f-board", Input).value == "b2"
        form.query_one("#f-board", Input).value = "zz"
        await submit_form(app, pilot, form)
        assert "identify: no board 'zz'" in error_of(form)
        form.query_one("#f-board", Input).value = "b2"
        form.query_one("#f-why", Input).value = "which one is table 2?"
        await submit_form(app, pilot, form)
        assert form not in app.screen_stack, error_of(form)
    drive(hub, script)
    e = ops(hub)[-1]
    assert (e["type"], e["payload"]) == ("identify", {"board": "b2", "who": "head referee",
                                                      "why": "which one is table 2?"})
    assert [o.topic for o in sent] == ["tt/v1/b/b2/cmd"]


def test_correct_a_time_needs_a_reason_and_asks_first(hub):
    hub.start_round(T0)
    pid = press(hub, after_start_ms=61_000)
    async def script(app, pilot):
        await settle(pilot, lambda: app.selected("calls") == pid, "the call selected",
                     seen=lambda: app.selected("calls"))
        form = await fill(app, pilot, "t", time="1:05")
        assert "a reason (why) is needed" in error_of(form)
        form.query_one("#f-time", Input).value = "1:0x"
        form.query_one("#f-why", Input).value = "referee's watch"
        await submit_form(app, pilot, form)
        assert "time: expected seconds or h:mm:ss" in error_of(form)
        form.query_one("#f-time", Input).value = "0:01:05"
        await submit_form(app, pilot, form)
        await answer(app, pilot, "y")
    drive(hub, script)
    e = ops(hub)[-1]
    assert (e["type"], e["payload"]) == ("correct", {"press_id": pid, "at": T0 + 65_000,
                                                     "who": "head referee", "why": "referee's watch",
                                                     "seen": 0})
    assert row(hub, "e1").time_ms == 65_000


# ------------------------------------------------------------------ threads, timer

def test_events_from_another_thread_tick_and_stop_event(hub):
    hub.start_round(T0)
    ticks = []
    stop = threading.Event()
    own = hub.changes.subscribers(RowApplied)          # the service's own (its consoles' lines, ...)
    async def script(app, pilot):
        t = threading.Thread(target=press, args=(hub, "b2", 1))
        t.start()
        t.join(5)
        calls = app.main().query_one("#calls", LiveTable)
        await settle(pilot, lambda: calls.row_count == 1, "the call from the other thread",
                     seen=lambda: calls.keys)
        await settle(pilot, lambda: ticks, "a tick")
        stop.set()
        await until_async(lambda: not app.is_running, "the console to stop")
    drive(hub, script, stop_event=stop, tick=lambda: ticks.append(1))
    assert hub.changes.subscribers(RowApplied) == own


def test_run_console_returns_when_stop_event_is_set(hub):
    own = hub.changes.subscribers(RowApplied)          # the service's own (its consoles' lines, ...)
    stop = threading.Event()
    threading.Timer(0.3, stop.set).start()
    t = time.monotonic()
    run_console(hub, "Test Cup", stop, headless=True)
    assert time.monotonic() - t < 5 and hub.changes.subscribers(RowApplied) == own


# ------------------------------------------------------------------ screens

def test_the_screen_is_drawn_when_it_opens_not_at_the_first_tick(hub, tmp_path, monkeypatch):
    """The header and the tables are drawn as the main screen mounts (they
    once stayed empty until the first timer tick, up to 250 ms; a test, or
    an operator, could see an empty header)."""
    from tabletimer.hub.console import app as console
    monkeypatch.setattr(console, "REFRESH_S", 3600.0)     # no timer tick during this test

    async def script(app, pilot):
        await shown(app, pilot, tmp_path, "first", "round not started", "boards online 2/2", "Alice")
        assert app.main().query_one("#hall", LiveTable).keys == ["b1#1", "b1#2", "b2#1"]
    drive(hub, script, size=SHOT_SIZE)


def test_main_screen_in_four_states(hub, tmp_path):
    async def script(app, pilot):
        idle = await shown(app, pilot, tmp_path, "idle", "Test Cup", "round not started",
                           "boards online 2/2", "Alice", "idle")
        assert "calls waiting 0" in idle

        hub.start_round(T0 + 30_000, warnings_ms=(600_000,), who="head referee")
        await shown(app, pilot, tmp_path, "armed", "starts in 0:00:30", "next signal: start in 0:00:30")

        hub.clock.t = T0 + 30_000 + 600_000
        running = await shown(app, pilot, tmp_path, "running", "elapsed 0:10:00", "remaining 1:20:00",
                              "next signal: warn in 1:10:00")
        assert "running" in running

        press(hub, "b1", 2, after_start_ms=500_000)
        hub.clock.t += 61_000
        await shown(app, pilot, tmp_path, "calls", "calls waiting 1", "Bob", "b1/1/1", "0:02:41",
                    "Table 1 #2", "called")

        hub.clock.t = T0 + 30_000 + 5_400_000 + 5_000
        await shown(app, pilot, tmp_path, "time-up", "TIME UP", "next signal: none", "unfinished")
    drive(hub, script, size=SHOT_SIZE)


# ------------------------------------------------------------------ issue 32: what the log says

def standings_cells(app: ConsoleApp) -> dict[str, list[str]]:
    table = app.main().query_one("#standings", LiveTable)
    return {k: [str(c) for c in table.row(k)] for k in table.keys}


def test_entrants_still_running_have_no_place_and_no_award(hub):
    """At the start nobody has a place (the format ranks the unfinished by
    their pieces at time-up); a finisher has one, those running still none."""
    hub.start_round(T0)
    async def script(app, pilot):
        await settle(pilot, lambda: len(standings_cells(app)) == 3, "the standings", seen=lambda: standings_cells(app))
        assert {k: c[:2] + [c[3]] for k, c in standings_cells(app).items()} == {
            "e1": ["-", "", "running"], "e2": ["-", "", "running"], "e3": ["-", "", "running"]}
        press(hub, "b1", 2, after_start_ms=600_000)
        await settle(pilot, lambda: standings_cells(app)["e2"][3] == "finished", "Bob's finish",
                     seen=lambda: standings_cells(app))
        cells = standings_cells(app)
        assert cells["e2"][:2] == ["1", "1"]
        assert [cells[e][:2] for e in ("e1", "e3")] == [["-", ""], ["-", ""]]
    drive(hub, script)


def test_a_blank_warnings_field_gives_the_formats_warnings_as_act_does(hub):
    """The start form with its warnings left blank records the format's 10
    and 1 minute warnings (what `act round_start` records); 'none' records
    none; a round start sent without warnings (a remote console, the API)
    gets the same default."""
    async def script(app, pilot):
        form = await fill(app, pilot, "s", submit=False)
        assert "blank = the format's 0:10:00 0:01:00" in " ".join(
            str(lb.render()) for lb in form.query(Label))
        form.query_one("#f-why", Input).value = "on schedule"
        await submit_form(app, pilot, form)
        assert not isinstance(app.screen, FormScreen), error_of(form)
        await fill(app, pilot, "s", in_s="60", warn="none", why="no signals")
        await answer(app, pilot, "y")
    drive(hub, script)
    blank, none = (e["payload"] for e in ops(hub))
    assert blank["warnings"] == [600_000, 60_000]
    assert none["warnings"] == []
    hub.act("round_start", {"at": T0 + 120_000}, who="remote desk")
    hub.act("round_start", {"at": T0 + 120_000, "duration": 300_000, "warnings": None}, who="remote desk")
    assert [e["payload"]["warnings"] for e in ops(hub)[2:]] == [[600_000, 60_000], [60_000]]


def test_check_in_at_the_door_undo_and_the_start_names_who_is_not_here(hub):
    """`k` (issue 47, item 3): an entrant checked in by name, the form's note
    "N of M checked in"; someone not in the round refused in the form,
    nothing stored; a check-in undone; the start's question names who is
    not checked in."""
    async def script(app, pilot):
        form = await fill(app, pilot, "k", entrant="Zoe")
        assert "check_in: no entrant 'Zoe' in this round: nothing was recorded" in error_of(form)
        assert ops(hub) == []
        form.query_one("#f-entrant", Input).value = "Bob"
        await submit_form(app, pilot, form)
        form = await fill(app, pilot, "k", submit=False)
        assert "1 of 3 checked in; not here yet: e1, e3" in str(form.query_one(".note", Label).render())
        form.query_one("#f-entrant", Input).value = "Alice"
        await submit_form(app, pilot, form)
        await fill(app, pilot, "k", entrant="Alice", undo="y", why="wrong Alice")
        await fill(app, pilot, "s", why="on time")
        question = str(app.screen.question)                       # type: ignore[attr-defined]
        assert "This starts with 2 of 3 entrants not checked in (1 of 3 checked in): Alice (e1), Carol (e3)" \
            in question, question
        await answer(app, pilot, "n")
    drive(hub, script)
    assert [(e["type"], e["payload"]["entrant"], e["payload"]["present"], e["payload"]["why"]) for e in ops(hub)] == [
        ("check_in", "e2", 1, ""), ("check_in", "e1", 1, ""), ("check_in", "e1", 0, "wrong Alice")]
    assert hub.competition.start_ms is None


def test_the_question_before_a_new_start_is_shown_whole(hub):
    """Replacing a running round names its finish calls; the question wraps
    inside the dialog, not cut off at its edge ("9 finish c")."""
    hub.start_round(T0)
    for station in (1, 2):
        press(hub, "b1", station, after_start_ms=60_000 * station)
    hub.clock.t = T0 + 300_000
    async def script(app, pilot):
        await fill(app, pilot, "s", warn="10:00", why="false start")
        confirm = await settle(pilot, lambda: isinstance(app.screen, ConfirmScreen) and app.screen,
                               "the question", seen=lambda: app.screen)
        label = confirm.query_one("#question", Label)
        dialog = confirm.query_one("#dialog")
        await settle(pilot, lambda: label.region.width > 0, "the question laid out")
        shown = " ".join(strip.text for strip in label.render_lines(label.region.reset_offset))
        words = confirm.question.split()
        assert " ".join(shown.split()) == " ".join(words), shown
        assert dialog.content_region.contains_region(label.region), (label.region, dialog.content_region)
        await answer(app, pilot, "n")
    drive(hub, script)


def test_the_event_log_shows_clock_times_not_hub_ms(hub):
    """The event log says when in the hall's words: the round start's local
    clock time (with its limit and warnings), a press's clock time and time
    since the start; never raw hub milliseconds."""
    from tabletimer.hub.rules.timetext import fmt_clock

    async def script(app, pilot):
        await fill(app, pilot, "s", at=str(T0 + 30_000), why="on schedule")
        hub.clock.t = T0 + 30_000 + 61_000
        pid = press(hub, "b1", 1, after_start_ms=61_000)
        hub.act("correct", {"press_id": pid, "at": T0 + 30_000 + 65_000}, who="desk", why="watch")
        log = app.main().query_one("#log", Log)
        await settle(pilot, lambda: any("desk: correct" in ln for ln in log.lines), "the correction logged",
                     seen=lambda: log.lines)
        text = "\n".join(log.lines)
        assert (f"head referee: round start at {fmt_clock(T0 + 30_000)}, warnings 0:10:00 0:01:00 before "
                "the end (on schedule)") in text, text
        assert f"press b1/1 at {fmt_clock(T0 + 91_000)} (+0:01:01)" in text, text
        assert f"at={fmt_clock(T0 + 95_000)} (+0:01:05)" in text, text
        assert not re.search(r"\d{11,}", text), text
    drive(hub, script)


def test_the_hall_table_shows_dns_and_dq_whatever_was_confirmed_or_called(hub):
    """An entrant out of the round (DNS, DQ) shows so at its station, as the
    standings say, also after a confirmed finish ("confirmed" before) or
    with a call open ("called")."""
    hub.start_round(T0)
    hub.clock.t = T0 + 800_000
    carol = press(hub, "b2", 1, after_start_ms=600_000)
    hub.act("confirm", {"press_id": carol}, who="referee")
    bob = press(hub, "b1", 2, after_start_ms=700_000)
    assert [s.state for s in hub.station_states()] == ["running", "called", "done"]
    assert hub.competition.open_calls()[0][1] == bob
    hub.act("dns", {"entrant": "e3"}, who="desk", why="wrong seat: not here")
    hub.act("dq", {"entrant": "e2", "reason": "phone"}, who="desk")

    def states(app):
        hall = app.main().query_one("#hall", LiveTable)
        return {k: str(hall.row(k)[4]) for k in hall.keys}

    async def script(app, pilot):
        await settle(pilot, lambda: states(app) == {"b1#1": "running", "b1#2": "DQ", "b2#1": "DNS"},
                     "the hall's states", seen=lambda: states(app))
    drive(hub, script)
    assert {r.entrant: r.status for r in hub.standings()} == {"e1": "running", "e2": "dq", "e3": "dns"}


def test_a_conflict_is_resolved_from_the_console(hub):
    """An open conflict is a CONFLICT alert until resolved: the console's
    'o' form names the first open one, asks why, and records `resolve`."""
    hub.start_round(T0)
    pid = press(hub)
    row = hub.note_conflict("phone", "Anna", "confirm", {"press_id": pid},
                            "this call is voided by desk since your page showed it open", "Table 1")
    assert any(a.startswith("CONFLICT at Table 1 (phone, Anna)") for a in hub.alerts())
    async def script(app, pilot):
        form = await fill(app, pilot, "o", why="")
        assert isinstance(app.screen, FormScreen) and "a reason (why) is needed" in error_of(form)
        assert form.query_one("#f-conflict", Input).value == str(row["id"])    # the open one, filled in
        form.query_one("#f-why", Input).value = "Anna agrees: the call was a mistake"
        await submit_form(app, pilot, form)
        assert not isinstance(app.screen, FormScreen), error_of(form)
    drive(hub, script)
    e = ops(hub)[-1]
    assert (e["type"], e["payload"]["conflict"], e["payload"]["who"]) == ("resolve", row["id"], "head referee")
    assert not any(a.startswith("CONFLICT") for a in hub.alerts())


# ------------------------------------------------------------------ the hall check

def test_the_hall_check_screen_shows_the_checklist_as_the_buttons_are_pressed(hub, tmp_path):
    """h: the hall check's screen.  None begun: how to begin one.  Begun
    (as `tabletimer check-hall` does): the hall not ready, a line per board
    with the buttons still to press; a press of the check's counts as it
    comes; Escape: back to the main screen."""
    def check_press(board: str, station: int) -> None:
        svc.seq += 1
        svc.sender.send(svc, board, P.EVENT, {"v": 1, "type": "stray", "boot": 1, "seq": svc.seq,
                                              "station": station, "at": svc.clock.t, "err": 2, "state": "idle"})
    svc = hub

    async def script(app, pilot):
        await pilot.press("h")
        await settle(pilot, lambda: type(app.screen).__name__ == "HallCheckScreen", "the hall check's screen")
        await shown(app, pilot, tmp_path, "none", "No hall check begun", "tabletimer check-hall DIR")
        svc.act("hall_check", {"phase": "begin"}, who="desk")
        await shown(app, pilot, tmp_path, "begun", "Test Cup: hall NOT READY", "b1: NOT READY",
                    "buttons 0/2", "b2: NOT READY", "buttons 0/1")
        check_press("b2", 1)
        text = await shown(app, pilot, tmp_path, "pressed", "b2: ready", "buttons 1/1")
        assert "b1: NOT READY" in text and "buttons 0/2" in text, text
        await pilot.press("escape")
        await settle(pilot, lambda: type(app.screen).__name__ == "MainScreen", "back on the main screen",
                     seen=lambda: app.screen)
    drive(svc, script)


# ------------------------------------------------------------------ issue 45: what the screens say

def test_an_armed_start_says_when_it_starts_not_running(hub):
    """Item 7: a start armed 4:32 ahead: every entrant "starts in 0:04:32",
    nobody "running"; at the start they run."""
    hub.start_round(T0 + 272_000)

    async def script(app, pilot):
        await settle(pilot, lambda: len(standings_cells(app)) == 3, "the standings", seen=lambda: standings_cells(app))
        assert {k: c[3] for k, c in standings_cells(app).items()} == {
            "e1": "starts in 0:04:32", "e2": "starts in 0:04:32", "e3": "starts in 0:04:32"}
        hub.clock.t = T0 + 272_000
        await settle(pilot, lambda: {c[3] for c in standings_cells(app).values()} == {"running"},
                     "running at the start", seen=lambda: standings_cells(app))
    drive(hub, script)


def test_the_time_column_is_the_raw_time_and_net_apart_as_results_show_them(hub):
    """Item 13: "time" is the finish since the start, as results and replay
    say; the penalty and the net time beside it."""
    hub.start_round(T0)
    pid = press(hub, "b1", 2, after_start_ms=600_000)
    hub.act("confirm", {"press_id": pid, "missing_found": 1}, who="Anna")

    async def script(app, pilot):
        await settle(pilot, lambda: standings_cells(app).get("e2", [""] * 5)[3] == "finished", "Bob's finish",
                     seen=lambda: standings_cells(app))
        table = app.main().query_one("#standings", LiveTable)
        head = list(table.columns)
        bob = dict(zip(head, standings_cells(app)["e2"]))
        assert (bob["time"], bob["penalty"], bob["net"]) == ("0:10:00", "0:00:10", "0:10:10")
    drive(hub, script)


def test_a_start_typed_as_a_clock_time_1h48_ago_asks_first(hub):
    """Item 9: the start form's "at" a clock time 1 h 48 min before now (or,
    in a time zone where that is yesterday, read as today's and far ahead):
    the console asks first; no records nothing, yes records it."""
    import datetime as dt
    typed = dt.datetime.fromtimestamp((T0 - 108 * 60_000) / 1000).strftime("%H:%M")

    async def script(app, pilot):
        await fill(app, pilot, "s", at=typed)
        question = app.screen.question
        assert question.startswith(f"Careful: at={typed} is read as today {typed}:00, "), question
        assert re.search(r", (1:48:\d\d ago|\d+:\d\d:\d\d from now)", question), question
        await answer(app, pilot, "n")
        assert ops(hub) == []
        await pilot.press("escape")
        await fill(app, pilot, "s", at=typed)
        await answer(app, pilot, "y")
    drive(hub, script)
    assert [e["type"] for e in ops(hub)] == ["round_start"]


def test_no_alerts_for_a_board_this_round_does_not_use(tmp_path, monkeypatch):
    """Item 13: a day's pairs round uses T01; T02 (the individuals') stays
    online in the hall, and later falls silent: not this round's alerts
    ("board b9 is not in stations.csv", "silent"); a board no round knows
    still is."""
    from tabletimer.hub.cli.event import other_rounds_boards
    from tabletimer.hub.event.folder import event_folder
    day = tmp_path / "day"
    event_folder.add_round(day, "indiv", "czjpa-individuals")
    event_folder.add_round(day, "pairs", "czjpa-pairs")
    (day / "rounds" / "indiv" / "stations.csv").write_text("board,button,table,entrant\nT01,1,Table 1,1\n"
                                                           "T02,1,Table 2,2\n")
    (day / "rounds" / "pairs" / "stations.csv").write_text("board,button,table,entrant\nT01,1,Table 1,1\n")
    for r in ("indiv", "pairs"):
        (day / "rounds" / r / "entrants.csv").write_text("id,name,members,eligible\n1,A,A1|A2,yes\n2,B,B1|B2,yes\n")
    assert other_rounds_boards(event_folder.load(day, "pairs")) == {"T02"}

    monkeypatch.setitem(KEYS, "b9", "99" * 32)
    monkeypatch.setitem(KEYS, "bx", "98" * 32)
    (tmp_path / "hub").mkdir()
    made = make_hub(tmp_path / "hub", "cz-championship-individuals")    # the keys are the service's from its start
    hub = next(made)
    hub.registry.listening(hub.clock.t)      # connected to the broker (as the MQTT adapter says)
    for b in ("b9", "bx"):
        hub.sender.send(hub, b, P.STATUS, P.status_online(1, "1.0", 1))
    hub.clock.t += 120_000           # every board silent for two minutes
    alerts = hub.alerts()
    assert "board b9 is not in stations.csv" in alerts and any(a.startswith("board b9 silent") for a in alerts)
    hub.state.unused_boards = frozenset({"b9"})
    alerts = hub.alerts()
    assert not any("b9" in a for a in alerts), alerts
    assert "board bx is not in stations.csv" in alerts and any(a.startswith("board bx silent") for a in alerts)
    next(made, None)                 # the store closed


# ------------------------------------------------------------------ official results

def test_results_made_official_and_reopened_from_the_console_with_the_clis_refusals(hub, tmp_path):
    """`f` makes the round's results official, `u` reopens them (issue 47,
    item 4): refused before time is up and before every check is done (the
    form says what is left, nothing stored), asked first, recorded with the
    console's operator; then a change and a second `f` are refused ("reopen
    first"), `u` needs its why; the header says OFFICIAL RESULTS while they are."""
    hub.start_round(T0, duration_ms=10 * 60_000)
    pid = press(hub, "b1", 1, after_start_ms=61_000)
    hub.clock.t = T0 + 5 * 60_000
    async def script(app, pilot):
        form = await fill(app, pilot, "f", submit=False)
        assert "not yet: official: the round's time is not up" in str(form.query_one(".note", Label).render())
        await submit_form(app, pilot, form)
        assert "official: the round's time is not up (300 s left)" in error_of(form)
        hub.clock.t = T0 + 11 * 60_000                          # time is up; a call waits, two counts missing
        await submit_form(app, pilot, form)
        assert "official: not every check is done: 1 call(s) waiting for a referee" in error_of(form)
        assert ops(hub)[-1]["type"] == "round_start"            # nothing stored
        await pilot.press("escape")
        await settle(pilot, lambda: form not in app.screen_stack, "the form closed", seen=lambda: app.screen)
        hub.act("confirm", {"press_id": pid}, who="Eva")
        for e in ("e2", "e3"):
            hub.act("count", {"entrant": e, "placed": 120}, who="Eva")
        form = await fill(app, pilot, "f")
        assert "Record OFFICIAL" in str(app.screen.question)    # type: ignore[attr-defined]
        await answer(app, pilot, "y")
        await shown(app, pilot, tmp_path, "official", "OFFICIAL RESULTS: made official by head referee")
        form = await fill(app, pilot, "p", entrant="Bob", placed="130")
        assert "count: the results are official (made official by head referee" in error_of(form)
        assert "reopen first, saying why" in error_of(form)
        await pilot.press("escape")
        await settle(pilot, lambda: form not in app.screen_stack, "the form closed", seen=lambda: app.screen)
        form = await fill(app, pilot, "f")
        assert "official: the results are official (made official by head referee" in error_of(form)
        await pilot.press("escape")
        await settle(pilot, lambda: form not in app.screen_stack, "the form closed", seen=lambda: app.screen)
        form = await fill(app, pilot, "u")
        assert "reopen: say why the results are reopened" in error_of(form)
        assert "the results are made official by head referee" in str(form.query_one(".note", Label).render())
        form.query_one("#f-why", Input).value = "Bob objects to his count at the desk"
        await submit_form(app, pilot, form)
        await answer(app, pilot, "y")
        await fill(app, pilot, "p", entrant="Bob", placed="130", why="recounted")
        await answer(app, pilot, "y")                            # it replaces Eva's count: asked first
        form = await fill(app, pilot, "u")                       # not official now: nothing to reopen
        form.query_one("#f-why", Input).value = "again"
        await submit_form(app, pilot, form)
        assert "reopen: the results are not official: nothing to reopen" in error_of(form)
    drive(hub, script)
    kinds = [(e["type"], e["payload"]["who"], e["payload"]["why"]) for e in ops(hub)[-3:]]
    assert kinds == [("official", "head referee", ""), ("reopen", "head referee", "Bob objects to his count at the desk"),
                     ("count", "head referee", "recounted")]
    assert hub.competition.official_book().official() is None and row(hub, "e2").pieces == 130
