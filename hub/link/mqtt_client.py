"""paho-mqtt's client with four of its costs per message cut, for the hub's
hall-scale traffic (issue #19: py-spy showed paho's own work, not the
hub's, taking most of an event's CPU at 1,000 events/s).

paho 2.2.0 (pinned in pyproject.toml: these are its private methods) reads a
packet with three recv() calls (the command byte, the length byte, the
rest), writes each queued packet with a send() of its own, wakes its network
thread with a socket-pair write for every publish made on another thread,
and makes a reason code and a properties object for every PUBACK, even on
MQTT 3.1.1.  Here:

- reads are buffered: one recv() of up to 64 KB, the packets cut from it
  (and every whole packet in the buffer handled before paho selects again:
  the socket may be empty while the buffer is not);
- the packets queued when the network thread writes go out in one send();
- publish_batch() publishes a list of messages with one wake-up of the
  network thread for all of them (paho's lock taken once);
- a PUBACK (MQTT 3.1.1, no on_publish callback: the hub's case) retires its
  message with nothing more made.

And one thing paho does not promise is made to hold: after a reconnection,
messages leave in the order they were published.  paho 2.2.0's
_handle_connack calls on_connect (where the hub numbers and publishes its
"hub online" to each board) and only then sends again the QoS 1 messages the
broker had not acknowledged (commands published while the hub was cut off
among them); and a publish made on another thread between the socket's
opening and the CONNACK is written at once, before those too.  A board takes
a command only above the last counter it took: the older ones were dropped.
Here a message published from the start of a (re)connection until paho has
queued its old ones again is held, and queued behind them.

What paho promises is kept: QoS 1 messages stay in its table until their
PUBACK (sent again after a reconnect), packets leave in the order they were
queued, and a partial send leaves the rest queued in order.
"""

from __future__ import annotations

import struct
import threading
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.client import DISCONNECT, PUBLISH, MQTTErrorCode, MQTTv311, time_func

READ_CHUNK = 65536
# at most this many queued packets in one send (a bounded copy)
WRITE_BATCH = 512


