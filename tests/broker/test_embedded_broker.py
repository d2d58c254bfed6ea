"""The embedded broker (amqtt, patched in hub/broker/broker_child.py): a client gets the
retained messages of its own subscriptions only (amqtt 0.12.1 sent every
connecting client those of every topic anyone had subscribed to)."""

from __future__ import annotations

import threading

import paho.mqtt.client as mqtt


def _client(cid: str, port: int, on_message=None) -> mqtt.Client:
    c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=cid)
    connected = threading.Event()
    c.on_connect = lambda *a: connected.set()
    if on_message:
        c.on_message = on_message
    c.connect("127.0.0.1", port)
    c.loop_start()
    assert connected.wait(10), f"{cid} did not connect"
    return c


def _subscribe(c: mqtt.Client, topic: str) -> None:
    done = threading.Event()
    c.on_subscribe = lambda *a: done.set()
    c.subscribe(topic, 1)
    assert done.wait(10)


def test_a_client_gets_only_its_own_subscriptions_retained_messages(embedded_broker) -> None:
    port = embedded_broker.port
    a = _client("a", port)
    _subscribe(a, "tt/test/a/sched")
    a.publish("tt/test/a/sched", b"for a only", qos=1, retain=True).wait_for_publish(10)

    got: list[str] = []
    own = threading.Event()

    def on_message(c, u, m) -> None:
        got.append(m.topic)
        if m.topic == "tt/test/b/sched":
            own.set()
    b = _client("b", port, on_message)
    b.publish("tt/test/b/sched", b"for b", qos=1, retain=True).wait_for_publish(10)
    _subscribe(b, "tt/test/b/sched")
    assert own.wait(10), "b did not get the retained message of its own subscription"
    # a's retained message would have come before b's own (it is sent on connect)
    assert got == ["tt/test/b/sched"]
    for c in (a, b):
        c.loop_stop()
        c.disconnect()


def test_a_replaced_connection_cannot_take_the_new_ones_subscription() -> None:
    """A client that reconnects (same id, clean session) while the broker
    still handles the old connection's SUBSCRIBE: the new connection's
    subscription counts, the old one's is refused (it was the new one that
    went without messages)."""
    import asyncio

    from amqtt.broker import Broker
    from amqtt.session import Session

    from tabletimer.hub.broker.broker_child import patch_amqtt

    async def main() -> None:
        broker = Broker({"listeners": {"default": {"type": "tcp", "bind": "127.0.0.1:0"}}})
        patch_amqtt(broker)
        old, new = Session(), Session()
        old.client_id = new.client_id = "B092"
        broker._sessions["B092"] = (new, None)
        broker._subscriptions["tt/v1/b/B092/cmd"] = [(old, 1)]      # from before the reconnect
        assert await broker.add_subscription(("tt/v1/b/B092/cmd", 1), new) == 1
        assert broker._subscriptions["tt/v1/b/B092/cmd"] == [(new, 1)]
        assert await broker.add_subscription(("tt/v1/b/B092/cmd", 1), old) == 0x80
        assert broker._subscriptions["tt/v1/b/B092/cmd"] == [(new, 1)]
    asyncio.run(main())


