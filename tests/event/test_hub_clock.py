"""The hub clock's anchor (hub/event/clock.py): the wall clock paired with
the monotonic clock at one instant, however the process is preempted."""

from __future__ import annotations

from tabletimer.hub.event import clock


def test_the_anchor_keeps_the_reading_not_split_by_a_preemption(monkeypatch):
    """The first try is preempted for 20 ms between the wall clock and the
    second monotonic reading (the wall read at monotonic 1 s, the process
    back at 1.020 s), the second is not: the second is kept, so hub time is
    the wall clock's, not 10 ms behind (the middle of the split try) or 20."""
    mono = iter([1_000_000_000, 1_020_000_000, 2_000_000_000, 2_000_010_000])
    wall = iter([5_000_000_000_000, 5_001_000_000_000])      # wall = mono + 4999 s + ...
    monkeypatch.setattr(clock.time, "monotonic_ns", lambda: next(mono))
    monkeypatch.setattr(clock.time, "time_ns", lambda: next(wall))
    w, m = clock.anchor()
    assert (w, m) == (5_001_000_000_000, 2_000_005_000)


def test_hub_time_is_the_wall_clock_within_a_millisecond():
    import time

    c = clock.HubClock()
    before = time.time_ns() // 1_000_000
    hub = c.now_ms()
    after = time.time_ns() // 1_000_000
    assert before - 1 <= hub <= after + 1, (before, hub, after)     # (a preemption here widens the bracket)
