"""The generated Mosquitto configuration (hub/broker/mosquitto_config.py): the text
of each file, then the brokers running it -- the real mosquitto binary and
the embedded broker with the event's logins (hub/broker/broker_access.py), the
same tests for both: logins, client ids, the per-board ACL, last wills,
packet sizes (and persistence, Mosquitto's) -- with paho-mqtt clients.

Mosquitto drops a forbidden publish silently (an MQTT 3.1.1 client still gets
its PUBACK) and grants a forbidden subscription (it filters on delivery), so
"not delivered" is proven with a marker: the forbidden message first, then an
allowed one on the same path; once the marker has arrived, anything sent
before it would have arrived before it (one broker thread, in-order
delivery to a client)."""

from __future__ import annotations

import base64
import itertools
import json
import os
import queue
import stat
import subprocess
import threading
import time
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest

from brokers import free_port, require_mosquitto, wait_port
from needs import require_account, require_tool
from tabletimer.hub.broker import mosquitto_config as mc
from tabletimer.hub.broker.broker import BrokerLogins, EmbeddedBroker
from tabletimer.hub.protocol.hub_protocol import HUB_STATUS, PROBE, hub_subscriptions
from tabletimer.hub.protocol.keys import BoardKeys, mqtt_password
from tabletimer.shared import protocol as P
from tabletimer.shared.auth import AuthError, Signer

KEYS = {"b1": "11" * 32, "b2": "22" * 32}
HUB_USER, HUB_PASSWORD = "hub", "correct horse battery staple"
TIMEOUT = 5.0

# written by `mosquitto_passwd -c -b pw alice secret` (Mosquitto 2.0.11)
MOSQUITTO_PASSWD_LINE = ("alice:$7$101$vw7TEBKBoii6Vchd$Ow+MM/6XaO0C5tMSyIHdmH1UtyZgWiLLhcgGG/bHCGr29gOaG"
                         "DoXwFemjMMYWWC6tZ2OTFBlb7DdLy2cMmw0mw==")


def board_keys() -> BoardKeys:
    return BoardKeys(keys=KEYS)


def acl_blocks(text: str) -> dict[str, list[str]]:
    """ACL text -> {user: its topic lines}; refuses lines Mosquitto would
    apply to everyone (topic lines before any user, patterns)."""
    blocks: dict[str, list[str]] = {}
    user = None
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        word, _, rest = line.partition(" ")
        if word == "user":
            user = rest
            assert user not in blocks, f"two blocks for {user}"
            blocks[user] = []
        else:
            assert word == "topic" and user is not None, f"a line for everyone: {line!r}"
            blocks[user].append(line)
    return blocks


