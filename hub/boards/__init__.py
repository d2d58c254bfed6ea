"""The boards' side: the hub service (validate, store, acknowledge, schedule), the hub's half
of the protocol, board keys, replay guard, registry, the MQTT adapter and the brokers."""
