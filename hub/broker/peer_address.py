"""The one rule for what a connection is counted against, the same for the
broker's gate (connection_gate.py) and the hub's web server
(web/connection_limits.py): a host's IPv4 address, whether it comes as
`a.b.c.d` or IPv4-mapped (`::ffff:a.b.c.d`, as a dual-stack socket shows
it), and an IPv6 host by its /64 (it picks any address of its /64 for
itself, so one per address would be no limit).  Pure."""

from __future__ import annotations

import ipaddress
from typing import Any


def source_of(peer: Any) -> str:
    """What a connection is counted against: its peer's IPv4 address (an
    IPv4-mapped IPv6 one too), or its IPv6 /64 (a host picks any address of
    its /64 for itself)."""
    host = peer[0] if isinstance(peer, (tuple, list)) and peer else peer
    try:
        ip = ipaddress.ip_address(str(host).split("%", 1)[0])
    except ValueError:
        return str(host or "?")
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)
