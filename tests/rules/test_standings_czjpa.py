"""Czech Jigsaw Puzzle Association (seeds/001_9776dcf7348a8903.txt):
individuals, pairs, and teams with a chosen order and swaps.  Expected results
are worked out by hand from the rule text."""

from __future__ import annotations

from tabletimer.hub.rules.formats import parse_duration as d
from tabletimer.hub.rules.scenario import loads_scenario


def run(fmt: str, body: str):
    scn = loads_scenario(f'format = "{fmt}"\n' + body, "test.toml")
    rows = scn.standings()
    return {r.entrant: r for r in rows}, [r.entrant for r in rows]


# --- individuals (500 pieces, 120 min) --------------------------------------------------------

def test_individuals_plain_order_penalty_and_non_finishers():
    """"10 seconds per missing piece will be added to the recorded time":
    P3 54:40 + 4 x 10 s = 55:20 drops behind P1 (55:10).  "If no one finishes
    within the time limit ... the highest number of correctly placed pieces":
    non-finishers after finishers, by pieces; equal counts share."""
    by, order = run("czjpa-individuals", """
        entrants = [{ id = "P1" }, { id = "P3" }, { id = "P4" }, { id = "P5" }, { id = "P6" }, { id = "P7" }]
        timeline = [
          { at = "54:40", press = "P3" }, { confirm = "P3", missing = 4 },
          { at = "55:10", press = "P1" }, { confirm = "P1" },
          { at = "1:59:59", press = "P4" }, { confirm = "P4" },
          { count = "P5", placed = 480 }, { count = "P6", placed = 480 }, { count = "P7", placed = 300 },
        ]""")
    assert order == ["P1", "P3", "P4", "P5", "P6", "P7"]
    assert [by[e].place for e in order] == [1, 2, 3, 4, 4, 6]
    assert by["P3"].net_time_ms == d("55:20")
    assert [by[e].award_place for e in order] == [1, 2, 3, None, None, None]


def test_prizes_only_for_participants_from_the_czech_republic():
    """"1st-3rd place ... receive prizes - valid only for participants from
    the Czech Republic": a Slovak winner keeps place 1 but no award place;
    the award places go to the next Czech participants."""
    by, order = run("czjpa-individuals", """
        entrants = [{ id = "SK", eligible = false }, { id = "C1" }, { id = "C2" }, { id = "C3" }, { id = "C4" }]
        timeline = [
          { at = "48:30", press = "SK" }, { at = "50:00", press = "C1" }, { at = "51:00", press = "C2" },
          { at = "52:00", press = "C3" }, { at = "53:00", press = "C4" },
        ]""")
    assert [(by[e].place, by[e].award_place, by[e].official) for e in order] == [
        (1, None, False), (2, 1, True), (3, 2, True), (4, 3, True), (5, None, True)]


def test_a_late_competitor_gives_up_the_spot():
    """"The organizer may assign a spot to another participant if a
    competitor doesn't arrive within 10 minutes": recorded as did-not-start."""
    by, order = run("czjpa-individuals", """
        entrants = [{ id = "A" }, { id = "B" }]
        timeline = [{ at = "10:00", dns = "B" }, { at = "1:00:00", press = "A" }]""")
    assert order == ["A", "B"] and by["B"].status == "dns" and by["B"].place is None


# --- pairs (500 pieces, 90 min) ---------------------------------------------------------------

def test_pairs_share_equal_times_and_prizes_follow_czech_members():
    """Q2 1:04:50 + 10 s = 1:05:00, the same as Q1: shared place 2.  A pair of
    two foreigners is ranked but takes no prize; a pair with one Czech
    member does (the preset's reading, prizes.eligible_members_min = 1)."""
    by, order = run("czjpa-pairs", """
        entrants = [
          { id = "Q1", members = ["Jana", "Petr"] },
          { id = "Q2", members = ["Anna", "Eva"], ineligible = ["Anna"] },
          { id = "Q3", members = ["Tom", "Max"], ineligible = ["Tom", "Max"] },
          { id = "Q4", members = ["Iva", "Olga"] },
          { id = "Q5", members = ["Karel", "Rut"] },
          { id = "Q6", members = ["Saša", "Vít"] },
        ]
        timeline = [
          { at = "1:02:00", press = "Q3" }, { confirm = "Q3" },
          { at = "1:04:50", press = "Q2" }, { confirm = "Q2", missing = 1 },
          { at = "1:05:00", press = "Q1" }, { confirm = "Q1" },
          { at = "1:30:01", press = "Q4" },
          { count = "Q4", placed = 499 }, { count = "Q5", placed = 450 }, { count = "Q6", placed = 450 },
        ]""")
    assert order == ["Q3", "Q1", "Q2", "Q4", "Q5", "Q6"]
    assert [(by[e].place, by[e].award_place) for e in order] == [
        (1, None), (2, 1), (2, 1), (4, 3), (5, None), (5, None)]
    assert by["Q4"].status == "unfinished" and by["Q4"].pieces == 499


# --- teams: 1000 + 500 in a chosen order, 180 min ---------------------------------------------

TEAMS = """entrants = [
  { id = "R1", members = ["a", "b", "c"] }, { id = "R2", members = ["d", "e", "f", "g"] },
  { id = "R3", members = ["h", "i", "j"] }, { id = "R4", members = ["k", "l", "m"] },
  { id = "R5", members = ["n", "o", "p"] }, { id = "R6", members = ["q", "r", "s"] },
]
"""