def test_a_message_reaches_the_exact_and_the_wildcard_subscriptions_that_match_it(embedded_broker) -> None:
    """The patched broadcast looks a message's subscriptions up (its exact
    filter, then the wildcard ones) instead of testing every filter: the
    same clients get it, the others not, and a client gone is not sent it."""
    from waiting import until

    port = embedded_broker.port
    got: dict[str, list[tuple[str, bytes]]] = {"exact": [], "wild": [], "hash": [], "other": []}

    def collect(name):
        return lambda c, u, m: got[name].append((m.topic, m.payload))
    clients = {name: _client(name, port, collect(name)) for name in got}
    _subscribe(clients["exact"], "tt/test/b/X/cmd")
    _subscribe(clients["wild"], "tt/test/b/+/cmd")
    _subscribe(clients["hash"], "tt/test/#")
    _subscribe(clients["other"], "tt/test/b/Y/cmd")
    pub = _client("pub", port)
    pub.publish("tt/test/b/X/cmd", b"1", qos=1).wait_for_publish(10)
    until(lambda: all(got[n] for n in ("exact", "wild", "hash")), "the message at its three subscribers",
          seen=lambda: got)
    clients["exact"].loop_stop()
    clients["exact"].disconnect()               # its subscription goes with it (clean session)
    pub.publish("tt/test/b/X/cmd", b"2", qos=1).wait_for_publish(10)
    pub.publish("tt/test/b/Y/cmd", b"3", qos=1).wait_for_publish(10)
    until(lambda: len(got["hash"]) == 3 and len(got["wild"]) == 3 and got["other"],
          "the next two at their subscribers", seen=lambda: got)
    assert got["exact"] == [("tt/test/b/X/cmd", b"1")]
    assert got["wild"] == got["hash"] == [("tt/test/b/X/cmd", b"1"), ("tt/test/b/X/cmd", b"2"),
                                          ("tt/test/b/Y/cmd", b"3")]
    assert got["other"] == [("tt/test/b/Y/cmd", b"3")]
    for name in ("wild", "hash", "other"):
        clients[name].loop_stop()
        clients[name].disconnect()
    pub.loop_stop()
    pub.disconnect()


def test_the_session_monitor_leaves_a_client_that_connected_again_meanwhile() -> None:
    """amqtt's monitor lists the disconnected clean sessions, then cleans
    each up by client id: a board that connected again under the id in
    between (its id taken by a stranger for two seconds, on a loaded
    machine) lost its new session's subscription and stayed connected, deaf.
    A session still gone is cleaned up; at shutdown, every one."""
    import asyncio

    from amqtt.broker import Broker
    from amqtt.session import Session

    from tabletimer.hub.broker.broker_child import patch_amqtt

    async def main() -> None:
        broker = Broker({"listeners": {"default": {"type": "tcp", "bind": "127.0.0.1:0"}}})
        patch_amqtt(broker)
        back, gone = Session(), Session()
        back.client_id, gone.client_id = "B3", "B4"
        back.transitions.connect()                     # connected again since the monitor listed it
        gone.transitions.connect()
        gone.transitions.disconnect()                  # still gone
        for session in (back, gone):
            broker._sessions[session.client_id] = (session, None)
            broker._subscriptions[f"tt/v1/b/{session.client_id}/cmd"] = [(session, 1)]
        await broker._cleanup_session("B3")
        await broker._cleanup_session("B4")
        assert broker._sessions == {"B3": (back, None)}
        assert broker._subscriptions.get("tt/v1/b/B3/cmd") == [(back, 1)]
        assert not broker._subscriptions.get("tt/v1/b/B4/cmd")
        broker._tt_shutting_down = True                # what shutdown() sets first
        await broker._cleanup_session("B3")
        assert broker._sessions == {}
    asyncio.run(main())


def test_the_subscriptions_index_follows_the_filters_added_and_removed() -> None:
    from amqtt.broker import Broker

    from tabletimer.hub.broker.broker_child import SnapshotDict

    d = SnapshotDict({"a/b": [1], "a/+": [2]})
    d["a/#"] = [3]
    d["c/d"] = [4]
    match = lambda t, f: Broker._matches(Broker.__new__(Broker), t, f)      # noqa: E731  (amqtt's own test)
    assert d.matching("a/b", match) == [("a/b", [1]), ("a/+", [2]), ("a/#", [3])]
    del d["a/+"]
    assert d.matching("a/b", match) == [("a/b", [1]), ("a/#", [3])]
    assert d.matching("c/d", match) == [("c/d", [4])]
    assert d.matching("x", match) == []
    d.clear()
    assert d.matching("a/b", match) == []


