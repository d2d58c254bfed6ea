"""The team draw and the seating from the organizer console (issue 47,
items 1 and 2: "and the same from the console"), driven with Textual's
Pilot on a console of the team round's log (`tabletimer console DIR --round
teams`, no hub running on it): the draw (d) with its number and teams, the
draw again (a) with a new number, both in the log with the operator; the
seating (e); after the round's start both refused with the CLI's own words
and nothing written."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from textual.widgets import Static

from tabletimer.hub.cli import main as cli
from tabletimer.hub.console.app import ConsoleApp, FormScreen, ResultScreen
from tabletimer.hub.core.service import HubService, with_defaults
from tabletimer.hub.event.fold.competition import Competition
from tabletimer.hub.event.folder import event_folder
from tabletimer.hub.event.log.store import EventStore
from tabletimer.hub.protocol.keys import BoardKeys
from test_console import drive, error_of, fill
from waiting import settle


@pytest.fixture
def teams(tmp_path: Path):
    """An event folder with a team round: 40 registered in 10 clubs, a hall
    of 12 tables; the console's service on that round's log."""
    folder = tmp_path / "cup"
    assert cli.main(["round", "add", str(folder), "teams", "--format", "cz-championship-teams", "--title", "Cup"]) == 0
    r = folder / "rounds" / "teams"
    (r / "registrations.csv").write_text("id,name,club\n" + "".join(
        f"{i},Puzzler {i:02d},Club {i % 10}\n" for i in range(1, 41)))
    (folder / "hall.csv").write_text("table,board,buttons\n" + "".join(
        f"Table {i},T{i:02d},8\n" for i in range(1, 13)))
    ev = event_folder.load(folder, "teams")
    store = EventStore(ev.db)
    svc = HubService(store, BoardKeys(ev.keys_file), Competition(ev.format, ev.entrants, ev.stations))
    yield folder, r, svc
    store.close()


def drawn(svc: HubService) -> list[dict]:
    return [e for e in svc.store.events() if e["source"] == "operator" and e["type"] == "draw"]


def result_text(app: ConsoleApp) -> str:
    return str(app.screen.query_one("#result", Static).render())


async def result(app: ConsoleApp, pilot) -> ResultScreen:
    return await settle(pilot, lambda: isinstance(app.screen, ResultScreen) and app.screen,
                        "the result dialog", seen=lambda: app.screen)


def test_draw_draw_again_and_seat_from_the_console_then_refused_after_the_start(teams, capsys):
    folder, r, svc = teams
    clubs = {f"Puzzler {i:02d}": i % 10 for i in range(1, 41)}

    async def script(app: ConsoleApp, pilot) -> None:
        app.who = "Olga"
        form = await fill(app, pilot, "d", submit=False)
        assert form.query_one("#f-round").value == "teams"        # its own round: no hub runs on it
        await fill_in_and_submit(app, pilot, form, teams_of="4", apart_by="club", seed="4711")
        shown = await result(app, pilot)
        text = result_text(app)
        assert "draw number (seed): 4711" in text and "40 registered: 10 teams of 4; club kept apart" in text
        assert "T10 Team 10:" in text
        [row] = drawn(svc)
        assert row["payload"]["seed"] == 4711 and row["payload"]["who"] == "Olga"
        first = (r / "entrants.csv").read_text()
        for team in csv.DictReader(io.StringIO(first)):
            members = team["members"].split("|")
            assert len(members) == 4 and len({clubs[m] for m in members}) == 4

        await pilot.press("a")                                     # draw again: a new number
        await settle(pilot, lambda: len(drawn(svc)) == 2, "the second draw recorded")
        again = drawn(svc)[1]["payload"]["seed"]
        assert again != 4711
        await settle(pilot, lambda: f"draw number (seed): {again}" in result_text(app), "the new draw shown")
        assert (r / "entrants.csv").read_text() != first
        assert app.screen is shown
        await pilot.press("escape")

        form = await fill(app, pilot, "e", submit=False)
        await fill_in_and_submit(app, pilot, form, by="random", seed="5")
        await result(app, pilot)
        assert "seated 10 by random, seed 5 at 10 tables of" in result_text(app)
        assert "Table 1: T" in result_text(app)
        await pilot.press("escape")
        seated = (r / "stations.csv").read_text()
        assert seated.count("\n") == 1 + 10 * 8                    # a relay team: a button per puzzle

        svc.act("round_start", with_defaults(svc.competition.format, "round_start", {"at": svc.clock.now_ms()}), who="Olga")
        before = (r / "entrants.csv").read_text()
        form = await fill(app, pilot, "d", teams_of="4")
        refused = error_of(form)
        assert "the round's start is recorded" in refused and "nothing was written" in refused
        await pilot.press("escape")
        form = await fill(app, pilot, "e", by="name")
        refused_seat = error_of(form)
        await pilot.press("escape")
        assert len(drawn(svc)) == 2 and (r / "entrants.csv").read_text() == before
        assert (r / "stations.csv").read_text() == seated
        app.exit()
        results.extend([refused, refused_seat])

    results: list[str] = []
    drive(svc, script)
    capsys.readouterr()
    assert cli.main(["draw", str(folder), "--round", "teams", "--teams-of", "4"]) == 2
    assert capsys.readouterr().err.strip() == f"error: {results[0]}"          # the CLI's own words
    assert cli.main(["seat", str(folder), "--round", "teams", "--by", "name"]) == 2
    assert capsys.readouterr().err.strip() == f"error: {results[1]}"


async def fill_in_and_submit(app: ConsoleApp, pilot, form: FormScreen, **values: str) -> None:
    from textual.widgets import Input
    for name, v in values.items():
        form.query_one(f"#f-{name}", Input).value = v
    form.query_one(f"#f-{next(iter(values))}", Input).focus()
    await pilot.press("enter")
    await settle(pilot, lambda: app.screen is not form or error_of(form), "the form to answer",
                 seen=lambda: (app.screen, error_of(form)))
    assert app.screen is not form, error_of(form)


def test_bad_input_is_refused_in_the_form_with_nothing_written(teams):
    folder, r, svc = teams
    (r / "registrations.csv").write_text("id,name\n1,Ann\n2,Bob\n")

    async def script(app: ConsoleApp, pilot) -> None:
        form = await fill(app, pilot, "d", teams_of="4")
        assert "fewer" in error_of(form) or "register" in error_of(form), error_of(form)
        assert app.screen is form
        await pilot.press("escape")
        form = await fill(app, pilot, "e", by="rank-of")
        assert error_of(form) == "by rank-of ROUND: name the earlier round"
        await pilot.press("escape")
        app.exit()

    drive(svc, script)
    assert drawn(svc) == [] and not any(e["type"] == "seat" for e in svc.store.events())
