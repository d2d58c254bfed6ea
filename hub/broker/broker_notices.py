"""What the embedded broker tells the hub (BROKER_NOTICE), in an operator's
words:
  - a client id that connected again while its connection was open (a
    takeover): who had it and who took it.  A board whose WiFi dropped
    comes back from its own address, which is no alert; a connection taken
    from another address is someone using that login or client id (a stolen
    board login showed only as offline/online flapping), or a board that got
    a new address: alerted for ALERT_MS, the latest few, with both addresses;
  - connections it refused from an address (too many open at once, no
    CONNECT in time: connection_gate.py): a machine flooding the broker,
    alerted for ALERT_MS with the counts.
Pure: the MQTT adapter hands over each notice."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Callable

from ..rules.timetext import fmt_clock

ALERT_MS = 10 * 60_000              # how long a takeover or a refusal stays an alert
KEEP = 5                            # takeovers from another address kept (the latest)
_MAX_FIELD = 80                     # a client id or an address (host:port) is shorter


@dataclass(frozen=True)
class Takeover:
    client: str
    old: str | None          # address of the connection that was closed
    new: str | None          # address of the one that took the id
    at_ms: int               # when the hub heard of it (hub clock)


def parse_notice(payload: bytes) -> dict | None:
    """The broker's notice: {type: takeover, client, old, new} or {type:
    refused, host, busy, slow, open}; None if it is neither (anything else
    on the topic is dropped: it is the broker's alone)."""
    try:
        msg = json.loads(payload)
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(msg, dict):
        return None
    if msg.get("type") == "refused":
        host = msg.get("host")
        counts = [msg.get(k) for k in ("busy", "slow", "open")]
        if not isinstance(host, str) or not 0 < len(host) <= _MAX_FIELD or not all(
                type(n) is int and 0 <= n < 1 << 31 for n in counts):
            return None
        return {"type": "refused", "host": host, "busy": counts[0], "slow": counts[1], "open": counts[2]}
    if msg.get("type") != "takeover":
        return None
    out = {}
    for k in ("client", "old", "new"):
        v = msg.get(k)
        if v is not None and (not isinstance(v, str) or not 0 < len(v) <= _MAX_FIELD):
            return None
        out[k] = v
    return dict(out, type="takeover") if out["client"] else None


def _host(addr: str | None) -> str | None:
    return None if addr is None else addr.rsplit(":", 1)[0]


@dataclass
class Refusals:
    busy: int = 0
    slow: int = 0
    first_ms: int = 0
    last_ms: int = 0
    open: int = 0


class BrokerNotices:
    """What the broker said; alerts() names the takeovers from another
    address and the addresses it refused connections from.
    describe(client id) -> words for it ("board B3", "the hub")."""

    def __init__(self, describe: Callable[[str], str] = lambda cid: f"client id {cid!r}") -> None:
        self.describe = describe
        self.seen = 0               # takeovers heard, from the same address too
        self.recent: list[Takeover] = []
        self.refused: dict[str, Refusals] = {}      # by address

    def heard(self, payload: bytes, now_ms: int) -> Takeover | None:
        """One notice; returns the takeover if it is one from another address."""
        n = parse_notice(payload)
        if n is None:
            return None
        if n["type"] == "refused":
            r = self.refused.get(n["host"])
            if r is None or now_ms - r.last_ms >= ALERT_MS:
                r = self.refused[n["host"]] = Refusals(first_ms=now_ms)
            r.busy += n["busy"]
            r.slow += n["slow"]
            r.open, r.last_ms = n["open"], now_ms
            return None
        self.seen += 1
        if n["old"] is not None and _host(n["old"]) == _host(n["new"]):
            return None              # the same machine came back (its WiFi dropped)
        t = Takeover(n["client"], n["old"], n["new"], now_ms)
        self.recent = (self.recent + [t])[-KEEP:]
        return t

    def text(self, t: Takeover) -> str:
        """One takeover in words (the console's activity line)."""
        return (f"{self.describe(t.client)}: its connection was taken over from "
                f"{_host(t.old) or 'an unknown address'} by {_host(t.new) or 'an unknown address'} "
                f"at {fmt_clock(t.at_ms)}")

    def alerts(self, now_ms: int) -> list[str]:
        """One line per client id taken over from another address in the
        last ALERT_MS: how often, between which addresses."""
        by_client: dict[str, list[Takeover]] = {}
        for t in self.recent:
            if now_ms - t.at_ms < ALERT_MS:
                by_client.setdefault(t.client, []).append(t)
        out = []
        for client, ts in by_client.items():
            hosts = list(dict.fromkeys(h for t in ts for h in (_host(t.old), _host(t.new)) if h))
            times = "once" if len(ts) == 1 else f"{len(ts)} times"
            out.append(f"{self.describe(client)}: its connection was taken over {times} between "
                       f"{' and '.join(hosts) or 'unknown addresses'} (the latest at "
                       f"{fmt_clock(ts[-1].at_ms)}): unless it got a new address, another machine uses "
                       f"its login or client id: find the one that is not it")
        for host, r in sorted(self.refused.items(), key=lambda kv: -kv[1].last_ms):
            if now_ms - r.last_ms < ALERT_MS:
                out.append(f"the broker refused {r.busy + r.slow} connection(s) from {host} since "
                           f"{fmt_clock(r.first_ms)} ({r.busy} over the limit open at once from one address, "
                           f"{r.slow} without a login in time; the latest at {fmt_clock(r.last_ms)}): a machine "
                           f"on the hall network floods the broker (the boards still get in): find it")
        return out
