# NTP-style clock-offset math, shared by the board firmware (MicroPython) and
# the hub (CPython).  Pure integer arithmetic, no I/O.
#
# One exchange:  t1 = board local time when the request left
#                t2 = hub time when the request arrived
#                t3 = hub time when the reply left
#                t4 = board local time when the reply arrived
#   offset = ((t2 - t1) + (t3 - t4)) / 2      hub = local + offset
#   delay  = (t4 - t1) - (t3 - t2)            network round trip
# The true offset lies within offset +- delay/2 whatever the asymmetry, so the
# sample with the smallest delay is the one to trust.


def offset_delay(t1, t2, t3, t4):
    """(offset, delay) in the units of the inputs; offset rounds half down."""
    return ((t2 - t1) + (t3 - t4)) // 2, (t4 - t1) - (t3 - t2)


class OffsetEstimator:
    """Keeps the last `window` samples and trusts the one with minimum delay."""

    def __init__(self, window=8):
        self.window = window
        self.samples = []   # [(delay, offset, t4)], oldest first
        self.offset = None  # hub = local + offset, None until the first sample
        self.delay = None   # round trip of the trusted sample

    def add(self, t1, t2, t3, t4):
        """Record one exchange; returns (offset, delay) of that sample.

        A sample with negative delay (a clock stepped mid-exchange) is
        rejected with ValueError."""
        off, dly = offset_delay(t1, t2, t3, t4)
        if dly < 0:
            raise ValueError("negative round trip: clocks stepped during the exchange")
        self.samples.append((dly, off, t4))
        if len(self.samples) > self.window:
            self.samples.pop(0)
        best = self.samples[0]
        for s in self.samples:
            if s[0] < best[0]:
                best = s
        self.delay, self.offset = best[0], best[1]
        return off, dly

    @property
    def ready(self):
        return self.offset is not None

    def error_bound(self):
        """Worst-case error of to_hub() from network asymmetry (delay / 2,
        rounded up, plus 1 for integer rounding); None before the first sample."""
        if self.delay is None:
            return None
        return (self.delay + 1) // 2 + 1

    def to_hub(self, local):
        if self.offset is None:
            return None
        return local + self.offset
