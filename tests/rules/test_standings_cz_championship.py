"""Czech championship (seeds/000_ece84489642f6904.txt): individuals (2.1-2.4)
and teams of four (3.1-3.7).  Every expected result is worked out by hand
from the rule text, quoted next to it."""

from __future__ import annotations

from tabletimer.hub.rules.formats import parse_duration as d
from tabletimer.hub.rules.scenario import loads_scenario
from tabletimer.hub.rules.standings import Confirm, Entrant, Press, RoundStart, rank
from tabletimer.hub.rules.formats import load_format


def run(body: str, fmt: str = "cz-championship-individuals"):
    scn = loads_scenario(f'format = "{fmt}"\n' + body, "test.toml")
    rows = scn.standings()
    return {r.entrant: r for r in rows}, [r.entrant for r in rows]


def people(*ids: str) -> str:
    return "entrants = [" + ", ".join(f'{{ id = "{i}" }}' for i in ids) + "]\n"


# --- individuals -------------------------------------------------------------------------------

def test_plain_finish_order():
    """2.4 "Competitors who finish within 90 minutes are ranked by final time"."""
    by, order = run(people("A", "B", "C") + """timeline = [
        { at = "52:10", press = "B" }, { confirm = "B" },
        { at = "47:03", press = "C" }, { confirm = "C" },
        { at = "1:01:00", press = "A" }, { confirm = "A" },
    ]""")
    assert order == ["C", "B", "A"]
    assert [by[e].place for e in order] == [1, 2, 3]
    assert [by[e].net_time_ms for e in order] == [d("47:03"), d("52:10"), d("1:01:00")]
    assert all(by[e].status == "finished" and not by[e].provisional for e in order)


def test_penalties_change_the_order():
    """"a penalty of 10 seconds per missing piece is added to the recorded
    time": B 45:00 + 3 x 10 s = 45:30 falls behind A's 45:20."""
    by, order = run(people("A", "B") + """timeline = [
        { at = "45:00", press = "B" }, { confirm = "B", missing = 3 },
        { at = "45:20", press = "A" }, { confirm = "A" },
    ]""")
    assert order == ["A", "B"]
    assert (by["B"].time_ms, by["B"].penalty_ms, by["B"].net_time_ms) == (d("45:00"), 30_000, d("45:30"))
    assert by["B"].splits[0].missing_found == 3 and by["B"].splits[0].penalty_ms == 30_000


def test_finishers_rank_before_non_finishers_by_counted_pieces():
    """2.4: finishers by time, then "the number of correctly assembled pieces
    decides" - a finisher whose net time passes 90 min (1:29:50 + 20 s) is
    still a finisher; a press after the limit is no finish."""
    by, order = run(people("A", "B", "C", "D") + """timeline = [
        { at = "1:29:50", press = "A" }, { confirm = "A", missing = 2 },
        { at = "1:30:04", press = "D" },
        { count = "B", placed = 380 },
        { count = "C", placed = 495 },
        { count = "D", placed = 499 },
    ]""")
    assert order == ["A", "D", "C", "B"]
    assert by["A"].status == "finished" and by["A"].net_time_ms == d("1:30:10")
    assert by["D"].status == "unfinished" and by["D"].pieces == 499
    assert any("after time-up" in n for n in by["D"].notes)
    assert [by[e].place for e in order] == [1, 2, 3, 4]
    assert by["C"].net_time_ms is None and by["C"].penalty_ms == 0


def test_equal_counted_totals_share_the_place():
    """2.4 "If two or more competitors have the same counted piece total, the
    relevant places are shared": 1, 2, 2, 4."""
    by, order = run(people("A", "B", "C", "D") + """timeline = [
        { count = "A", placed = 450 }, { count = "B", placed = 420 },
        { count = "C", placed = 420 }, { count = "D", placed = 300 },
    ]""")
    assert [by[e].place for e in "ABCD"] == [1, 2, 2, 4]
    assert [by[e].award_place for e in "ABCD"] == [1, 2, 2, 4]


