"""The benches' own MQTT client: a paho client connected as the hub's is
(TCP_NODELAY), for the broker round trip, the signed boards and the
messages the benches publish to boards directly."""

from __future__ import annotations


def paho_client(client_id: str):
    """A paho client with TCP_NODELAY, like the hub's (tiny messages would
    otherwise wait up to 40 ms for Nagle's algorithm and delayed ACKs)."""
    import paho.mqtt.client as mqtt
    from tabletimer.hub.link.mqtt_adapter import no_delay
    c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=client_id)
    c.on_socket_open = no_delay
    return c
