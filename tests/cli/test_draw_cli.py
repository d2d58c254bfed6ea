"""`tabletimer draw` and `seat` (issue 47, items 1 and 2): 40 individuals
drawn into 10 teams of four apart by club, the same seed twice the same
teams, each draw a row in the log; seating at the hall's tables with cards
and a find-your-table list; seed 004's two a table above 30; refused once
the start is recorded, and each bad input refused with nothing written."""

from __future__ import annotations

import csv
from pathlib import Path

from tabletimer.hub.cli import main as cli
from tabletimer.hub.event.folder import event_folder
from tabletimer.hub.event.log.store import EventStore


def rows(db: Path) -> list[dict]:
    if not db.exists():
        return []
    store = EventStore(db)
    try:
        return store.events()
    finally:
        store.close()


def team_event(path: Path, registered: int = 40, clubs: int = 10, tables: int = 12) -> Path:
    assert cli.main(["round", "add", str(path), "teams", "--format", "cz-championship-teams", "--title", "Cup"]) == 0
    r = path / "rounds" / "teams"
    (r / "registrations.csv").write_text("id,name,club\n" + "".join(
        f"{i},Puzzler {i:02d},Club {i % clubs}\n" for i in range(1, registered + 1)))
    (path / "hall.csv").write_text("table,board,buttons\n" + "".join(
        f"Table {i},T{i:02d},8\n" for i in range(1, tables + 1)))
    return r


def teams_of(r: Path) -> list[tuple[str, str]]:
    with open(r / "entrants.csv", encoding="utf-8") as f:
        return [(row["id"], row["members"]) for row in csv.DictReader(f)]


def test_draw_seat_and_refused_after_the_start(tmp_path, capsys):
    r = team_event(tmp_path / "cup")
    before = (r / "entrants.csv").read_text()
    args = ["draw", str(tmp_path / "cup"), "--round", "teams", "--teams-of", "4", "--apart-by", "club"]
    assert cli.main(args + ["--seed", "4711"]) == 0
    out = capsys.readouterr().out
    assert "draw number (seed): 4711" in out and "40 registered: 10 teams of 4; club kept apart" in out
    first = teams_of(r)
    assert (r / "entrants.csv").read_text() != before and len(first) == 10
    clubs = {f"Puzzler {i:02d}": i % 10 for i in range(1, 41)}
    for _, members in first:
        names = members.split("|")
        assert len(names) == 4 and len({clubs[n] for n in names}) == 4
    assert cli.main(args + ["--seed", "4712"]) == 0          # draw again: another seed, other teams
    assert teams_of(r) != first
    assert cli.main(args + ["--seed", "4711"]) == 0          # the first seed again: the first teams
    assert teams_of(r) == first
    drawn = [x for x in rows(r / "events.sqlite") if x["type"] == "draw"]
    assert [x["payload"]["seed"] for x in drawn] == [4711, 4712, 4711]
    assert drawn[0]["payload"]["teams"][0]["members"] == first[0][1].split("|")
    assert drawn[0]["payload"]["who"] == "organizer" and drawn[0]["payload"]["apart_by"] == "club"

    capsys.readouterr()
    assert cli.main(["seat", str(tmp_path / "cup"), "--round", "teams", "--by", "random", "--seed", "5"]) == 0
    out = capsys.readouterr().out
    ev = event_folder.load(tmp_path / "cup", "teams")        # the round loads: entrants and stations agree
    assert len(ev.stations) == 80 and {s.puzzle for s in ev.stations} == set(range(1, 9))
    assert len({s.table for s in ev.stations}) == 10
    assert "find your table:\nPuzzler 01  Table" in out
    assert (r / "table-cards.html").exists()
    listed = (r / "find-your-table.html").read_text()
    assert listed.index("Puzzler 01") < listed.index("Puzzler 02") < listed.index("Puzzler 40")
    seated = [x for x in rows(r / "events.sqlite") if x["type"] == "seat"]
    assert seated[-1]["payload"]["by"] == "random" and seated[-1]["payload"]["seed"] == 5

    assert cli.main(["act", str(tmp_path / "cup"), "--round", "teams", "round_start"]) == 0
    entrants, stations, n = (r / "entrants.csv").read_text(), (r / "stations.csv").read_text(), len(rows(r / "events.sqlite"))
    capsys.readouterr()
    assert cli.main(args + ["--seed", "1"]) == 2
    assert "draw: the round's start is recorded" in capsys.readouterr().err
    assert cli.main(["seat", str(tmp_path / "cup"), "--round", "teams", "--by", "name"]) == 2
    assert "seat: the round's start is recorded" in capsys.readouterr().err
    assert (r / "entrants.csv").read_text() == entrants and (r / "stations.csv").read_text() == stations
    assert len(rows(r / "events.sqlite")) == n


