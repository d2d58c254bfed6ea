# The board's own monotonic clock in milliseconds, unwrapped.
#
# time.ticks_ms() on the ESP32 wraps every 2**30 ms (about 12.4 days); on
# the unix port it does too, but no test would ever wait for it.  The hardware
# layer hands us its raw ticks and ticks_diff; this class accumulates the
# differences into an integer that never wraps, as long as now() is called at
# least once per half period (about 6 days) -- the firmware calls it many
# times a second.


class LocalClock:
    def __init__(self, ticks_ms, ticks_diff):
        self._ticks_ms = ticks_ms
        self._ticks_diff = ticks_diff
        self._last = ticks_ms()
        self._now = 0

    def now(self):
        """Milliseconds since this clock was created; never wraps."""
        return self.at(self._ticks_ms())

    def at(self, ticks):
        """Convert raw ticks (e.g. captured in a pin interrupt shortly
        before) into the unwrapped local time."""
        d = self._ticks_diff(ticks, self._last)
        if d > 0:   # keep the newest reading as the anchor
            self._last = ticks
            self._now += d
            return self._now
        return self._now + d
