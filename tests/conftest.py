"""Shared fixtures: real brokers on free 127.0.0.1 ports."""

from __future__ import annotations

from pathlib import Path

import pytest

from brokers import MosquittoBroker
from tabletimer.hub.broker import EmbeddedBroker


@pytest.fixture(params=["embedded", "mosquitto"])
def broker(request, tmp_path: Path):
    """(host, port) of a running broker: the embedded amqtt one, then
    Mosquitto.  Mosquitto skips only outside CI when it is not installed."""
    if request.param == "embedded":
        b = EmbeddedBroker(tmp_path / "broker").start()
        try:
            yield b.host, b.port
        finally:
            b.stop()
    else:
        with MosquittoBroker() as m:
            yield "127.0.0.1", m.port
