"""Mosquitto 2.0 configuration for an event: one login per board (user = board
id, password derived from the board's key by `keys.mqtt_password`) plus the
hub's, and an ACL that lets each board publish only on its own topics and
read only its own commands and schedule (docs/protocol.md, *Topics*).

    write_mosquitto_config(DIR, keys, "hub", hub_password)
    mosquitto -c DIR/mosquitto.conf

The text of each file comes from a pure function (`config_text`, `acl_text`,
`passwd_text`); `write_mosquitto_config` only writes them.  Passwords are
stored as Mosquitto 2.0 hashes computed here (no mosquitto_passwd needed):

    user:$7$101$<base64 12-byte salt>$<base64 64-byte PBKDF2-HMAC-SHA512>

("$7$" = PBKDF2-SHA512, the salt is hashed as raw bytes, base64 with padding).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import os
from pathlib import Path
from typing import Callable, Iterable

from tabletimer.shared import protocol

from ..protocol.hub_protocol import MAX_PACKET
from ..protocol.keys import BoardKeys, mqtt_password
from ..event.folder.private_file import write_private

HASH_ID = "7"            # PBKDF2-HMAC-SHA512 (Mosquitto >= 2.0)
ITERATIONS = 101         # what mosquitto_passwd 2.0 writes
SALT_BYTES = 12
HASH_BYTES = 64

MAX_QUEUED_MESSAGES = 10_000   # per client: a hall's burst of presses while the hub is slow
MAX_INFLIGHT_MESSAGES = 100    # QoS 1 messages on their way to one client, unacknowledged
AUTOSAVE_INTERVAL_S = 60       # retained schedules/statuses also saved on a clean stop

BOARD_WRITES = (protocol.STATUS, protocol.EVENT, protocol.SYNC)   # status: also its last will
BOARD_READS = (protocol.CMD, protocol.SCHED)

Urandom = Callable[[int], bytes]


# ------------------------------------------------------------ passwords
def hash_password(password: str, salt: bytes | None = None, iterations: int = ITERATIONS) -> str:
    """Mosquitto 2.0's "$7$" hash of password (a fresh random salt unless given)."""
    if salt is None:
        salt = os.urandom(SALT_BYTES)
    dk = hashlib.pbkdf2_hmac("sha512", password.encode(), salt, iterations, HASH_BYTES)
    return "$%s$%d$%s$%s" % (HASH_ID, iterations, base64.b64encode(salt).decode(),
                             base64.b64encode(dk).decode())


def verify_password(hashed: str, password: str) -> bool:
    """Does a "$7$" hash (from here or from mosquitto_passwd) match password?"""
    parts = hashed.split("$")
    if len(parts) != 5 or parts[0] != "" or parts[1] != HASH_ID or not parts[2].isdigit():
        raise ValueError(f"not a Mosquitto $7$ password hash: {hashed!r}")
    try:
        salt = base64.b64decode(parts[3], validate=True)
        want = base64.b64decode(parts[4], validate=True)
    except binascii.Error as e:
        raise ValueError(f"bad base64 in password hash: {e}") from e
    got = hashlib.pbkdf2_hmac("sha512", password.encode(), salt, int(parts[2]), len(want))
    return hmac.compare_digest(got, want)


def parse_passwd(text: str) -> dict[str, str]:
    """A Mosquitto password file -> {user: hash}."""
    users: dict[str, str] = {}
    for n, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        user, sep, hashed = line.partition(":")
        if not sep or not user:
            raise ValueError(f"password file line {n}: expected user:hash")
        users[user] = hashed
    return users


def check_user(name: str) -> str:
    """A login usable in the password file (no ':'), the ACL (no spaces) and
    as a topic level (no MQTT wildcards or separators)."""
    if not name or len(name) > 64 or any(c in name for c in ":#+/$") or \
            any(c.isspace() or not c.isprintable() for c in name):
        raise ValueError(f"unusable MQTT user name {name!r}: 1-64 printable characters, "
                         "no spaces and none of : # + / $")
    return name


