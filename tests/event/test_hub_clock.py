"""The hub clock and the round's time base (hub/event/time/host_clock.py,
clock.py, time_base.py): the laptop's clocks read at one instant, the base
a process takes from the log (this boot's anchor) or the wall clock, a
sleep and a stepped wall clock told apart, the boards' witness, and the
fold reading rows stored off the base with the boards' correction.  Pure
logic fed with readings; the real clocks where it is the point."""

from __future__ import annotations

import time

from tabletimer.hub.event.time import host_clock
from tabletimer.hub.event.time.clock import HubClock
from tabletimer.hub.event.time.time_base import (BOARDS, FROM_LOG, FROM_WALL, SLEPT, STARTED, WALL_STEPPED, Base,
                                            BoardsWitness, choose_base, clock_alert, clock_row,
                                            clock_row_problem, jumps)
from tabletimer.hub.rules.timetext import fmt_clock

S = 1_000_000_000          # ns in a second
MIN = 60_000               # ms in a minute
WALL0 = 1_796_000_000_000 * 1_000_000      # a wall clock reading, ns
BOOT0 = 5_000 * S                          # the boot clock then: 5000 s since boot


def test_the_reading_keeps_the_try_not_split_by_a_preemption(monkeypatch):
    """The first try is preempted for 20 ms between the wall clock and the
    second boot-clock reading, the second is not: the second is kept, so
    hub time is the wall clock's, not 10 ms behind (the middle of the split
    try) or 20."""
    boot = iter([1_000_000_000, 1_020_000_000, 2_000_000_000, 2_000_010_000])
    wall = iter([5_000_000_000_000, 5_001_000_000_000])
    monkeypatch.setattr(host_clock, "boot_ns", lambda: next(boot))
    monkeypatch.setattr(host_clock, "awake_ns", lambda: 7)
    monkeypatch.setattr(host_clock.time, "time_ns", lambda: next(wall))
    r = host_clock.read()
    assert (r.wall_ns, r.boot_ns) == (5_001_000_000_000, 2_000_005_000)


def test_hub_time_is_the_wall_clock_within_a_millisecond_and_runs_on_the_boot_clock():
    c = HubClock()
    before = time.time_ns() // 1_000_000
    hub = c.now_ms()
    after = time.time_ns() // 1_000_000
    assert before - 1 <= hub <= after + 1, (before, hub, after)     # (a preemption here widens the bracket)
    assert host_clock.boot_id(), "this machine's boot has an id"
    if hasattr(time, "CLOCK_BOOTTIME"):          # Linux: hub time runs on the clock that counts through sleep
        assert host_clock.SLEEP_PROOF and host_clock.BOOT_CLOCK == time.CLOCK_BOOTTIME


def anchor(hub_ms: int, boot_s: int, boot_id: str = "boot-A", gen: int = 0) -> dict:
    """A clock row's payload: at boot clock boot_s (s), hub time was hub_ms."""
    return clock_row(STARTED, Base(hub_ms - boot_s * 1000, gen, FROM_WALL), boot_id, boot_s * S,
                     hub_ms * 1_000_000)


def test_a_process_of_this_boot_takes_the_logs_base_whatever_its_wall_clock_says():
    """`act` from a process whose clock is 1 h ahead: the hub's time, from
    the log's anchor of this boot, not its own wall clock."""
    hub_then = 1_796_000_000_000
    rows = [anchor(hub_then, 5000)]
    # 100 s later on the boot clock, the wall clock an hour ahead
    chosen = choose_base(rows, hub_then + 90_000, "boot-A", (hub_then + 100_000 + 3_600_000) * 1_000_000,
                         5100 * S)
    assert chosen.base.source == FROM_LOG
    assert chosen.base.offset_ms + 5_100_000 == hub_then + 100_000
    assert chosen.wall_off_ms == 3_600_000 and "1:00:00 ahead of" in chosen.warnings[0]


def test_a_base_of_another_boot_is_not_taken_and_a_wall_clock_behind_the_log_is_said():
    hub_then = 1_796_000_000_000
    rows = [anchor(hub_then, 5000, "boot-A", gen=2)]
    # another boot (a restarted laptop), its wall clock 15 min behind the log's last row
    wall = hub_then - 15 * MIN
    chosen = choose_base(rows, hub_then, "boot-B", wall * 1_000_000, 40 * S)
    assert chosen.base == Base(wall - 40_000, 2, FROM_WALL)        # the generation carried on
    assert "15:00 behind the event log" in chosen.warnings[0]
    # the same boot id but a boot clock before the anchor's: not this boot's either
    again = choose_base(rows, hub_then, "boot-A", wall * 1_000_000, 40 * S)
    assert again.base.source == FROM_WALL


def test_the_latest_anchor_of_this_boot_wins():
    rows = [anchor(1_796_000_000_000, 5000), anchor(1_796_000_400_000, 5300, gen=1), anchor(9, 1, "boot-B")]
    chosen = choose_base(rows, None, "boot-A", 0, 5400 * S)
    assert chosen.base == Base(1_796_000_400_000 - 5_300_000, 1, FROM_LOG)


