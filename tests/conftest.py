"""Shared fixtures: real brokers on free 127.0.0.1 ports."""

from __future__ import annotations

from pathlib import Path

import pytest

from brokers import MosquittoBroker
from tabletimer.hub.broker import EmbeddedBroker


class BrokerHandle:
    """A running broker of either kind, which a test may stop and start
    again on the same port (an outage)."""

    def __init__(self, kind: str, workdir: Path) -> None:
        self.kind = kind
        self.host = "127.0.0.1"
        if kind == "embedded":
            self._b = EmbeddedBroker(workdir / "broker").start()
            self.port = self._b.port
        else:
            self._b = MosquittoBroker()
            self._b.start()
            self.port = self._b.port

    def stop(self) -> None:
        self._b.stop()

    def start(self) -> None:
        if self.kind == "embedded":
            self._b.start()
        else:
            self._b.start(self.port)

    def close(self) -> None:
        self._b.stop()
        if self.kind == "mosquitto":
            self._b.close()


@pytest.fixture(params=["embedded", "mosquitto"])
def broker(request, tmp_path: Path):
    """A running broker: the embedded amqtt one, then Mosquitto.  Mosquitto
    skips only outside CI when it is not installed."""
    b = BrokerHandle(request.param, tmp_path)
    try:
        yield b
    finally:
        b.close()


@pytest.fixture
def embedded_broker(tmp_path: Path):
    b = BrokerHandle("embedded", tmp_path)
    try:
        yield b
    finally:
        b.close()