def conf_values(text: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for line in text.splitlines():
        if line.strip() and not line.startswith("#"):
            k, _, v = line.partition(" ")
            out.setdefault(k, []).append(v)
    return out


# =============================================================== pure text
def test_password_hash_is_mosquittos_own_format():
    user, hashed = MOSQUITTO_PASSWD_LINE.split(":", 1)
    assert mc.verify_password(hashed, "secret")
    assert not mc.verify_password(hashed, "Secret")
    salt = base64.b64decode(hashed.split("$")[3])
    assert mc.hash_password("secret", salt) == hashed            # byte for byte what mosquitto_passwd writes
    fresh = mc.hash_password("secret")
    _, ident, rounds, salt64, dk64 = fresh.split("$")
    assert (ident, rounds) == ("7", "101")
    assert len(base64.b64decode(salt64)) == 12 and len(base64.b64decode(dk64)) == 64
    assert fresh != mc.hash_password("secret")                   # a random salt each time
    assert mc.verify_password(fresh, "secret")
    with pytest.raises(ValueError):
        mc.verify_password("$6$abc$def", "secret")


def test_hashes_from_the_installed_mosquitto_passwd_verify(tmp_path):
    tool = require_tool("mosquitto_passwd", "apt-get install mosquitto; the fixed vector above covers "
                                            "the format meanwhile")
    pw = tmp_path / "pw"
    subprocess.run([tool, "-c", "-b", str(pw), "b1", mqtt_password(KEYS["b1"])], check=True,
                   capture_output=True, timeout=30)
    hashed = mc.parse_passwd(pw.read_text())["b1"]
    assert mc.verify_password(hashed, mqtt_password(KEYS["b1"]))
    assert not mc.verify_password(hashed, mqtt_password(KEYS["b2"]))


def test_mqtt_password_is_derived_from_the_board_key():
    pw = mqtt_password(KEYS["b1"])
    assert pw == mqtt_password(KEYS["b1"]) and len(pw) == 32 and int(pw, 16) >= 0
    assert pw != mqtt_password(KEYS["b2"])
    assert KEYS["b1"][:32] not in pw
    # what a board could compute with shared/auth.py (no hmac module in MicroPython)
    assert pw == Signer(KEYS["b1"]).mac(b"tabletimer mqtt password")[:16].hex()
    with pytest.raises(AuthError):
        mqtt_password("not a key")


def counting_salts():
    """A deterministic stand-in for os.urandom: salt k is k repeated."""
    counter = itertools.count()
    return lambda n: bytes([next(counter)]) * n


def test_passwd_has_the_hub_and_one_user_per_board():
    text = mc.passwd_text(board_keys(), HUB_USER, HUB_PASSWORD, urandom=counting_salts())
    assert text.endswith("\n") and len(text.splitlines()) == 3
    users = mc.parse_passwd(text)
    assert list(users) == ["hub", "b1", "b2"]
    assert mc.verify_password(users["hub"], HUB_PASSWORD)
    for b in ("b1", "b2"):
        assert mc.verify_password(users[b], mqtt_password(KEYS[b]))
        assert not mc.verify_password(users[b], KEYS[b])         # the signing key is not the password
    assert len({h.split("$")[3] for h in users.values()}) == 3   # a salt per user
    assert text == mc.passwd_text(board_keys(), HUB_USER, HUB_PASSWORD, urandom=counting_salts())   # pure


def test_acl_gives_each_board_only_its_own_topics():
    text = mc.acl_text(board_keys().boards(), HUB_USER)
    assert "pattern" not in text and "%u" not in text
    blocks = acl_blocks(text)
    assert list(blocks) == ["hub", "b1", "b2"]
    assert blocks["hub"] == ["topic readwrite tt/v1/#"]
    assert blocks["b1"] == [
        "topic write tt/v1/b/b1/status",     # birth, and the last will the broker sends as b1
        "topic write tt/v1/b/b1/evt",
        "topic write tt/v1/b/b1/sync",
        "topic read tt/v1/b/b1/cmd",
        "topic read tt/v1/b/b1/sched",       # the hub's status comes on cmd, signed
    ]
    assert blocks["b2"] == [line.replace("/b1/", "/b2/") for line in blocks["b1"]]
    assert mc.board_acl("b1") == blocks["b1"]
    # the topics the hub subscribes to and boards publish on are the protocol's
    for t in hub_subscriptions():
        assert f"topic write {t.replace('+', 'b1')}" in blocks["b1"]


def test_names_that_would_break_the_files_are_refused(tmp_path):
    keys = board_keys()
    for bad in ("b1", "", "a b", "x:y", "hub#", "h+b", "h/b", "tab\there", "new\nline"):
        with pytest.raises(ValueError):
            mc.passwd_text(keys, bad, HUB_PASSWORD)
        with pytest.raises(ValueError):
            mc.write_mosquitto_config(tmp_path / "x", keys, bad, HUB_PASSWORD)
    with pytest.raises(ValueError):
        mc.passwd_text(keys, HUB_USER, "")
    with pytest.raises(ValueError):
        mc.config_text(tmp_path, port=0)
    with pytest.raises(ValueError):
        mc.config_text(tmp_path, port=True)
    with pytest.raises(ValueError):
        mc.config_text(tmp_path, listen_host="0.0.0.0 1884")
    with pytest.raises(ValueError):
        mc.config_text(tmp_path / "evil\npassword_file /etc/shadow")
    assert not (tmp_path / "x").exists()                          # validated before writing


def test_config_text():
    d = Path("/srv/event")
    text = mc.config_text(d, "127.0.0.1", 18830, run_as="alice")
    v = conf_values(text)
    assert v["listener"] == ["18830 127.0.0.1"]
    assert v["allow_anonymous"] == ["false"]
    assert v["per_listener_settings"] == ["false"]
    assert v["password_file"] == ["/srv/event/passwd"] and v["acl_file"] == ["/srv/event/acl"]
    assert v["persistence"] == ["true"] and v["persistence_location"] == ["/srv/event/persist/"]
    assert int(v["max_queued_messages"][0]) >= 10_000
    assert 20 <= int(v["max_inflight_messages"][0]) <= 1000
    assert v["set_tcp_nodelay"] == ["true"]
    assert v["use_username_as_clientid"] == ["true"]      # a login replaces only its own connection
    assert v["max_packet_size"] == ["2048"]
    assert int(v["autosave_interval"][0]) > 0
    assert v["log_dest"] == ["file /srv/event/mosquitto.log"]
    assert v["user"] == ["alice"]
    assert "laptop" in text and "chown" in text                  # the privilege note
    other = conf_values(mc.config_text(d, persistence_dir=Path("/var/tt")))
    assert other["persistence_location"] == ["/var/tt/"] and other["listener"] == ["1883 0.0.0.0"]
    assert other["user"] == [mc.current_user()]


def test_writer_makes_secret_files_private(tmp_path):
    old = os.umask(0)                          # modes come from the writer, not the umask
    try:
        conf = mc.write_mosquitto_config(tmp_path / "ev", board_keys(), HUB_USER, HUB_PASSWORD,
                                         "127.0.0.1", 1884)
        (tmp_path / "ev" / "passwd").chmod(0o666)
        mc.write_mosquitto_config(tmp_path / "ev", board_keys(), HUB_USER, HUB_PASSWORD,
                                  "127.0.0.1", 1884)                       # rewrite
    finally:
        os.umask(old)
    d = tmp_path / "ev"
    assert conf == d / "mosquitto.conf"

    def mode(p: Path) -> int:
        return stat.S_IMODE(p.stat().st_mode)
    assert mode(d / "passwd") == 0o600 and mode(d / "acl") == 0o600
    assert mode(conf) == 0o644 and mode(d / "persist") == 0o700
    assert sorted(p.name for p in d.iterdir()) == ["acl", "mosquitto.conf", "passwd", "persist"]
    assert set(mc.parse_passwd((d / "passwd").read_text())) == {"hub", "b1", "b2"}
    assert acl_blocks((d / "acl").read_text())["b2"] == mc.board_acl("b2")
    assert conf_values(conf.read_text())["persistence_location"] == [f"{d}/persist/"]


# ============================================================ real broker
class Mosquitto:
    """mosquitto -c CONF, on the port the configuration names."""

    def __init__(self, conf: Path, port: int) -> None:
        self.binary = require_mosquitto()
        self.conf, self.port = conf, port
        self.proc: subprocess.Popen | None = None
        self.clients: list[Client] = []       # closed before the broker stops

    def start(self) -> "Mosquitto":
        with open(self.conf.parent / "stdout.log", "ab") as out:
            self.proc = subprocess.Popen([self.binary, "-c", str(self.conf)], stdout=out,
                                         stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        try:
            wait_port("127.0.0.1", self.port, TIMEOUT, proc=self.proc)
        except (RuntimeError, TimeoutError) as e:
            self.stop()
            raise RuntimeError(f"mosquitto did not start: {e}\n{self.log()}") from e
        return self

    def stop(self) -> int | None:
        p, self.proc = self.proc, None
        if p is None:
            return None
        if p.poll() is None:
            p.terminate()                      # SIGTERM: a clean stop saves the persistence file
            try:
                p.wait(TIMEOUT)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(TIMEOUT)
        return p.returncode

    def log(self) -> str:
        return "".join(f.read_text(errors="replace") for f in
                       (self.conf.parent / "stdout.log", self.conf.parent / "mosquitto.log")
                       if f.exists())


class Embedded:
    """The embedded broker with the event's logins, as `tabletimer run`
    starts it (the keys file, the hub's password file)."""

    def __init__(self, workdir: Path, port: int) -> None:
        workdir.mkdir(parents=True)
        keys_file, pw = workdir / "board-keys.json", workdir / "hub-password"
        keys_file.write_text(json.dumps(KEYS))
        pw.write_text(HUB_PASSWORD + "\n")
        self.broker = EmbeddedBroker(workdir / "broker", port=port,
                                     logins=BrokerLogins(keys_file, HUB_USER, pw))
        self.port = port
        self.clients: list[Client] = []

    def start(self) -> "Embedded":
        self.broker.start()
        return self

    def stop(self) -> int | None:
        p = self.broker.proc
        self.broker.stop()
        return p.returncode if p is not None else None

    def log(self) -> str:
        return (self.broker.workdir / "broker.log").read_text(errors="replace")


def start_broker(kind: str, tmp_path: Path):
    port = free_port()
    if kind == "embedded":
        return Embedded(tmp_path / "embedded", port).start()
    conf = mc.write_mosquitto_config(tmp_path / "mqtt", board_keys(), HUB_USER, HUB_PASSWORD,
                                     listen_host="127.0.0.1", port=port)
    return Mosquitto(conf, port).start()


@pytest.fixture(params=["mosquitto", "embedded"])
def event(request, tmp_path):
    """A broker with the event's logins and ACL: each test runs on both."""
    yield from _running(start_broker(request.param, tmp_path))


@pytest.fixture
def mosquitto_event(tmp_path):
    yield from _running(start_broker("mosquitto", tmp_path))


def _running(broker):
    try:
        yield broker
    finally:
        for c in broker.clients:
            c.close()
        rc = broker.stop()
        print(broker.log())                    # shown by pytest when the test failed
        assert rc in (0, None, -15), f"the broker exited with {rc}"


_ids = itertools.count()


class Client:
    """A paho client (MQTT 3.1.1, VERSION2 callbacks) whose messages, SUBACKs
    and CONNACK land in queues."""

    def __init__(self, broker: Mosquitto, user: str, password: str) -> None:
        self.messages: queue.Queue[mqtt.MQTTMessage] = queue.Queue()
        self.subacks: queue.Queue[list] = queue.Queue()
        self.connected = threading.Event()
        self.connects = 0
        self.broker = broker
        self.client_id = f"{user}-{next(_ids)}"
        c = self.c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2,
                                 client_id=self.client_id, clean_session=True)
        c.username_pw_set(user, password)
        c.reconnect_delay_set(60, 60)          # a test never waits for a reconnect
        c.on_connect = self._on_connect
        c.on_message = lambda cl, u, m: self.messages.put(m)
        c.on_subscribe = lambda cl, u, mid, rcs, p: self.subacks.put(rcs)
        c.connect("127.0.0.1", broker.port, keepalive=30)
        c.loop_start()
        broker.clients.append(self)
        assert self.connected.wait(TIMEOUT), f"{user} could not connect"

    def _on_connect(self, client, userdata, flags, reason_code, properties) -> None:
        if not reason_code.is_failure:
            self.connects += 1
            self.connected.set()

    def subscribe(self, *topics: str) -> list:
        self.c.subscribe([(t, 1) for t in topics])
        return self.subacks.get(timeout=TIMEOUT)

    def publish(self, topic: str, payload: bytes, retain: bool = False) -> None:
        info = self.c.publish(topic, payload, qos=1, retain=retain)
        info.wait_for_publish(TIMEOUT)         # PUBACK: the broker has handled it
        assert info.is_published()

    def until(self, topic: str, payload: bytes) -> list[tuple[str, bytes]]:
        """Every message up to and including the first (topic, payload)."""
        got: list[tuple[str, bytes]] = []
        while True:
            try:
                m = self.messages.get(timeout=TIMEOUT)
            except queue.Empty:
                raise AssertionError(f"{(topic, payload)} did not arrive; got {got}") from None
            got.append((m.topic, bytes(m.payload)))
            if (m.topic, m.payload) == (topic, payload):
                return got

    def close(self) -> None:
        self.c.disconnect()
        self.c.loop_stop()


def connack(broker: Mosquitto, user: str | None, password: str | None,
            client_id: str | None = None, will: tuple | None = None) -> tuple[mqtt.Client, object]:
    """Connect once without a network thread; (client, CONNACK reason code)."""
    got: list = []
    c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=client_id or f"once-{next(_ids)}",
                    clean_session=True)
    if user is not None:
        c.username_pw_set(user, password)
    if will is not None:
        c.will_set(*will)
    c.on_connect = lambda cl, u, f, rc, p: got.append(rc)
    c.connect("127.0.0.1", broker.port, keepalive=30)
    deadline = time.monotonic() + TIMEOUT
    while not got and time.monotonic() < deadline:
        c.loop(timeout=0.2)                    # waits on the socket for the CONNACK
    assert got, "no CONNACK"
    return c, got[0]


