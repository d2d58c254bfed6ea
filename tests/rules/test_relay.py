"""The relay of the Czech team championship, part 1 (seeds/000, 3.2):

  "Every 8 minutes a sound signal is given. After the signal, all actively
  assembling team members move clockwise to the next unfinished puzzle ...
  A team member who has finished a puzzle no longer assembles actively in
  part 1 ... the remaining active members continue rotating at eight-minute
  intervals only among unfinished puzzles.  Part 1 ends when all four
  500-piece puzzles have been finished."

Stations 1-4 are numbered clockwise; member k starts at station k.  Every
expectation below is worked out by hand, step by step, in the docstrings."""

from __future__ import annotations

import pytest

from tabletimer.hub.rules.formats import load_format
from tabletimer.hub.rules.formats import parse_duration as d
from tabletimer.hub.rules.relay import relay_state, relay_states
from tabletimer.hub.rules.standings import Entrant, Member, Press, RoundStart, Void

EIGHT = d("8:00")


def at(now: str, finishes: list[tuple[int, str]] | None = None):
    return relay_state(4, EIGHT, [(st, d(t)) for st, t in finishes or ()], d(now))


def test_no_finish_everyone_moves_one_station_clockwise_every_8_minutes():
    """Start: m1@1 m2@2 m3@3 m4@4.  8:00: m1@2 m2@3 m3@4 m4@1.  16:00:
    m1@3 m2@4 m3@1 m4@2.  After four signals (32:00) everyone is home."""
    s = at("7:59")
    assert s.positions == {1: 1, 2: 2, 3: 3, 4: 4} and s.rotations == 0
    assert s.next_signal_ms == EIGHT
    assert s.next_moves == ((1, 1, 2), (2, 2, 3), (3, 3, 4), (4, 4, 1))
    assert at("8:00").positions == {1: 2, 2: 3, 3: 4, 4: 1}
    s = at("20:00")
    assert s.positions == {1: 3, 2: 4, 3: 1, 4: 2} and s.rotations == 2
    assert s.next_signal_ms == d("24:00")
    assert at("32:00").positions == {1: 1, 2: 2, 3: 3, 4: 4}
    assert s.member_at(1) == 3 and s.station_of(4) == 2


def test_one_finished_puzzle_its_finisher_stops_and_the_others_skip_it():
    """Station 3 finished at 10:00.  At 10:00 (after the 8:00 signal) m2 is at
    station 3: m2 finished it and stops.  Active: m4@1, m1@2, m3@4;
    unfinished 1, 2, 4.  16:00: m4 1->2, m1 2->4 (skipping 3), m3 4->1.
    24:00: m3 1->2, m4 2->4, m1 4->1."""
    s = at("20:00", [(3, "10:00")])
    assert s.finished[3].member == 2 and s.finished[3].at_ms == d("10:00")
    assert s.positions == {3: 1, 4: 2, 1: 4}
    assert s.unfinished == (1, 2, 4)
    assert s.next_signal_ms == d("24:00")
    assert s.next_moves == ((3, 1, 2), (4, 2, 4), (1, 4, 1))
    assert at("24:00", [(3, "10:00")]).positions == {3: 2, 4: 4, 1: 1}
    assert not s.complete


def test_two_finished_puzzles_the_last_two_swap_back_and_forth():
    """As above, then station 1 finished at 20:00: at 20:00 m3 is at station 1
    (16:00 moved it there), so m3 stops.  Active: m4@2, m1@4.  24:00: m4 2->4,
    m1 4->2.  32:00: back again."""
    f = [(3, "10:00"), (1, "20:00")]
    s = at("20:00", f)
    assert s.finished[1].member == 3
    assert s.positions == {4: 2, 1: 4} and s.unfinished == (2, 4)
    assert at("24:00", f).positions == {4: 4, 1: 2}
    assert at("32:00", f).positions == {4: 2, 1: 4}
    assert at("30:00", f).next_moves == ((1, 2, 4), (4, 4, 2))


