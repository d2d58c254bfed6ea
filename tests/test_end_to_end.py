"""End to end: the real firmware in real `micropython` processes (simulated
hardware), a real broker on a free 127.0.0.1 port, the real hub.  Run against
the embedded broker and Mosquitto."""

from __future__ import annotations

from pathlib import Path

import pytest

from tabletimer.hub.mqtt_adapter import HubMqtt
from tabletimer.hub.service import HubService
from tabletimer.hub.store import EventStore
from tabletimer.tools.simulator import SimBoard

HOUR = 3_600_000


def synced(sim: SimBoard, samples: int = 3) -> None:
    """Wait for a few clock-sync samples (the board keeps the best one), as
    a board has had long before a real round starts."""
    n = 0

    def count(rec: dict) -> bool:
        nonlocal n
        n += "sync" in rec
        return n >= samples
    sim.wait_for(count)


class Hub:
    def __init__(self, db: Path, host: str, port: int) -> None:
        self.store = EventStore(db)
        self.service = HubService(self.store)
        self.mqtt = HubMqtt(self.service, host, port)
        self.mqtt.start()

    def stop(self) -> None:
        self.mqtt.stop()
        self.store.close()


@pytest.fixture
def hubs():
    started: list[Hub] = []
    yield started
    for h in started:
        h.stop()


@pytest.fixture
def boards():
    started: list[SimBoard] = []
    yield started
    for b in started:
        b.kill()


def test_press_becomes_ranked_finish(broker, tmp_path, hubs, boards):
    host, port = broker
    hub = Hub(tmp_path / "events.sqlite", host, port)
    hubs.append(hub)
    hub.service.start_round()
    # the board's clock is hours away from the hub's and runs 40 ppm fast
    sim = SimBoard("e2e01", host, port, tmp_path, stations=2,
                   clock_offset_ms=-3 * HOUR + 12_345, drift_ppm=40).start()
    boards.append(sim)
    synced(sim)
    sim.press(2)
    true_ms = sim.wait_for(lambda r: r.get("sim") == "press")["true"]
    sim.wait_for(lambda r: r.get("acked") == [1, 1])
    sim.wait_for(lambda r: r.get("sim") == "buzz" and r["freq"] > 0)   # the ack buzz

    standings = {s.entrant: s for s in hub.service.standings()}
    won = standings["e2e01/2"]
    assert won.status == "finished" and won.place == 1
    assert abs(won.finish_at_ms - true_ms) <= 10, (won.finish_at_ms, true_ms)
    assert won.time_ms == won.finish_at_ms - hub.service.state.start_ms
    assert standings["e2e01/1"].status == "running" and standings["e2e01/1"].place == 2
    assert hub.service.registry.boards["e2e01"].online
    # the press is durable: a hub rebuilt from the file ranks the same
    again = HubService(EventStore(tmp_path / "events.sqlite"))
    assert again.standings() == hub.service.standings()


def test_press_survives_hub_outage_and_board_power_loss(broker, tmp_path, hubs, boards):
    """Press while the hub is down; the board loses power before anyone
    acknowledged it; after both come back the press is ranked, once, with
    its original time."""
    host, port = broker
    db = tmp_path / "events.sqlite"
    hub = Hub(db, host, port)
    hub.service.start_round()
    sim = SimBoard("e2e02", host, port, tmp_path, clock_offset_ms=5 * HOUR).start()
    synced(sim)
    hub.stop()

    sim.press(1)
    true_ms = sim.wait_for(lambda r: r.get("sim") == "press")["true"]
    sim.wait_for(lambda r: r.get("journaled") == [1, 1])
    sim.kill()                                   # power loss, nothing acked
    assert not any("acked" in r for r in sim.records)

    hub = Hub(db, host, port)
    hubs.append(hub)
    sim2 = SimBoard("e2e02", host, port, tmp_path, clock_offset_ms=5 * HOUR).start()
    boards.append(sim2)
    sim2.wait_for(lambda r: r.get("acked") == [1, 1])   # boot 1's event, resent by boot 2
    finished = [s for s in hub.service.standings() if s.status == "finished"]
    assert [s.entrant for s in finished] == ["e2e02/1"]
    assert abs(finished[0].finish_at_ms - true_ms) <= 10
    presses = [e for e in hub.store.events() if e["type"] == "press"]
    assert len(presses) == 1
    assert hub.service.registry.boards["e2e02"].boot == 2


def test_board_goes_offline_by_last_will(broker, tmp_path, hubs, boards):
    host, port = broker
    hub = Hub(tmp_path / "events.sqlite", host, port)
    hubs.append(hub)
    seen: list[dict] = []
    hub.service.listeners.append(seen.append)
    sim = SimBoard("e2e03", host, port, tmp_path).start()
    boards.append(sim)
    sim.wait_for(lambda r: "sync" in r)
    assert hub.service.registry.boards["e2e03"].online
    sim.kill()
    import threading
    gone = threading.Event()
    hub.service.listeners.append(
        lambda ev: gone.set() if ev["type"] == "status" and ev["payload"]["state"] == "offline" else None)
    if not hub.service.registry.boards["e2e03"].online:
        gone.set()
    assert gone.wait(30), "no last will within 30 s"
    assert not hub.service.registry.boards["e2e03"].online
