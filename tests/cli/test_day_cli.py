"""`tabletimer results DIR --day`: every round's podium for the prize-giving
(hub/outputs/day_results.py), on event folders made with `round add` / `init`
and logs recorded with `tabletimer act`; what it refuses."""

from __future__ import annotations

import json
import time
from pathlib import Path

from tabletimer.hub.cli import main as cli
from tabletimer.hub.event.folder import event_folder


def act(hall: Path, *args: str) -> None:
    assert cli.main(["act", str(hall), *args, "--who", "desk"]) == 0


def two_rounds(tmp: Path) -> Path:
    """heats over (Anna and Ben tied for first, Cid third), final not started."""
    hall = tmp / "cup"
    assert cli.main(["round", "add", str(hall), "heats", "--format", "cz-championship-individuals",
                     "--title", "Spring Cup"]) == 0
    assert cli.main(["round", "add", str(hall), "final", "--format", "cz-championship-individuals"]) == 0
    d = hall / "rounds" / "heats"
    (d / "entrants.csv").write_text("id,name\n1,Anna\n2,Ben\n3,Cid\n", encoding="utf-8")
    (d / "stations.csv").write_text("board,button,table,entrant\nT01,1,T1,1\nT01,2,T1,2\nT02,1,T2,3\n",
                                    encoding="utf-8")
    act(hall, "round_start", f"at={int(time.time() * 1000) - 3 * 3_600_000}", "--round", "heats")
    for entrant, at in (("1", "0:50:00"), ("2", "0:50:00"), ("3", "0:55:00")):
        act(hall, "press", f"entrant={entrant}", "puzzle=1", f"at={at}", "--round", "heats")
        act(hall, "confirm", f"entrant={entrant}", "puzzle=1", "--round", "heats")
    return hall


def test_day_prints_every_rounds_podium_in_order(tmp_path, capsys):
    hall = two_rounds(tmp_path)
    capsys.readouterr()
    assert cli.main(["results", str(hall), "--day"]) == 0
    out = capsys.readouterr()
    lines = out.out.splitlines()
    assert lines[0] == "Spring Cup: every round's podium"
    heats = lines.index("heats  Czech championship - individuals  [final]")
    final = lines.index("final  Czech championship - individuals  [not started]")
    assert heats < final
    podium = [ln.split()[0:2] for ln in lines[heats + 1:final] if ln.strip()]
    assert podium == [["1", "Anna"], ["1", "Ben"], ["3", "Cid"]]          # a tie shares the first place
    assert "round final: not started" in out.err and "heats" not in out.err
    assert cli.main(["results", str(hall), "--day", "--json", "-", "--title", "Spring Cup 2027"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["title"] == "Spring Cup 2027" and [r["round"] for r in doc["rounds"]] == ["heats", "final"]


def test_day_with_round_is_refused_and_writes_nothing(tmp_path, capsys):
    hall = two_rounds(tmp_path)
    capsys.readouterr()
    page = tmp_path / "day.html"
    assert cli.main(["results", str(hall), "--day", "--round", "heats", "--html", str(page)]) == 2
    err = capsys.readouterr().err
    assert "--day is every round's podium, --round heats one round's results" in err
    assert "give one of them" in err and not page.exists()


def test_day_on_a_one_round_folder_is_its_one_round(tmp_path, capsys):
    one = event_folder.init(tmp_path / "one", "cz-championship-individuals", "One Cup")
    (one / "entrants.csv").write_text("id,name\n1,Anna\n", encoding="utf-8")
    (one / "stations.csv").write_text("board,button,table,entrant\nT01,1,T1,1\n", encoding="utf-8")
    act(one, "round_start", f"at={int(time.time() * 1000) - 3 * 3_600_000}")
    act(one, "press", "entrant=1", "puzzle=1", "at=0:40:00")
    act(one, "confirm", "entrant=1", "puzzle=1")
    capsys.readouterr()
    assert cli.main(["results", str(one), "--day", "--json", "-"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["final"] is True and len(doc["rounds"]) == 1
    r = doc["rounds"][0]
    assert (r["round"], r["state"], [(p["award_place"], p["name"]) for p in r["podium"]]) == (
        "main", "final", [(1, "Anna")])
    page = tmp_path / "day.html"
    assert cli.main(["results", str(one), "--day", "--html", str(page)]) == 0
    assert "<span>1 round</span>" in page.read_text(encoding="utf-8") and 'class="banner"' not in page.read_text()


def test_day_on_a_folder_without_rounds_says_what_to_do(tmp_path, capsys):
    assert cli.main(["results", str(tmp_path / "nothing"), "--day"]) == 2
    assert "tabletimer round add" in capsys.readouterr().err