def drop(c: mqtt.Client) -> None:
    sock = c.socket()
    if sock is not None:
        sock.close()


def board(broker: Mosquitto, b: str) -> Client:
    return Client(broker, b, mqtt_password(KEYS[b]))


def hub(broker: Mosquitto, *topics: str) -> Client:
    h = Client(broker, HUB_USER, HUB_PASSWORD)
    assert all(not rc.is_failure for rc in h.subscribe(*topics))
    return h


def test_boards_and_hub_talk_on_their_own_topics(event):
    h = hub(event, *hub_subscriptions())
    b1 = board(event, "b1")
    b1.subscribe(P.board_topic("b1", P.CMD), P.board_topic("b1", P.SCHED), HUB_STATUS)
    sent = [(P.board_topic("b1", k), f"b1 {k}".encode()) for k in (P.STATUS, P.EVENT, P.SYNC)]
    for t, p in sent:
        b1.publish(t, p, retain=t.endswith("status"))
    assert h.until(*sent[-1]) == sent
    back = [(HUB_STATUS, b"hub online, unsigned: not for boards"),
            (P.board_topic("b1", P.CMD), b"ack"), (P.board_topic("b1", P.SCHED), b"sched")]
    for t, p in back:
        h.publish(t, p)
    assert b1.until(*back[-1]) == back[1:]


