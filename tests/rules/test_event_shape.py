"""The rounds of the WJPC's shape (rules/event_shape.py; `tabletimer round
add-wjpc`): six groups, two semi-finals and a 180-person final, each later
round with the best of each country then the next best; bad shapes refused."""

from __future__ import annotations

import tomllib

import pytest

from tabletimer.hub.cli import main as cli
from tabletimer.hub.event.folder import event_folder, rounds
from tabletimer.hub.rules.event_shape import ShapeError, wjpc_rounds


def test_the_wjpc_2024_shape():
    shape = wjpc_rounds()
    assert [r.name for r in shape] == [f"group-{g}" for g in "abcdef"] + ["semi-1", "semi-2", "final"]
    semi1, semi2, final = (r.advancement for r in shape[6:])
    assert semi1 is not None and semi2 is not None and final is not None
    assert (semi1.sources, semi1.per_country, semi1.total) == (("group-a", "group-b", "group-c"), 1, 180)
    assert semi2.sources == ("group-d", "group-e", "group-f") and semi2.total == 180
    assert (final.sources, final.per_country, final.total, final.ties) == (("semi-1", "semi-2"), 1, 180, "desk")
    assert all(r.advancement is None for r in shape[:6])
    # the table as format.toml says it reads back to the same rule
    assert tomllib.loads(shape[-1].toml())["advancement"] == shape[-1].rule


def test_groups_straight_into_a_final_and_odd_group_counts():
    shape = wjpc_rounds(3, 0, final=6)
    assert [r.name for r in shape] == ["group-a", "group-b", "group-c", "final"]
    assert shape[-1].advancement.sources == ("group-a", "group-b", "group-c")
    five = wjpc_rounds(5, 2, per_group=10)
    assert five[5].advancement.sources == ("group-a", "group-b", "group-c") and five[5].advancement.total == 30
    assert five[6].advancement.sources == ("group-d", "group-e") and five[6].advancement.total == 20


@pytest.mark.parametrize("kw,says", [
    ({"groups": 0}, "1 to 26 first-round groups"),
    ({"groups": 27}, "1 to 26 first-round groups"),
    ({"semis": 1}, r"--semis 1: 2 \(two semi-finals"),
    ({"groups": 1, "semis": 2}, "two semi-finals need at least two groups"),
    ({"final": 0}, "--final 0: a whole number"),
])
def test_a_shape_that_cannot_be_made_says_why(kw, says):
    with pytest.raises(ShapeError, match=says):
        wjpc_rounds(**kw)


def test_round_add_wjpc_makes_every_round_or_none(tmp_path, capsys):
    hall = tmp_path / "wjpc"
    assert cli.main(["round", "add-wjpc", str(hall), "--groups", "6", "--semis", "2", "--title", "WJPC 2027"]) == 0
    out = capsys.readouterr().out
    assert "round semi-1   its entrants advance from group-a, group-b, group-c: the best 1 of each country" in out
    assert rounds.names(hall) == [f"group-{g}" for g in "abcdef"] + ["semi-1", "semi-2", "final"]
    final = event_folder.load(hall, "final")
    assert final.format.name == "format" and final.format.title.startswith("World Jigsaw Puzzle Championship")
    assert final.format.advancement is not None and final.format.advancement.sources == ("semi-1", "semi-2")
    assert (hall / "rounds" / "group-a" / "entrants.csv").read_text().startswith("id,name,country\n")
    assert event_folder.event_title(hall) == "WJPC 2027"
    # again: refused, nothing written
    before = sorted(p.relative_to(hall) for p in hall.rglob("*"))
    assert cli.main(["round", "add-wjpc", str(hall)]) == 2
    assert "has the rounds group-a" in capsys.readouterr().err
    assert sorted(p.relative_to(hall) for p in hall.rglob("*")) == before
    assert cli.main(["round", "add-wjpc", str(tmp_path / "none"), "--groups", "1"]) == 2
    assert not (tmp_path / "none").exists()
