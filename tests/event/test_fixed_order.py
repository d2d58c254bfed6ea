"""The fixed order of seed 003 in the fold and at the desk (issue 47, item
5): "Puslespillene skal lægges i den fastsatte rækkefølge, ét ad gangen.
Det er ikke tilladt at springe et puslespil over." (The puzzles are laid
in the fixed order, one at a time; skipping a puzzle is not allowed.)

Table 1 has a board with a button per puzzle for team A (B1: buttons 1-3
are A's puzzles 1-3); team B has one button that calls its next puzzle.  A
press on A's puzzle 2 before puzzle 1 is a conflict for the referee, never
a credited finish; the desk (and a phone, through the same checks) cannot
record a finish, a confirmation or a count of a puzzle whose earlier
puzzles are not finished."""

from __future__ import annotations

import pytest

from tabletimer.hub.event.actions.action_checks import check_action
from tabletimer.hub.event.fold.competition import Competition
from tabletimer.hub.event.folder.event_folder import Station
from tabletimer.hub.rules.formats import load_format
from tabletimer.hub.rules.standings import Entrant

from test_replacement import Log

M = 60_000
S = 1_800_000_000_000


def dk(preset: str = "dk-team-championship") -> Competition:
    return Competition(load_format(preset), [Entrant("A", "Alfa"), Entrant("B", "Beta")],
                       [Station("B1", n, "Table 1", "A", n) for n in (1, 2, 3)]
                       + [Station("B2", 1, "Table 2", "B", None)])


def started(preset: str = "dk-team-championship") -> tuple[Log, Competition]:
    log, comp = Log(), dk(preset)
    comp.apply(log.act("round_start", S, at=S, warnings=[]))
    return log, comp


def pressed(log: Log, comp: Competition, button: int, at: int, board: str = "B1") -> str:
    pid = log.press(board, button, at)
    comp.apply(log.rows[-1])
    return pid


def a_row(comp: Competition):
    return next(r for r in comp.standings(None) if r.entrant == "A")


def test_a_press_on_puzzle_2_before_puzzle_1_is_a_conflict_not_a_finish():
    log, comp = started()
    call = pressed(log, comp, 2, S + 30 * M)
    row_id = log.rows[-1]["id"]
    (conflict,) = comp.open_conflicts()
    assert conflict.row == row_id
    assert conflict.text.startswith("CONFLICT at Table 1 (A): call B1-1 is puzzle 2 at 0:30:00, but puzzle 1 is "
                                    "not finished before it (fixed order, none skipped): not a finish"), conflict.text
    assert "void press_id=B1-1" in conflict.text and "press entrant=A puzzle=1" in conflict.text
    assert comp.open_conflict_ids() == frozenset({row_id})
    row = a_row(comp)
    assert (row.pieces, row.provisional, row.status) == (0, True, "unfinished")
    assert [sp.status for sp in row.splits] == ["unfinished"] * 3
    # the call waits for the referee like any other (the calls page lists it), but cannot be confirmed
    assert [c[1] for c in comp.open_calls()] == [call]
    with pytest.raises(ValueError, match=r"confirm: call B1-1 \(A's puzzle 2 at 0:30:00\) is no finish: .*"
                                         r"A's puzzle 1 has no finish before it; void it \(`void press_id=B1-1"):
        check_action(comp, "confirm", {"press_id": call, "missing_found": 0}, S + 31 * M)
    with pytest.raises(ValueError, match="a finish call out of the fixed order, which a note does not settle"):
        check_action(comp, "resolve", {"conflict": row_id, "why": "seen"}, S + 31 * M)
    # a board's confirmation (the referee's hold at the table) does not make it a finish
    log.rows.append({"id": len(log.rows) + 1, "received_ms": S + 31 * M, "source": "board", "type": "confirm",
                     "board": "B1", "payload": {"type": "confirm", "station": 2, "at": S + 31 * M, "boot": 1,
                                                "seq": 2, "call": [1, 1], "missing": 0}})
    comp.apply(log.rows[-1])
    assert a_row(comp).pieces == 0 and [c.row for c in comp.open_conflicts()] == [row_id]
    # the same from scratch
    again = dk()
    for r in log.rows:
        again.apply(r)
    assert [c.text for c in again.open_conflicts()] == [conflict.text] and a_row(again).pieces == 0


def test_the_referee_voids_the_wrong_call():
    log, comp = started()
    call = pressed(log, comp, 2, S + 30 * M)
    comp.apply(log.act("void", S + 32 * M, press_id=call))
    assert comp.open_conflicts() == [] and a_row(comp).pieces == 0
    pressed(log, comp, 1, S + 50 * M)                         # puzzle 1, then 2, in order
    pressed(log, comp, 2, S + 90 * M)
    assert comp.open_conflicts() == [] and a_row(comp).pieces == 2000