def test_a_board_cannot_publish_as_another_board_or_as_the_hub(event):
    h = hub(event, "tt/v1/#")
    b1 = board(event, "b1")
    forbidden = [P.board_topic("b2", k) for k in (P.STATUS, P.EVENT, P.SYNC, P.CMD, P.SCHED)]
    forbidden += [P.board_topic("b1", P.CMD), P.board_topic("b1", P.SCHED),   # forging its own commands
                  HUB_STATUS, "tt/v1/b/b1", "tt/v1/other"]
    for t in forbidden:
        b1.publish(t, b"forbidden", retain=True)   # acknowledged all the same (MQTT 3.1.1)
    marker = (P.board_topic("b1", P.EVENT), b"marker")
    b1.publish(*marker)
    assert h.until(*marker) == [marker]
    # nor was any of it retained: a new subscriber gets no retained message
    # first (the hub's login again: this connection replaces the first)
    late = hub(event, "tt/v1/#")
    marker = (P.board_topic("b2", P.CMD), b"marker 2")
    late.publish(*marker)
    assert late.until(*marker) == [marker]


@pytest.mark.parametrize("user,password", [
    ("b1", "wrong"),
    ("b1", mqtt_password(KEYS["b2"])),        # another board's password
    ("b1", KEYS["b1"]),                       # the signing key is not the MQTT password
    ("b3", mqtt_password(KEYS["b1"])),        # no such user
    (HUB_USER, mqtt_password(KEYS["b1"])),
    (None, None),                             # anonymous
], ids=["wrong password", "another board's password", "signing key as password", "no such user",
        "hub with a board's password", "anonymous"])
