"""Scenario files (docs/scenarios.md) and `tabletimer dry-run`: the shipped
examples, the guide's own example, and clear errors for bad input."""

from __future__ import annotations

import argparse
import json
import re

import pytest

from tabletimer import repo_root
from tabletimer.hub.cli import formats as cli_formats
from tabletimer.hub.rules.formats import format_text, preset_names
from tabletimer.hub.rules.scenario import ScenarioError, check_expectations, load_scenario, loads_scenario
from tabletimer.hub.rules.standings import Confirm, Count, Press, RoundStart, StartOffset, Swap, Void
from clocks import FixedClock

SCENARIOS = sorted((repo_root() / "scenarios").glob("*.toml"))
GUIDE = repo_root() / "docs" / "scenarios.md"


def dry_run(*argv: str) -> int:
    p = argparse.ArgumentParser(prog="tabletimer")
    cli_formats.add_subcommands(p.add_subparsers(dest="cmd", required=True))
    args = p.parse_args(["dry-run", *argv])
    return args.func(args)


def test_every_preset_has_a_shipped_scenario():
    used = {load_scenario(p).format.name for p in SCENARIOS}
    assert used == set(preset_names())


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_shipped_scenario_meets_its_expectations(path, capsys):
    scn = load_scenario(path)
    assert scn.expect, "a shipped scenario says what it expects"
    assert check_expectations(scn, scn.standings()) == []
    assert dry_run(str(path), "--splits") == 0
    out = capsys.readouterr().out
    assert scn.format.name in out and "place" in out
    assert dry_run(str(path), "--json") == 0
    rows = json.loads(capsys.readouterr().out)["standings"]
    assert {r["entrant"] for r in rows} == {e.id for e in scn.entrants}


def _guide_example() -> tuple[str, str]:
    text = GUIDE.read_text()
    part = text.split("## Complete example", 1)[1]
    toml = re.search(r"```toml\n(.*?)```", part, re.S)
    printed = re.search(r"prints:\n\n```\n(.*?)```", part, re.S)
    assert toml and printed, "docs/scenarios.md has its complete example and its output"
    return toml.group(1), printed.group(1)


def test_the_guides_complete_example_runs_and_prints_what_the_guide_shows(tmp_path, capsys):
    toml, printed = _guide_example()
    p = tmp_path / "example.toml"
    p.write_text(toml)
    assert dry_run(str(p)) == 0
    assert capsys.readouterr().out.strip() == printed.strip()


def test_json_has_the_documented_fields(tmp_path, capsys):
    toml, _ = _guide_example()
    p = tmp_path / "example.toml"
    p.write_text(toml)
    assert dry_run(str(p), "--json") == 0
    doc = json.loads(capsys.readouterr().out)
    assert set(doc) == {"now", "standings", "relay"} and doc["relay"] == []      # no relay here
    rows = doc["standings"]
    assert [r["entrant"] for r in rows] == ["ingrid", "sigrid", "ola", "kari", "lars", "nils"]
    kari = rows[3]
    assert set(kari) == {"place", "award_place", "entrant", "name", "official", "status", "reason",
                         "time_ms", "penalty_ms", "net_time_ms", "pieces", "deducted_pieces",
                         "provisional", "notes", "splits"}
    assert (kari["place"], kari["award_place"], kari["time_ms"], kari["penalty_ms"],
            kari["net_time_ms"]) == (4, 3, 3_480_000, 10_000, 3_490_000)
    sp = kari["splits"][0]
    assert set(sp) == {"puzzle", "pieces", "status", "time_ms", "lap_ms", "confirmed", "press_id",
                       "missing_found", "missing_lost", "missing_adjacent", "penalty_ms",
                       "deducted", "credited"}
    assert (sp["missing_found"], sp["confirmed"], sp["status"]) == (2, True, "finished")
    assert rows[4]["pieces"] == 470 and rows[4]["provisional"] is False


