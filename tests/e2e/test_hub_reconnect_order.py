"""Commands reach a board in counter order across the hub's reconnection.

A board takes a command only if its counter is above the last one it took
(firmware/app.py: "replayed or unnumbered").  paho 2.2.0 calls on_connect
(where the hub numbers and sends its "hub online" to each board) before it
sends again the QoS 1 messages the broker never acknowledged, the commands
published while the hub was cut off among them: those older, lower-numbered
commands arrived after the newer one and the board dropped them.

A real hub (HubMqtt), real brokers, a real board (the firmware in a
micropython process); the hub's own link to the broker goes through the
network impairment proxy (tools/testing/netimpair.py), cut and restored
while the board stays connected."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from rig import Rig, synced
from waiting import until
from tabletimer.tools.testing.netimpair import NetImpair

IDENTIFY_FREQ = 3000          # the identify pattern's tone (firmware signals.py)


@pytest.fixture
def hall(tmp_path, broker):
    r = Rig(tmp_path, broker)
    try:
        yield r
    finally:
        r.close()


def rejected(sim, start: int) -> list[str]:
    return [str(r["log"]) for r in sim.records[start:] if "rejected message" in str(r.get("log", ""))]


def test_a_command_sent_while_the_hub_was_cut_off_reaches_the_board_after_the_reconnect(hall, broker):
    with NetImpair(upstream=(broker.host, broker.port), seed=1) as net:
        hall.broker = SimpleNamespace(host="127.0.0.1", port=net.port_for("hub"))    # the hub's way
        svc = hall.start_hub()
        hall.broker = broker                                                        # the board's way
        b1 = hall.board("B1")
        synced(b1)
        first = hall.mqtt.connections

        net.down("hub")
        until(lambda: not hall.mqtt.connected.is_set(), "the hub cut off from its broker")
        start = len(b1.records)
        svc.act("identify", {"board": "B1"})       # numbered now; sent once the hub is back
        net.up("hub")
        until(lambda: hall.mqtt.connections > first, "the hub connected again", timeout=30)

        def buzzed() -> bool:
            return any(r.get("sim") == "buzz" and r.get("freq") == IDENTIFY_FREQ for r in b1.records[start:])
        until(lambda: rejected(b1, start) or buzzed(), "the board buzzing the identify (or refusing it)",
              timeout=15)
        assert rejected(b1, start) == [] and buzzed()
