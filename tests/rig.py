"""A test rig: a real hub (store, keys, paho adapter) and simulated boards
(the real firmware in real micropython processes) on a real broker."""

from __future__ import annotations

import threading
from pathlib import Path

from tabletimer.hub.event.fold.competition import Competition
from tabletimer.hub.rules.formats import load_format
from tabletimer.hub.protocol.hub_secret import ensure_secret
from tabletimer.hub.protocol.keys import BoardKeys
from tabletimer.hub.link.mqtt_adapter import HubMqtt
from tabletimer.hub.core.changes import RowApplied
from tabletimer.hub.core.service import HubService
from tabletimer.hub.event.log.store import EventStore
from tabletimer.hub.fleet.simulator import SimBoard

HOUR = 3_600_000


class Rig:
    def __init__(self, tmp: Path, broker) -> None:
        self.tmp = tmp
        self.broker = broker
        self.keys = BoardKeys(tmp / "board-keys.json")
        self.secret = ensure_secret(tmp)[0]       # the hub secret: its terms proven to the boards
        self.db = tmp / "events.sqlite"
        self.boards: list[SimBoard] = []
        self.service: HubService | None = None
        self.mqtt: HubMqtt | None = None
        self.store: EventStore | None = None

    # -------------------------------------------------------------- hub
    def start_hub(self, preset: str = "cz-championship-individuals",
                  competition: Competition | None = None, clock=None, **mqtt) -> HubService:
        """Every station of every board is an individual entrant (board/station),
        unless a competition (an event folder's) is given.
        clock: the hub's clock (default a HubClock: this machine's); mqtt:
        more arguments of HubMqtt (the self-probe's timings)."""
        self.store = EventStore(self.db)
        self.service = HubService(self.store, self.keys, competition or self.competition(preset), clock,
                                  secret=self.secret)
        self.mqtt = HubMqtt(self.service, self.broker.host, self.broker.port, **mqtt)
        self.mqtt.start()
        return self.service

    @staticmethod
    def competition(preset: str = "cz-championship-individuals") -> Competition:
        return Competition(load_format(preset), [], [], auto_stations=True)

    def press_event(self, board: str, seq: int, boot: int = 1) -> dict:
        """The log row the hub stored for a board's press."""
        assert self.service
        (ev,) = [e for e in self.service.store.events() if e["type"] == "press" and e["board"] == board
                 and e["payload"]["boot"] == boot and e["payload"]["seq"] == seq]
        return ev

    def pressed_at(self, board: str, seq: int, boot: int = 1) -> int:
        """The hub time the hub stored for a board's press."""
        return self.press_event(board, seq, boot)["payload"]["at"]

    def stop_hub(self) -> None:
        if self.mqtt:
            self.mqtt.stop()
            self.mqtt = None
        if self.store:
            self.store.close()
            self.store = None

    def wait_event(self, pred, timeout: float = 15.0) -> dict:
        """Wait until the hub applies an event matching pred (or has one)."""
        assert self.service
        got: list[dict] = []
        done = threading.Event()

        def listen(ev: dict) -> None:
            if not done.is_set() and pred(ev):
                got.append(ev)
                done.set()
        sub = self.service.changes.subscribe(RowApplied, lambda n: listen(n.row))
        try:
            for ev in self.service.store.events():
                if pred(ev):
                    return ev
            assert done.wait(timeout), "the hub did not get the expected event"
            return got[0]
        finally:
            sub.cancel()

    # ----------------------------------------------------------- boards
    def board(self, board_id: str, workdir: Path | None = None, **kw) -> SimBoard:
        """A simulated board, its flash in workdir/board_id (default: the
        rig's folder), its key from the keys file (made if it has none)."""
        b = SimBoard(board_id, self.broker.host, self.broker.port, workdir or self.tmp,
                     key=self.keys.ensure(board_id), **kw).start()
        self.boards.append(b)
        return b

    def spare(self, dead: SimBoard, workdir: Path) -> SimBoard:
        """The spare for a dead board, flashed with the same id (the key from
        the keys file), started (docs/operations.md, "Board dead")."""
        spare = dead.spare(workdir)
        spare.config["key"] = self.keys.ensure(dead.board_id)        # what the flash writes: the same key
        b = spare.start()
        self.boards.append(b)
        return b

    def close(self) -> None:
        for b in self.boards:
            b.kill()
        self.stop_hub()


# a board's gestures shortened for tests (the firmware's defaults: 30 ms, 2 s, 6 s)
FAST_GESTURES = {"debounce_ms": 30, "confirm_ms": 600, "void_ms": 1500}

# a simulated board's true instants and its ticks are whole host milliseconds
TICK_MS = 2


def within_stated_error(press: dict, true_ms: int) -> bool:
    """A stored press's time is its true instant within the error the board
    stated for its clock ('err': half its best sync round trip, which a
    loaded machine lengthens; an absolute bound would measure the machine).
    The bound itself must be a real one."""
    p = press["payload"]
    assert p.get("err") is not None and 1 <= p["err"] < 1000, p
    assert abs(p["at"] - true_ms) <= p["err"] + TICK_MS, (p["at"] - true_ms, p["err"])
    return True


def made(sim: SimBoard, start: int, t0: int) -> list[tuple]:
    """What a simulated board made of its gestures from its record `start` on (a flake's read):
    its inputs, events, acks and logs, at ms after t0 (host ms)."""
    keys = ("input", "type", "journaled", "acked", "log")
    return [(r.get("t", t0) - t0, *(r[k] for k in keys if k in r)) for r in sim.records[start:]
            if any(k in r for k in ("input", "journaled", "acked", "log"))]


def synced(sim: SimBoard, samples: int = 3, start: int = 0, timeout: float = 10.0) -> None:
    """Wait for a few clock-sync samples (the board keeps the best one), as
    a board has had long before a real round starts; those from its record
    `start` on (a new hub's: its records' count before)."""
    n = 0

    def count(rec: dict) -> bool:
        nonlocal n
        n += "sync" in rec
        return n >= samples
    sim.wait_for(count, timeout=timeout, start=start)


def ready(sim: SimBoard) -> None:
    """Synced and holding the round's schedule."""
    sim.wait_for(lambda r: "sched" in r)
    synced(sim)