class HubClient(mqtt.Client):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._rbuf = b""
        self._rpos = 0
        self._rsock: object | None = None     # the socket _rbuf was read from
        self._batch = threading.local()       # .on: this thread is inside publish_batch
        self._publishing = threading.local()  # .on: this thread is inside publish (a new message)
        # new messages' packets held from the start of a (re)connection until paho has queued the
        # unacknowledged ones again after the CONNACK (None: not holding); under _out_message_mutex
        self._held: list[Any] | None = None          # (paho's packets: its private _OutPacket)

    # ------------------------------------------------------------ (re)connections
    def reconnect(self) -> MQTTErrorCode:
        """paho's reconnect (its network thread calls it for every
        connection), new messages held from now until the CONNACK's
        re-sends are queued (loop_read).  What the last attempt held is
        dropped as paho drops its queued packets: a QoS 1 message is still
        in paho's table, sent again after this CONNACK in its place; a QoS
        0 one is lost, as paho marks it."""
        with self._out_message_mutex:
            lost, self._held = self._held or [], []
        for p in lost:
            if p["qos"] == 0 and p["info"] is not None:
                p["info"].rc = MQTTErrorCode.MQTT_ERR_CONN_LOST
                p["info"]._set_as_published()
        return super().reconnect()

    def _release_held(self) -> None:
        """Once the CONNACK is handled (paho queued the unacknowledged
        messages again in it, after on_connect): the messages held meanwhile
        queued behind them, in order."""
        if self._held is None or not self.is_connected():
            return
        with self._out_message_mutex:
            held, self._held = self._held, None
            if held:
                self._out_packet.extend(held)

    def publish(self, topic, payload=None, qos=0, retain=False, properties=None):
        p = self._publishing
        p.on = True                            # (paho's re-sends after a CONNACK are not in here)
        try:
            return super().publish(topic, payload, qos=qos, retain=retain, properties=properties)
        finally:
            p.on = False

    # ------------------------------------------------------------ reads
    def _sock_recv(self, bufsize: int) -> bytes:
        if self._rsock is not self._sock:      # another connection: nothing of it read yet
            self._rbuf, self._rpos, self._rsock = b"", 0, self._sock
        if self._rpos >= len(self._rbuf):
            data = super()._sock_recv(READ_CHUNK)     # BlockingIOError when there is nothing
            if len(data) <= bufsize:
                return data                    # (b"": the connection closed)
            self._rbuf, self._rpos = data, 0
        start = self._rpos
        self._rpos = min(start + bufsize, len(self._rbuf))
        return self._rbuf[start:self._rpos]

    def buffered(self) -> int:
        """Bytes read from the socket and not yet handled."""
        return len(self._rbuf) - self._rpos if self._rsock is self._sock else 0

    def loop_read(self, max_packets: int = 1) -> MQTTErrorCode:
        rc = super().loop_read(max_packets)
        self._release_held()
        while rc == MQTTErrorCode.MQTT_ERR_SUCCESS and self._sock is not None and self.buffered():
            rc = super().loop_read(max_packets)
            self._release_held()
        return rc

    # ------------------------------------------------------------ writes
    def _packet_write(self) -> MQTTErrorCode:
        out = self._out_packet
        while len(out) > 1:
            taken: list[Any] = []
            while out and len(taken) < WRITE_BATCH:
                p = out[0]
                kind = p["command"] & 0xF0
                if kind == DISCONNECT or (kind == PUBLISH and p["qos"] == 0 and self.on_publish is not None):
                    break                      # paho's own handling (a callback, the socket closed)
                taken.append(out.popleft())
            if len(taken) < 2:
                out.extendleft(reversed(taken))
                break
            data = b"".join(p["packet"][p["pos"]:] if p["pos"] else p["packet"] for p in taken)
            try:
                sent = self._sock_send(data)
            except (AttributeError, ValueError):
                out.extendleft(reversed(taken))
                return MQTTErrorCode.MQTT_ERR_SUCCESS
            except BlockingIOError:
                out.extendleft(reversed(taken))
                return MQTTErrorCode.MQTT_ERR_AGAIN
            except OSError as err:
                out.extendleft(reversed(taken))
                self._easy_log(mqtt.MQTT_LOG_ERR, "failed to send on socket: %s", err)
                return MQTTErrorCode.MQTT_ERR_CONN_LOST
            for i, p in enumerate(taken):
                if sent >= p["to_process"]:
                    sent -= p["to_process"]
                    p["pos"] += p["to_process"]
                    p["to_process"] = 0
                    if p["command"] & 0xF0 == PUBLISH and p["qos"] == 0 and p["info"] is not None:
                        p["info"]._set_as_published()
                    continue
                p["pos"] += sent                # the rest of it, and the ones after, wait in order
                p["to_process"] -= sent
                out.extendleft(reversed(taken[i:]))
                with self._msgtime_mutex:
                    self._last_msg_out = time_func()
                return MQTTErrorCode.MQTT_ERR_SUCCESS
            with self._msgtime_mutex:
                self._last_msg_out = time_func()
        return super()._packet_write()          # one packet, a DISCONNECT, or none

    def _packet_queue(self, command, packet, mid, qos, info=None) -> MQTTErrorCode:
        if self._held is not None and command & 0xF0 == PUBLISH and getattr(self._publishing, "on", False):
            with self._out_message_mutex:
                if self._held is not None:     # (released meanwhile: queued as usual)
                    self._held.append({"command": command, "mid": mid, "qos": qos, "pos": 0,
                                       "to_process": len(packet), "packet": packet, "info": info})
                    return MQTTErrorCode.MQTT_ERR_SUCCESS
        if self._thread is not None and getattr(self._batch, "on", False):
            self._out_packet.append({"command": command, "mid": mid, "qos": qos, "pos": 0,
                                     "to_process": len(packet), "packet": packet, "info": info})
            return MQTTErrorCode.MQTT_ERR_SUCCESS      # the network thread is woken once, after the batch
        return super()._packet_queue(command, packet, mid, qos, info)

    def publish_batch(self, messages) -> None:
        """Publish (topic, payload, qos, retain) messages, in order, with one
        wake-up of the network thread for all of them."""
        self._batch.on = True
        try:
            with self._out_message_mutex:      # once (publish takes it again: an RLock)
                for topic, payload, qos, retain in messages:
                    self.publish(topic, payload, qos=qos, retain=retain)
        finally:
            self._batch.on = False
        w = self._sockpairW
        if w is not None and self._thread is not None:
            try:
                w.send(mqtt.sockpair_data)
            except (BlockingIOError, OSError):
                pass                           # full: the network thread is woken anyway

    # ------------------------------------------------------------ PUBACK
    def _handle_pubackcomp(self, cmd) -> MQTTErrorCode:
        packet = self._in_packet["packet"]
        if (cmd != "PUBACK" or self._protocol != MQTTv311 or self.on_publish is not None or len(packet) != 2
                or self._max_inflight_messages > 0):
            return super()._handle_pubackcomp(cmd)
        mid, = struct.unpack("!H", packet)
        with self._out_message_mutex:
            msg = self._out_messages.pop(mid, None)
            if msg is not None:
                msg.info._set_as_published()
                if msg.qos > 0:
                    self._inflight_messages -= 1
        return MQTTErrorCode.MQTT_ERR_SUCCESS
