"""The hub's main loop, measured: one pass of its housekeeping (operator
actions caught up, the clock kept, the standby and the brokers checked,
stored rows printed) every PERIOD_S, and a pass that takes longer than the
period said, with how long it took and how often it has happened, at most
once every WARN_EVERY_S: a laptop that cannot keep up is seen, not guessed
(as a field management system's arena loop warns of a late cycle).

The clock is injected; nothing here sleeps but through `wait` (a stop
event's wait: a stop request ends the wait at once)."""

from __future__ import annotations

import time
from typing import Callable

PERIOD_S = 0.25          # a pass this often: a desk action shows at the boards within it
WARN_EVERY_S = 30.0      # an overrun is said at most this often (with how many since the last)


class MainLoop:
    def __init__(self, say: Callable[[str], None], period_s: float = PERIOD_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.say = say
        self.period_s = period_s
        self.clock = clock
        self.passes = 0
        self.overruns = 0             # passes longer than the period, in all
        self.longest_s = 0.0
        self.last_s = 0.0             # the last pass
        self._unsaid = 0              # overruns since the last warning
        self._said_at: float | None = None

    def run_pass(self, work: Callable[[], object]) -> None:
        """One pass of work, measured (last_s); an overrun said."""
        began = self.clock()
        work()
        took = self.last_s = self.clock() - began
        self.passes += 1
        self.longest_s = max(self.longest_s, took)
        if took > self.period_s:
            self.overruns += 1
            self._unsaid += 1
            now = self.clock()
            if self._said_at is None or now - self._said_at >= WARN_EVERY_S:
                more = f" ({self._unsaid} such passes since the last warning)" if self._unsaid > 1 else ""
                self.say(f"main loop: a pass took {took * 1000:.0f} ms, over its {self.period_s * 1000:.0f} ms"
                         f"{more}: this laptop is too busy (other programs, or too many boards for it); "
                         "desk actions and checks reach the boards late")
                self._said_at, self._unsaid = now, 0

    def run(self, work: Callable[[], object], wait: Callable[[float], bool],
            until: Callable[[], bool]) -> None:
        """Passes of work until `until()` or a stop: between them
        wait(seconds), which returns True once stopped (a stop event's
        wait); the pass after a stop still runs (what came meanwhile is
        caught up and said)."""
        while not until():
            stopped = wait(max(0.0, self.period_s - self.last_s))   # a late pass: the next at once
            self.run_pass(work)
            if stopped:
                return
