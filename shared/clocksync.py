# NTP-style clock-offset math, shared by the board firmware (MicroPython) and
# the hub (CPython).  Pure integer arithmetic (the ESP32 port's floats are
# single precision), no I/O.
#
# One exchange:  t1 = board local time when the request left
#                t2 = hub time when the request arrived
#                t3 = hub time when the reply left
#                t4 = board local time when the reply arrived
#   offset = ((t2 - t1) + (t3 - t4)) / 2      hub = local + offset
#   delay  = (t4 - t1) - (t3 - t2)            network round trip
# The true offset lies within offset +- delay/2 whatever the asymmetry, so the
# sample with the smallest delay is the one to trust.
#
# Board crystals drift (tens of ppm: 50 ppm is 30 ms in 10 minutes), so the
# estimator also fits the drift (skew) over a long history of good samples,
# one per interval, and extrapolates with it -- which is what keeps a board
# on time through a WiFi outage.

# Hub time is ms since 1970; MicroPython's ESP32 epoch (time.time(), RTC) is
# 2000-01-01.  The only conversion between them in the project:
EPOCH_2000_MS = 946684800000


def hub_to_epoch2000_ms(hub_ms):
    return hub_ms - EPOCH_2000_MS


def offset_delay(t1, t2, t3, t4):
    """(offset, delay) in the units of the inputs; offset rounds half down."""
    return ((t2 - t1) + (t3 - t4)) // 2, (t4 - t1) - (t3 - t2)


class OffsetEstimator:
    """Trusts the sample with the smallest worst-case error: half its round
    trip plus what its age may have cost at `drift_bound_ppm` -- among the
    last `window` ones and the one trusted so far, so that a burst of slow
    exchanges (every board re-syncing at once after a hub restart) does not
    push a good sample out.  Corrects for drift fitted over up to
    `max_points` interval-best samples (one per `point_ms`) once they span at
    least `min_span_ms`."""

    def __init__(self, window=8, point_ms=60000, max_points=32, min_span_ms=120000,
                 drift_bound_ppm=100):
        self.window = window
        self.drift_bound_ppm = drift_bound_ppm
        self.point_ms = point_ms
        self.max_points = max_points
        self.min_span_ms = min_span_ms
        self.samples = []    # [(delay, offset, t4)], oldest first
        self._best = None    # the trusted (delay, offset, t4)
        self.points = []     # [(t4, offset, delay)], one per interval
        self._cand = None    # best sample of the current interval
        self._cand_t0 = None
        self.skew = (0, 1)   # drift as a fraction: d(offset) / d(local)
        self.delay = None    # round trip of the trusted sample
        self._anchor = None  # (t4, offset) of the trusted sample
        self._line = None    # (t, offset) the fitted drift line goes through

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
        self._track_points(dly, off, t4)
        # the trusted sample: least delay / 2 + age * drift bound (in ms * 1e6)
        ppm = self.drift_bound_ppm
        best = self._best
        if best is None:
            best = self.samples[-1]         # this sample: the list is never empty here
        score = best[0] * 500000 + (t4 - best[2]) * ppm
        for s in self.samples:
            sc = s[0] * 500000 + (t4 - s[2]) * ppm
            if sc < score:
                best, score = s, sc
        self._best = best
        self.delay = best[0]
        self._anchor = (best[2], best[1])
        if self._line is not None:
            # once the drift is fitted, the line through many interval-best
            # samples averages their asymmetry noise away: anchor on it
            t, o = self._line
            self._anchor = (best[2], o + (best[2] - t) * self.skew[0] // self.skew[1])
        return off, dly

    def _track_points(self, dly, off, t4):
        if self._cand_t0 is None:
            self._cand_t0 = t4
        if self._cand is None or dly < self._cand[2]:
            self._cand = (t4, off, dly)
        if t4 - self._cand_t0 >= self.point_ms or not self.points:
            self.points.append(self._cand)
            if len(self.points) > self.max_points:
                self.points.pop(0)
            self._cand = None
            self._cand_t0 = t4
            self._fit()

    def _fit(self):
        """Least-squares slope of offset over local time, in integers."""
        pts = self.points
        n = len(pts)
        if n < 3 or pts[-1][0] - pts[0][0] < self.min_span_ms:
            return
        mt = sum(p[0] for p in pts) // n
        mo = sum(p[1] for p in pts) // n
        num = den = 0
        for t, o, _ in pts:
            num += (t - mt) * (o - mo)
            den += (t - mt) * (t - mt)
        if den > 0:
            self.skew = (num, den)
            self._line = (mt, mo)

    @property
    def ready(self):
        return self._anchor is not None

    @property
    def offset(self):
        """The offset at the trusted sample (None before the first)."""
        return self._anchor[1] if self._anchor else None

    def drift_ppm(self):
        return self.skew[0] * 1000000 // self.skew[1]

    def error_bound(self):
        """Worst-case error of to_hub() from network asymmetry (delay / 2,
        rounded up, plus 1 for integer rounding); None before the first sample."""
        if self.delay is None:
            return None
        return (self.delay + 1) // 2 + 1

    def to_hub(self, local):
        if self._anchor is None:
            return None
        t, off = self._anchor
        return local + off + (local - t) * self.skew[0] // self.skew[1]

    def to_local(self, hub):
        """Inverse of to_hub (to the millisecond): when a hub instant falls
        on the local clock."""
        if self._anchor is None:
            return None
        t, off = self._anchor
        num, den = self.skew
        # hub = local + off + (local - t) * num / den  =>  solve for local
        return ((hub - off) * den + t * num) // (den + num)
