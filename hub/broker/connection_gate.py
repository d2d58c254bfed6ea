"""Which TCP connections the embedded broker takes, so that no host without
a login can lock the boards out (issue #33: 1,100 sockets from one host that
never sent a CONNECT held amqtt's 1,000 connection slots for over 90 s,
and a board with a valid login timed out):
  - at most PER_HOST connections open at once from one source (a board has
    one; the source: peer_address.py's rule, an IPv4 address however it
    comes, an IPv6 host by its /64; 127.0.0.1 and ::1, this machine itself,
    where the hub, simulators and benchmarks connect, are not counted); one
    more is cut at once, before it takes a slot;
  - a connection has CONNECT_DEADLINE_S to send its whole CONNECT (the
    broker's code applies it; this counts what was cut);
  - what was refused, per address, is handed to the broker's reporter
    (taken()), which tells the hub (broker_notices.py).
Pure: the broker's code calls it with addresses."""

from __future__ import annotations

from .peer_address import source_of

PER_HOST = 16                 # open connections from one address (a NAT of boards: raise it)
CONNECT_DEADLINE_S = 5.0      # from the accept to a whole CONNECT
THIS_MACHINE = ("127.0.0.1", "::1", "::ffff:127.0.0.1")   # (other 127.x addresses count: tests use them)
BUSY, SLOW = "busy", "slow"   # refused: too many open from the address; no CONNECT in time


class ConnectionGate:
    def __init__(self, per_host: int = PER_HOST) -> None:
        self.per_host = per_host
        self.open_by_host: dict[str, int] = {}
        self.refused: dict[str, dict[str, int]] = {}     # since the last taken()

    def admit(self, host: str) -> bool:
        """A connection from host (its peer address) was accepted: True to
        serve it (counted open against its source until closed(host)), False
        to cut it."""
        source = source_of(host)
        n = self.open_by_host.get(source, 0)
        if n >= self.per_host and host not in THIS_MACHINE:
            self.note(host, BUSY)
            return False
        self.open_by_host[source] = n + 1
        return True

    def closed(self, host: str) -> None:
        source = source_of(host)
        n = self.open_by_host.get(source, 0) - 1
        if n > 0:
            self.open_by_host[source] = n
        else:
            self.open_by_host.pop(source, None)

    def note(self, host: str, why: str) -> None:
        """A connection from host was refused (BUSY, SLOW), noted against its source."""
        by = self.refused.setdefault(source_of(host), {})
        by[why] = by.get(why, 0) + 1

    def taken(self) -> list[dict]:
        """The refusals since the last call, one notice per address (the
        most first), with what is open from it now; then forgotten."""
        out = [{"type": "refused", "host": h, "busy": w.get(BUSY, 0), "slow": w.get(SLOW, 0),
                "open": self.open_by_host.get(h, 0)}
               for h, w in sorted(self.refused.items(), key=lambda kv: -sum(kv[1].values()))]
        self.refused = {}
        return out
