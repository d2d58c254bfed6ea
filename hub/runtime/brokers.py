"""Which broker `tabletimer run`, `demo` and `rehearse` use, started, and
the line that says so: an external one (--broker URL: none is started), else
Mosquitto as a child process when it is installed (--broker-kind auto, the
default, or mosquitto), else the embedded one (amqtt).  Either started
broker takes the event's logins: one per board (derived from its key), the
hub's, the ACL (docs/operations.md, "Run a hall securely")."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..broker.broker import BrokerAddress, BrokerLogins, EmbeddedBroker, parse_broker_url
from ..protocol.keys import BoardKeys
from ..broker.mosquitto_child import INSTALL_HINT, MosquittoChild, check_port_free, find_mosquitto

# the hall the embedded broker is measured to serve (docs/benchmarks.md, 2026-12-01): 100
# firmware boards pressing within 1 s were acked at p99 76 ms; 300 took 0.7-2 s on the same
# laptop, and 300 load-generator boards p99 99 ms (Mosquitto: 9 ms)
EMBEDDED_MEASURED_BOARDS = 100

HUB_USER = "hub"


def hub_password(ev_path: Path) -> Path:
    return ev_path / "mosquitto" / "hub-password"


def ensure_hub_password(ev_path: Path) -> Path:
    """The hub's MQTT password file (made on first use, 0600 from its first
    byte): the hub's login on Mosquitto and on the embedded broker."""
    import secrets

    from ..event.folder.private_file import write_private

    path = hub_password(ev_path)
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        write_private(path, secrets.token_hex(16))
    return path


CHILD_FOLDER = "child"     # DIR/mosquitto/child: the child's configuration, log and persistence
# (beside `tabletimer broker config`'s own files in DIR/mosquitto, which it does not overwrite)


@dataclass
class Broker:
    """The broker the hub uses: its address (with the hub's login), what
    was started (stop() it; None for an external one), the line to print."""
    address: BrokerAddress
    started: EmbeddedBroker | MosquittoChild | None
    line: str
    keys_seen: float | None = None     # the board keys file's mtime the child's logins were made from

    def stop(self) -> None:
        if self.started is not None:
            self.started.stop()


def child_folder(data: Path) -> Path:
    return data / "mosquitto" / CHILD_FOLDER


def start_broker(args, keys: BoardKeys, data: Path) -> Broker:
    """The broker for --broker / --broker-kind (RuntimeError: none can start, and why)."""
    binary = _which_broker(args)
    if args.broker:
        address = parse_broker_url(args.broker)
        pw = hub_password(data)
        if address.user is None and pw.exists():    # from `tabletimer broker config`
            address.user, address.password = HUB_USER, pw.read_text().strip()
        return Broker(address, None, f"broker: external, {address.host}:{address.port} (--broker; none "
                                     "started here)")
    pw_file = ensure_hub_password(data)
    password = pw_file.read_text().strip()
    if binary is not None:
        return _start_mosquitto(binary, args, keys, data, password)
    logins = BrokerLogins(keys.path or data / "board-keys.json", HUB_USER, pw_file)
    broker = EmbeddedBroker(data / "broker", host=args.listen, port=args.port, logins=logins).start()
    address = broker.address
    address.user, address.password = HUB_USER, password
    return Broker(address, broker,
                  f"broker: embedded (amqtt) on {address.host}:{address.port}, the event's logins: measured "
                  f"to serve up to {EMBEDDED_MEASURED_BOARDS} boards (docs/benchmarks.md); install "
                  "Mosquitto for a bigger hall (Debian/Ubuntu: sudo apt-get install mosquitto; macOS: "
                  "brew install mosquitto)")


