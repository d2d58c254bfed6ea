"""Shared fixtures: real brokers on free 127.0.0.1 ports; slow tests run
only in CI (CI=true), with -m slow, or with TT_SLOW=1."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from brokers import MosquittoBroker
from tabletimer.hub.boards.broker import EmbeddedBroker


# hubs the tests start (also as child processes) serve their web server (remote consoles) on a
# free port, never on the fixed default one
os.environ["TABLETIMER_WEB_LISTEN"] = "127.0.0.1:0"


def pytest_collection_modifyitems(config, items) -> None:
    """Slow tests (the chaos rehearsal at hall scale) are part of CI's run of
    the suite but not of the quick local one, unless asked for."""
    wanted = (os.environ.get("CI", "").lower() == "true" or os.environ.get("TT_SLOW") == "1"
              or "slow" in (config.getoption("markexpr") or ""))
    if wanted:
        return
    keep, skipped = [], []
    for item in items:
        (skipped if item.get_closest_marker("slow") else keep).append(item)
    if skipped:
        config.hook.pytest_deselected(items=skipped)
        items[:] = keep


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
        self.resume()
        self._b.stop()
        if self.kind == "mosquitto":
            self._b.close()

    def pause(self) -> None:
        """The broker hangs (SIGSTOP): connections stay open, nothing moves."""
        import signal
        self._b.proc.send_signal(signal.SIGSTOP)
        self.paused = True

    def resume(self) -> None:
        import signal
        if getattr(self, "paused", False) and self._b.proc is not None:
            self._b.proc.send_signal(signal.SIGCONT)
        self.paused = False


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


@pytest.fixture
def rig(tmp_path: Path, embedded_broker):
    """A test rig (tests/rig.py) on the embedded broker; a module that
    runs its tests on both brokers defines its own."""
    from rig import Rig
    r = Rig(tmp_path, embedded_broker)
    try:
        yield r
    finally:
        r.close()
