"""The hall's view, pure (hall_view.py) on a real HubService: the team
round's current part per team, solving entrants without a shared place or
an award colour, and what an empty value leaves out."""

from __future__ import annotations

from tabletimer.hub.web.hall_view import hall_view
from test_table_view import T0, FakeClock, service
from tabletimer.hub.protocol.keys import BoardKeys
from tabletimer.hub.event.folder import event_folder


def test_a_relay_team_is_shown_in_the_part_it_works_now(tmp_path):
    path = tmp_path / "ev"
    event_folder.init(path, "cz-championship-teams")
    (path / "entrants.csv").write_text("id,name,members,eligible\nT1,Edges,A|B|C|D,yes|yes|yes|yes\n"
                                       "T2,Corners,E|F|G|H,yes|yes|yes|yes\n")
    (path / "stations.csv").write_text("board,button,table,entrant,puzzle\n" + "".join(
        f"R{k},1,Table {1 if k <= 4 else 2},{'T1' if k <= 4 else 'T2'},{(k - 1) % 4 + 1}\n" for k in range(1, 9)))
    BoardKeys(path / "board-keys.json")
    clock = FakeClock(T0)
    svc = service(path, clock)
    svc.act("round_start", {"at": T0})
    clock.t = T0 + 30 * 60_000
    for puzzle in (1, 2, 3, 4):                  # T1 finishes the relay's four puzzles
        svc.act("press", {"entrant": "T1", "puzzle": puzzle, "at": T0 + puzzle * 60_000})
    fmt = svc.competition.format
    v = hall_view(svc.snapshot(), fmt, "Teams", {"T1": "Table 1", "T2": "Table 2"}, {"T1": ["A", "B"]},
                  svc.competition.last_row_id(), None)
    by = {r["entrant"]: r for r in v["rows"]}
    assert by["T1"]["part"] == "part 2: two pairs" and by["T2"]["part"] == "part 1: four individuals"
    assert by["T2"]["status"] == "solving" and "place" not in by["T2"] and "award" not in by["T2"]
    assert by["T1"]["members"] == ["A", "B"] and "members" not in by["T2"]      # empty: left out
    assert v["state"] == "running" and v["solving"] == 2 and v["next_signal"] is not None


def test_the_hall_says_official_once_the_desk_made_the_results_official(tmp_path):
    """Issue 47, item 4: official results are shown as such in the hall (who and when)."""
    path = tmp_path / "ev"
    event_folder.init(path, "czjpa-individuals")
    (path / "entrants.csv").write_text("id,name,eligible\n1,Anna,yes\n")
    (path / "stations.csv").write_text("board,button,table,entrant\nB1,1,Table 1,1\n")
    BoardKeys(path / "board-keys.json")
    clock = FakeClock(T0)
    svc = service(path, clock)
    svc.act("round_start", {"at": T0})
    clock.t = T0 + 121 * 60_000                  # time is up
    svc.act("count", {"entrant": "1", "placed": 312})
    fmt = svc.competition.format

    def view() -> dict:
        return hall_view(svc.snapshot(), fmt, "Cup", {"1": "Table 1"}, {}, svc.competition.last_row_id(), None)
    assert view()["official"] is None
    svc.act("official", {}, who="Head")
    assert view()["official"].startswith("made official by Head")
    svc.act("reopen", {}, who="Head", why="an objection at the desk")
    assert view()["official"] is None
