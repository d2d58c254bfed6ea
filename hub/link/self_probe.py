"""The hub's proof of its own path through the broker: every interval it
publishes a signed probe on a topic of its own (hub_protocol.PROBE), which
it subscribes to; a probe coming back shows that what the hub publishes
reaches the broker and that its subscriptions still deliver.

Why: a client that connects with the hub's client id (two seconds are
enough) can leave the hub's connection open on the broker without its
session (amqtt does): pings are answered, nothing is delivered, and the hub
would be deaf until restarted.  When no probe comes back for the deadline
while connected, the hub raises an alert and drops its connection, so that
paho connects and subscribes again.

Pure: no I/O, no clock, no threads (the MQTT adapter calls it with hub
times, under a lock of its own, and does what it says).
"""

from __future__ import annotations

import json
import os
from typing import NamedTuple

from tabletimer.shared.auth import AuthError, Signer

from ..protocol import hub_protocol
from ..rules.timetext import fmt_clock

PROBE_INTERVAL_MS = 2_000
PROBE_DEADLINE_MS = 3 * PROBE_INTERVAL_MS
# a probe back counts if its number is at most this many below the last sent
# (after a reconnect paho sends again what was in flight)
PROBE_SLACK = 5
# each forced reconnect that did not bring a probe back doubles the deadline,
# up to this factor: a broker that never delivers the probe (an ACL that
# forbids the topic) costs a reconnect now and then, not every few seconds
MAX_BACKOFF = 8


class Tick(NamedTuple):
    probe: bytes | None      # to publish now on hub_protocol.PROBE (QoS 1)
    reconnect: bool          # the path is dead: drop the connection (paho reconnects)
    note: str | None         # a line for the event log


class SelfProbe:
    """The probe's state.  connected()/disconnected() as the broker
    connection comes and goes, delivered() for every message the broker
    delivers (busy: the hub is handling it), tick() every fraction of an
    interval, received() for a message on the probe topic."""

    def __init__(self, interval_ms: int = PROBE_INTERVAL_MS, deadline_ms: int | None = None,
                 slack: int = PROBE_SLACK, key: bytes | None = None, run: str | None = None) -> None:
        self.interval_ms = interval_ms
        self.deadline_ms = 3 * interval_ms if deadline_ms is None else deadline_ms
        self.slack = slack
        # a key made at each start: nobody else can make a probe that passes
        self._signer = Signer(key if key is not None else os.urandom(32))
        self.run = run if run is not None else os.urandom(8).hex()
        self.sent = 0                     # the number of the last probe made
        self.heard = 0                    # probes that came back (valid)
        self.rejected = 0                 # messages on the probe topic that are not this run's probes
        self.stale = 0                    # this run's, too far behind the last sent
        self.reconnects = 0               # forced, this run
        self._connected_ms: int | None = None   # None: not connected
        self._first_ms: int | None = None  # the first connection: silent since then if never heard
        self._heard_ms: int | None = None  # the last valid probe back
        self._delivered_ms: int | None = None   # the last message of any kind delivered
        self._busy = False
        self._next_ms = 0
        self._forced = 0                  # forced reconnects since the last probe back
        self._forced_ms: int | None = None      # the last one
        self._deaf_since: int | None = None     # alerted: silent since then
        self._down_ms: int | None = None        # the connection to the broker lost then (None: up)
        self._told_foreign = False

    # ------------------------------------------------------- connection
    def connected(self, now_ms: int) -> None:
        self._connected_ms = now_ms
        self._down_ms = None
        if self._first_ms is None:
            self._first_ms = now_ms
        self._next_ms = now_ms             # a probe at once

    def disconnected(self, now_ms: int | None = None) -> None:
        """The connection to the broker is lost (at now_ms)."""
        self._connected_ms = None
        if self._down_ms is None:
            self._down_ms = now_ms

    def delivered(self, now_ms: int, busy: bool) -> None:
        """A message from the broker, as the hub starts (busy) or ends
        handling it: its subscriptions deliver.  A probe queued behind a
        burst of board messages comes late, not never: while messages keep
        coming, or one is being handled, the path is not declared dead."""
        self._delivered_ms = now_ms
        self._busy = busy

    # ------------------------------------------------------- the probe
    def tick(self, now_ms: int) -> Tick:
        if self._connected_ms is None:
            return Tick(None, False, None)        # paho reconnects by itself
        last = max(self._connected_ms, self._heard_ms or 0, self._delivered_ms or 0, self._forced_ms or 0)
        if not self._busy and now_ms - last >= self.deadline_ms * min(2 ** self._forced, MAX_BACKOFF):
            since = self._silent_since()
            if self._deaf_since is None:
                self._deaf_since = since
            self._forced += 1
            self._forced_ms = now_ms
            self.reconnects += 1
            note = (f"the hub has not heard its own probe through the broker for {(now_ms - since) // 1000} s "
                    f"(since {fmt_clock(since)}): it reconnects (forced reconnect {self._forced})")
            return Tick(None, True, note)
        probe = None
        if now_ms >= self._next_ms:
            self.sent += 1
            self._next_ms = now_ms + self.interval_ms
            body = json.dumps(hub_protocol.probe(self.run, self.sent), separators=(",", ":")).encode()
            probe = self._signer.sign(hub_protocol.PROBE, body)
        return Tick(probe, False, None)

    def received(self, payload: bytes, now_ms: int) -> str | None:
        """A message on the probe topic; returns a line for the event log
        when it matters (the hub hears itself again, or a probe of another
        hub)."""
        try:
            if len(payload) > 512:
                raise ValueError("too long for a probe")
            m = json.loads(self._signer.open(hub_protocol.PROBE, payload))
            mine = isinstance(m, dict) and m.get("type") == hub_protocol.T_PROBE and m.get("run") == self.run
        except (AuthError, ValueError, UnicodeError, RecursionError):
            mine = False
        if not mine:
            self.rejected += 1
            if self._told_foreign:
                return None
            self._told_foreign = True
            return (f"a message on {hub_protocol.PROBE} that is not this hub's probe: another hub on this "
                    "broker, or someone replaying an earlier hub's messages (shown once)")
        n = m.get("n")
        if not isinstance(n, int) or not self.sent - self.slack <= n <= self.sent:
            self.stale += 1               # an old one of this run, sent again
            return None
        self.heard += 1
        self._heard_ms = now_ms
        self._forced = 0
        deaf, self._deaf_since = self._deaf_since, None
        if deaf is None:
            return None
        return f"the hub hears itself again through the broker (it had not since {fmt_clock(deaf)})"

    def alert(self, now_ms: int) -> str | None:
        """The console's alert while the path has been found dead, until a
        probe comes back."""
        down = self._down_ms
        if down is not None and now_ms - down >= self.deadline_ms:
            return (f"the hub is NOT CONNECTED to the broker since {fmt_clock(down)} ({(now_ms - down) // 1000} s): "
                    f"it keeps trying; the boards keep their presses and send them once it is back "
                    f"(is the broker running? the laptop's network up?)")
        since = self._deaf_since
        if since is None:
            return None
        return (f"the hub has not heard its own probe through the broker for {max(0, now_ms - since) // 1000} s "
                f"(since {fmt_clock(since)}): it reconnects; if this repeats, another client may be using "
                f"the hub's login or client id")

    def _silent_since(self) -> int:
        if self._heard_ms is not None:
            return self._heard_ms
        return self._first_ms if self._first_ms is not None else 0