def test_scenario_to_facts():
    scn = loads_scenario('''
format = "czjpa-teams"
entrants = [{ id = "A", members = ["x", "y", "z"] }]
timeline = [
  { at = "20:00", swap = "A", packed = 2, opened = 1 },
  { at = "1:30:00", press = "A", puzzle = 1, id = "p" },
  { confirm = "A", id = "p", missing = 1, lost = 2 },
  { at = "1:31:00", press = "A", puzzle = 1 },
  { void = "A", puzzle = 1 },
  { count = "A", puzzle = 2, remaining = 100 },
]''')
    assert scn.facts == [
        RoundStart(0), Swap("A", 1_200_000, 2, 1), Press("A", 1, 5_400_000, "p"),
        Confirm("A", 0, "p", 1, 2, 0), Press("A", 1, 5_460_000, "A:1#1"), Void("p"),
        Count("A", 2, None, 100)]
    assert scn.entrants[0].members[2].name == "z" and scn.now_ms is None


def test_now_leaves_out_later_events_and_shows_the_relay(tmp_path, capsys):
    p = tmp_path / "live.toml"
    p.write_text('''format = "cz-championship-teams"
now = "20:00"
entrants = [{ id = "T1", members = ["Adam", "Bara", "Cenek", "Dita"] }]
timeline = [{ at = "10:00", press = "T1", puzzle = 3 }, { at = "30:00", press = "T1", puzzle = 1 }]
expect = [{ entrant = "T1", status = "running", pieces = 500, provisional = true }]
''')
    assert dry_run(str(p)) == 0
    out = capsys.readouterr().out
    assert "standings at 0:20:00 (live)" in out
    assert "Cenek @ 1, Dita @ 2, Adam @ 4; finished: 3 by Bara 0:10:00; next signal 0:24:00" in out


def test_start_offsets_become_facts():
    scn = loads_scenario('format = "rogaland-individuals"\nentrants = [{ id = "A" }]\n'
                         'timeline = [{ at = "2:30", start = "A" }]')
    assert scn.facts[1] == StartOffset("A", 150_000)


def test_a_format_file_next_to_the_scenario(tmp_path):
    (tmp_path / "f").mkdir()
    (tmp_path / "f" / "club.toml").write_text(
        format_text("czjpa-individuals").replace("seconds_per_piece = 10", "seconds_per_piece = 30"))
    p = tmp_path / "s.toml"
    p.write_text('format = "f/club.toml"\nentrants = [{ id = "A" }]\n'
                 'timeline = [{ at = "10:00", press = "A" }, { confirm = "A", missing = 1 }]')
    scn = load_scenario(p)
    assert scn.format.name == "club" and scn.standings()[0].net_time_ms == 630_000


def test_failed_expectations_exit_1(tmp_path, capsys):
    p = tmp_path / "s.toml"
    p.write_text('format = "czjpa-individuals"\nentrants = [{ id = "A" }, { id = "B" }]\n'
                 'timeline = [{ at = "10:00", press = "A" }, { at = "9:00", press = "B" }]\n'
                 'expect = [{ entrant = "A", place = 1, net = "9:59" }, { entrant = "B", award = false }]')
    assert dry_run(str(p)) == 1
    err = capsys.readouterr().err
    assert "A: place expected 1, got 2" in err
    assert "A: net expected 0:09:59, got 0:10:00" in err
    assert "B: award expected None, got 1" in err


# --- bad input: a clear error naming the entry and the key, exit 2 ---