def test_a_sleep_and_a_stepped_wall_clock_are_told_apart():
    before = (WALL0, BOOT0, BOOT0)
    # 30 s asleep: the wall and boot clocks ran 31 s, the awake clock 1 s
    slept = (WALL0 + 31 * S, BOOT0 + 1 * S, BOOT0 + 31 * S)
    assert [(j.why, j.ms) for j in jumps(before, slept)] == [(SLEPT, 30_000)]
    # the wall clock set back 5 min: it ran 1 s - 300 s while the others ran 1 s
    stepped = (WALL0 - 299 * S, BOOT0 + S, BOOT0 + S)
    assert [(j.why, j.ms) for j in jumps(before, stepped)] == [(WALL_STEPPED, -300_000)]
    # a quarter second of ordinary running: nothing
    assert jumps(before, (WALL0 + S // 4, BOOT0 + S // 4, BOOT0 + S // 4)) == []
    # without a clock that counts through sleep, a sleep shows as the wall clock running ahead
    assert [(j.why, j.ms) for j in jumps(before, (WALL0 + 31 * S, BOOT0 + S, BOOT0 + S), False)] == [
        (WALL_STEPPED, 30_000)]


def test_the_boards_move_the_base_only_when_most_of_them_agree():
    w = BoardsWitness()
    now = 1_796_000_000_000
    w.heard("B1", -900_000, 4, now)
    w.heard("B2", -900_010, 6, now)
    w.heard("B3", None, 3, now)                      # a board that took the hub's replies
    assert w.verdict(now) == 900_005                 # two of three refused by 15:00: the hub is behind
    w.moved()
    assert w.verdict(now) is None
    # one board alone among three, or boards that disagree with each other: nothing moves
    w.heard("B1", -900_000, 4, now)
    w.heard("B2", None, 4, now)
    w.heard("B3", None, 4, now)
    assert w.verdict(now) is None
    w.heard("B2", 300_000, 4, now)
    assert w.verdict(now) is None
    # reports older than a minute do not count
    w2 = BoardsWitness()
    w2.heard("B1", -5000, 4, now - 61_000)
    w2.heard("B2", -5000, 4, now)
    w2.heard("B3", None, 4, now)
    assert w2.verdict(now) is None
    # a hall of one board: it is the witness
    w3 = BoardsWitness()
    w3.heard("B1", 2500, 4, now)
    assert w3.verdict(now) == -2500


def test_clock_rows_are_checked_and_said():
    p = anchor(1_796_000_000_000, 5000)
    assert clock_row_problem(p) is None and clock_alert(p, fmt_clock) is None
    assert clock_row_problem(dict(p, why="nap")) and clock_row_problem(dict(p, hub_ms="x"))
    slept = dict(p, why=SLEPT, slept_ms=30_000)
    assert "slept for 0:00:30" in clock_alert(slept, fmt_clock)
    assert "set 0:05:00 back" in clock_alert(dict(p, why=WALL_STEPPED, stepped_ms=-300_000), fmt_clock)
    moved = clock_alert(dict(p, why=BOARDS, shift_ms=900_000, since_row=12), fmt_clock)
    assert "15:00 ahead of" in moved and "#12" in moved


def test_rows_stored_off_the_base_are_read_with_the_boards_correction():
    """A hub started on a laptop clock 15 min behind stores a board's press
    before the boards correct it: the press's time is then 15 min 'after
    the hub's clock when it arrived' and was refused as a finish; the clock
    row of the boards' correction makes the fold read it with the shift (a
    replay decides the same)."""
    from tabletimer.hub.event.fold.competition import Competition
    from tabletimer.hub.event.folder.event_folder import Station
    from tabletimer.hub.rules.formats import load_format
    from tabletimer.hub.rules.standings import Entrant

    t0 = 1_796_000_000_000
    comp = Competition(load_format("czjpa-individuals"), [Entrant("1", "Anna")],
                       [Station("B1", 1, "Table 1", "1", None)])
    comp.apply({"id": 1, "received_ms": t0, "source": "operator", "type": "round_start",
                "payload": {"at": t0, "who": "desk"}})
    behind = t0 + 20 * MIN - 15 * MIN           # the restarted hub's clock, 15 min behind
    comp.apply({"id": 2, "received_ms": behind, "source": "hub", "type": "clock",
                "payload": clock_row(STARTED, Base(0), "boot-B", 40 * S, behind * 1_000_000)})
    comp.apply({"id": 3, "received_ms": behind + 100, "source": "board", "type": "press", "board": "B1",
                "payload": {"type": "press", "boot": 1, "seq": 1, "station": 1, "at": t0 + 20 * MIN, "err": 3}})
    comp.facts()
    assert [r.press_id for r in comp.refused] and "after the hub's clock" in comp.refused[0].why
    comp.apply({"id": 4, "received_ms": behind + 900, "source": "hub", "type": "clock",
                "payload": clock_row(BOARDS, Base(15 * MIN, 1, "boards"), "boot-B", 41 * S,
                                     behind * 1_000_000, shift_ms=15 * MIN, since_row=2)})
    comp.facts()
    assert comp.refused == [] and comp.clock_shift(3) == 15 * MIN and comp.clock_shift(4) == 0
    assert [r.status for r in comp.standings(None)] == ["finished"]
