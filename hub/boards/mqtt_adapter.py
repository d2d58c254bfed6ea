"""The hub's MQTT edge (paho-mqtt 2.x, VERSION2 callbacks).

Subscribes in on_connect (so a reconnect resubscribes), stamps each message
with the hub time at arrival, hands it to the service and publishes what the
service returns -- the service has committed the event before that.
"""

from __future__ import annotations

import logging
import socket
import threading

import paho.mqtt.client as mqtt

from tabletimer.shared import protocol

from .hub_protocol import hub_status, hub_subscriptions
from .service import HubService

log = logging.getLogger(__name__)


def no_delay(client, userdata, sock) -> None:
    """paho's on_socket_open: acks and sync replies are tiny; without
    TCP_NODELAY, Nagle's algorithm and delayed ACKs hold them back for up to
    40 ms."""
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    except (OSError, AttributeError):
        pass


class HubMqtt:
    def __init__(self, service: HubService, host: str, port: int,
                 user: str | None = None, password: str | None = None,
                 client_id: str = "tabletimer-hub") -> None:
        self.service = service
        self.host, self.port = host, port
        self.connected = threading.Event()
        c = self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=client_id,
                                      clean_session=True)
        if user:
            c.username_pw_set(user, password)
        c.will_set(protocol.HUB_STATUS, protocol.encode(hub_status(protocol.OFFLINE)),
                   qos=1, retain=True)
        c.reconnect_delay_set(min_delay=1, max_delay=5)
        c.max_queued_messages_set(0)         # unlimited: never drop an ack
        c.max_inflight_messages_set(100)
        c.on_socket_open = no_delay
        c.on_connect = self._on_connect
        c.on_disconnect = self._on_disconnect
        c.on_message = self._on_message
        service.publish = self.publish_all

    def _on_connect(self, client, userdata, flags, reason_code, properties) -> None:
        if reason_code.is_failure:
            log.error("broker refused the hub: %s", reason_code)
            return
        client.subscribe([(t, 1) for t in hub_subscriptions()])
        client.publish(protocol.HUB_STATUS, protocol.encode(hub_status(protocol.ONLINE)),
                       qos=1, retain=True)
        # a broker restarted without persistence has lost the retained schedules
        self.publish_all(self.service.schedules())
        self.publish_all(self.service.hub_online())
        self.connected.set()

    def _on_disconnect(self, client, userdata, flags, reason_code, properties) -> None:
        self.connected.clear()

    def _on_message(self, client, userdata, msg) -> None:
        received = self.service.clock.now_ms()
        try:
            out = self.service.handle(msg.topic, msg.payload, received, retained=bool(msg.retain))
        except Exception:   # never let one message kill the network thread
            log.exception("failed to handle a message on %s", msg.topic)
            return
        self.publish_all(out)

    def publish_all(self, out) -> None:
        for o in out:
            self.client.publish(o.topic, o.payload, qos=o.qos, retain=o.retain)

    def start(self, timeout: float = 10.0) -> None:
        self.client.connect_async(self.host, self.port, keepalive=15)
        self.client.loop_start()
        if not self.connected.wait(timeout):
            self.stop()
            raise ConnectionError(f"could not connect to the MQTT broker at {self.host}:{self.port}")

    def stop(self) -> None:
        if self.connected.is_set():
            info = self.client.publish(protocol.HUB_STATUS,
                                       protocol.encode(hub_status(protocol.OFFLINE)),
                                       qos=1, retain=True)
            try:
                info.wait_for_publish(2)
            except (RuntimeError, ValueError):
                pass
        self.client.disconnect()
        self.client.loop_stop()
