"""The hub clock: "hub time", integer milliseconds since 1970-01-01 UTC.

Anchored to the wall clock once, then advanced by the monotonic clock, so a
laptop's NTP step in the middle of a round does not move recorded times.
"""

import time


class HubClock:
    def __init__(self):
        self._wall0 = time.time_ns()
        self._mono0 = time.monotonic_ns()

    def now_ms(self) -> int:
        return (self._wall0 + time.monotonic_ns() - self._mono0) // 1_000_000
