"""The embedded broker's connection gate (hub/broker/connection_gate.py):
pure, no sockets."""

from __future__ import annotations

from tabletimer.hub.broker.connection_gate import BUSY, SLOW, ConnectionGate


def test_one_address_gets_its_share_and_this_machine_is_not_counted():
    g = ConnectionGate(per_host=3)
    assert [g.admit("10.0.0.66") for _ in range(5)] == [True, True, True, False, False]
    assert g.admit("10.0.0.7")                       # another board still gets in
    assert all(g.admit("127.0.0.1") for _ in range(50))   # the hub, simulators, benchmarks
    g.closed("10.0.0.66")
    assert g.admit("10.0.0.66") and not g.admit("10.0.0.66")
    g.note("10.0.0.66", SLOW)
    assert g.taken() == [{"type": "refused", "host": "10.0.0.66", "busy": 3, "slow": 1, "open": 3}]
    assert g.taken() == []                            # told once
    for _ in range(3):
        g.closed("10.0.0.66")
    assert "10.0.0.66" not in g.open_by_host and BUSY == "busy"


def test_one_host_is_one_source_in_both_address_forms_and_an_ipv6_host_by_its_64():
    """Issue 46, item 6: the broker counted the raw peer address, so a host
    seen as 10.0.0.66 and as ::ffff:10.0.0.66 (a dual-stack socket) had two
    shares, and an IPv6 host rotating its addresses one share per address;
    the web server's rule (broker/peer_address.py) holds for both now."""
    g = ConnectionGate(per_host=2)
    assert g.admit("10.0.0.66") and g.admit("::ffff:10.0.0.66")
    assert not g.admit("::ffff:10.0.0.66") and not g.admit("10.0.0.66")
    assert g.admit("2001:db8:1:2::1") and g.admit("2001:db8:1:2:aaaa::9")
    assert not g.admit("2001:db8:1:2:bbbb::7")                # the same /64
    assert g.admit("2001:db8:1:3::1")                         # another /64: another host
    assert all(g.admit("::1") for _ in range(10))            # this machine, not counted
    g.closed("::ffff:10.0.0.66")
    assert g.admit("10.0.0.66")                                # its share freed, in either form
    assert {n["host"]: n["busy"] for n in g.taken()} == {"10.0.0.66": 2, "2001:db8:1:2::/64": 1}