def test_wrong_credentials_are_refused(event, user, password):
    c, rc = connack(event, user, password)
    drop(c)
    assert rc.is_failure
    assert rc == "Not authorized" and rc.value == 135   # CONNACK return code 5 in MQTT 3.1.1
    ok, rc = connack(event, "b1", mqtt_password(KEYS["b1"]))
    drop(ok)
    assert not rc.is_failure


def test_a_board_cannot_read_another_boards_commands(event):
    h = hub(event, "tt/v1/#")
    b2 = board(event, "b2")
    b2.subscribe(P.board_topic("b2", P.CMD))
    b1 = board(event, "b1")
    # Mosquitto 2.0 grants these in the SUBACK and filters on delivery
    # instead; the embedded broker refuses them (0x80)
    codes = b1.subscribe(P.board_topic("b1", P.CMD), P.board_topic("b2", P.CMD), P.board_topic("b2", P.SCHED),
                         "tt/v1/b/+/cmd", "tt/v1/#", "#")
    assert len(codes) == 6 and all(rc.value in (0, 1, 0x80) for rc in codes) and codes[0].value == 1
    secret = [(P.board_topic("b2", k), b"for b2 only") for k in (P.CMD, P.SCHED, P.EVENT, P.STATUS, P.SYNC)]
    for t, p in secret:
        h.publish(t, p)
    assert b2.until(*secret[0]) == [secret[0]]            # it was published and deliverable
    marker = (P.board_topic("b1", P.CMD), b"marker")
    h.publish(*marker)
    assert b1.until(*marker) == [marker]


