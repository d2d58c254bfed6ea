# NTP-style clock-offset math, run by the board firmware (MicroPython) and
# tested on CPython too.  Pure integer arithmetic (the ESP32 port's floats
# are single precision), no I/O.
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
#
# On the board this module stays in RAM: its tunables are const() (folded
# into the bytecode, no global names), its state plain attributes.

try:
    from micropython import const
except ImportError:   # CPython
    def const(v):
        return v

_POINT_MS = const(60000)        # one interval-best sample per minute...
_MAX_POINTS = const(32)         # ...the last 32 of them for the drift fit
_DRIFT_BOUND_PPM = const(100)   # what a sample's age may have cost, at most
# A sample further than both samples' error bounds plus this from what the
# trusted one predicts is the hub's clock jumping (a hub restarted on a
# laptop whose clock was set back, another laptop taking over): refused, and
# reported, while the hub's replies are of the same generation of its time
# base; for at most _HOLD_MS, then the board follows the hub (it weighed
# every board's report and kept its own base)
_JUMP_MARGIN_MS = const(20)
_HOLD_MS = const(60000)
# g: [the generation of the hub's time base the samples are of (a reply's
# "g"), the jump of the last sample refused (ms, + the hub ahead; None: none
# refused), the t4 of the first of those refused in a row]
_GEN = const(0)
_JUMP = const(1)
_SINCE = const(2)


