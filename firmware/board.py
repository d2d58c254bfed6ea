# The board's pure logic: button transitions become journaled events
# according to each station's state, acks retire them, clock-sync replies
# feed the offset estimator, the hub's schedule says when stations run and
# which signals to fire.  No I/O here: app.py does the journal writes,
# publishing and sounds that these methods ask for.
#
# Station states: idle (before the start) -> running -> called (a finish call
# waits for the referee) -> done (confirmed); stopped after time-up.
# In 'running' a press is the finish call, stamped at the press instant.
# In 'called' presses are the referee's: short ones count missing pieces,
# a hold of CONFIRM_MS confirms with that count, a hold of VOID_MS voids
# the call (back to running).  In any other state a press is reported as a
# stray event, never dropped.

import gestures
import protocol
from clocksync import OffsetEstimator

RETRY_MIN_MS = 1000
RETRY_MAX_MS = 16000


class Station:
    def __init__(self, number, settle_ms):
        self.number = number
        self.deb = gestures.Debouncer(settle_ms)
        self.down_at = None      # local time of the current press
        self.down_state = None   # station state when it began
        self.armed = 0           # hold feedback given: 1 confirm, 2 void
        self.call = None         # [boot, seq] of the pending finish call
        self.missing = 0
        self.confirmed = 0       # finish calls confirmed so far
        self.done = False


