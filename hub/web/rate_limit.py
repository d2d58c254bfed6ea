"""A crowd on the hall's WiFi must not slow the boards down: the public
pages' requests are limited per client address (a token bucket each) and
their streams counted per address and in all.  Pure: times are passed in
(seconds, monotonic), no I/O."""

from __future__ import annotations

from dataclasses import dataclass, field

REQUESTS_PER_S = 4.0          # a page asks once, then listens to its stream
BURST = 20
STREAMS_PER_CLIENT = 6        # a phone with a few tabs, a projector laptop
STREAMS_IN_ALL = 400          # what the hub's web server may spend on the hall


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
    _buckets: dict[str, _Bucket] = field(default_factory=dict)
    _streams: dict[str, int] = field(default_factory=dict)

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
