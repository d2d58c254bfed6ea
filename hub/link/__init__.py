"""The MQTT link between the hub's core and the broker: paho's client, the adapter that hands
messages to the service, and the hub's probe of its own path through the broker."""