def test_three_finished_puzzles_signals_move_nobody_until_part_1_ends():
    """Then station 4 finished at 30:00: after 24:00 m4 is at 4, so m4 stops.
    Only m1 is left, at station 2: the 32:00 signal moves nobody ("only among
    unfinished puzzles").  m1 finishes station 2 at 35:00: part 1 is complete
    and no more signals are due for the team."""
    f = [(3, "10:00"), (1, "20:00"), (4, "30:00")]
    s = at("33:00", f)
    assert s.finished[4].member == 4
    assert s.positions == {1: 2} and s.unfinished == (2,)
    assert s.rotations == 4 and s.next_signal_ms == d("40:00") and s.next_moves == ()
    s = at("35:00", f + [(2, "35:00")])
    assert s.complete and s.next_signal_ms is None and s.next_moves == ()
    assert s.finished[2].member == 1 and s.positions == {}
    assert at("2:00:00", f + [(2, "35:00")]).rotations == 4     # no more signals


def test_two_finishes_within_one_interval():
    """Stations 2 (m2) at 3:00 and 4 (m4) at 5:00, before the first signal.
    Active m1@1, m3@3.  8:00: m1 1->3, m3 3->1.  Station 1 at 12:00 is
    finished by m3; m1 carries on alone at station 3."""
    f = [(4, "5:00"), (2, "3:00")]           # any order
    s = at("8:00", f)
    assert s.positions == {1: 3, 3: 1}
    assert (s.finished[2].member, s.finished[4].member) == (2, 4)
    s = at("12:00", f + [(1, "12:00")])
    assert s.finished[1].member == 3 and s.positions == {1: 3} and s.next_moves == ()


def test_a_finish_at_the_signal_instant_counts_before_the_signal():
    """m1 raises a hand at 8:00 exactly at station 1: m1 finished station 1;
    the others move on among 2, 3, 4: m2 2->3, m3 3->4, m4 4->2."""
    s = at("8:00", [(1, "8:00")])
    assert s.finished[1].member == 1
    assert s.positions == {2: 3, 3: 4, 4: 2}
    kinds = [(e.kind, e.at_ms) for e in s.history]
    assert kinds == [("finish", EIGHT), ("signal", EIGHT)]


def test_earliest_finish_counts_and_future_finishes_are_unknown():
    s = at("12:00", [(2, "11:00"), (2, "10:00"), (3, "20:00")])
    assert s.finished[2].at_ms == d("10:00") and 3 not in s.finished
    s = at("12:00", [(9, "1:00"), (1, "-1:00")])
    assert len(s.notes) == 2 and not s.finished


def test_bad_relay_arguments():
    with pytest.raises(ValueError):
        relay_state(4, 0, [], 0)
    with pytest.raises(ValueError):
        relay_state(3, EIGHT, [], 0, members=4)


def test_relay_states_from_the_format_and_the_facts():
    """The hub's view: facts in hub time.  T1's press for station 3 at 10:00
    is voided (not finished) - so nobody has finished and the rotation is the
    plain one; T2 finished station 3 at 10:00 as in the one-puzzle case."""
    fmt = load_format("cz-championship-teams")
    t0 = 1_700_000_000_000
    teams = [Entrant("T1", members=tuple(Member(m) for m in "abcd")), Entrant("T2")]
    facts = [RoundStart(t0), Press("T1", 3, t0 + d("10:00"), "x1"), Void("x1"),
             Press("T2", 3, t0 + d("10:00"), "x2")]
    st = relay_states(fmt, teams, facts, t0 + d("20:00"))
    assert st["T1"].positions == {1: 3, 2: 4, 3: 1, 4: 2} and not st["T1"].finished
    assert st["T2"].positions == {3: 1, 4: 2, 1: 4}
    assert st["T2"].next_signal_at == t0 + d("24:00")
    assert relay_states(fmt, teams, facts[1:], t0)["T1"] is None        # no round start yet
    with pytest.raises(ValueError):
        relay_states(load_format("rogaland-teams"), teams, facts, t0)


def test_signals_stop_once_part_1_is_complete_in_the_format_view():
    fmt = load_format("cz-championship-teams")
    facts = [RoundStart(0)] + [Press("T1", st, d(t)) for st, t in
                               ((3, "10:00"), (1, "20:00"), (4, "30:00"), (2, "35:00"))]
    s = relay_states(fmt, [Entrant("T1")], facts, d("1:00:00"))["T1"]
    assert s.complete and s.next_signal_at is None
