# Which of its hub's commands a board takes (docs/protocol.md,
# "Authenticity and replay protection", "Hub terms"): pure, no I/O; App
# calls check() for every signed message it receives, before it acts on it.
# Runs on CPython too (tests/portable/pt_hub_order.py, on both interpreters).
#
# A command is taken only if
#   1. it names this boot and install ("bt", "bi"; a schedule, retained and
#      ordered by its id, names none): one of another boot (captured,
#      replayed after a reboot) is refused before anything here moves;
#   2. its hub term is not lower than the highest seen (a standby that took
#      over has a higher one; an old primary's commands are refused), and a
#      higher one proves itself (auth.proves: only a hub can make the proof;
#      a key holder cannot): that hub's counters begin afresh here;
#   3. its counter (the hub's clock, ms) rises within the term, and runs
#      ahead of this board's clock by at most _HUB_JUMP_MS (and 1 ms a
#      second, drift) more than the first one taken this boot did: a counter
#      far ahead (someone with the key) would make every later command of
#      the real hub a replay.  Refused, and kept to be reported (the next
#      sync request says it: App.syncer).
# Refused means nothing here changed (but that report).

try:
    from micropython import const
except ImportError:   # CPython (the portable tests, the hub's tools)
    def const(v):
        return v

import protocol
from auth import AuthError, proves

# App.hub_ctr, one list (one allocation) of what the board holds of its hub;
# the indices (app.py and boot_trial.py name the ones they read alike:
# tests/firmware/test_firmware_heap.py checks they agree):
_HUB_CTR = const(0)     # the highest command counter taken (0: none this boot)
_HUB_BASE = const(1)    # the first taken this boot less the local time it came (None: none yet)
_HUB_JUMP = const(2)    # one refused as a jump, which the next sync request reports (0: none)
_HUB_TERM = const(3)    # the highest hub term seen (kept across reboots in the schedule)
_HUB_PROOF = const(4)   # that term's proof (hex; auth.proves)
# the hub's command counter follows its clock (ms): it may run ahead of this
# board's clock by at most this much (and 1 ms a second, drift) more than
# when the board first heard the hub this boot
_HUB_JUMP_MS = const(300000)
# what check() says changed besides hub_ctr (bits; app.py names them alike):
_SAVE = const(1)        # the schedule holds a new term or proof: to be saved (flash)
_TOOK_OVER = const(2)   # a hub of a higher term, proven: every entry still in flash goes to it again


def check(hub_ctr, msg, now, boot, bi, sched):
    """Takes msg, a signed message of the hub, at now (the board's local
    ms), for this board's boot and install id bi, with the schedule it
    holds (None: none; its "term" and "hash" kept up to date here): raises
    AuthError with the reason if the board must not take it, else moves
    hub_ctr on and returns what else changed (_SAVE, _TOOK_OVER; 0:
    nothing)."""
    h = hub_ctr
    typ = msg["type"]
    if typ != protocol.T_SCHED and (msg.get("bt") != boot or msg.get("bi") != bi):
        # only this boot's hub sets the boot's counter base
        raise AuthError("for boot %s of %s, this is %d of %s" % (msg.get("bt"), msg.get("bi"), boot, bi))
    t, p = msg.get("term", 1), msg.get("hash")
    if typ == protocol.T_SCHED and msg.get("ev") != (sched.get("ev") if sched else None):
        h[_HUB_TERM], h[_HUB_PROOF] = t, p   # another event's hub (a board reused): its terms, not the last event's
    if t < h[_HUB_TERM]:
        raise AuthError("an old hub's (term %d, not %d)" % (t, h[_HUB_TERM]))
    new = t > h[_HUB_TERM]
    if new and not proves(p, t - h[_HUB_TERM], h[_HUB_PROOF]):
        raise AuthError("term %d without a hub's proof" % t)
    ctr = msg.get("ctr")
    if typ != protocol.T_SCHED:          # schedules are ordered by their id
        last, base = (0, None) if new else (h[_HUB_CTR], h[_HUB_BASE])
        if ctr is None or ctr <= last:
            raise AuthError("replayed or unnumbered")
        if base is not None and ctr - now > base + _HUB_JUMP_MS + now // 1000:
            h[_HUB_JUMP] = ctr
            raise AuthError("counter jump (%d)" % ctr)
    # taken: from here nothing raises
    r = 0
    if new:                              # that hub's counters afresh
        h[_HUB_CTR], h[_HUB_BASE] = 0, None
        r = _TOOK_OVER
    if new or p and not h[_HUB_PROOF]:
        # the term and its proof (the first a term-1 hub gives: its
        # schedule's), kept across reboots in the saved schedule
        h[_HUB_TERM], h[_HUB_PROOF] = t, p
        if sched is not None:
            sched["term"], sched["hash"] = t, p
            r |= _SAVE
    if typ != protocol.T_SCHED:
        if h[_HUB_BASE] is None:
            h[_HUB_BASE] = ctr - now
        h[_HUB_CTR] = ctr
    return r