def refused(capsys, argv: list[str], r: Path, says: str) -> None:
    files = {f: (r / f).read_text() for f in ("entrants.csv", "stations.csv")}
    n = len(rows(r / "events.sqlite"))
    capsys.readouterr()
    assert cli.main(argv) == 2
    assert says in capsys.readouterr().err
    assert {f: (r / f).read_text() for f in files} == files and len(rows(r / "events.sqlite")) == n


def test_bad_draws_are_refused_with_nothing_written(tmp_path, capsys):
    cup = tmp_path / "cup"
    r = team_event(cup, registered=3)
    draw = ["draw", str(cup), "--round", "teams", "--teams-of", "4"]
    refused(capsys, draw, r, "3 registered: a team of 4 needs 4")
    (r / "registrations.csv").write_text("id,name,family\n" + "".join(
        f"{i},P{i},{'Novak' if i <= 5 else ''}\n" for i in range(1, 17)))
    refused(capsys, draw + ["--apart-by", "family"], r, "'Novak' has 5 registered, more than the 4 teams")
    refused(capsys, draw + ["--apart-by", "club"], r, "no column 'club' to keep apart by")
    (r / "registrations.csv").write_text("id,name\n1,Anna Novak\n2,Ben\n3,anna novak\n4,Dan\n")
    refused(capsys, draw, r, "two registrations named 'Anna Novak' (ids 1 and 3)")
    (r / "registrations.csv").write_text("id,name\n" + "".join(f"{i},P{i}\n" for i in range(1, 42)))
    refused(capsys, draw, r, "register 3 more, or leave 1 out")


def test_seat_two_a_table_above_30_and_a_hall_too_small(tmp_path, capsys):
    cup = tmp_path / "cup"
    assert cli.main(["init", str(cup), "--format", "rogaland-individuals", "--title", "Cup"]) == 0
    (cup / "hall.csv").write_text("table,board,buttons\n" + "".join(f"Bord {i},B{i:02d},2\n" for i in range(1, 31)))
    (cup / "entrants.csv").write_text("id,name,eligible\n" + "".join(f"{i},P{i:02d},yes\n" for i in range(1, 31)))
    assert cli.main(["seat", str(cup), "--by", "registration"]) == 0
    ev = event_folder.load(cup)
    assert len({s.table for s in ev.stations}) == 30 and {s.button for s in ev.stations} == {1}
    (cup / "entrants.csv").write_text("id,name,eligible\n" + "".join(f"{i},P{i:02d},yes\n" for i in range(1, 42)))
    assert cli.main(["seat", str(cup), "--by", "name"]) == 0          # 41 > 30: two a table, re-seated
    ev = event_folder.load(cup)
    assert len(ev.stations) == 41 and len({s.table for s in ev.stations}) == 21
    (cup / "entrants.csv").write_text("id,name,eligible\n" + "".join(f"{i},P{i:02d},yes\n" for i in range(1, 62)))
    refused(capsys, ["seat", str(cup), "--by", "name"], cup,
            "61 entrants, a button each: the hall's 30 tables seat 60 (two entrants a table above 30 entrants); "
            "add 1 more seats")