BAD = [
    ('entrants = [{ id = "A" }]\ntimeline = [{ at = "10:00", press = "B" }]',
     'timeline[0] (line 3) { at = "10:00", press = "B" }: press: unknown entrant \'B\''),
    ('entrants = [{ id = "A" }]\ntimeline = [{ press = "A" }]',
     'timeline[0] (line 3) { press = "A" }: at: a press needs the time'),
    ('entrants = [{ id = "A" }]\ntimeline = [{ at = "1:75", press = "A" }]',
     "timeline[0] (line 3) { at = \"1:75\", press = \"A\" }: at: expected a duration"),
    ('entrants = [{ id = "A" }]\ntimeline = [{ at = "10:00", press = "A", puzzle = 2 }]',
     "puzzle: expected 1-1, got 2"),
    ('entrants = [{ id = "A" }]\ntimeline = [{ at = "10:00", press = "A", station = 1 }]',
     "station: not a key of a press event"),
    ('entrants = [{ id = "A" }]\ntimeline = [{ at = "10:00", press = "A", dq = "A" }]',
     "expected exactly one of press, confirm"),
    ('entrants = [{ id = "A" }]\ntimeline = [{ count = "A", placed = 10, remaining = 490 }]',
     "expected exactly one of placed, remaining"),
    ('entrants = [{ id = "A" }]\ntimeline = [{ count = "A", placed = 501 }]',
     "placed: puzzle 1 has 500 pieces, got 501"),
    ('entrants = [{ id = "A" }]\ntimeline = [{ confirm = "A" }]',
     "no press of A for puzzle 1 to confirm so far"),
    ('entrants = [{ id = "A" }]\ntimeline = [{ at = "1:00", press = "A" }, { confirm = "A", missing = -1 }]',
     "missing: expected a number of pieces >= 0"),
    ('entrants = [{ id = "A" }]\ntimeline = [{ at = "1:00", start = "A" }]',
     "gives no per-entrant start times"),
    ('entrants = [{ id = "A" }]\ntimeline = [{ at = "1:00", swap = "A", packed = 1, opened = 1 }]',
     "has no part worked in a chosen order"),
    ('entrants = [{ id = "A" }]\ntimeline = [{ dq = "A" }]', "reason: a disqualification needs a reason"),
    ('entrants = [{ id = "A" }]\ntimeline = [{ void = "zz" }]', "void: expected a press id or an entrant id"),
    ('entrants = [{ id = "A" }, { id = "A" }]', "entrants[1] (line 2) { id = \"A\" }: id: 'A' is used twice"),
    ('entrants = [{ id = "A", nmae = "x" }]', "nmae: unknown key"),
    ('entrants = []', "entrants: expected a non-empty list"),
    ('entrants = [{ id = "A" }]\nexpect = [{ entrant = "A", plcae = 1 }]', "plcae: unknown key"),
    ('entrants = [{ id = "A" }]\ntimelime = []', "timelime: unknown key"),
    ('entrants = [{ id = "A" }]\nnow = 5', "now: expected a duration"),
    ('[[entrants]]\nid = "A"\ntimeline = []', "timeline: unknown key", ),
]


@pytest.mark.parametrize("body,message", BAD)
def test_bad_scenarios(body, message):
    with pytest.raises(ScenarioError) as e:
        loads_scenario('format = "czjpa-individuals"\n' + body, "bad.toml")
    assert str(e.value).startswith("bad.toml: ")
    assert message in str(e.value)


def test_toml_key_after_a_table_header_gets_a_hint():
    with pytest.raises(ScenarioError, match=r"put top-level keys such as timeline before the first"):
        loads_scenario('format = "czjpa-individuals"\n[[entrants]]\nid = "A"\ntimeline = []', "s.toml")


def test_format_errors_and_member_counts():
    with pytest.raises(ScenarioError, match=r"s.toml: format: .*no such preset"):
        loads_scenario('format = "nope"\nentrants = [{ id = "A" }]', "s.toml")
    with pytest.raises(ScenarioError, match=r"s.toml: format: missing"):
        loads_scenario('entrants = [{ id = "A" }]', "s.toml")
    with pytest.raises(ScenarioError, match=r"members: a team of rogaland-teams has 3-4 members, got 2"):
        loads_scenario('format = "rogaland-teams"\nentrants = [{ id = "A", members = ["x", "y"] }]', "s.toml")
    many = ", ".join(f'{{ id = "E{i}" }}' for i in range(31))
    with pytest.raises(ScenarioError, match=r"31 entrants, but rogaland-pairs takes at most 30"):
        loads_scenario(f'format = "rogaland-pairs"\nentrants = [{many}]', "s.toml")
    with pytest.raises(ScenarioError, match=r"puzzle: required, cz-championship-teams has puzzles 1-8"):
        loads_scenario('format = "cz-championship-teams"\nentrants = [{ id = "A" }]\n'
                       'timeline = [{ at = "1:00", press = "A" }]', "s.toml")