def test_times_are_compared_in_whole_seconds_as_recorded():
    """The referee records the time in whole seconds: 40:05.2 and 40:05.9 are
    both 40:05 and share; at millisecond resolution they do not."""
    body = people("A", "B", "C") + """timeline = [
        { at = "40:05.900", press = "A" }, { at = "40:05.200", press = "B" },
        { at = "40:06", press = "C" },
    ]"""
    by, _ = run(body)
    assert [by[e].place for e in "ABC"] == [1, 1, 3]
    assert by["A"].net_time_ms == d("40:05")
    fmt = load_format("cz-championship-individuals")
    import dataclasses
    fine = dataclasses.replace(fmt, resolution_ms=1)
    ents = [Entrant(e) for e in "ABC"]
    rows = rank(fine, ents, [RoundStart(1000), Press("A", 1, 1000 + d("40:05.900")),
                             Press("B", 1, 1000 + d("40:05.200")), Press("C", 1, 1000 + d("40:06"))])
    assert [(r.entrant, r.place, r.net_time_ms) for r in rows] == [
        ("B", 1, d("40:05.200")), ("A", 2, d("40:05.900")), ("C", 3, d("40:06"))]


def test_top_five_are_awarded():
    """2.4 "The top 5 competitors will be awarded" - everyone may take part
    and be awarded ("People of all nationalities may take part")."""
    ids = [f"E{i}" for i in range(1, 8)]
    body = people(*ids) + "timeline = [" + ", ".join(
        f'{{ at = "{40 + i}:00", press = "E{i}" }}' for i in range(1, 8)) + "]"
    by, order = run(body)
    assert [by[e].award_place for e in order] == [1, 2, 3, 4, 5, None, None]
    assert all(by[e].official for e in order)


def test_a_finish_is_provisional_until_the_referee_confirms_it():
    """"The referee checks the finished puzzle and records the time": until
    then the standings say provisional; a corrected confirmation replaces the
    first."""
    by, _ = run(people("A") + 'timeline = [{ at = "50:00", press = "A" }]')
    assert by["A"].provisional and by["A"].status == "finished"
    assert not by["A"].splits[0].confirmed
    by, _ = run(people("A") + """timeline = [
        { at = "50:00", press = "A" }, { confirm = "A", missing = 1 }, { confirm = "A", missing = 2 },
    ]""")
    assert not by["A"].provisional and by["A"].net_time_ms == d("50:20")


def test_a_voided_press_is_not_a_finish():
    """A hand raised too early (the referee finds the puzzle unfinished) is
    voided; the real finish counts."""
    by, _ = run(people("A", "B") + """timeline = [
        { at = "40:00", press = "A", id = "a1" },
        { void = "a1" },
        { at = "44:30", press = "A" }, { confirm = "A" },
        { at = "42:00", press = "B" }, { confirm = "B" },
    ]""")
    assert by["A"].net_time_ms == d("44:30") and by["A"].place == 2 and by["B"].place == 1


def test_disqualified_and_absent_entrants_have_no_place():
    by, order = run(people("A", "B", "C") + """timeline = [
        { at = "50:00", press = "A" },
        { at = "30:00", press = "B" },
        { dq = "B", reason = "searched the motif on a phone (2.3)" },
        { dns = "C" },
    ]""")
    assert order == ["A", "B", "C"]
    assert (by["B"].status, by["B"].place, by["B"].award_place, by["B"].reason) == \
        ("dq", None, None, "searched the motif on a phone (2.3)")
    assert (by["C"].status, by["C"].place) == ("dns", None)
    assert by["A"].place == 1