def test_the_referee_records_the_missed_earlier_finish_and_the_call_counts():
    log, comp = started()
    pressed(log, comp, 2, S + 60 * M)
    check_action(comp, "press", {"entrant": "A", "puzzle": 1, "at": S + 40 * M}, S + 61 * M)   # not refused
    comp.apply(log.act("press", S + 61 * M, entrant="A", puzzle=1, at=S + 40 * M))
    assert comp.open_conflicts() == []
    row = a_row(comp)
    assert row.pieces == 2000 and [sp.status for sp in row.splits] == ["finished", "finished", "unfinished"]


def test_an_earlier_finish_voided_makes_the_later_one_a_conflict():
    log, comp = started()
    first = pressed(log, comp, 1, S + 40 * M)
    pressed(log, comp, 2, S + 80 * M)
    assert comp.open_conflicts() == [] and a_row(comp).pieces == 2000
    comp.apply(log.act("void", S + 81 * M, press_id=first))   # puzzle 1 was not finished after all
    (conflict,) = comp.open_conflicts()
    assert "call B1-2 is puzzle 2" in conflict.text and a_row(comp).pieces == 0


def test_the_next_puzzle_button_never_calls_out_of_order():
    log, comp = started()
    for at in (30, 60):
        pressed(log, comp, 1, S + at * M, board="B2")
    assert comp.open_conflicts() == []
    assert next(r for r in comp.standings(None) if r.entrant == "B").pieces == 2000


@pytest.mark.parametrize("action,payload,why", [
    ("press", {"entrant": "B", "puzzle": 2, "at": S + 30 * M},
     r"press: B's puzzle 2 at 0:30:00 would be a finish out of order: this format's puzzles are done in a "
     r"fixed order, none skipped, and puzzle 1 comes first, and B's puzzle 1 has no finish before it; record "
     r"puzzle 1's finish first \(at the desk: `press entrant=B puzzle=1 at=H:MM:SS`\)$"),
    ("press", {"entrant": "A", "puzzle": 3, "at": S + 90 * M}, r"puzzle 2 comes first, and A's puzzle 2 has no finish"),
    ("press", {"entrant": "A", "puzzle": 2, "at": S + 20 * M},
     r"A's puzzle 1 is finished only at 0:40:00, after it"),
    ("count", {"entrant": "A", "puzzle": 3, "placed": 100},
     r"count: A's puzzle 3 is not on the table: .* puzzle 2 comes first, and A's puzzle 2 has no finish; "
     r"count puzzle 2 instead \(`count entrant=A puzzle=2 placed=N`\)"),
    ("count", {"entrant": "B", "puzzle": 2, "placed": 100}, r"B's puzzle 1 has no finish"),
    ("confirm", {"entrant": "A", "puzzle": 3}, None),       # no call of puzzle 3: nothing the order says
])
def test_the_desk_cannot_record_a_puzzle_before_the_earlier_ones(action, payload, why):
    log, comp = started()
    pressed(log, comp, 1, S + 40 * M)                        # A's puzzle 1 is finished at 0:40:00
    n = len(log.rows)
    if why is None:
        check_action(comp, action, payload, S + 100 * M)
        return
    with pytest.raises(ValueError, match=why):
        check_action(comp, action, payload, S + 100 * M)
    assert len(log.rows) == n


def test_the_desk_may_record_what_keeps_the_order():
    log, comp = started()
    first = pressed(log, comp, 1, S + 40 * M)
    now = S + 100 * M
    check_action(comp, "press", {"entrant": "A", "puzzle": 2, "at": S + 70 * M}, now)
    check_action(comp, "count", {"entrant": "A", "puzzle": 2, "placed": 300}, now)
    check_action(comp, "confirm", {"press_id": first, "missing_found": 0}, now)
    check_action(comp, "count", {"entrant": "B", "puzzle": 1, "placed": 300}, now)
    # a correction's new time is checked as a finish of its own: puzzle 2 moved before puzzle 1 is not
    second = pressed(log, comp, 2, S + 70 * M)
    check_action(comp, "correct", {"press_id": second, "at": S + 60 * M}, now)
    with pytest.raises(ValueError, match=r"correct: A's puzzle 2 at 0:30:00 would be a finish out of order"):
        check_action(comp, "correct", {"press_id": second, "at": S + 30 * M}, now)


def test_a_chosen_order_is_not_a_fixed_one():
    log, comp = started("czjpa-teams")
    pressed(log, comp, 2, S + 30 * M)
    assert comp.open_conflicts() == []
    check_action(comp, "press", {"entrant": "A", "puzzle": 2, "at": S + 40 * M}, S + 41 * M)


def test_times_are_said_at_the_formats_resolution():
    """Whole seconds, as the standings show them (the preset's resolution)."""
    log, comp = started()
    pressed(log, comp, 2, S + 30 * M + 1_234)
    (conflict,) = comp.open_conflicts()
    assert "is puzzle 2 at 0:30:01, but" in conflict.text, conflict.text
    assert any("press for puzzle 2 at 0:30:01 not credited" in n for n in a_row(comp).notes)
    with pytest.raises(ValueError, match=r"A's puzzle 3 at 0:40:02 would be"):
        check_action(comp, "press", {"entrant": "A", "puzzle": 3, "at": S + 40 * M + 2_999}, S + 41 * M)