def test_dry_run_bad_input_exits_2(tmp_path, capsys):
    p = tmp_path / "broken.toml"
    p.write_text('format = "czjpa-individuals"\nentrants = [{ id = "A" }]\ntimeline = [{ at = 1:00 }]\n')
    assert dry_run(str(p)) == 2
    err = capsys.readouterr().err
    assert "broken.toml: not valid TOML" in err and "line 3" in err
    assert dry_run(str(tmp_path / "absent.toml")) == 2
    assert "cannot read the scenario" in capsys.readouterr().err


def test_dry_run_json_says_who_sits_at_which_puzzle_in_a_relay(tmp_path, capsys):
    """The relay as data (the same model as the table view): at 20:00 Ana
    (member 1) finished puzzle 2 at 10:00, the others sit at 4, 1 and 3,
    the next signal is at 24:00 and 35 more come before the 5 h limit."""
    p = tmp_path / "relay.toml"
    p.write_text('format = "cz-championship-teams"\nnow = "20:00"\n'
                 'entrants = [{ id = "A", members = ["Ana", "Bo", "Cy", "Di"] }]\n'
                 'timeline = [ { at = "10:00", press = "A", puzzle = 2 } ]\n')
    assert dry_run(str(p), "--json") == 0
    (team,) = json.loads(capsys.readouterr().out)["relay"]
    assert team == {"entrant": "A", "started": True, "complete": False,
                    "at_puzzle": {"2": 4, "3": 1, "4": 3}, "finished": {"2": {"at_ms": 600_000, "member": 1}},
                    "next_signal_at": 1_440_000, "signals_left": 35,
                    "next_moves": [[3, 1, 3], [4, 3, 4], [2, 4, 1]]}
    assert dry_run(str(p)) == 0
    assert "A: Cy @ 1, Di @ 3, Bo @ 4; finished: 2 by Ana 0:10:00; next signal 0:24:00" in capsys.readouterr().out


def test_a_corrected_time_in_a_scenario_ranks_as_the_hubs_act_correct(tmp_path):
    """`correct` (the referee's watch says 1:05:00, not the button's 1:05:30)
    gives the standings the hub gives for `act correct`: the new time, the
    confirmation and its missing pieces kept."""
    from tabletimer.hub.event.fold.competition import Competition
    from tabletimer.hub.core.service import HubService
    from tabletimer.hub.protocol.keys import BoardKeys
    from tabletimer.hub.event.log.store import EventStore

    scn = loads_scenario('''
format = "cz-championship-individuals"
entrants = [{ id = "A" }, { id = "B" }]
timeline = [
  { at = "1:05:30", press = "A", id = "a1" },
  { confirm = "A", missing = 1 },
  { at = "1:10:00", press = "B" },
  { confirm = "B", id = "B:1#1" },
  { at = "1:05:00", correct = "a1" },
  { at = "1:09:00", correct = "B" },
]''')
    want = [(r.entrant, r.time_ms, r.penalty_ms, r.provisional) for r in scn.standings()]
    assert want == [("A", 3_900_000, 10_000, False), ("B", 4_140_000, 0, False)]

    T = 1_796_000_000_000

    class Clock(FixedClock):
        t = T + 6 * 3_600_000
    svc = HubService(EventStore(tmp_path / "e.sqlite"), BoardKeys(keys={}),
                     Competition(scn.format, scn.entrants, []), Clock())
    svc.act("round_start", {"at": T})
    a = svc.act("press", {"entrant": "A", "puzzle": 1, "at": T + 3_930_000})
    svc.act("confirm", {"entrant": "A", "puzzle": 1, "missing_found": 1})
    b = svc.act("press", {"entrant": "B", "puzzle": 1, "at": T + 4_200_000})
    svc.act("confirm", {"press_id": f"op/{b['id']}"})
    svc.act("correct", {"press_id": f"op/{a['id']}", "at": T + 3_900_000})
    svc.act("correct", {"press_id": f"op/{b['id']}", "at": T + 4_140_000})
    got = [(r.entrant, r.time_ms, r.penalty_ms, r.provisional) for r in svc.standings(final=True)]
    svc.store.close()
    assert got == want