def test_live_standings_while_the_clock_runs():
    """now_ms before the limit: those still working are running, with no
    place and no award place (the format ranks the unfinished by their
    pieces at time-up), and they take none from those ranked."""
    fmt = load_format("cz-championship-individuals")
    ents = [Entrant("A"), Entrant("B"), Entrant("C")]
    rows = rank(fmt, ents, [RoundStart(0)], now_ms=d("1:00"))
    assert [(r.entrant, r.place, r.award_place, r.status) for r in rows] == [
        ("A", None, None, "running"), ("B", None, None, "running"), ("C", None, None, "running")]
    rows = rank(fmt, ents, [RoundStart(0), Press("A", 1, d("41:00"))], now_ms=d("45:00"))
    assert [(r.entrant, r.place, r.award_place, r.status, r.provisional) for r in rows] == [
        ("A", 1, 1, "finished", True), ("B", None, None, "running", True),
        ("C", None, None, "running", True)]
    # at time-up the format ranks them: by pieces (none counted yet: provisional, shared)
    rows = rank(fmt, ents, [RoundStart(0), Press("A", 1, d("41:00"))], now_ms=d("1:30:00"))
    assert [(r.entrant, r.place, r.award_place, r.status, r.provisional) for r in rows] == [
        ("A", 1, 1, "finished", True), ("B", 2, 2, "unfinished", True), ("C", 2, 2, "unfinished", True)]
    rows = rank(fmt, [Entrant("A")], [Press("A", 1, 5)])
    assert rows[0].status == "waiting" and rows[0].place is None


# --- teams of four -----------------------------------------------------------------------------

TEAMS = people("T1", "T2", "T3", "T4", "T5", "T6")


def full(team: str, times: list[str], missing: dict[int, int] | None = None) -> str:
    """Presses and confirmations of puzzles 1.. at these times."""
    missing = missing or {}
    return ", ".join(f'{{ at = "{t}", press = "{team}", puzzle = {i} }}, '
                     f'{{ confirm = "{team}", puzzle = {i}, missing = {missing.get(i, 0)} }}'
                     for i, t in enumerate(times, 1))


T1 = ["1:05:00", "1:10:00", "1:12:30", "1:20:00", "1:55:00", "2:02:00", "2:40:00", "3:58:20"]
T2 = ["58:00", "1:03:00", "1:15:00", "1:18:00", "1:50:00", "1:58:00", "2:35:00", "3:58:45"]


def test_final_time_runs_from_the_common_start_and_adds_every_penalty():
    """3.5 "Final time is counted from the shared competition start until the
    last 1000-piece puzzle is finished"; 3.6 "ranked by final time including
    any penalties" - the 10 s per missing piece of ALL puzzles: T1 finishes
    at 3:58:20 with 1 piece missing on puzzle 3 and 2 on the final:
    3:58:50, behind T2's clean 3:58:45.  (Counting only the final puzzle's
    penalty, T1 would be first with 3:58:40.)"""
    by, order = run(TEAMS + "timeline = [" + full("T1", T1, {3: 1, 8: 2}) + ", "
                    + full("T2", T2) + "]", "cz-championship-teams")
    assert order[:2] == ["T2", "T1"]
    assert (by["T1"].time_ms, by["T1"].penalty_ms, by["T1"].net_time_ms) == \
        (d("3:58:20"), 30_000, d("3:58:50"))
    assert by["T2"].net_time_ms == d("3:58:45") and by["T2"].place == 1


def test_split_and_part_times():
    """Parts follow each other without a break (3.1): part 2 starts when the
    last part-1 puzzle is finished (1:20:00), part 3 when both pairs are done
    (2:02:00), the final after part 3 (2:40:00)."""
    by, _ = run(TEAMS + "timeline = [" + full("T1", T1) + "]", "cz-championship-teams")
    sp = by["T1"].splits
    assert [s.time_ms for s in sp] == [d(t) for t in T1]
    assert [s.lap_ms for s in sp] == [d(t) for t in (
        "1:05:00", "1:10:00", "1:12:30", "1:20:00", "35:00", "42:00", "38:00", "1:18:20")]
    assert [s.pieces for s in sp] == [500] * 7 + [1000]


