# The board's pure logic: button transitions become journaled events
# according to each station's state, acks retire them, clock-sync replies
# feed the offset estimator, the hub's schedule says when stations run and
# which signals to fire.  No I/O here: app.py does the journal writes,
# publishing and sounds that these methods ask for.
#
# Station states: idle (before the start) -> running -> called (a finish call
# waits for the referee) -> done (confirmed); stopped after time-up.
# In 'running' a press is the finish call, stamped at the press instant.
# In 'called' a hold is the referee's: 2 s confirms with the missing pieces
# counted, 6 s voids the call (back to running).  A short press counts one
# missing piece only once the hub has the call (its station state says so)
# and the station has been quiet for quiet_ms since then: any other short
# press is the competitor's (a repeat call: a nervous second press while
# the ack's beeps are late), never a missing piece.  Every short press in
# 'called' is reported (a stray with state 'called', and 'missing': the
# count so far when it counted), so the referee's phone shows the count the
# board's confirm will record; the confirm's hold says it too (a count blip
# per piece after the armed tick).  In any other state a press is reported
# as a stray event, never dropped.
#
# Times: t is the board's local time (ms, LocalClock), "hub time" is the
# hub's (sync.to_hub(t)).

try:
    from micropython import const
except ImportError:   # CPython (the portable tests)
    def const(v):
        return v

import gestures
import protocol
from clocksync import OffsetEstimator

# retransmission of an unacknowledged event: after 1 s, doubling to 16 s
_RETRY_MIN_MS = const(1000)
_RETRY_MAX_MS = const(16000)
# unacknowledged entries kept in RAM (each 250-300 bytes on the board); the
# rest are in the journal only and come in as these are acknowledged
_WINDOW = const(4)
# gesture times; config "timings" overrides them
_DEBOUNCE_MS = const(30)     # contact bounce settles within this
_CONFIRM_MS = const(2000)    # hold this long: referee confirms the call
_VOID_MS = const(6000)       # hold this long: referee voids the call
_QUIET_MS = const(5000)      # short presses count missing pieces this long after the hub has the call


class Station(gestures.Debouncer):
    """One button: its debouncer, and the station's own state."""

    def __init__(self, number, settle_ms):
        super().__init__(settle_ms)
        self.number = number
        self.down_at = None      # local time of the current press
        self.down_state = None   # station state when it began
        self.armed = 0           # hold feedback given: 1 confirm, 2 void
        self.call = None         # [boot, seq] of the pending finish call
        self.missing = 0
        self.timeout = None      # local time from which a short press counts (None: the hub has not the call; a ROM name)
        self.confirmed = 0       # finish calls confirmed so far
        self.done = False
        self.key = None          # [boot, seq] of its latest finish call, open or closed
        self.end = None          # its own end (hub ms) as the hub's station states say


