"""The embedded broker's word that a client id connected again while its
connection was open (a takeover): who had it and who took it.  A board
whose WiFi dropped comes back from its own address, which is no alert; a
connection taken from another address is someone using that login or
client id (a stolen board login showed only as offline/online flapping), or
a board that got a new address: alerted for TAKEOVER_ALERT_MS, the latest
few, with both addresses.  Pure: the MQTT adapter hands over each notice."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Callable

from ..rules.timetext import fmt_clock

TAKEOVER_ALERT_MS = 10 * 60_000     # how long one takeover stays an alert
KEEP = 5                            # takeovers from another address kept (the latest)
_MAX_FIELD = 80                     # a client id or an address (host:port) is shorter


@dataclass(frozen=True)
class Takeover:
    client: str
    old: str | None          # address of the connection that was closed
    new: str | None          # address of the one that took the id
    at_ms: int               # when the hub heard of it (hub clock)


def parse_notice(payload: bytes) -> dict | None:
    """The broker's notice as {client, old, new}, or None if it is not one
    (anything else on the topic is dropped: it is the broker's alone)."""
    try:
        msg = json.loads(payload)
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(msg, dict) or msg.get("type") != "takeover":
        return None
    out = {}
    for k in ("client", "old", "new"):
        v = msg.get(k)
        if v is not None and (not isinstance(v, str) or not 0 < len(v) <= _MAX_FIELD):
            return None
        out[k] = v
    return out if out["client"] else None


def _host(addr: str | None) -> str | None:
    return None if addr is None else addr.rsplit(":", 1)[0]


class Takeovers:
    """What the broker said of takeovers; alerts() names those from another
    address.  describe(client id) -> words for it ("board B3", "the hub")."""

    def __init__(self, describe: Callable[[str], str] = lambda cid: f"client id {cid!r}") -> None:
        self.describe = describe
        self.seen = 0               # notices heard, from the same address too
        self.recent: list[Takeover] = []

    def heard(self, payload: bytes, now_ms: int) -> Takeover | None:
        """One notice; returns the takeover if it is one from another address."""
        n = parse_notice(payload)
        if n is None:
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
        last TAKEOVER_ALERT_MS: how often, between which addresses."""
        by_client: dict[str, list[Takeover]] = {}
        for t in self.recent:
            if now_ms - t.at_ms < TAKEOVER_ALERT_MS:
                by_client.setdefault(t.client, []).append(t)
        out = []
        for client, ts in by_client.items():
            hosts = list(dict.fromkeys(h for t in ts for h in (_host(t.old), _host(t.new)) if h))
            times = "once" if len(ts) == 1 else f"{len(ts)} times"
            out.append(f"{self.describe(client)}: its connection was taken over {times} between "
                       f"{' and '.join(hosts) or 'unknown addresses'} (the latest at "
                       f"{fmt_clock(ts[-1].at_ms)}): unless it got a new address, another machine uses "
                       f"its login or client id: find the one that is not it")
        return out
