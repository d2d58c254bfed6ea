"""The protocol-level load generator (issue #19): N boards as light asyncio
MQTT clients in one process, speaking the real signed protocol -- will and
retained birth, clock-sync requests, presses with boot and seq on evt at
QoS 1, the hub's acks verified and the events retired, retransmission after
1, 2, 4, 8 then every 16 s until acked, reconnects -- so that hub and broker
can be measured at hall sizes (300, 1,000, 3,000 boards) without a
MicroPython process per board.

    python -m tabletimer.tools.loadgen --broker mqtt://127.0.0.1:1883 --folder EVENT \\
        --boards 1000 --rate 1000/s --seconds 20

Parts: mqtt.py (a minimal MQTT 3.1.1 codec, pure), board.py (one board's
counters, messages and retransmission schedule, pure), run.py (the
connections and the Generator in one event loop), __main__.py (the command
line).  `tabletimer bench --only loadgen` runs it against the hub
(tools/bench/ingest.py bench_loadgen).

The MQTT client is this package's own codec on asyncio.Protocol, not a
library: what matters is the generator's own CPU per event, since it shares
the machine with hub and broker, and a board's few packet types need no
more (no QoS 2, no sessions).  Its cost is printed with every run (CPU per
event, user and system; docs/benchmarks.md).  A library client (aiomqtt 2.5.1
over the pinned paho-mqtt 2.2.0) was not measured against it.
"""