class OffsetEstimator:
    """Trusts the sample with the smallest worst-case error: half its round
    trip plus what its age may have cost at 100 ppm of drift -- among the
    last `window` ones and the one trusted so far, so that a burst of slow
    exchanges (every board re-syncing at once after a hub restart) does not
    push a good sample out.  Corrects for drift fitted over up to 32
    interval-best samples (one per minute) once they span at least
    `min_span_ms`.

    ready: True once a sample is in; delay: the trusted sample's round trip
    (None before); skew: the drift as a fraction (d(offset), d(local));
    g: [generation of the hub's time base the samples are of, the jump of
    the last sample refused (None: none), when the refusals began] (one
    name: each costs the board RAM)."""

    def __init__(self, window=8, min_span_ms=120000):
        self.window = window
        self.min_span_ms = min_span_ms
        # The histories are flat lists of ints, three per sample (no tuple
        # per sample: on the board each would be an object of its own).
        # The samples' room is taken at once, while the board's heap is
        # young: grown on the way (4, 8, 16, 32 slots) the list would ask
        # for 256 bytes in one piece in the clock-sync burst right after
        # connecting, on a fragmented heap.  (A list keeps its room when
        # emptied with del, and when trimmed.)
        self.samples = [0] * (3 * window)   # delay, offset, t4 of the last `window`, oldest first
        del self.samples[:]
        self.points = []     # t4, offset, delay of the interval-best samples
        self.g = [0, None, None]
        self.forget()

    def forget(self):
        """Every sample forgotten: of another time base of the hub's
        ('forget': a name the board has already, Journal's)."""
        self.ready = False
        self.delay = None
        self.skew = (0, 1)
        del self.samples[:]
        del self.points[:]
        self._best = None    # the trusted (delay, offset, t4)
        self._anchor = None  # (t4, offset) of the trusted sample
        self._cand = None    # [t4 the interval began, and its best: t4, offset, delay]
        self._line = None    # (t, offset) the fitted drift line goes through

    def add(self, t1, t2, t3, t4, g=0):
        """Record one exchange (g: the generation of the hub's time base the
        reply says: its "g"); returns (offset, delay) of that sample, in the
        units of the inputs (the offset rounds half down), or None when it
        is refused as the hub's clock jumping (g[1] says by how much).  A
        sample with negative delay (a clock stepped mid-exchange) is
        rejected with ValueError."""
        off, dly = ((t2 - t1) + (t3 - t4)) // 2, (t4 - t1) - (t3 - t2)
        if dly < 0:
            raise ValueError("negative round trip")
        a, b, gen, g = self._anchor, self._best, g, self.g
        if gen != g[_GEN]:
            self.forget()                # the hub moved its base on purpose: follow it
        elif a is not None and b is not None:
            # this sample's offset less the one the trusted sample predicts (to_hub's)
            d = off - a[1] - (t4 - a[0]) * self.skew[0] // self.skew[1]
            bound = ((b[0] + 1) // 2 + (dly + 1) // 2 + 2 + _JUMP_MARGIN_MS
                     + (t4 - a[0]) * _DRIFT_BOUND_PPM // 1000000)
            if d > bound or -d > bound:
                if g[_SINCE] is None:
                    g[_SINCE] = t4
                if t4 - g[_SINCE] < _HOLD_MS:
                    g[_JUMP] = d
                    return None
                self.forget()            # held long enough: the hub keeps its base, so do we
        g[_GEN] = gen
        g[_JUMP] = g[_SINCE] = None
        s = self.samples
        # one extend, not three appends: a MemoryError (a fragmented heap on
        # the board) leaves the history whole, never one sample misaligned
        s += (dly, off, t4)
        if len(s) > 3 * self.window:
            del s[:3]
        # the interval-best samples the drift is fitted on
        c = self._cand
        if c is None:
            c = self._cand = [t4, 0, 0, None]
        if c[3] is None or dly < c[3]:
            c[1], c[2], c[3] = t4, off, dly
        if t4 - c[0] >= _POINT_MS or not self.points:
            p = self.points
            p += (c[1], c[2], c[3])
            if len(p) > 3 * _MAX_POINTS:
                del p[:3]
            c[0], c[3] = t4, None
            # the drift: least-squares slope of offset over local time, in
            # integers, once the points span min_span_ms
            n = len(p) // 3
            if n >= 3 and p[-3] - p[0] >= self.min_span_ms:
                mt = mo = 0
                for k in range(0, len(p), 3):
                    mt += p[k]
                    mo += p[k + 1]
                mt //= n
                mo //= n
                num = den = 0
                for k in range(0, len(p), 3):
                    num += (p[k] - mt) * (p[k + 1] - mo)
                    den += (p[k] - mt) * (p[k] - mt)
                if den > 0:
                    self.skew = (num, den)
                    self._line = (mt, mo)
        # the trusted sample: least delay / 2 + age * drift bound (in ms * 1e6)
        best = self._best
        if best is None:
            best = (dly, off, t4)          # this sample
        score = best[0] * 500000 + (t4 - best[2]) * _DRIFT_BOUND_PPM
        for k in range(0, len(s), 3):
            sc = s[k] * 500000 + (t4 - s[k + 2]) * _DRIFT_BOUND_PPM
            if sc < score:
                best, score = (s[k], s[k + 1], s[k + 2]), sc
        self._best = best
        self.delay = best[0]
        self._anchor = (best[2], best[1])
        self.ready = True
        if self._line is not None:
            # once the drift is fitted, the line through many interval-best
            # samples averages their asymmetry noise away: anchor on it
            t, o = self._line
            self._anchor = (best[2], o + (best[2] - t) * self.skew[0] // self.skew[1])
        return off, dly

    def error_bound(self):
        """Worst-case error of to_hub() from network asymmetry (delay / 2,
        rounded up, plus 1 for integer rounding); None before the first sample."""
        if self.delay is None:
            return None
        return (self.delay + 1) // 2 + 1

    def to_hub(self, t):
        """Local time t in hub time (None before the first sample)."""
        if self._anchor is None:
            return None
        t0, off = self._anchor
        return t + off + (t - t0) * self.skew[0] // self.skew[1]

    def to_local(self, hub):
        """Inverse of to_hub (to the millisecond): when a hub instant falls
        on the local clock."""
        if self._anchor is None:
            return None
        t, off = self._anchor
        num, den = self.skew
        # hub = local + off + (local - t) * num / den  =>  solve for local
        return ((hub - off) * den + t * num) // (den + num)