def passwd_text(keys: BoardKeys, hub_user: str, hub_password: str,
                urandom: Urandom = os.urandom) -> str:
    """The password file: the hub, then one user per board (its id), each
    board's password derived from its key."""
    _check_hub_user(keys, hub_user)
    if not hub_password:
        raise ValueError("the hub's MQTT password must not be empty")
    lines = [f"{hub_user}:{hash_password(hub_password, urandom(SALT_BYTES))}"]
    for board in keys.boards():
        key = keys.key(board)
        assert key is not None
        lines.append(f"{board}:{hash_password(mqtt_password(key), urandom(SALT_BYTES))}")
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------ ACL
def board_acl(board: str) -> list[str]:
    """The ACL topic lines of one board (after its `user` line)."""
    protocol.check_board_id(board)
    return ([f"topic write {protocol.board_topic(board, k)}" for k in BOARD_WRITES]
            + [f"topic read {protocol.board_topic(board, k)}" for k in BOARD_READS])


def acl_text(boards: Iterable[str], hub_user: str) -> str:
    """Explicit per-user blocks (no `pattern ... %u` lines, which would apply
    to every login, the hub's included).  Whatever is not granted is denied."""
    check_user(hub_user)
    out = ["# Mosquitto ACL for a TableTimer event (generated: regenerate, do not edit).",
           "# Topics and who publishes what: docs/protocol.md.  Anything not granted is",
           "# denied, silently: a forbidden publish (or last will) is dropped although an",
           "# MQTT 3.1.1 client still gets its PUBACK (MQTT 5: 'not authorized'); a",
           "# forbidden subscription is granted in the SUBACK but delivers nothing.",
           "",
           "# the hub: every TableTimer topic",
           f"user {hub_user}",
           f"topic readwrite {protocol.PREFIX}/#"]
    for board in sorted(boards):
        if board == hub_user:
            raise ValueError(f"board id {board!r} is also the hub's MQTT user name")
        out += ["", f"# board {board}: publishes its status (birth and last will), events and",
                "# sync requests; reads its commands (the hub's status among them, signed) and its schedule",
                f"user {board}", *board_acl(board)]
    return "\n".join(out) + "\n"


# --------------------------------------------------------------- config
def _path_value(p: Path) -> str:
    s = str(p)
    if any(c in s for c in "\r\n\0"):
        raise ValueError(f"unusable path for mosquitto.conf: {s!r}")
    return s


def config_text(out_dir: Path, listen_host: str = "0.0.0.0", port: int = 1883,
                persistence_dir: Path | None = None, run_as: str | None = None,
                tls: bool = False, hub_port: int = 1883) -> str:
    """mosquitto.conf for files in out_dir (password file `passwd`, ACL
    `acl`, log `mosquitto.log`).  run_as: the account Mosquitto switches to
    when started as root (default: the one running this, which owns the files).
    tls: the listener for the boards (listen_host:port) takes TLS only, with
    the certificate `server.crt` signed by the event's `ca.crt`; the hub
    connects without TLS to a second listener, 127.0.0.1:hub_port."""
    out_dir = Path(os.path.abspath(out_dir))
    persist = Path(os.path.abspath(persistence_dir if persistence_dir is not None
                                   else out_dir / "persist"))
    if not listen_host or any(c.isspace() for c in listen_host):
        raise ValueError(f"bad listen host {listen_host!r}")
    for n in (port, hub_port):
        if isinstance(n, bool) or not isinstance(n, int) or not 0 < n < 65536:
            raise ValueError(f"bad port {n!r}")
    if tls and port == hub_port:
        raise ValueError(f"the boards' TLS port and the hub's port are both {port}")
    user = check_user(run_as if run_as is not None else current_user())
    d = _path_value(out_dir)
    listeners = f"listener {port} {listen_host}\n"
    if tls:
        listeners = f"""# the boards: TLS only, the broker's certificate signed by the event's CA
# (boards flashed with --broker-ca {_path_value(out_dir / "ca.crt")} accept no other)
listener {port} {listen_host}
cafile {_path_value(out_dir / "ca.crt")}
certfile {_path_value(out_dir / "server.crt")}
keyfile {_path_value(out_dir / "server.key")}
tls_version tlsv1.2
# the hub, on this machine only: no TLS needed
listener {hub_port} 127.0.0.1
"""
    return f"""\
# Mosquitto 2.0 configuration for a TableTimer event (generated by
# tabletimer.hub.broker.mosquitto_config: regenerate it rather than edit it; the board
# passwords are derived from the board keys).
#
#     mosquitto -c {_path_value(out_dir / "mosquitto.conf")}
#
# Privileges.  Started as root, Mosquitto switches to the account named by
# `user` (without the line: the `mosquitto` account) before it reads the
# password and ACL files and writes its log and persistence files.  These
# files belong to the account that generated them, mode 0600 where secret, so
# `user` names that account ({user}): the broker works started by it or by
# root (sudo).  Started by anyone else, `user` is ignored.
# On a laptop: run `mosquitto -c` as yourself (port 1883 needs no root); stop
# the system's own Mosquitto service first if it holds the port.  To run this
# as the system service (account `mosquitto`) instead: set `user mosquitto` and
# `chown -R mosquitto: {d}`.

per_listener_settings false
{listeners}allow_anonymous false
password_file {_path_value(out_dir / "passwd")}
acl_file {_path_value(out_dir / "acl")}
user {user}
# a client's id is its login: a login can only ever replace its own
# connection (a board's login connecting as the hub's id kicked the hub off)
use_username_as_clientid true
# no message is over 1 KB (signed, with its topic: well under this); a larger
# packet is junk or an attack, and its connection is closed
max_packet_size {MAX_PACKET}

# retained messages (board statuses, signed schedules) survive a broker restart
persistence true
persistence_location {_path_value(persist)}/
persistence_file mosquitto.db
autosave_interval {AUTOSAVE_INTERVAL_S}

# a burst of presses from every table while the hub is busy must not be dropped
max_queued_messages {MAX_QUEUED_MESSAGES}
max_inflight_messages {MAX_INFLIGHT_MESSAGES}
# acks and clock-sync replies are tiny: do not let Nagle's algorithm hold them back
set_tcp_nodelay true

log_dest file {_path_value(out_dir / "mosquitto.log")}
log_type error
log_type warning
log_type notice
log_type information
connection_messages true
log_timestamp true
log_timestamp_format %Y-%m-%dT%H:%M:%S
"""


