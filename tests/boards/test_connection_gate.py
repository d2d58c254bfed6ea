"""The embedded broker's connection gate (hub/boards/connection_gate.py):
pure, no sockets."""

from __future__ import annotations

from tabletimer.hub.boards.connection_gate import BUSY, SLOW, ConnectionGate


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