def test_the_hub_hears_its_own_probe_and_no_board_does(event):
    """The hub's self-probe (self_probe.py) needs its login to publish and
    read tt/v1/hub/probe: without it the hub would find itself deaf and
    reconnect again and again."""
    h = hub(event, *hub_subscriptions(), PROBE)
    b1 = board(event, "b1")
    b1.subscribe(P.board_topic("b1", P.CMD), PROBE, "tt/v1/#", "#")   # the embedded broker refuses all but the first
    probe = (PROBE, b"probe 1")
    h.publish(*probe)
    assert h.until(*probe) == [probe]
    b1.publish(PROBE, b"forged probe")              # acknowledged all the same, not delivered
    marker = (P.board_topic("b1", P.CMD), b"marker")
    h.publish(*marker)
    assert b1.until(*marker) == [marker]             # the probe never reached the board
    h.publish(*probe)
    assert h.until(*probe) == [probe]                # nor did the board's reach the hub


def test_last_will_only_on_the_boards_own_status(event):
    """A will is sent when a session is taken over (same client id): in the
    broker's handling of the new CONNECT, before its CONNACK -- an ordering
    as deterministic as a marker."""
    h = hub(event, "tt/v1/#")
    pw = mqtt_password(KEYS["b1"])
    own = (P.board_topic("b1", P.STATUS), b"b1 offline")
    other = (P.board_topic("b2", P.STATUS), b"b2 offline (forged by b1)")
    for will in (other, own):
        first, rc = connack(event, "b1", pw, client_id="b1-link", will=(*will, 1, True))
        assert not rc.is_failure                # Mosquitto 2.0 does not check the will at connect
        second, rc = connack(event, "b1", pw, client_id="b1-link")   # takes the session over
        assert not rc.is_failure
        drop(first)
        drop(second)
        marker = (P.board_topic("b1", P.EVENT), b"marker " + will[1])
        b1 = board(event, "b1")
        b1.publish(*marker)
        got = h.until(*marker)
        assert got == ([own, marker] if will == own else [marker])


def test_retained_messages_survive_a_broker_restart(mosquitto_event):
    """Mosquitto's persistence (the embedded broker has none: the hub
    publishes every schedule again when it connects)."""
    event = mosquitto_event
    h = hub(event, "tt/v1/#")
    sched = (P.board_topic("b1", P.SCHED), b"signed schedule 42")
    h.publish(*sched, retain=True)
    assert h.until(*sched) == [sched]
    for c in event.clients:
        c.close()
    event.clients.clear()
    assert event.stop() == 0
    assert (event.conf.parent / "persist" / "mosquitto.db").is_file()
    event.start()
    b1 = board(event, "b1")
    b1.subscribe(P.board_topic("b1", P.SCHED))
    m = b1.messages.get(timeout=TIMEOUT)
    assert (m.topic, m.payload, m.retain) == (*sched, True)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root")
def test_started_as_root_it_reads_its_files_as_their_owner(tmp_path):
    """Why the config names the files' owner in `user`: started as root,
    Mosquitto drops to that account before reading the 0600 password file."""
    require_account("mosquitto", "apt-get install mosquitto creates it")
    port = free_port()
    conf = mc.write_mosquitto_config(tmp_path / "mqtt", board_keys(), HUB_USER, HUB_PASSWORD,
                                     listen_host="127.0.0.1", port=port, run_as="mosquitto")
    p = subprocess.run([require_mosquitto(), "-c", str(conf)], capture_output=True, text=True,
                       stdin=subprocess.DEVNULL, timeout=30)
    assert p.returncode != 0
    assert "Unable to open pwfile" in p.stdout + p.stderr
    assert conf_values(mc.config_text(tmp_path))["user"] == ["root"]   # what the default says here