def test_non_finishers_rank_by_pieces_over_all_competition_puzzles():
    """3.6 "For teams that do not finish, the total number of correctly
    assembled pieces from the competition puzzles decides", unfinished
    puzzles counting groups >= 3.  T3: 7 x 500 with one piece missing on
    puzzle 5 (499 assembled) + 640 = 4139; T4: 3500 + 639 = 4139 - shared;
    T5: 6 x 500 + 480 = 3480; T6: stuck in part 1 with station 2
    finished: 500 + 400 + 380 + 410 = 1690."""
    seven = T1[:7]
    by, order = run(TEAMS + "timeline = [" + full("T3", seven, {5: 1}) + ", " + full("T4", seven) + ", "
                    + full("T5", seven[:6]) + ", "
                    + """{ at = "4:10:00", press = "T6", puzzle = 2 }, { confirm = "T6", puzzle = 2 },
                    { count = "T3", puzzle = 8, placed = 640 },
                    { count = "T4", puzzle = 8, placed = 639 },
                    { count = "T5", puzzle = 7, placed = 480 },
                    { count = "T6", puzzle = 1, placed = 400 }, { count = "T6", puzzle = 3, placed = 380 },
                    { count = "T6", puzzle = 4, placed = 410 },
                    { at = "2:00:00", press = "T1", puzzle = 1 }, { confirm = "T1", puzzle = 1 },
                    { count = "T1", puzzle = 2, placed = 100 }, { count = "T1", puzzle = 3, placed = 100 },
                    { count = "T1", puzzle = 4, placed = 100 }, { count = "T2", puzzle = 1, placed = 499 },
                    ]""", "cz-championship-teams")
    assert order == ["T3", "T4", "T5", "T6", "T1", "T2"]
    assert [by[e].pieces for e in order] == [4139, 4139, 3480, 1690, 800, 499]
    assert [by[e].place for e in order] == [1, 1, 3, 4, 5, 6]
    assert [by[e].award_place for e in order] == [1, 1, 3, 4, 5, None]
    assert by["T3"].splits[4].credited == 499 and by["T3"].splits[7].credited == 640
    assert all(by[e].status == "unfinished" for e in order)


def test_a_finisher_beats_any_non_finisher():
    """Finishers within 5 h come first, whatever pieces the others have."""
    by, order = run(TEAMS + "timeline = [" + full("T1", T1[:7]) + ", "
                    + '{ count = "T1", puzzle = 8, placed = 999 }, '
                    + full("T2", T2[:7] + ["4:59:59"], {8: 30}) + "]", "cz-championship-teams")
    assert order[:2] == ["T2", "T1"]
    assert by["T2"].net_time_ms == d("5:04:59") and by["T2"].status == "finished"


def test_a_team_is_provisional_until_every_puzzle_is_confirmed():
    body = TEAMS + "timeline = [" + full("T1", T1) + ', { at = "5:00", press = "T2", puzzle = 1 }]'
    body = body.replace('{ confirm = "T1", puzzle = 6, missing = 0 }, ', "")
    by, _ = run(body, "cz-championship-teams")
    assert by["T1"].provisional and not by["T1"].splits[5].confirmed and by["T1"].splits[4].confirmed


def test_engine_accepts_confirmations_by_press_id():
    """The hub confirms presses by id (its event ids)."""
    fmt = load_format("cz-championship-teams")
    facts = [RoundStart(10_000)]
    for i, t in enumerate(T2, 1):
        facts.append(Press("T2", i, 10_000 + d(t), f"p{i}"))
        facts.append(Confirm(press_id=f"p{i}", missing_found=1 if i == 8 else 0))
    rows = rank(fmt, [Entrant("T2")], facts)
    assert rows[0].net_time_ms == d("3:58:55") and not rows[0].provisional
