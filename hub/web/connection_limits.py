"""Who may open one more connection to a web server (server.py's protocol
asks and tells this; pure bookkeeping, no I/O):

  - at most max_connections in all, and at most per_address from one source
    (an IPv4 address; an IPv6 /64: broker/peer_address.py's `source_of`, the broker's rule too);
  - the last `reserved` of them only for requests with a credential
    (`privileged(scope)`: a referee's sign-in, the console's token, a hall
    screen's token): a connection accepted there waits until its first
    request's head shows one (`vet`; the server closes it after PROBATION_S
    without a request; at most PROBATION_PER_ADDRESS such waiting from one
    source); without one it is answered 503.  The reserve full, the one
    that has waited longest is closed for the newcomer: connections that
    never send a request, opened from many addresses, cannot keep a
    referee out (a referee's request follows its connection at once; such
    a flood would have to fill the whole reserve in between).

A crowd, or a flood from one address or many, so leaves the referees, the
consoles and the projector their room (issue #33 item 2)."""

from __future__ import annotations

import logging
from collections import Counter
from typing import Callable, Hashable

PER_ADDRESS = 64             # connections from one source at a time (a phone needs a few, a NAT more)
RESERVED_SHARE = 16          # the last 1/16 of the connections (64 of 1024) only for a credential
PROBATION_S = 3.0            # a connection accepted in that reserve shows its credential within this
PROBATION_PER_ADDRESS = 4    # connections of one source waiting in the reserve at a time
log = logging.getLogger(__name__)

Privileged = Callable[[dict], bool]     # an ASGI scope -> does its request carry a valid credential?


def _drop(counter: Counter, key: str) -> None:
    counter[key] -= 1
    if counter[key] <= 0:
        del counter[key]


class ConnectionLimits:
    """One server's connections, by source; a connection is any hashable
    key (the server's protocol object)."""

    def __init__(self, max_connections: int, per_address: int | None, reserved: int,
                 privileged: Privileged | None) -> None:
        self.max_connections = max_connections
        self.per_address = per_address
        self.privileged = privileged
        self.reserved = 0 if privileged is None else max(0, min(reserved, max_connections))
        self._source: dict[Hashable, str] = {}
        self._open: Counter[str] = Counter()
        self._waiting: Counter[str] = Counter()
        self._queue: dict[Hashable, None] = {}       # waiting in the reserve, oldest first

    def full_text(self) -> str:
        return f"the hub serves {self.max_connections} connections already; try again in a moment"

    def admit(self, key: Hashable, source: str, n_open: int) -> tuple[str | None, bool, Hashable | None]:
        """A new connection from source while n_open are served: (why it is
        refused, None: it is not; whether it waits in the reserve for a
        credential; a waiting connection to close for it, or None).  An
        admitted one is counted until closed(key)."""
        if self.per_address is not None and self._open[source] >= self.per_address:
            return (f"{self.per_address} connections from this address already: close some "
                    "(or try again in a moment)"), False, None
        evict = None
        waiting = n_open >= self.max_connections - self.reserved
        if waiting:
            if self.privileged is None or self._waiting[source] >= PROBATION_PER_ADDRESS:
                return self.full_text(), False, None
            if n_open >= self.max_connections:
                if not self._queue:
                    return self.full_text(), False, None
                evict = next(iter(self._queue))
                self.stop_waiting(evict)
        self._source[key] = source
        self._open[source] += 1
        if waiting:
            self._waiting[source] += 1
            self._queue[key] = None
        return None, waiting, evict

    def waiting(self, key: Hashable) -> bool:
        return key in self._queue

    def vet(self, key: Hashable, scope: dict) -> bool:
        """A waiting connection's first request (its ASGI scope): whether it
        carries a credential.  Either way it waits no more."""
        try:
            ok = bool(self.privileged and self.privileged(scope))
        except Exception:                      # a check that fails admits nobody
            log.exception("web: checking a request's credential")
            ok = False
        self.stop_waiting(key)
        return ok

    def stop_waiting(self, key: Hashable) -> None:
        if key in self._queue:
            del self._queue[key]
            _drop(self._waiting, self._source[key])

    def closed(self, key: Hashable) -> None:
        self.stop_waiting(key)
        source = self._source.pop(key, None)
        if source is not None:
            _drop(self._open, source)

    def open_from(self, source: str) -> int:
        return self._open.get(source, 0)
