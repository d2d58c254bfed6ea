"""MQTT brokers for the hub: the embedded zero-setup default (amqtt, run as a
child process) or an external broker given by URL (Mosquitto).

The embedded broker run by `tabletimer run` and `demo` takes the event's
logins (BrokerLogins): the same per-board users, client ids and ACL as the
Mosquitto configuration (broker_access.py).  Without logins it serves
127.0.0.1 only (tests, benchmarks).  Either way it refuses packets over
MAX_PACKET bytes (the connection is closed)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

from .ports import free_port, wait_port
from ..event.folder.private_file import write_private

LOOPBACK = ("127.0.0.1", "localhost", "::1")


@dataclass
class BrokerLogins:
    """What the embedded broker checks logins against: the event's board
    keys file (each board's password derives from its key) and the hub's
    user name and password file.  Read by the broker process, and again
    when an unknown user logs in (a board flashed since)."""
    keys_file: Path
    hub_user: str
    hub_password_file: Path


@dataclass
class BrokerAddress:
    host: str
    port: int
    user: str | None = None
    password: str | None = None


def parse_broker_url(url: str) -> BrokerAddress:
    """mqtt://[user[:password]@]host[:port]"""
    u = urlsplit(url)
    if u.scheme not in ("mqtt", "tcp") or not u.hostname:
        raise ValueError(f"broker URL must look like mqtt://host:1883, not {url!r}")
    return BrokerAddress(u.hostname, u.port or 1883,
                         unquote(u.username) if u.username else None,
                         unquote(u.password) if u.password else None)


class EmbeddedBroker:
    """amqtt in a child process, clean sessions only (the hub and boards
    never ask for persistent sessions: delivery is guaranteed by the board
    journal and the hub's application-level acks).  With logins, only the
    event's users, each with its own client id and topics; without, anyone
    on this machine (it then refuses to listen beyond 127.0.0.1)."""

    def __init__(self, workdir: str | Path, host: str = "127.0.0.1", port: int | None = None,
                 logins: BrokerLogins | None = None, per_host: int | None = None):
        if logins is None and host not in LOOPBACK:
            raise ValueError(f"the embedded broker listens on {host} (beyond this machine) only "
                             "with the event's logins")
        self.workdir = Path(workdir)
        self.host = host
        self.port = port or free_port(host)
        self.logins = logins
        self.per_host = per_host      # connections open at once from one address (None: the default)
        self.proc: subprocess.Popen | None = None

    @property
    def address(self) -> BrokerAddress:
        return BrokerAddress(self.host, self.port)

    def start(self, timeout: float = 20.0) -> "EmbeddedBroker":
        self.workdir.mkdir(parents=True, exist_ok=True)
        with socket.socket() as probe:
            # as the broker itself will: a port held only by closed
            # connections (TIME_WAIT) is free
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind((self.host, self.port))
            except OSError as e:
                from .port_holder import port_taken_advice
                raise RuntimeError(port_taken_advice(self.host, self.port, e.strerror or str(e))) from e
        cfg = {
            "listeners": {"default": {"type": "tcp", "bind": f"{self.host}:{self.port}",
                                      "max_connections": 1000}},
            "timeout_disconnect_delay": 2,
            "plugins": {"amqtt.plugins.authentication.AnonymousAuthPlugin": {"allow_anonymous": True}},
        }
        conf = self.workdir / "amqtt.json"
        conf.write_text(json.dumps(cfg, indent=2))
        access = self.workdir / "access.json"
        if self.logins is not None:
            lg = self.logins
            write_private(access, json.dumps({
                "keys_file": os.path.abspath(lg.keys_file), "hub_user": lg.hub_user,
                "hub_password_file": os.path.abspath(lg.hub_password_file)}), 0o600)
        elif access.exists():
            access.unlink()
        logf = open(self.workdir / "broker.log", "ab")
        # stdin is a pipe the child watches: when the hub goes away, however
        # it dies, the pipe closes and the broker exits with it.  Its own
        # session keeps a terminal's Ctrl-C away from it: the hub stops it
        # after the boards.
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tabletimer.hub.broker.broker_child", str(conf), str(access),
             str(self.per_host or "")],
            stdout=logf, stderr=subprocess.STDOUT, stdin=subprocess.PIPE,
            start_new_session=True)
        logf.close()
        try:
            wait_port(self.host, self.port, timeout, self.proc)
        except (RuntimeError, TimeoutError) as e:
            self.stop()
            tail = (self.workdir / "broker.log").read_text(errors="replace")[-2000:]
            raise RuntimeError(f"embedded broker did not start: {e}\n{tail}") from e
        return self

    def stop(self) -> None:
        p, self.proc = self.proc, None
        if p is None or p.poll() is not None:
            return
        if p.stdin is not None:                 # (a pipe: always)
            p.stdin.close()
        try:
            p.wait(5)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()

    def __enter__(self) -> "EmbeddedBroker":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