def current_user() -> str:
    """The name of the account this process runs as (owner of what it writes)."""
    try:
        import pwd
        return pwd.getpwuid(os.geteuid()).pw_name
    except (ImportError, KeyError, AttributeError):   # Windows: `user` is ignored there
        import getpass
        return getpass.getuser()


def _check_hub_user(keys: BoardKeys, hub_user: str) -> None:
    check_user(hub_user)
    if hub_user in keys.boards():
        raise ValueError(f"the hub's MQTT user name {hub_user!r} is also a board id")




def write_mosquitto_config(out_dir: Path, keys: BoardKeys, hub_user: str, hub_password: str,
                           listen_host: str = "0.0.0.0", port: int = 1883,
                           persistence_dir: Path | None = None, *,
                           run_as: str | None = None, tls_hosts: list[str] | None = None,
                           hub_port: int = 1883) -> Path:
    """Write mosquitto.conf, passwd (0600) and acl (0600) into out_dir and
    create the persistence folder; returns the path of mosquitto.conf.
    tls_hosts: TLS for the boards' listener, with a certificate for these
    addresses (what boards are flashed with as --broker-host), signed by the
    event's CA (`ca.crt`, made once and kept: boards flashed with it stay
    good when the configuration is written again; `ca.key` 0600)."""
    out_dir = Path(os.path.abspath(out_dir))
    persist = Path(os.path.abspath(persistence_dir if persistence_dir is not None
                                   else out_dir / "persist"))
    conf = config_text(out_dir, listen_host, port, persist, run_as,      # validates first
                       tls=bool(tls_hosts), hub_port=hub_port)
    passwd = passwd_text(keys, hub_user, hub_password)
    acl = acl_text(keys.boards(), hub_user)
    out_dir.mkdir(parents=True, exist_ok=True)
    persist.mkdir(mode=0o700, parents=True, exist_ok=True)
    write_private(out_dir / "passwd", passwd, 0o600)
    write_private(out_dir / "acl", acl, 0o600)
    if tls_hosts:
        _write_certificates(out_dir, tls_hosts)
    write_private(out_dir / "mosquitto.conf", conf, 0o644)
    return out_dir / "mosquitto.conf"


def _write_certificates(out_dir: Path, hosts: list[str]) -> None:
    """The event's CA (kept if there is one) and the broker's certificate for hosts."""
    from .tls_certs import Pem, make_ca, make_server_cert

    ca_cert, ca_key = out_dir / "ca.crt", out_dir / "ca.key"
    if ca_cert.exists() and ca_key.exists():
        ca = Pem(ca_cert.read_bytes(), ca_key.read_bytes())
    else:
        ca = make_ca()
        write_private(ca_key, ca.key.decode(), 0o600)
        write_private(ca_cert, ca.cert.decode(), 0o644)
    server = make_server_cert(ca, hosts)
    write_private(out_dir / "server.key", server.key.decode(), 0o600)
    write_private(out_dir / "server.crt", server.cert.decode(), 0o644)
