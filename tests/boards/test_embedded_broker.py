"""The embedded broker (amqtt, patched in hub/boards/broker.py): a client gets the
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

    from tabletimer.hub.boards.broker import _patch_amqtt

    async def main() -> None:
        broker = Broker({"listeners": {"default": {"type": "tcp", "bind": "127.0.0.1:0"}}})
        _patch_amqtt(broker)
        old, new = Session(), Session()
        old.client_id = new.client_id = "B092"
        broker._sessions["B092"] = (new, None)
        broker._subscriptions["tt/v1/b/B092/cmd"] = [(old, 1)]      # from before the reconnect
        assert await broker.add_subscription(("tt/v1/b/B092/cmd", 1), new) == 1
        assert broker._subscriptions["tt/v1/b/B092/cmd"] == [(new, 1)]
        assert await broker.add_subscription(("tt/v1/b/B092/cmd", 1), old) == 0x80
        assert broker._subscriptions["tt/v1/b/B092/cmd"] == [(new, 1)]
    asyncio.run(main())
