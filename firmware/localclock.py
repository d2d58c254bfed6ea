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
        self.ticks_ms = ticks_ms      # the hardware's raw clock
        self.ticks_diff = ticks_diff
        self.last = ticks_ms()        # the newest raw reading...
        self._now = 0                 # ...and its unwrapped time

    def now(self):
        """Milliseconds since this clock was created; never wraps."""
        return self.at(self.ticks_ms())

    def at(self, ticks):
        """Convert raw ticks (e.g. captured in a pin interrupt shortly
        before) into the unwrapped local time."""
        d = self.ticks_diff(ticks, self.last)
        if d > 0:   # keep the newest reading as the anchor
            self.last = ticks
            self._now += d
            return self._now
        return self._now + d
