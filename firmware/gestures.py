# Button gestures, pure logic.  The pin interrupt reports raw edges (level
# after the edge, raw ticks); a Debouncer turns bursts of edges into clean
# transitions stamped with the FIRST edge of the burst -- the instant the
# contact closed, which is the press instant.  Classify() names a completed
# press by how long it was held.  The times (settling, confirm and void
# holds) are the board's (board.py: defaults, and config "timings").

# levels: 1 pressed, 0 released; classify(): None (short), "confirm", "void"
# (plain values, not module names: each global name of a loaded module is
# a qstr and a dict slot on the board)


class Debouncer:
    """One button.  edge() from the interrupt's record, poll() regularly;
    poll returns (level, t_first_edge) once a burst has settled to a level
    different from the last stable one, else None.  A glitch that settles
    back to the stable level yields nothing."""

    def __init__(self, settle_ms):
        self.settle_ms = settle_ms
        self.stable = 0
        self.level = 0
        self.first = None      # local time of the burst's first edge
        self.last = None       # local time of its latest edge

    def edge(self, level, t):
        """An edge at local time t.  Returns what poll(t) would have: the
        burst before it, when that had settled before this edge came (the
        inputs were read late, after both edges: a press shorter than the
        delay must not be taken for a glitch), else None."""
        r = self.poll(t) if self.first is not None else None
        if self.first is None:
            self.first = t
        self.last = t
        self.level = level
        return r

    def settles_at(self):
        return self.last + self.settle_ms if self.first is not None else None

    def poll(self, now):
        if self.first is None or now - self.last < self.settle_ms:
            return None
        t, self.first = self.first, None
        if self.level == self.stable:
            return None
        self.stable = self.level
        return self.level, t


def classify(t, confirm_ms, void_ms):
    """A completed press held t ms: None (a short one), "confirm" (held
    confirm_ms or more) or "void" (void_ms or more).  (None, not a word: a
    word is one more qstr in the board's RAM.)"""
    if t >= void_ms:
        return "void"
    if t >= confirm_ms:
        return "confirm"
    return None