def test_teams_in_either_order_rank_by_the_last_finish():
    """"Teams choose the order of puzzles themselves": R1 does the 1000 then
    the 500 (done 2:20:00); R3 the 500 then the 1000 (done 2:10:00).  The
    final time is the finish of the second puzzle; laps are per puzzle.
    R4 finishes first (2:09:40), but 3 missing pieces (two on the 1000, one
    on the 500) add 30 s: 2:10:10, behind R3."""
    by, order = run("czjpa-teams", TEAMS + """timeline = [
        { at = "1:40:00", press = "R1", puzzle = 1 }, { confirm = "R1", puzzle = 1 },
        { at = "2:20:00", press = "R1", puzzle = 2 }, { confirm = "R1", puzzle = 2 },
        { at = "35:00", press = "R3", puzzle = 2 }, { confirm = "R3", puzzle = 2 },
        { at = "2:10:00", press = "R3", puzzle = 1 }, { confirm = "R3", puzzle = 1 },
        { at = "1:30:00", press = "R4", puzzle = 1 }, { confirm = "R4", puzzle = 1, missing = 2 },
        { at = "2:09:40", press = "R4", puzzle = 2 }, { confirm = "R4", puzzle = 2, missing = 1 },
    ]""")
    assert order[:3] == ["R3", "R4", "R1"]
    assert (by["R4"].time_ms, by["R4"].penalty_ms, by["R4"].net_time_ms) == (d("2:09:40"), 30_000, d("2:10:10"))
    assert by["R3"].net_time_ms == d("2:10:00") and by["R1"].net_time_ms == d("2:20:00")
    assert [s.lap_ms for s in by["R3"].splits] == [d("1:35:00"), d("35:00")]
    assert [s.lap_ms for s in by["R1"].splits] == [d("1:40:00"), d("40:00")]


def test_a_swap_packs_the_unfinished_puzzle_away():
    """"If a team decides to swap an unfinished puzzle for the other, the
    first must be fully disassembled and placed back into the box."
    R2 starts the 500, swaps to the 1000 at 20:00, finishes it at 1:30:00,
    then the 500 from scratch at 2:15:30 with one piece missing: 2:15:40 -
    ahead of R1 (2:20:00).  Laps: the 1000 from the swap, the 500 from the
    1000's finish.
    R5 packs the 1000 (900 done) at 2:30:00 for the 500: at time-up only the
    500 on the table counts (450); the count entered for the boxed 1000 is
    ignored.  R4 swapped the 1000 for the 500, finished the 500 and went back
    to the 1000: its 700 count (puzzle on the table again).  R6 finished the
    1000 with 3 missing (997 assembled) + 303 = 1300, the same as R3's 500 +
    800: shared place."""
    by, order = run("czjpa-teams", TEAMS + """timeline = [
        { at = "1:40:00", press = "R1", puzzle = 1 }, { confirm = "R1", puzzle = 1 },
        { at = "2:20:00", press = "R1", puzzle = 2 }, { confirm = "R1", puzzle = 2 },
        { at = "20:00", swap = "R2", packed = 2, opened = 1 },
        { at = "1:30:00", press = "R2", puzzle = 1 }, { confirm = "R2", puzzle = 1 },
        { at = "2:15:30", press = "R2", puzzle = 2 }, { confirm = "R2", puzzle = 2, missing = 1 },
        { at = "35:00", press = "R3", puzzle = 2 }, { confirm = "R3", puzzle = 2 },
        { at = "1:00:00", swap = "R4", packed = 1, opened = 2 },
        { at = "1:40:00", press = "R4", puzzle = 2 }, { confirm = "R4", puzzle = 2 },
        { at = "2:30:00", swap = "R5", packed = 1, opened = 2 },
        { at = "2:50:00", press = "R6", puzzle = 1 }, { confirm = "R6", puzzle = 1, missing = 3 },
        { count = "R3", puzzle = 1, placed = 800 },
        { count = "R4", puzzle = 1, placed = 700 },
        { count = "R5", puzzle = 2, placed = 450 },
        { count = "R5", puzzle = 1, placed = 900 },
        { count = "R6", puzzle = 2, placed = 303 },
    ]""")
    assert order == ["R2", "R1", "R3", "R6", "R4", "R5"]
    assert [by[e].place for e in order] == [1, 2, 3, 3, 5, 6]
    assert [by[e].award_place for e in order] == [1, 2, 3, 3, None, None]
    assert (by["R2"].time_ms, by["R2"].net_time_ms) == (d("2:15:30"), d("2:15:40"))
    assert [s.lap_ms for s in by["R2"].splits] == [d("1:10:00"), d("45:30")]
    assert [by[e].pieces for e in ("R3", "R6", "R4", "R5")] == [1300, 1300, 1200, 450]
    assert [s.status for s in by["R5"].splits] == ["packed", "unfinished"]
    assert any("packed away" in n for n in by["R5"].notes)
    assert by["R4"].splits[0].status == "unfinished" and by["R4"].splits[0].credited == 700


def test_only_one_puzzle_is_on_the_table_at_time_up():
    """"Only one puzzle may be laid out on the table at a time": counts for
    both puzzles of a team cannot both be right; the last one entered is
    used and the standings say so."""
    by, _ = run("czjpa-teams", TEAMS + """timeline = [
        { count = "R1", puzzle = 1, placed = 600 },
        { count = "R1", puzzle = 2, placed = 200 },
    ]""")
    assert by["R1"].pieces == 200
    assert any("only one puzzle is on the table" in n for n in by["R1"].notes)
