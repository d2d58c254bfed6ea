"""Seating (rules/seating.py): the orders, a table's seats (seed 004's two a
table above 30), relay teams at one table, and a hall too small refused."""

from __future__ import annotations

import pytest

from tabletimer.hub.rules.seating import SeatingError, Table, seat_plan, seating_order


def hall(tables: int, buttons: int) -> list[Table]:
    return [Table(f"Table {t}", tuple((f"T{t:02d}", b) for b in range(1, buttons + 1))) for t in range(1, tables + 1)]


ENTRANTS = [("3", "Zuzana Vesela"), ("1", "anna Novak"), ("2", "Bjorn Berg"), ("4", "Åse Dahl")]


def test_orders():
    assert seating_order(ENTRANTS, "registration") == ["3", "1", "2", "4"]
    assert seating_order(ENTRANTS, "name") == ["1", "2", "3", "4"]
    assert seating_order(ENTRANTS, "rank-of", ranks={"4": 1, "3": 2}) == ["4", "3", "1", "2"]
    a = seating_order(ENTRANTS, "random", seed=42)
    assert a == seating_order(list(reversed(ENTRANTS)), "random", seed=42)
    assert sorted(a) == ["1", "2", "3", "4"]
    assert {tuple(seating_order(ENTRANTS, "random", seed=s)) for s in range(20)} != {tuple(a)}
    with pytest.raises(SeatingError, match="one of random, rank-of, name, registration"):
        seating_order(ENTRANTS, "age")


def test_one_a_table_up_to_30_two_above():
    ids = [f"e{i:02d}" for i in range(30)]
    seats = seat_plan(hall(30, 2), ids, [None], share_above=30)
    assert len(seats) == 30 and {s.button for s in seats} == {1}
    assert (seats[0].table, seats[0].board, seats[0].entrant) == ("Table 1", "T01", "e00")
    ids.append("e30")
    seats = seat_plan(hall(30, 2), ids, [None], share_above=30)
    assert [(s.table, s.button, s.entrant) for s in seats[:3]] == [("Table 1", 1, "e00"), ("Table 1", 2, "e01"),
                                                                  ("Table 2", 1, "e02")]
    assert len({s.table for s in seats}) == 16


def test_without_the_key_every_button_is_a_seat():
    seats = seat_plan(hall(2, 3), ["a", "b", "c", "d"], [None])
    assert [(s.table, s.button) for s in seats] == [("Table 1", 1), ("Table 1", 2), ("Table 1", 3), ("Table 2", 1)]


def test_a_relay_team_takes_a_table():
    seats = seat_plan(hall(3, 8), ["T01", "T02"], list(range(1, 9)))
    assert [(s.entrant, s.button, s.puzzle) for s in seats[:2]] == [("T01", 1, 1), ("T01", 2, 2)]
    assert {s.table for s in seats if s.entrant == "T02"} == {"Table 2"}
    with pytest.raises(SeatingError, match="8 buttons each: the hall's 3 tables seat 0"):
        seat_plan(hall(3, 4), ["T01"], list(range(1, 9)))


def test_more_entrants_than_seats_says_what_to_do():
    with pytest.raises(SeatingError, match=r"51 entrants, a button each: the hall's 25 tables seat 50 \(two entrants "
                                           r"a table above 30 entrants\); add 1 more seats to the hall"):
        seat_plan(hall(25, 2), [str(i) for i in range(51)], [None], share_above=30)
