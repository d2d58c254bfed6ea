"""A crowd on the hall's WiFi must not slow the boards down: the public
pages' requests are limited per client address (a token bucket each) and
their streams counted per address and in all.  The hall's screens (a
screen token on their address, screens.py) have streams of their own,
SCREENS_IN_ALL of them, that the crowd's never take.  Pure: times are
passed in (seconds, monotonic), no I/O."""

from __future__ import annotations

from dataclasses import dataclass, field

REQUESTS_PER_S = 4.0          # a page asks once, then listens to its stream
BURST = 20
STREAMS_PER_CLIENT = 6        # a phone with a few tabs, a projector laptop
STREAMS_IN_ALL = 400          # what the hub's web server may spend on the hall
SCREENS_IN_ALL = 16           # the projectors' streams (with the screen token): never the crowd's


@dataclass
class _Bucket:
    tokens: float
    at: float


@dataclass
class RateLimit:
    per_s: float = REQUESTS_PER_S
    burst: int = BURST
    streams_per_client: int = STREAMS_PER_CLIENT
    streams_in_all: int = STREAMS_IN_ALL
    screens_in_all: int = SCREENS_IN_ALL
    _buckets: dict[str, _Bucket] = field(default_factory=dict)
    _streams: dict[str, int] = field(default_factory=dict)
    _screens: int = 0

    def request(self, client: str, now: float) -> bool:
        """May client make a request now (it is counted if so)?"""
        b = self._buckets.get(client)
        if b is None:
            if len(self._buckets) > 10_000:      # forget the full buckets of clients gone
                self._buckets = {k: v for k, v in self._buckets.items()
                                 if v.tokens + (now - v.at) * self.per_s < self.burst}
            b = self._buckets[client] = _Bucket(float(self.burst), now)
        b.tokens = min(float(self.burst), b.tokens + (now - b.at) * self.per_s)
        b.at = now
        if b.tokens < 1:
            return False
        b.tokens -= 1
        return True

    def open_stream(self, client: str) -> str | None:
        """Count a stream of client's; why not (None: it may)."""
        if sum(self._streams.values()) >= self.streams_in_all:
            return f"the hall's pages have {self.streams_in_all} viewers already; try again in a minute"
        if self._streams.get(client, 0) >= self.streams_per_client:
            return f"{self.streams_per_client} pages open from this device already: close one"
        self._streams[client] = self._streams.get(client, 0) + 1
        return None

    def close_stream(self, client: str) -> None:
        n = self._streams.get(client, 0) - 1
        if n > 0:
            self._streams[client] = n
        else:
            self._streams.pop(client, None)

    @property
    def streams(self) -> int:
        return sum(self._streams.values())

    def open_screen(self) -> str | None:
        """Count a screen's stream (one with the screen token); why not
        (None: it may).  The spectators' limits do not count it."""
        if self._screens >= self.screens_in_all:
            return (f"{self.screens_in_all} screens are open with this event's screen token already: "
                    "close one (or make a new token: docs/operations.md)")
        self._screens += 1
        return None

    def close_screen(self) -> None:
        self._screens = max(0, self._screens - 1)

    @property
    def screens(self) -> int:
        return self._screens