# ============================================================ attacks (issue #15)
def _hears(h: Client, n: int) -> None:
    """h (the hub) still gets a board's event, over the connection it had."""
    b2 = board_once(h, "b2")
    marker = (P.board_topic("b2", P.EVENT), b"still hears %d" % n)
    b2.publish(*marker)
    assert h.until(*marker)[-1] == marker
    assert h.connects == 1, "the hub was disconnected (and reconnected)"


def board_once(h: Client, b: str) -> Client:
    return Client(h.broker, b, mqtt_password(KEYS[b]))


@pytest.mark.parametrize("login", ["anonymous", "wrong password", "a board's login"])
def test_nobody_else_can_take_the_hubs_connection(event, login):
    """Issue #15, items 1 and 2: a connection with the hub's client id --
    anonymous (the embedded broker took over or cleaned the hub's session
    before it checked the login: the hub stayed deaf until restart) or a
    board's own login (Mosquitto without use_username_as_clientid kicked the
    hub off) -- leaves the hub's connection and subscriptions alone."""
    h = hub(event, *hub_subscriptions())
    user, password = {"anonymous": (None, None), "wrong password": (HUB_USER, "wrong"),
                      "a board's login": ("b1", mqtt_password(KEYS["b1"]))}[login]
    for n, cid in enumerate((h.client_id, HUB_USER, "tabletimer-hub")):
        c, rc = connack(event, user, password, client_id=cid)
        assert rc.is_failure == (login != "a board's login")
        drop(c)
        _hears(h, n)


def test_a_packet_over_the_limit_closes_its_connection(event):
    """Issue #15, item 3: a board's login published 64 MB, retained, and the
    hub held it in RAM at every restart.  Now the broker closes a connection
    that sends a packet over MAX_PACKET; nothing of it is delivered or
    retained; the limit itself passes."""
    from tabletimer.hub.protocol.hub_protocol import MAX_PACKET

    h = hub(event, "tt/v1/#")
    b1 = board(event, "b1")
    gone = threading.Event()
    b1.c.on_disconnect = lambda *a: gone.set()
    topic = P.board_topic("b1", P.EVENT)
    fits = b"x" * (MAX_PACKET - 3 - 2 - len(topic) - 2)   # fixed header, topic, packet id: MAX_PACKET
    b1.publish(topic, fits)
    assert h.until(topic, fits)[-1] == (topic, fits)
    b1.c.publish(P.board_topic("b1", P.STATUS), b"y" * (64 * 1024), qos=1, retain=True)
    assert gone.wait(TIMEOUT), "the broker kept a connection that sent 64 KB"
    _hears_marker(h)
    late = hub(event, "tt/v1/#")          # replaces h: what is retained comes first
    marker = (P.board_topic("b2", P.CMD), b"nothing retained before this")
    late.publish(*marker)
    assert late.until(*marker) == [marker]


def _hears_marker(h: Client) -> None:
    b2 = board_once(h, "b2")
    marker = (P.board_topic("b2", P.EVENT), b"marker")
    b2.publish(*marker)
    assert h.until(*marker) == [marker]


def test_a_board_flashed_after_the_embedded_broker_started_logs_in(tmp_path):
    broker = Embedded(tmp_path / "e", free_port()).start()
    try:
        keys_file = tmp_path / "e" / "board-keys.json"
        c, rc = connack(broker, "b3", mqtt_password("33" * 32))
        drop(c)
        assert rc.is_failure
        keys_file.write_text(json.dumps(dict(KEYS, b3="33" * 32)))     # `board flash` adds it
        deadline = time.monotonic() + TIMEOUT
        while True:                          # the broker reads the keys again at most once a second
            c, rc = connack(broker, "b3", mqtt_password("33" * 32))
            drop(c)
            if not rc.is_failure or time.monotonic() > deadline:
                break
            time.sleep(0.2)                  # polling a login: there is no event to await
        assert not rc.is_failure
    finally:
        broker.stop()


def test_the_embedded_broker_listens_beyond_this_machine_only_with_logins(tmp_path):
    with pytest.raises(ValueError, match="only with the event's logins"):
        EmbeddedBroker(tmp_path, host="0.0.0.0", port=free_port())
