"""Issue 28, item 2: a board knows both hubs.  Its configuration's
broker.host is a list (the hub laptop, the standby's, as `board flash
--broker-host A --broker-host B` writes it); the firmware (the real one, in
micropython) dials the first, and after broker.failover seconds without a
connection the next, and stays on the one that answers.  Two embedded
brokers on the same port of two loopback addresses stand for the two
laptops; the hub's service runs on the second."""

from __future__ import annotations

import sys

import pytest

from rig import Rig, synced
from tabletimer.hub.broker.broker import EmbeddedBroker, free_port
from tabletimer.shared import protocol as P
from tabletimer.hub.fleet import deploy
from tabletimer.hub.fleet.simulator import SimBoard
from tabletimer import firmware_dir


pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="two loopback addresses (127.0.0.2): Linux has the whole 127/8")


def test_a_board_whose_first_broker_is_gone_joins_the_next_and_stays_there(tmp_path):
    port = free_port()
    second = EmbeddedBroker(tmp_path / "second", port=port).start()     # 127.0.0.1: the standby's laptop
    rig = Rig(tmp_path, second)
    try:
        rig.start_hub().start_round()
        sim = SimBoard("F1", "127.0.0.1", port, tmp_path, key=rig.keys.ensure("F1"))
        # nobody on the first address (the hub laptop, dead)
        sim.config["broker"].update(host=["127.0.0.2", "127.0.0.1"], failover=8)
        sim.start()
        rig.boards.append(sim)
        sim.wait_for(lambda r: "no broker for a while: trying 127.0.0.1" in str(r.get("log", "")), timeout=40)
        sim.wait_for(lambda r: "sched" in r, timeout=30)        # the hub on the second broker answers
        synced(sim)
        sim.press(1)
        rig.wait_event(lambda e: e["type"] == P.T_PRESS and e["board"] == "F1")
        sim.wait_for(lambda r: "acked" in r, timeout=30)
        # the broker it is on restarts (shorter than its failover): it comes back to it, not to the first
        mark = len(sim.records)
        second.stop()
        second = EmbeddedBroker(tmp_path / "second", port=port).start()
        rig.broker = second
        sim.wait_for(lambda r: r.get("log") == "mqtt: connected", timeout=30, start=mark)
        assert not any("trying" in str(r.get("log", "")) for r in sim.records[mark:]), sim.records[mark:]
    finally:
        rig.close()
        second.stop()


def test_board_flash_writes_both_hosts_and_the_firmware_checks_them(tmp_path):
    cfg = deploy.make_config(firmware_dir() / "config.example.json", key="00" * 32, board="T07",
                             broker_host=["192.168.1.10", "192.168.1.11"], failover=20)
    assert cfg["broker"]["host"] == ["192.168.1.10", "192.168.1.11"] and cfg["broker"]["failover"] == 20
    for bad, said in (([], "a list of 1..4"), (["a", ""], "a list of 1..4"), (["a"] * 5, "a list of 1..4")):
        with pytest.raises(deploy.DeployError, match=said):
            deploy.make_config(firmware_dir() / "config.example.json", key="00" * 32, board="T07", broker_host=bad)
    with pytest.raises(deploy.DeployError, match="'broker.failover' must be 5..3600 s"):
        deploy.make_config(firmware_dir() / "config.example.json", key="00" * 32, board="T07", failover=2)