TAKEOVER_SCRIPT = r'''
import asyncio, socket, sys, time
from amqtt.broker import Broker
from tabletimer.hub.broker.broker import free_port
from tabletimer.hub.broker.broker_child import guard_amqtt, patch_amqtt

def connect_packet(cid):
    body = b"\x00\x04MQTT\x04\x02\x00\x1e" + len(cid).to_bytes(2, "big") + cid
    return bytes([0x10, len(body)]) + body

async def main():
    port = free_port()
    guard_amqtt(None, 1 << 20, lambda text: None)
    broker = Broker({"listeners": {"default": {"type": "tcp", "bind": f"127.0.0.1:{port}"}}})
    patch_amqtt(broker)
    await broker.start()
    loop = asyncio.get_running_loop()

    def client(cid):
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        s.sendall(connect_packet(cid))
        assert s.recv(4)[:2] == b"\x20\x02", "no CONNACK"
        return s
    old = await loop.run_in_executor(None, client, b"B3")
    while "B3" not in broker._sessions:
        await asyncio.sleep(0.01)
    broker._sessions["B3"][0].transitions.disconnect()   # a state in which amqtt does not close it
    new = await loop.run_in_executor(None, client, b"B3")

    def closed_within(s, seconds):
        s.settimeout(seconds)
        try:
            return s.recv(1) == b""
        except ConnectionResetError:
            return True
        except socket.timeout:
            return False
    print("old closed:", await loop.run_in_executor(None, closed_within, old, 5))
    print("new open:", not await loop.run_in_executor(None, closed_within, new, 0.5))
    old.close(); new.close()
    await broker.shutdown()

asyncio.run(main())
'''


def test_a_second_connection_with_a_client_id_closes_the_first_whatever_amqtts_state(tmp_path) -> None:
    """A flake hunt beside CPU burners once saw board B3's old connection
    stay open after a stranger took its client id (the board deaf for 40 s,
    until its keepalive): the takeover relied on amqtt's session saying
    "connected".  The old connection is now cut whatever amqtt's state,
    here one it would not have closed; the new one stays."""
    import subprocess
    import sys

    script = tmp_path / "takeover.py"
    script.write_text(TAKEOVER_SCRIPT)
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "old closed: True" in r.stdout and "new open: True" in r.stdout, r.stdout + r.stderr


HUNG_SHUTDOWN = """
import asyncio, sys
import amqtt.broker

async def never_ends(self):                 # as amqtt's did: a handler's stop awaited for ever
    await asyncio.Event().wait()

amqtt.broker.Broker.shutdown = never_ends
from tabletimer.hub.broker.broker_child import serve
serve(sys.argv[1], "")
"""


def test_a_broker_whose_hub_died_ends_even_when_amqtts_shutdown_hangs(tmp_path) -> None:
    """A hub SIGKILLed in a takeover drill left its embedded broker running
    for minutes: amqtt's shutdown never ended and the broker went on
    answering the board's pings, so the board never moved to the standby's
    address.  The hub gone (its end of the broker's stdin closed), the
    broker now ends after a bounded wait, closing its clients' connections,
    whatever amqtt does."""
    import subprocess
    import sys

    from tabletimer.hub.broker.broker import EmbeddedBroker, wait_port
    from tabletimer.hub.broker.broker_child import SHUTDOWN_S

    EmbeddedBroker(tmp_path / "broker").start().stop()      # its configuration, written as the hub would
    script = tmp_path / "hung.py"
    script.write_text(HUNG_SHUTDOWN)
    conf = tmp_path / "broker" / "amqtt.json"
    port = int(__import__("json").loads(conf.read_text())["listeners"]["default"]["bind"].rsplit(":", 1)[1])
    proc = subprocess.Popen([sys.executable, str(script), str(conf)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        wait_port("127.0.0.1", port, 20, proc)
        board = _client("board", port)
        gone = threading.Event()
        board.on_disconnect = lambda *a: gone.set()
        proc.stdin.close()                                   # the hub dies
        assert gone.wait(SHUTDOWN_S + 10), "the board stayed connected to a broker without a hub"
        assert proc.wait(10) == 0
        assert b"did not end" in proc.stdout.read()
        board.loop_stop()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
