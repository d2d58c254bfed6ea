"""A minimal MQTT 3.1.1 codec for the load generator: the packets a board
uses (CONNECT with a will and a login, CONNACK, SUBSCRIBE/SUBACK, PUBLISH at
QoS 0 and 1, PUBACK, PINGREQ/PINGRESP, DISCONNECT), as bytes.  Pure: no
sockets (run.py's Conn writes them); no QoS 2, no retained-message
bookkeeping, no persistent session (every board connects clean, as the
firmware does).

Why not a library: see tools/loadgen/__init__.py (what one event costs the
generator with aiomqtt and with this)."""

from __future__ import annotations

import struct

CONNECT, CONNACK, PUBLISH, PUBACK = 1, 2, 3, 4
SUBSCRIBE, SUBACK, PINGREQ, PINGRESP, DISCONNECT = 8, 9, 12, 13, 14

PINGREQ_PACKET = b"\xc0\x00"
DISCONNECT_PACKET = b"\xe0\x00"


class MqttError(ValueError):
    pass


def _length(n: int) -> bytes:
    """The remaining-length field (1..4 bytes, 7 bits each)."""
    out = bytearray()
    while True:
        n, d = n >> 7, n & 0x7F
        out.append(d | 0x80 if n else d)
        if not n:
            return bytes(out)


def _str(s: str | bytes) -> bytes:
    b = s.encode() if isinstance(s, str) else s
    return struct.pack("!H", len(b)) + b


def _packet(first: int, body: bytes) -> bytes:
    return bytes((first,)) + _length(len(body)) + body


def connect(client_id: str, keepalive: int = 60, will: tuple[str, bytes, int, bool] | None = None,
            user: str | None = None, password: str | None = None) -> bytes:
    """CONNECT, clean session; will: (topic, payload, qos, retain)."""
    flags = 0x02
    payload = _str(client_id)
    if will is not None:
        topic, msg, qos, retain = will
        flags |= 0x04 | (qos << 3) | (0x20 if retain else 0)
        payload += _str(topic) + _str(msg)
    if user is not None:
        flags |= 0x80
        payload += _str(user)
        if password is not None:
            flags |= 0x40
            payload += _str(password)
    return _packet(0x10, b"\x00\x04MQTT\x04" + bytes((flags,)) + struct.pack("!H", keepalive) + payload)


def publish(topic: str, payload: bytes, qos: int = 0, pid: int = 0, retain: bool = False,
            dup: bool = False) -> bytes:
    first = 0x30 | (0x08 if dup else 0) | (qos << 1) | (1 if retain else 0)
    head = _str(topic) + (struct.pack("!H", pid) if qos else b"")
    return _packet(first, head + payload)


def puback(pid: int) -> bytes:
    return b"\x40\x02" + struct.pack("!H", pid)


def subscribe(pid: int, filters: list[tuple[str, int]]) -> bytes:
    return _packet(0x82, struct.pack("!H", pid) + b"".join(_str(t) + bytes((q,)) for t, q in filters))


def parse_publish(flags: int, body: bytes) -> tuple[str, bytes, int, int, bool]:
    """A PUBLISH's (topic, payload, qos, packet id or 0, retain)."""
    qos = (flags >> 1) & 3
    n = struct.unpack_from("!H", body)[0]
    topic = body[2:2 + n].decode()
    i = 2 + n
    pid = 0
    if qos:
        pid = struct.unpack_from("!H", body, i)[0]
        i += 2
    return topic, body[i:], qos, pid, bool(flags & 1)


def connack_code(body: bytes) -> int:
    """CONNACK's return code (0: accepted)."""
    if len(body) != 2:
        raise MqttError("CONNACK of %d bytes" % len(body))
    return body[1]


class Decoder:
    """Bytes as they come off a socket -> whole packets (type, flags, body)."""

    __slots__ = ("buf",)

    def __init__(self) -> None:
        self.buf = b""

    def feed(self, data: bytes) -> list[tuple[int, int, bytes]]:
        buf = self.buf + data if self.buf else data
        out = []
        i, end = 0, len(buf)
        while end - i >= 2:
            n, mult, j = 0, 1, i + 1
            while True:
                if j >= end:
                    self.buf = buf[i:]
                    return out
                d = buf[j]
                n += (d & 0x7F) * mult
                j += 1
                if not d & 0x80:
                    break
                mult <<= 7
                if mult > 1 << 21:
                    raise MqttError("malformed remaining length")
            if end - j < n:
                break
            first = buf[i]
            out.append((first >> 4, first & 0x0F, buf[j:j + n]))
            i = j + n
        self.buf = buf[i:] if i < end else b""
        return out
