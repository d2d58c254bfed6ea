"""The hub's MQTT client (hub/link/mqtt_client.py) sends messages in the
order they were published across a reconnection.

paho 2.2.0 calls on_connect and only then sends again the QoS 1 messages
the broker had not acknowledged (sent before the cut, or published while
cut off); and a publish made between the socket's
opening and the CONNACK is written at once, before those.  A board takes a
command only above the last counter it took: the older ones, arriving
after, were dropped (tests/e2e/test_hub_reconnect_order.py shows it on a
board).  Real brokers; the client's link through the network impairment
proxy (tools/testing/netimpair.py): cut, then restored with the broker's
answers held back (the CONNACK late), while a plain subscriber listens."""

from __future__ import annotations

import paho.mqtt.client as mqtt

from waiting import until
from tabletimer.hub.link.mqtt_client import HubClient
from tabletimer.tools.testing.netimpair import NetImpair

TOPIC = "order/test"
CONNACK_LATE_MS = 600       # the broker -> client direction's delay once the link is back
STALL_MS = 500              # the client -> broker direction held (less than paho's reconnect delay: 1 s)


def listener(broker) -> tuple[mqtt.Client, list[bytes]]:
    got: list[bytes] = []
    subscribed: list[int] = []
    c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="order-listener", clean_session=True)
    c.on_message = lambda cl, u, m: got.append(m.payload)
    c.on_subscribe = lambda *a: subscribed.append(1)
    c.on_connect = lambda cl, *a: cl.subscribe(TOPIC, 1)
    c.connect(broker.host, broker.port, keepalive=30)
    c.loop_start()
    until(lambda: subscribed, "the listener's subscription")
    return c, got


def test_messages_leave_in_the_order_published_across_a_reconnection(broker):
    sub, got = listener(broker)
    with NetImpair(upstream=(broker.host, broker.port), seed=1) as net:
        port = net.port_for("hub")
        connects: list[int] = []
        c = HubClient(mqtt.CallbackAPIVersion.VERSION2, client_id="order-hub", clean_session=True)
        c.max_queued_messages_set(0)
        c.max_inflight_messages_set(0)
        c.reconnect_delay_set(min_delay=1, max_delay=2)

        def on_connect(client, userdata, flags, reason_code, properties) -> None:
            connects.append(1)
            if len(connects) == 2:          # the reconnection: published from on_connect (the hub's "online")
                client.publish(TOPIC, b"4 on_connect", qos=1)
        c.on_connect = on_connect
        try:
            c.connect_async("127.0.0.1", port, keepalive=30)
            c.loop_start()
            until(lambda: connects, "the client's first connection")
            c.publish(TOPIC, b"0 connected", qos=1)
            until(lambda: got == [b"0 connected"], "the first message through", seen=lambda: got)

            net.stall("hub", STALL_MS, "up")          # written, never reaching the broker (cut below)
            c.publish(TOPIC, b"1 not acknowledged", qos=1)
            until(lambda: not c.want_write(), "the message written to the socket")
            net.down("hub")
            until(lambda: not c.is_connected(), "the client cut off")
            c.publish(TOPIC, b"2 cut off", qos=1)
            net.set("hub", down_ms=CONNACK_LATE_MS)
            sock = c.socket()
            net.up("hub")
            # the socket open again (CONNECT sent), its CONNACK not yet back
            until(lambda: c.socket() not in (None, sock) and not connects[1:], "the client's new socket")
            c.publish(TOPIC, b"3 before the connack", qos=1)
            until(lambda: len(got) >= 5, "the messages through", timeout=15, seen=lambda: got)
            assert len(connects) == 2, "the CONNACK came before the last publish: not the case tested"
            assert got == [b"0 connected", b"1 not acknowledged", b"2 cut off", b"3 before the connack",
                           b"4 on_connect"], got
        finally:
            c.disconnect()
            c.loop_stop()
            sub.disconnect()
            sub.loop_stop()
