"""Danish team championship (seeds/003_a304b844d63e9cdf.txt, Danish).
Expected results are worked out by hand from the rule text, quoted (with a
translation) next to each test.  The preset's three 1000-piece puzzles and
3 hours are placeholders; the ranking rules are the text's."""

from __future__ import annotations

from tabletimer.hub.rules.formats import parse_duration as d
from tabletimer.hub.rules.scenario import loads_scenario


def run(body: str):
    scn = loads_scenario('format = "dk-team-championship"\n' + body, "test.toml")
    rows = scn.standings()
    return {r.entrant: r for r in rows}, [r.entrant for r in rows]


def teams(*ids: str) -> str:
    return "entrants = [" + ", ".join(f'{{ id = "{i}" }}' for i in ids) + "]\n"


def done(team: str, times: list[str], **confirm: str) -> str:
    """Presses at these times for puzzles 1.., each confirmed; confirm["2"]
    adds keys to puzzle 2's confirmation."""
    return ", ".join(f'{{ at = "{t}", press = "{team}", puzzle = {i} }}, '
                     f'{{ confirm = "{team}", puzzle = {i}{", " + confirm[str(i)] if str(i) in confirm else ""} }}'
                     for i, t in enumerate(times, 1))


def test_most_pieces_wins_then_the_earlier_last_whole_puzzle():
    """"Vinderen er det hold, der har lagt flest brikker. Ved ligestilling går
    det hold forrest, der først fik lagt sit sidste hele puslespil færdigt."
    (Most pieces wins; on a tie the team that first finished its last whole
    puzzle goes ahead.)  D1 and D3 both have all 3000: D1's last puzzle at
    2:35:00 beats D3's 2:40:00."""
    by, order = run(teams("D1", "D3") + "timeline = [" + done("D3", ["55:00", "1:45:00", "2:40:00"])
                    + ", " + done("D1", ["50:00", "1:40:00", "2:35:00"]) + "]")
    assert order == ["D1", "D3"]
    assert [(by[e].place, by[e].pieces, by[e].time_ms) for e in order] == [
        (1, 3000, d("2:35:00")), (2, 3000, d("2:40:00"))]
    assert all(by[e].status == "finished" for e in order)


def test_missing_pieces_are_subtracted_and_change_the_order():
    """"Hvis der mangler brikker ved afslutningen af et puslespil, noteres
    dette, og det trækkes fra i det samlede antal lagte brikker" (missing
    pieces are noted and subtracted from the total of laid pieces): D2 is
    the fastest, but one missing piece puts it behind D3."""
    by, order = run(teams("D2", "D3") + "timeline = ["
                    + done("D2", ["48:00", "1:35:00", "2:30:00"], **{"1": "missing = 1"}) + ", "
                    + done("D3", ["55:00", "1:45:00", "2:40:00"]) + "]")
    assert order == ["D3", "D2"]
    assert (by["D2"].pieces, by["D2"].deducted_pieces, by["D2"].penalty_ms) == (2999, 1, 0)
    assert by["D2"].splits[0].deducted == 1 and by["D2"].splits[0].credited == 999


def test_adjacent_missing_pieces_are_a_production_fault():
    """"Mangler der 2 eller flere brikker, der sidder ved siden af hinanden,
    betragtes det som en produktionsfejl, og de trækkes ikke fra." (2 or more
    missing pieces next to each other are a production fault and are not
    subtracted.)  D1: 2 adjacent missing -> still 3000.  D7: 1 single + 3
    adjacent missing -> only the single one is subtracted: 999."""
    by, order = run(teams("D1", "D7") + "timeline = ["
                    + done("D1", ["50:00", "1:40:00", "2:35:00"], **{"2": "adjacent = 2"}) + ", "
                    + done("D7", ["1:30:00"], **{"1": "missing = 1, adjacent = 3"})
                    + ', { count = "D7", puzzle = 2, placed = 800 }]')
    assert (by["D1"].pieces, by["D1"].deducted_pieces) == (3000, 0)
    assert by["D1"].splits[1].missing_adjacent == 2
    assert (by["D7"].pieces, by["D7"].deducted_pieces) == (999 + 800, 1)


