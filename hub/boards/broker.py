"""MQTT brokers for the hub: the embedded zero-setup default (amqtt, run as a
child process on 127.0.0.1) or an external broker given by URL (Mosquitto in
production)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit


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


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def wait_port(host: str, port: int, timeout: float = 5.0, proc: subprocess.Popen | None = None) -> None:
    """Return once host:port accepts a connection; TimeoutError after
    timeout; RuntimeError at once if proc (the server) exits meanwhile."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with socket.create_connection((host, port), timeout=0.5):
                return
        except OSError:
            if proc is not None and proc.poll() is not None:
                raise RuntimeError(f"process exited with code {proc.returncode} before {host}:{port} opened")
            if time.monotonic() > deadline:
                raise TimeoutError(f"nothing listens on {host}:{port} after {timeout} s")
            time.sleep(0.05)   # polling a port: there is no event to await


class EmbeddedBroker:
    """amqtt in a child process.  Anonymous access, clean sessions only (the
    hub and boards never ask for persistent sessions: delivery is guaranteed
    by the board journal and the hub's application-level acks)."""

    def __init__(self, workdir: str | Path, host: str = "127.0.0.1", port: int | None = None):
        self.workdir = Path(workdir)
        self.host = host
        self.port = port or free_port(host)
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
                raise RuntimeError(
                    f"cannot listen on {self.host}:{self.port} ({e.strerror}); another broker "
                    f"(Mosquitto?) may run there: use it with --broker mqtt://{self.host}:{self.port}, "
                    "or pick another --port") from e
        cfg = {
            "listeners": {"default": {"type": "tcp", "bind": f"{self.host}:{self.port}",
                                      "max_connections": 1000}},
            "timeout_disconnect_delay": 2,
            "plugins": {"amqtt.plugins.authentication.AnonymousAuthPlugin": {"allow_anonymous": True}},
        }
        conf = self.workdir / "amqtt.json"
        conf.write_text(json.dumps(cfg, indent=2))
        logf = open(self.workdir / "broker.log", "ab")
        # stdin is a pipe the child watches: when the hub goes away, however
        # it dies, the pipe closes and the broker exits with it.  Its own
        # session keeps a terminal's Ctrl-C away from it: the hub stops it
        # after the boards.
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tabletimer.hub.boards.broker", str(conf)],
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



class _SnapshotDict(dict):
    """A dict whose iteration runs over a copy: amqtt iterates its
    subscriptions with awaits inside the loop, so another client subscribing
    meanwhile raised "dictionary changed size during iteration" and dropped
    the connecting client."""

    def __iter__(self):
        return iter(list(dict.keys(self)))

    def items(self):                                 # type: ignore[override]
        return list(dict.items(self))


def _patch_amqtt(broker) -> None:
    """Faults of amqtt 0.12.1 that a hall of boards connecting at once runs
    into (a connect storm made boards time out and retry for minutes, some
    stayed connected without their subscription): on every connection it
    sent the new client the retained messages of every topic filter *any*
    client had subscribed to (here: every board's schedule and status to
    every board); a late SUBSCRIBE of a replaced connection kept the new one
    from subscribing; and it iterated its subscriptions unsafely."""
    cls = type(broker)
    if not getattr(cls, "_tt_patched", False):
        orig = cls._publish_retained_messages_for_subscription

        async def own_subscriptions_only(self, subscription, session) -> None:
            subscribers = self._subscriptions.get(subscription[0], ())
            if any(s.client_id == session.client_id for s, _ in subscribers):
                await orig(self, subscription, session)
        cls._publish_retained_messages_for_subscription = own_subscriptions_only

        add = cls.add_subscription

        async def current_session_only(self, subscription, session) -> int:
            # a board that gave up waiting for a SUBACK reconnects (same client
            # id, clean session) while the broker still works through the old
            # connection's SUBSCRIBE: that subscription of a replaced session
            # used to win, and the new connection never got a message
            current = self._sessions.get(session.client_id, (None, None))[0]
            if current is not None and current is not session:
                return 0x80                 # a replaced connection's late request
            subscribers = self._subscriptions.get(subscription[0])
            if subscribers:
                subscribers[:] = [(s, q) for s, q in subscribers
                                  if s is session or s.client_id != session.client_id]
            return await add(self, subscription, session)
        cls.add_subscription = current_session_only
        cls._tt_patched = True
    broker._subscriptions = _SnapshotDict(broker._subscriptions)


def _serve(config_path: str) -> None:
    """The embedded broker's child process: amqtt until stdin closes."""
    import asyncio
    import threading

    from amqtt.broker import Broker

    async def main() -> None:
        loop = asyncio.get_running_loop()
        parent_gone = asyncio.Event()
        threading.Thread(target=lambda: (sys.stdin.buffer.read(), loop.call_soon_threadsafe(parent_gone.set)),
                         daemon=True).start()
        broker = Broker(json.loads(Path(config_path).read_text()))
        _patch_amqtt(broker)
        await broker.start()
        await parent_gone.wait()
        await broker.shutdown()

    asyncio.run(main())


if __name__ == "__main__":
    _serve(sys.argv[1])