def _which_broker(args) -> str | None:
    """The Mosquitto binary the hub starts (None: the embedded broker, or
    none with --broker); RuntimeError for options that cannot be met."""
    kind = getattr(args, "broker_kind", "auto")
    if args.broker:
        if kind != "auto":
            raise RuntimeError("--broker URL is a broker the hub does not start: give it or "
                               f"--broker-kind {kind}, not both")
        return None
    binary = find_mosquitto() if kind in ("auto", "mosquitto") else None
    if kind == "mosquitto" and binary is None:
        raise RuntimeError(f"--broker-kind mosquitto: Mosquitto is not installed (not on PATH nor in "
                           f"/usr/sbin, /usr/local/sbin, /opt/homebrew/sbin); {INSTALL_HINT}; or use "
                           "--broker-kind embedded")
    return binary


def broker_problem(args) -> str | None:
    """What would stop the hub's broker: --broker and --broker-kind together,
    Mosquitto asked for and not installed, a bad --broker URL, its port
    taken (and by whom); None: nothing seen.  Asked before the hub writes
    anything; the broker's start asks again (the port may go meanwhile)."""
    try:
        _which_broker(args)
        if args.broker:
            parse_broker_url(args.broker)
        else:
            check_port_free(args.listen, args.port)
    except (RuntimeError, ValueError) as e:        # PortTaken is a RuntimeError
        return str(e)
    return None


def _write_child_config(keys: BoardKeys, data: Path, password: str, host: str, port: int) -> Path:
    from ..broker.mosquitto_config import write_mosquitto_config

    return write_mosquitto_config(child_folder(data), keys, HUB_USER, password, listen_host=host, port=port)


def _keys_mtime(keys: BoardKeys) -> float | None:
    try:
        return os.stat(keys.path).st_mtime if keys.path else None
    except OSError:
        return None


def _start_mosquitto(binary: str, args, keys: BoardKeys, data: Path, password: str) -> Broker:
    seen = _keys_mtime(keys)
    conf = _write_child_config(keys, data, password, args.listen, args.port)
    child = MosquittoChild(binary, conf, args.listen, args.port, conf.parent / "mosquitto.log").start()
    host = "127.0.0.1" if args.listen in ("0.0.0.0", "") else "::1" if args.listen == "::" else args.listen
    version = f" {child.version}" if child.version else ""
    return Broker(BrokerAddress(host, args.port, HUB_USER, password), child,
                  f"broker: Mosquitto{version} (child process, pid {child.pid}) on {args.listen}:{args.port}, "
                  f"config {conf}", keys_seen=seen)


def follow_keys(broker: Broker, keys: BoardKeys, data: Path, password: str) -> bool:
    """A board flashed while the hub runs (the keys file changed): the
    child Mosquitto's logins written again and reloaded (True if so).  The
    embedded broker reads the keys itself when an unknown board logs in."""
    child = broker.started
    if not isinstance(child, MosquittoChild) or not child.alive:
        return False
    now = _keys_mtime(keys)
    if now == broker.keys_seen:
        return False
    broker.keys_seen = now
    keys.refresh()
    _write_child_config(keys, data, password, child.host, child.port)
    child.reload()
    return True


def dead_broker_alert(broker: Broker) -> str | None:
    """What to say when the child Mosquitto has exited while the hub runs (None: it runs)."""
    child = broker.started
    if not isinstance(child, MosquittoChild) or child.alive or child.proc is None:
        return None
    return (f"THE BROKER HAS STOPPED: Mosquitto (pid {child.pid}) exited with code {child.exit_code}; "
            f"no board can reach the hub. Its log: {child.log}")


def restart_child(broker: Broker) -> str:
    """Start the child Mosquitto that died again, on its configuration and
    port (its persistence: the retained schedules and the boards' sessions
    come back); what to say.  RuntimeError (PortTaken) if it cannot start."""
    child = broker.started
    assert isinstance(child, MosquittoChild)
    child.stop()                   # the dead one's pipes closed
    child.start()
    return (f"broker: Mosquitto started again (pid {child.pid}); the boards and the hub connect to it "
            "again by themselves")
