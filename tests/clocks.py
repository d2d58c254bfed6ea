"""A hub clock held still for a test (plain helper: `from clocks import
FixedClock`): hub time is `t`, which the test sets and moves; the rest is
the hub clock's own interface (hub/event/time/clock.py), on a base of
generation 0."""

from __future__ import annotations

from tabletimer.hub.event.time.clock import HubClock
from tabletimer.hub.event.time.time_base import Base


class FixedClock(HubClock):
    t = 0

    def __init__(self, t: int | None = None) -> None:
        super().__init__(Base(0))
        if t is not None:
            self.t = t

    def now_ms(self) -> int:
        return self.t
