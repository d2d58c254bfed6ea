"""A chosen-order team's swap is followed (issue 45, item 1; rule set 001's
teams: "Teams choose the order of puzzles themselves", "If a team decides to
swap an unfinished puzzle for the other, the first must be fully
disassembled and placed back into the box").  The team's one station counts
through its puzzles; after the phone's "Pack 1, open 2" the board's next
press is the finish of the 500 (puzzle 2), the table page shows the puzzle
on the table, and the count at time-up is for it.

Hand-worked: czjpa-teams (puzzle 1 the 1000, puzzle 2 the 500, 180 min).
The team opens the 1000, packs it at 0:05:00 for the 500, calls the 500 at
1:20:00 (confirmed, no missing piece), opens the 1000 again and has 640
pieces of it at time-up: unfinished, 500 + 640 = 1140 pieces, nothing
ignored.  The same when the swap reaches the hub after the press (the phone
kept it while the WiFi was gone), and when the team opens the 500 first
(recorded as a swap at the start: docs/operations.md)."""

from __future__ import annotations

import pytest

from tabletimer.hub.event.fold.competition import Competition
from tabletimer.hub.event.actions.action_checks import check_action
from tabletimer.hub.event.folder.event_folder import Station
from tabletimer.hub.event.fold.station_state import station_states
from tabletimer.hub.rules.formats import load_format
from tabletimer.hub.rules.parts import puzzle_on_table
from tabletimer.hub.rules.standings import Entrant, Swap

from test_replacement import Log

M = 60_000
S = 1_800_000_000_000
END = S + 180 * M


def team() -> Competition:
    return Competition(load_format("czjpa-teams"), [Entrant("T1", "The Edges"), Entrant("T2", "Corners")],
                       [Station("B1", 1, "Table 1", "T1", None), Station("B1", 2, "Table 1", "T2", None)])


def puzzle_shown(comp: Competition, now: int) -> int | None:
    (st,) = [s for s in station_states(comp, now) if (s.board, s.button) == ("B1", 1)]
    return st.puzzle


def result(comp: Competition):
    row = next(r for r in comp.standings(None) if r.entrant == "T1")
    return row.status, row.pieces, row.notes, [(sp.puzzle, sp.status) for sp in row.splits]


@pytest.mark.parametrize("swap_at,late", [(S + 5 * M, False), (S + 5 * M, True), (S, False)],
                         ids=["swap-recorded-at-once", "swap-reaches-the-hub-after-the-press", "500-first"])
def test_the_press_after_a_swap_is_the_puzzle_opened_and_the_count_is_the_puzzle_on_the_table(swap_at, late):
    log, comp = Log(), team()
    log.act("round_start", S, at=S, warnings=[])
    swap = dict(entrant="T1", at=swap_at, packed=1, opened=2)
    if not late:
        log.act("swap", swap_at, **swap)
    for row in log.rows:
        comp.apply(row)
    if not late:
        assert puzzle_shown(comp, S + 10 * M) == 2           # the table page: "puzzle 2 (500)"
    call = log.press("B1", 1, S + 80 * M)
    comp.apply(log.rows[-1])
    if late:                                                  # the phone's swap, sent once the WiFi is back
        comp.apply(log.act("swap", S + 81 * M, **swap))
    (press,) = [f for f in comp.facts() if f.kind == "press"]
    assert (press.press_id, press.puzzle) == (call, 2)
    comp.apply(log.act("confirm", S + 82 * M, press_id=call, missing_found=0, missing_lost=0,
                       missing_adjacent=0))
    assert puzzle_shown(comp, S + 90 * M) == 1               # the 1000 opened again
    assert puzzle_shown(comp, END + M) == 1                  # time up: the count form is the 1000's
    check_action(comp, "count", {"entrant": "T1", "puzzle": 1, "placed": 640}, END + M)   # not refused
    comp.apply(log.act("count", END + 2 * M, entrant="T1", puzzle=1, placed=640))
    assert result(comp) == ("unfinished", 1140, (), [(1, "unfinished"), (2, "finished")])
    # the same from scratch (a replay of the log)
    again = team()
    for row in log.rows:
        again.apply(row)
    assert result(again) == result(comp)


def test_without_a_swap_the_team_counts_through_its_puzzles_in_order():
    log, comp = Log(), team()
    log.act("round_start", S, at=S, warnings=[])
    first = log.press("B1", 1, S + 60 * M)
    log.act("void", S + 61 * M, press_id=first)                # not a finish: the 1000 is still on the table
    again = log.press("B1", 1, S + 70 * M)
    second = log.press("B1", 1, S + 120 * M)
    for row in log.rows:
        comp.apply(row)
    assert [(f.press_id, f.puzzle) for f in comp.facts() if f.kind == "press"] == \
        [(first, 1), (again, 1), (second, 2)]


def test_the_puzzle_on_the_table():
    w = Swap(entrant="T1", at_ms=10, packed=1, opened=2)
    assert puzzle_on_table((1, 2), [], [], None) == 1
    assert puzzle_on_table((1, 2), [], [w], None) == 2
    assert puzzle_on_table((1, 2), [], [w], 9) == 1                 # before the swap
    assert puzzle_on_table((1, 2), [(20, 2)], [w], None) == 1       # the 500 done: the 1000 reopened
    assert puzzle_on_table((1, 2), [(5, 1)], [], None) == 2
    assert puzzle_on_table((1, 2), [(5, 1), (9, 2)], [], None) == 2  # all done: the last one
    assert puzzle_on_table((1, 2, 3), [(5, 1)], [], None) == 2       # fixed order, or chosen without a swap


def test_the_desk_is_told_before_a_late_swap_moves_a_call():
    """A swap recorded after a call it came before changes which puzzle that
    call is for: the desk is told first (consequences), the phone's swap
    (sent late by a phone without WiFi) is recorded as the referee made it."""
    from tabletimer.hub.event.actions.consequences import consequences

    log, comp = Log(), team()
    log.act("round_start", S, at=S, warnings=[])
    log.press("B1", 1, S + 80 * M)
    for row in log.rows:
        comp.apply(row)
    (said,) = consequences(comp, "swap", {"entrant": "T1", "at": S + 5 * M, "packed": 1, "opened": 2}, S + 81 * M)
    assert said.startswith("changes which puzzle 1 finish call(s) made since the swap's time are for")
    assert "B1-1" in said and "(now puzzle 1)" in said
    assert consequences(comp, "swap", {"entrant": "T1", "at": S + 90 * M, "packed": 1, "opened": 2},
                        S + 91 * M) == []
