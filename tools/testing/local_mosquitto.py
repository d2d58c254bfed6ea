"""A throw-away Mosquitto of this machine on 127.0.0.1, for the tests and the
benchmarks: anonymous, no persistence, TCP_NODELAY (as `tabletimer broker
config` writes for an event), its own temporary folder with the config and
the log; a context manager."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile

from tabletimer.hub.broker.ports import free_port, wait_port


def mosquitto_path() -> str | None:
    return shutil.which("mosquitto") or (
        "/usr/sbin/mosquitto" if os.access("/usr/sbin/mosquitto", os.X_OK) else None)


class LocalMosquitto:
    """`extra_conf`: more configuration lines (e.g. queue limits); `log`:
    keep Mosquitto's full log in the folder (tests print it on failure)."""

    def __init__(self, port: int | None = None, extra_conf: str = "", log: bool = True) -> None:
        binary = mosquitto_path()
        if binary is None:
            raise FileNotFoundError("mosquitto is not installed (apt-get install mosquitto)")
        self.binary = binary
        self.port = port
        self.extra_conf = extra_conf
        self.logging = log
        self.proc: subprocess.Popen | None = None
        self.dir = tempfile.mkdtemp(prefix="mosq-")
        self.log_path = os.path.join(self.dir, "mosquitto.log")

    def start(self, port: int | None = None, timeout: float = 5.0) -> "LocalMosquitto":
        if self.proc is not None:
            raise RuntimeError("already running")
        if port is not None:
            self.port = port
        if self.port is None:
            self.port = free_port()
        conf = os.path.join(self.dir, "mosquitto.conf")
        with open(conf, "w") as f:
            f.write(f"listener {self.port} 127.0.0.1\nallow_anonymous true\npersistence false\n"
                    "set_tcp_nodelay true\n")
            f.write("log_dest stderr\nlog_type all\n" if self.logging else "log_dest none\n")
            if os.geteuid() == 0:
                f.write("user root\n")
            f.write(self.extra_conf)
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen([self.binary, "-c", conf], stdout=log, stderr=log,
                                         stdin=subprocess.DEVNULL)
        try:
            wait_port("127.0.0.1", self.port, timeout, proc=self.proc)
        except Exception:
            self.stop()
            raise RuntimeError("mosquitto failed to start:\n" + self.log()) from None
        return self

    def stop(self) -> None:
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

    def restart(self) -> "LocalMosquitto":
        self.stop()
        return self.start()

    def log(self) -> str:
        try:
            with open(self.log_path, "rb") as f:
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> "LocalMosquitto":
        if self.proc is None:
            self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
