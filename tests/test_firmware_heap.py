"""The firmware's RAM-saving paths: the MQTT client's fixed receive buffer on
MicroPython (readinto, packets moved to the front, a packet larger than the
buffer read into one of its own) under bursts and long payloads."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from test_mqtt_client import Paho, Device, prefix  # noqa: E402,F401
from test_mqtt_client import device, mosq, paho_factory  # noqa: E402,F401  (fixtures)

import mqtt_client  # noqa: E402  (firmware/ is on sys.path via test_mqtt_client)


def test_mpy_receive_buffer_bursts_and_long_payloads(device, paho_factory):
    pre = prefix()
    paho = paho_factory()
    paho.subscribe(pre + "/#")
    dev = device(pre)
    dev.expect(ev="connected", n=1)
    dev.expect(ev="birth")
    # longer than the buffer, exactly around its size, and a burst of short
    # ones that arrive several to a read
    sizes = [3000, mqtt_client.RX_BUF - 40, mqtt_client.RX_BUF, 5] + [10 + i for i in range(40)] + [2500, 7]
    texts = [("%d-" % i + "x" * n)[:max(n, 4)] for i, n in enumerate(sizes)]
    for t in texts:
        paho.c.publish(pre + "/cmd", "q1:" + t, qos=1)
    got, echoed = [], 0
    while len(got) < len(texts) or echoed < len(texts):
        d = dev.expect()           # the next line, whatever it is
        if d.get("ev") == "msg":
            got.append(d["payload"])
        elif d.get("ev") == "echo":
            assert d["ok"] is True  # and it still sends: each echoed back
            echoed += 1
    assert got == ["q1:" + t for t in texts]