class Board:
    def __init__(self, boot, stations, journal=None, timings=None, bi=None):
        # journal: Journal.load, whence the entries not yet acknowledged come (see fill()); bi:
        # the install id from the configuration (made when flashed), part of
        # every event's identity: a spare flashed with a dead board's id
        # makes events of its own, whatever its boot count
        t = timings or {}
        self.boot = boot
        self.bi = bi
        self.stations = stations
        self.confirm_ms = t.get("confirm_ms", _CONFIRM_MS)
        self.void_ms = t.get("void_ms", _VOID_MS)
        self.quiet_ms = t.get("quiet_ms", _QUIET_MS)
        settle = t.get("debounce_ms", _DEBOUNCE_MS)
        self.st = []
        for i in range(stations):
            self.st.append(Station(i + 1, settle))
        self.seq = 0
        self.sync = OffsetEstimator()
        self.sync_sent = {}     # id -> t1 of requests awaiting a reply
        # (boot, seq) -> [entry, next retry local ms, retry interval]
        # -- at most _WINDOW of them.  backlog: None, or the journal holds
        # others, all after this key ((0, 0): from the first); see fill()
        self.unacked = {}
        self.backlog = None
        if journal:
            self.backlog = (0, 0)
            self.fill(journal)
        self.sched = None       # the hub's latest schedule message
        # [at, name] of the last signal played: signals play in the order
        # of the schedule, so every one up to it is done (played or, late, skipped)
        self.played = None

    # -- station state -------------------------------------------------
    def state(self, number, now):
        """Station `number`'s state at hub time now (None: no clock yet)."""
        # "idle", "running", "called", "stopped", "done": literal strings (a
        # stray event carries one), not const(): a const() string in an .mpy
        # is an object in each function's constant table (measured: 160
        # bytes more of RAM for board.py; again 2026-12-06, issue 46: 192
        # bytes, and the 72 KB heap test failed 5 runs of 9 with them), a
        # literal a qstr already held
        s = self.st[number - 1]
        if s.call is not None:
            return "called"
        if s.done:
            return "done"
        sc = self.sched
        if sc is None or sc["start"] is None:
            return "idle"
        if now is None:
            # no clock yet this boot (rebooted mid-round; WiFi or hub away) but
            # a round on the schedule: a finish must not be lost -- it is timed
            # at the first sync, and a false call is voided by the referee
            return "running"
        if now < sc["start"]:
            return "idle"
        end = s.end if s.end is not None else sc["end"]   # its own: a new start time
        if end is not None and now >= end:
            return "stopped"
        return "running"

    def snapshot(self):
        """What must survive a reboot mid-round (pending calls, finished
        stations, the schedule), as JSON-able data."""
        st = []
        for s in self.st:
            st.append([s.call, s.missing, s.done, s.confirmed, s.key])
        return {"st": st, "sched": self.sched}

    def restore(self, data):
        """Back to a snapshot() taken before the reboot."""
        for s, rec in zip(self.st, data.get("st", ())):
            s.call, s.missing, s.done = rec[0], rec[1], rec[2]
            s.confirmed = rec[3] if len(rec) > 3 else 0
            s.key = rec[4] if len(rec) > 4 else s.call
        if data.get("sched"):
            self.sched = data["sched"]

    # -- inputs --------------------------------------------------------
    def transition(self, number, level, t):
        """A debounced transition of station `number` at local time t.
        Returns a list of actions: ("event", entry) and ("sound", name)."""
        if not 1 <= number <= self.stations:
            raise ValueError("no such station: %d" % number)
        s = self.st[number - 1]
        if level == 1:        # pressed
            state = self.state(number, self.sync.to_hub(t))
            s.down_at, s.down_state, s.armed = t, state, 0
            if state == "running":
                e = self._event(protocol.T_PRESS, number, t)
                s.call, s.missing, s.timeout = [e["boot"], e["seq"]], 0, None
                s.key = s.call
                return [("event", e), ("sound", "call")]
            if state == "called":
                return []                 # the referee's press: judged on release
            e = self._event(protocol.T_STRAY, number, t)
            e["state"] = state
            return [("event", e), ("sound", "stray")]
        # released
        began, s.down_state = s.down_state, None
        if began != "called" or s.call is None or s.down_at is None:
            return []
        kind = gestures.classify(t - s.down_at, self.confirm_ms, self.void_ms)
        if kind is None:                  # a short press
            e = self._event(protocol.T_STRAY, number, s.down_at)
            e["state"] = "called"
            if s.timeout is None or s.down_at < s.timeout:
                # the competitor's (a repeat call), never a missing piece;
                # the quiet time runs again from it
                if s.timeout is not None:
                    s.timeout = t + self.quiet_ms
                return [("event", e), ("sound", "call")]
            s.missing += 1
            e["missing"] = s.missing
            return [("event", e), ("sound", "count")]
        call, s.call = s.call, None
        if kind == "confirm":
            s.confirmed += 1
            # how many finish calls the station makes (puzzles one at a
            # time: "calls" in the schedule); until then the next one runs
            calls = self.sched.get("calls") if self.sched else None
            s.done = s.confirmed >= (calls[number - 1] if calls and number <= len(calls) else 1)
            e = self._event(protocol.T_CONFIRM, number, t)
            e["call"], e["missing"] = call, s.missing
            return [("event", e), ("sound", "confirmed")]
        s.missing = 0
        e = self._event(protocol.T_VOID, number, t)
        e["call"] = call
        return [("event", e), ("sound", "voided")]

    def update(self, entries, t=0):
        """The hub's state of the stations (protocol 'stations'): each
        station's own end, and a call of this board's that the hub closed
        (the desk voided or confirmed it, or refused the board's own
        decision on it) is closed here as the hub has it.  An open call at
        the hub, or one that is not the station's latest here (a newer call
        of its own), is left alone; the station's own call open at the
        hub: the hub has it, a short press counts a missing piece quiet_ms
        after (local time t).  Returns the stations whose call
        changed, with their sound."""
        out = []
        for i in range(min(len(entries), self.stations)):
            code, call, end, conf = entries[i]
            s = self.st[i]
            s.end = end
            if code == 2 and call is not None and call == s.call and s.timeout is None:
                s.timeout = t + self.quiet_ms
            if code == 2 or call is None or call != s.key:
                continue
            was = (s.call is None, s.done, s.confirmed)
            s.call, s.done, s.confirmed = None, code == 3, conf
            if was != (True, s.done, conf):
                s.missing = 0
                out.append((i + 1, "confirmed" if conf > was[2] else "voided"))
        return out

    def hold_feedback(self, now):
        """Sounds telling a referee holding the button what releasing now
        would do."""
        out = []
        for s in self.st:
            if s.down_state == "called" and s.stable == 1:
                held = now - s.down_at
                if held >= self.void_ms and s.armed < 2:
                    s.armed = 2
                    out.append(("sound", "void_armed"))
                elif held >= self.confirm_ms and s.armed < 1:
                    s.armed = 1
                    out.append(("sound", "confirm_armed"))
                    if s.missing:             # what the release records: a blip per missing piece
                        out.append(("sound", s.missing))    # type: ignore[arg-type]
        return out

    def next_hold_ms(self, now):
        """Local time of the next hold feedback due, or None."""
        nxt = None
        for s in self.st:
            if s.down_state == "called" and s.stable == 1 and s.armed < 2:
                t = s.down_at + (self.confirm_ms if s.armed == 0 else self.void_ms)
                nxt = t if nxt is None or t < nxt else nxt
        return nxt

    def _event(self, kind, station, t):
        # a new journal entry (the caller adds the type's own fields)
        self.seq += 1
        e = {"type": kind, "boot": self.boot, "seq": self.seq, "station": station}
        if self.bi:
            e["in"] = self.bi
        # the event (round) whose schedule it was made under: a press left
        # in the journal when the hall moves to the next round is stored
        # under its own round, never ranked in the new one
        ev = self.sched.get("ev") if self.sched is not None else None
        if ev is not None:
            e["ev"] = ev
        if self.sync.ready:
            e["at"] = self.sync.to_hub(t)
            e["err"] = self.sync.error_bound()
        else:
            e["at"] = None
            e["local"] = t
        if self.backlog is None and len(self.unacked) >= _WINDOW:
            self.backlog = max(self.unacked)
        if self.backlog is None:
            self.store(e)
        # else in the journal only, until the window has room (fill())
        return e

    def store(self, e):
        """Keeps entry e in RAM until it is acknowledged, sent at once and
        then with back-off (the window's, and an entry its journal did not
        take: app.py)."""
        self.unacked[(e["boot"], e["seq"])] = [e, 0, _RETRY_MIN_MS]

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

    def fill(self, load):
        """Takes entries in from the journal while the window has room and
        the journal holds more: load(key, n) is Journal.load, the n oldest
        after key and whether there are others.  Returns the entries of this
        boot that got their hub time now (to rewrite in the journal)."""
        n = _WINDOW - len(self.unacked)
        if n <= 0 or self.backlog is None:
            return ()
        entries, more = load(self.backlog, n)
        for e in entries:
            self.store(e)
            self.backlog = (e["boot"], e["seq"])
        if not more:
            self.backlog = None
        return self.resolve_times()

    def due(self, now):
        """Entries whose (re)transmission is due at local time now; each
        returned entry's next retry is pushed back with exponential back-off.
        Entries waiting for their hub time in this boot are held back."""
        out = []
        for rec in self.unacked.values():
            e = rec[0]
            if e["at"] is None and e["boot"] == self.boot:
                continue
            if now - rec[1] >= 0:
                out.append(e)
                rec[1] = now + rec[2]
                rec[2] = min(rec[2] * 2, _RETRY_MAX_MS)
        out.sort(key=lambda e: (e["boot"], e["seq"]))
        return out

    def retry_all_now(self):
        """The hub (re)appeared: send everything unacknowledged at once."""
        for rec in self.unacked.values():
            rec[1] = 0
            rec[2] = _RETRY_MIN_MS

    def ack(self, boot, seq, bi=None):
        """The hub made (boot, seq) of install bi durable; returns True if it
        was pending.  The ack of another install's (boot, seq) -- a spare
        under this board's id, or this board under a new flash -- is not
        this entry's.  (The hub names the install once a board id has had
        more than one in the event: bi None, the only one there is.)"""
        rec = self.unacked.get((boot, seq))
        if rec is None or bi is not None and rec[0].get("in", "") != bi:
            return False
        del self.unacked[(boot, seq)]
        return True

    @staticmethod
    def event_message(e):
        """The message for a journal entry (an entry written before 'type'
        existed is a press)."""
        m = protocol.event(e.get("type", protocol.T_PRESS), e["boot"], e["seq"], e["station"], e["at"],
                           e.get("err"))
        for k in ("call", "missing", "state", "in", "ev"):
            if k in e:
                m[k] = e[k]
        return m

    # -- schedule ------------------------------------------------------
    def set_schedule(self, msg):
        """Accept a newer schedule; returns True if it replaced the old.
        Newer: a higher id within one event ('ev'), or any schedule of
        another event -- a board reused from an earlier one keeps that
        event's schedule in flash, its ids are not this event's; its
        stations start afresh."""
        old = self.sched
        if old is not None and msg.get("ev") == old.get("ev"):
            if msg["id"] <= old["id"]:
                return False
        elif old is not None:
            for s in self.st:
                s.call, s.missing, s.done, s.confirmed, s.key, s.end = None, 0, False, 0, None, None
            self.played = None
        signals = []                      # (at, name): a tuple is one small object, a list two
        for s in msg["signals"]:
            signals.append((s[0], s[1]))
        rot = msg.get("rot")
        if rot is not None:
            t = rot[0]
            while t < rot[2]:
                signals.append((t, "rotate"))
                t += rot[1]
        signals.sort()
        self.sched = {"id": msg["id"], "ev": msg.get("ev"), "start": msg["start"], "end": msg["end"],
                      "signals": signals, "calls": msg.get("calls"), "term": msg.get("term", 1),
                      "hash": msg.get("hash")}
        calls = msg.get("calls")
        for s in self.st:                 # more puzzles than thought: run again
            if s.done and s.confirmed < (calls[s.number - 1] if calls and s.number <= len(calls) else 1):
                s.done = False
        return True

    def next_signal(self, now, late_ms, gone=None):
        """The next signal to play at hub time now: [at, name] not yet
        played and not more than late_ms in the past; None if there is none.
        gone (a list): the ones not played that are further in the past
        (woken or booted too late for them) are appended to it, in order."""
        if self.sched is None or now is None:
            return None
        for at, name in self.sched["signals"]:
            if self.played is None or [at, name] > self.played:
                if at >= now - late_ms:
                    return [at, name]
                if gone is not None:
                    gone.append([at, name])
        return None

    def mark_played(self, s):
        self.played = [s[0], s[1]]

    # -- clock sync ----------------------------------------------------
    def sync_request(self, t):
        # numbered by t1 itself (the local ms it leaves at: one at most a ms)
        self.sync_sent[t] = t
        if len(self.sync_sent) > 8:   # forget requests whose replies were lost
            del self.sync_sent[min(self.sync_sent)]
        msg = protocol.sync_request(t, t)
        s = self.sync
        if s.ready:
            # "at": the board's hub time then, its error, and the jump of the
            # hub's clock it refused last with the generation of the base it
            # keeps: the round's time base as this board kept it, the hub's
            # witness (docs/protocol.md)
            g = s.g
            msg["at"] = ([s.to_hub(t), s.error_bound()] if g[1] is None
                         else [s.to_hub(t), s.error_bound(), g[1], g[0]])
        return msg

    def sync_reply(self, msg, t):
        """Feed a hub reply received at local time t.  Returns the sample's
        (offset, delay), or None for a reply that does not match an
        outstanding request (late duplicate, or from before a reboot)."""
        t1 = self.sync_sent.pop(msg["id"], None)
        if t1 is None or t1 != msg["t1"]:
            return None
        # "g": the generation of the hub's time base (a jump of the same one
        # is refused: sync.jump, reported in the next request)
        try:
            return self.sync.add(t1, msg["t2"], msg["t3"], t, msg.get("g", 0))
        except ValueError:
            # a negative round trip, which the estimator refuses: a sample
            # like any refused one, not an error that ends the message's
            # handling (its other answers); seen in the hostile hall's test,
            # not explained yet
            return None