class Board:
    def __init__(self, board_id, boot, stations, pending=(), timings=None):
        t = timings or {}
        self.board_id = board_id
        self.boot = boot
        self.stations = stations
        self.debounce_ms = t.get("debounce_ms", gestures.DEBOUNCE_MS)
        self.confirm_ms = t.get("confirm_ms", gestures.CONFIRM_MS)
        self.void_ms = t.get("void_ms", gestures.VOID_MS)
        self.st = [Station(i + 1, self.debounce_ms) for i in range(stations)]
        self.seq = 0
        self.sync = OffsetEstimator()
        self.sync_id = 0
        self.sync_sent = {}     # id -> t1 of requests awaiting a reply
        # (boot, seq) -> [entry, next retry local ms, retry interval]
        self.unacked = {}
        for e in pending:
            self.unacked[(e["boot"], e["seq"])] = [e, 0, RETRY_MIN_MS]
        self.sched = None       # the hub's latest schedule message
        self.played = {}        # (at, name) of signals already played

    # -- station state -------------------------------------------------
    def hub_time(self, local):
        return self.sync.to_hub(local)

    def state(self, number, hub_now):
        s = self.st[number - 1]
        if s.call is not None:
            return "called"
        if s.done:
            return "done"
        sc = self.sched
        if sc is None or sc["start"] is None:
            return "idle"
        if hub_now is None:
            # no clock yet this boot (rebooted mid-round; WiFi or hub away) but
            # a round on the schedule: a finish must not be lost -- it is timed
            # at the first sync, and a false call is voided by the referee
            return "running"
        if hub_now < sc["start"]:
            return "idle"
        if sc["end"] is not None and hub_now >= sc["end"]:
            return "stopped"
        return "running"

    def calls_of(self, number):
        """How many finish calls the station makes (puzzles one at a time)."""
        calls = self.sched.get("calls") if self.sched else None
        return calls[number - 1] if calls and number <= len(calls) else 1

    def snapshot(self):
        """What must survive a reboot mid-round (pending calls, finished
        stations, the schedule), as JSON-able data."""
        return {"st": [[s.call, s.missing, s.done, s.confirmed] for s in self.st], "sched": self.sched}

    def restore(self, snap):
        for s, rec in zip(self.st, snap.get("st", ())):
            s.call, s.missing, s.done = rec[0], rec[1], rec[2]
            s.confirmed = rec[3] if len(rec) > 3 else 0
        if snap.get("sched"):
            self.sched = snap["sched"]

    # -- inputs --------------------------------------------------------
    def transition(self, number, level, t):
        """A debounced transition of station `number` at local time t.
        Returns a list of actions: ("event", entry) and ("sound", name)."""
        if not 1 <= number <= self.stations:
            raise ValueError("no such station: %d" % number)
        s = self.st[number - 1]
        if level == gestures.PRESSED:
            state = self.state(number, self.hub_time(t))
            s.down_at, s.down_state, s.armed = t, state, 0
            if state == "running":
                e = self._event(protocol.T_PRESS, number, t)
                s.call, s.missing = [e["boot"], e["seq"]], 0
                return [("event", e), ("sound", "call")]
            if state == "called":
                return []                 # the referee's press: judged on release
            return [("event", self._event(protocol.T_STRAY, number, t, state=state)),
                    ("sound", "stray")]
        # released
        began, s.down_state = s.down_state, None
        if began != "called" or s.call is None or s.down_at is None:
            return []
        kind = gestures.classify(t - s.down_at, self.confirm_ms, self.void_ms)
        if kind == gestures.SHORT:
            s.missing += 1
            return [("sound", "count")]
        call, s.call = s.call, None
        if kind == gestures.CONFIRM:
            s.confirmed += 1
            s.done = s.confirmed >= self.calls_of(number)   # else: the next puzzle runs
            e = self._event(protocol.T_CONFIRM, number, t, call=call, missing=s.missing)
            return [("event", e), ("sound", "confirmed")]
        s.missing = 0
        return [("event", self._event(protocol.T_VOID, number, t, call=call)), ("sound", "voided")]

    def hold_feedback(self, now):
        """Sounds telling a referee holding the button what releasing now
        would do."""
        out = []
        for s in self.st:
            if s.down_state == "called" and s.deb.stable == gestures.PRESSED:
                held = now - s.down_at
                if held >= self.void_ms and s.armed < 2:
                    s.armed = 2
                    out.append(("sound", "void_armed"))
                elif held >= self.confirm_ms and s.armed < 1:
                    s.armed = 1
                    out.append(("sound", "confirm_armed"))
        return out

    def next_hold_ms(self, now):
        """Local time of the next hold feedback due, or None."""
        nxt = None
        for s in self.st:
            if s.down_state == "called" and s.deb.stable == gestures.PRESSED and s.armed < 2:
                t = s.down_at + (self.confirm_ms if s.armed == 0 else self.void_ms)
                nxt = t if nxt is None or t < nxt else nxt
        return nxt

    def _event(self, type_, station, local_ms, **fields):
        self.seq += 1
        e = {"type": type_, "boot": self.boot, "seq": self.seq, "station": station}
        for k in fields:
            e[k] = fields[k]
        if self.sync.ready:
            e["at"] = self.sync.to_hub(local_ms)
            e["err"] = self.sync.error_bound()
        else:
            e["at"] = None
            e["local"] = local_ms
        self.unacked[(self.boot, self.seq)] = [e, 0, RETRY_MIN_MS]
        return e

    def press(self, station, local_ms):
        """A complete short press at local_ms (down, then up): the actions
        of both transitions.  Convenience for tests and tools."""
        return (self.transition(station, gestures.PRESSED, local_ms)
                + self.transition(station, gestures.RELEASED, local_ms + 80))

    # -- delivery ------------------------------------------------------
    def resolve_times(self):
        """After the first sync of this boot: entries of this boot still
        without hub time get one.  Returns the entries changed (to rewrite
        in the journal).  Entries of earlier boots keep at=None: their local
        clock is gone with the reboot."""
        changed = []
        if not self.sync.ready:
            return changed
        for rec in self.unacked.values():
            e = rec[0]
            if e["at"] is None and e["boot"] == self.boot and "local" in e:
                e["at"] = self.sync.to_hub(e.pop("local"))
                e["err"] = self.sync.error_bound()
                changed.append(e)
        return changed

    def due(self, now_ms):
        """Entries whose (re)transmission is due at local time now_ms; each
        returned entry's next retry is pushed back with exponential back-off.
        Entries waiting for their hub time in this boot are held back."""
        out = []
        for rec in self.unacked.values():
            e = rec[0]
            if e["at"] is None and e["boot"] == self.boot:
                continue
            if now_ms - rec[1] >= 0:
                out.append(e)
                rec[1] = now_ms + rec[2]
                rec[2] = min(rec[2] * 2, RETRY_MAX_MS)
        out.sort(key=lambda e: (e["boot"], e["seq"]))
        return out

    def retry_all_now(self):
        """The hub (re)appeared: send everything unacknowledged at once."""
        for rec in self.unacked.values():
            rec[1] = 0
            rec[2] = RETRY_MIN_MS

    def ack(self, boot, seq):
        """The hub made (boot, seq) durable; returns True if it was pending."""
        return self.unacked.pop((boot, seq), None) is not None

    @staticmethod
    def event_message(e):
        extra = {}
        for k in ("call", "missing", "state"):
            if k in e:
                extra[k] = e[k]
        return protocol.event(e.get("type", protocol.T_PRESS), e["boot"], e["seq"],
                              e["station"], e["at"], e.get("err"), **extra)

    # -- schedule ------------------------------------------------------
    def set_schedule(self, msg):
        """Accept a newer schedule; returns True if it replaced the old."""
        if self.sched is not None and msg["id"] <= self.sched["id"]:
            return False
        signals = [[s[0], s[1]] for s in msg["signals"]]
        rot = msg.get("rot")
        if rot is not None:
            t = rot[0]
            while t < rot[2]:
                signals.append([t, "rotate"])
                t += rot[1]
        signals.sort()
        self.sched = {"id": msg["id"], "start": msg["start"], "end": msg["end"], "signals": signals,
                      "calls": msg.get("calls")}
        for s in self.st:                 # more puzzles than thought: run again
            if s.done and s.confirmed < self.calls_of(s.number):
                s.done = False
        return True

    def next_signal(self, hub_now, late_ms):
        """The next signal to play: [at, name] not yet played and not more
        than late_ms in the past; None if there is none."""
        if self.sched is None or hub_now is None:
            return None
        for at, name in self.sched["signals"]:
            if at >= hub_now - late_ms and (at, name) not in self.played:
                return [at, name]
        return None

    def mark_played(self, sig):
        self.played[(sig[0], sig[1])] = True
        if len(self.played) > 128:      # keep it small: forget the oldest
            del self.played[min(self.played)]

    # -- clock sync ----------------------------------------------------
    def sync_request(self, local_ms):
        self.sync_id += 1
        self.sync_sent[self.sync_id] = local_ms
        if len(self.sync_sent) > 8:   # forget requests whose replies were lost
            del self.sync_sent[min(self.sync_sent)]
        return protocol.sync_request(self.sync_id, local_ms)

    def sync_reply(self, msg, local_ms):
        """Feed a hub reply received at local time local_ms.  Returns the
        sample's (offset, delay), or None for a reply that does not match an
        outstanding request (late duplicate, or from before a reboot)."""
        t1 = self.sync_sent.pop(msg["id"], None)
        if t1 is None or t1 != msg["t1"]:
            return None
        return self.sync.add(t1, msg["t2"], msg["t3"], local_ms)