def test_the_find_your_table_list_carries_each_entrants_check_in_code_with_a_public_url(tmp_path, capsys):
    """Issue 47: the "find your table" list at the door is also the scan-in
    list: with the hub's public URL (given to `seat`, or saved before) each
    name's line has its entrant's check-in QR code (a team's members their
    team's); without one, no codes.  A bad URL is refused before anything is
    seated."""
    cup = tmp_path / "cup"
    r = team_event(cup, registered=8, clubs=4, tables=2)
    assert cli.main(["draw", str(cup), "--round", "teams", "--teams-of", "4", "--seed", "7"]) == 0
    seat = ["seat", str(cup), "--round", "teams", "--by", "name"]
    assert cli.main(seat) == 0
    assert "<svg" not in (r / "find-your-table.html").read_text()
    refused(capsys, seat + ["--public-url", "hub.local:8765"], r, "--public-url: 'hub.local:8765' is not a web address")
    assert not (cup / "public-url").exists()
    capsys.readouterr()
    assert cli.main(seat + ["--public-url", "http://10.0.0.5:8765/"]) == 0
    assert "a check-in code per name, opening http://10.0.0.5:8765/checkin?entrant=..." in capsys.readouterr().out
    assert (cup / "public-url").read_text().strip() == "http://10.0.0.5:8765"
    listed = (r / "find-your-table.html").read_text()
    assert listed.count('class="qr"><title>') == 8 and "<th>Check-in</th>" in listed
    for team in ("T01", "T02"):
        assert listed.count(f"<title>http://10.0.0.5:8765/checkin?entrant={team}</title>") == 4
    assert cli.main(seat) == 0                                 # the saved URL: the codes again
    assert (r / "find-your-table.html").read_text().count('class="qr"><title>') == 8


def test_seat_by_rank_of_several_rounds_takes_them_together_by_place_then_result(tmp_path, capsys):
    """Three groups into a final (tests/cli/test_advance_cli.py's: the k-th of group a in 38 + 2k
    min, of group c half a minute later, of group b a minute later).  The oracle, by place then
    result across the groups: a1 (place 1, 40:00), b1 (1, 41:00), c2 (2, 42:30), a3 (3, 44:00),
    b3 (3, 45:00); Z 9 ranked in none of them comes last.  The final's seats: its stations.csv's
    five tables of two buttons, in order."""
    from cli.test_advance_cli import event

    hall = event(tmp_path)
    final = hall / "rounds" / "final"
    (final / "entrants.csv").write_text("id,name\nb3,B 3\nz9,Z 9\na1,A 1\nc2,C 2\nb1,B 1\na3,A 3\n")
    capsys.readouterr()
    assert cli.main(["seat", str(hall), "--round", "final", "--by", "rank-of", "group-a,group-b", "group-c"]) == 0
    out = capsys.readouterr().out
    assert "seated 6 by rank-of group-a group-b group-c" in out
    with open(final / "stations.csv", encoding="utf-8") as f:
        seats = [(r["board"], r["button"], r["entrant"]) for r in csv.DictReader(f)]
    assert seats == [("T01", "1", "a1"), ("T01", "2", "b1"), ("T02", "1", "c2"), ("T02", "2", "a3"),
                     ("T03", "1", "b3"), ("T03", "2", "z9")]
    (row,) = [x["payload"] for x in rows(final / "events.sqlite") if x["type"] == "seat"]
    assert row["rank_of"] == "group-a, group-b, group-c" and row["seated"] == 6
    # one group alone: its own places (a1, a3), then the rest by name
    assert cli.main(["seat", str(hall), "--round", "final", "--by", "rank-of", "group-a"]) == 0
    with open(final / "stations.csv", encoding="utf-8") as f:
        assert [r["entrant"] for r in csv.DictReader(f)] == ["a1", "a3", "b1", "b3", "c2", "z9"]