def test_unfinished_last_puzzle_counts_laid_or_unlaid_pieces():
    """"Hvis det sidste puslespil ikke færdiggøres fuldt ud, tæller dommeren
    de lagte eller ulagte brikker" (the referee counts the laid or unlaid
    pieces; unlaid ones in piles of 10): D4 600 laid, D6 400 unlaid = 600
    laid; both 2000 + 600 = 2600 with the second puzzle finished at 1:50:00 -
    an exact tie shares the place; D5 has the same pieces but finished its
    last whole puzzle later (1:52:00)."""
    by, order = run(teams("D4", "D5", "D6") + "timeline = ["
                    + done("D4", ["55:00", "1:50:00"]) + ", " + done("D5", ["52:00", "1:52:00"]) + ", "
                    + done("D6", ["1:00:00", "1:50:00"]) + """,
                    { count = "D4", puzzle = 3, placed = 600 },
                    { count = "D5", puzzle = 3, placed = 600 },
                    { count = "D6", puzzle = 3, remaining = 400 }]""")
    assert order == ["D4", "D6", "D5"]
    assert [(by[e].place, by[e].pieces, by[e].time_ms) for e in order] == [
        (1, 2600, d("1:50:00")), (1, 2600, d("1:50:00")), (3, 2600, d("1:52:00"))]
    assert [by[e].award_place for e in order] == [1, 1, 3]
    assert all(by[e].status == "unfinished" for e in order)


def test_finishers_and_non_finishers_are_ranked_by_pieces_alone():
    """Pieces first: a team that completed everything with 2 single pieces
    missing (2998) ranks below... nobody with fewer pieces; a non-finisher
    with 2 whole puzzles + 999 counted (2999) beats it.  Without a whole
    puzzle the tie-break has nothing: those teams share."""
    by, order = run(teams("A", "B", "C", "E") + "timeline = ["
                    + done("A", ["50:00", "1:40:00", "2:35:00"], **{"3": "missing = 2"}) + ", "
                    + done("B", ["1:00:00", "2:00:00"]) + """,
                    { count = "B", puzzle = 3, placed = 999 },
                    { count = "C", puzzle = 1, placed = 700 },
                    { count = "E", puzzle = 1, remaining = 300 }]""")
    assert order == ["B", "A", "C", "E"]
    assert [by[e].pieces for e in order] == [2999, 2998, 700, 700]
    assert [by[e].place for e in order] == [1, 2, 3, 3]
    assert by["C"].time_ms is None


def test_fixed_order_only_the_puzzle_on_the_table_is_counted():
    """"Puslespillene skal lægges i den fastsatte rækkefølge, ét ad gangen.
    Det er ikke tilladt at springe et puslespil over." (Fixed order, one at
    a time, none skipped.)  A count for puzzle 3 while puzzle 2 is on the
    table is ignored, and a finish out of order is flagged for the referee."""
    by, _ = run(teams("A", "B") + "timeline = [" + done("A", ["50:00"]) + """,
                { count = "A", puzzle = 2, placed = 500 }, { count = "A", puzzle = 3, placed = 400 },
                { at = "1:00:00", press = "B", puzzle = 2 }, { confirm = "B", puzzle = 2 }]""")
    assert by["A"].pieces == 1500
    assert any("fixed order puts puzzle 2 on the table" in n for n in by["A"].notes)
    assert any("out of the fixed order" in n for n in by["B"].notes)


def test_disqualification_after_repeated_warnings():
    """"Et hold, der efter gentagne advarsler fra dommerne forstyrrer andre,
    kan diskvalificeres." (A team that disturbs others after repeated
    warnings can be disqualified.)"""
    by, order = run(teams("A", "B") + "timeline = [" + done("A", ["50:00", "1:40:00", "2:35:00"])
                    + """, { at = "1:10:00", dq = "A", reason = "repeated warnings" },
                    { count = "B", puzzle = 1, placed = 10 }]""")
    assert order == ["B", "A"]
    assert (by["A"].status, by["A"].place, by["A"].reason) == ("dq", None, "repeated warnings")
    assert by["B"].place == 1
    by, _ = run(teams("A") + """timeline = [{ dq = "A", reason = "x" }, { reinstate = "A" },
                { count = "A", puzzle = 1, placed = 10 }]""")
    assert by["A"].status == "unfinished" and by["A"].place == 1
