# Message authenticity: HMAC-SHA256 over topic and body, for MicroPython
# (which has hashlib.sha256 but no hmac module) and CPython alike.
#
# A signed payload is the JSON body, a newline, and 64 hex digits:
#     <body>\n<hex of HMAC-SHA256(key, topic + "\n" + body)>
# The topic is inside the MAC, so a message cannot be moved to another
# board's topic.  Replay protection (counters) is the protocol's job: the
# body carries them, the MAC makes them unforgeable.

import binascii
import hashlib

KEY_BYTES = 32
MAC_HEX = 64


class AuthError(ValueError):
    pass


class Signer:
    """HMAC-SHA256 with one key; the padded keys are computed once."""

    def __init__(self, key):
        if isinstance(key, str):
            key = parse_key(key)
        if len(key) > 64:
            key = hashlib.sha256(key).digest()
        key = key + b"\x00" * (64 - len(key))
        self._ipad = bytes(b ^ 0x36 for b in key)
        self._opad = bytes(b ^ 0x5C for b in key)

    def mac(self, data):
        inner = hashlib.sha256(self._ipad)
        inner.update(data)
        outer = hashlib.sha256(self._opad)
        outer.update(inner.digest())
        return outer.digest()

    def sign(self, topic, body):
        """body: bytes (the JSON text) -> the signed payload."""
        mac = self.mac(topic.encode() + b"\n" + body)
        return body + b"\n" + binascii.hexlify(mac)

    def open(self, topic, payload):
        """The signed payload -> its body, or AuthError."""
        cut = payload.rfind(b"\n")
        if cut < 0 or len(payload) - cut - 1 != MAC_HEX:
            raise AuthError("unsigned or malformed signature")
        body = payload[:cut]
        hexmac = payload[cut + 1:]
        if hexmac != hexmac.lower():
            raise AuthError("signature must be lowercase hex")
        try:
            got = binascii.unhexlify(hexmac)
        except ValueError:
            raise AuthError("signature is not hex")
        if not equal(got, self.mac(topic.encode() + b"\n" + body)):
            raise AuthError("bad signature")
        return body


def equal(a, b):
    """Constant-time comparison of two byte strings."""
    if len(a) != len(b):
        return False
    r = 0
    for i in range(len(a)):
        r |= a[i] ^ b[i]
    return r == 0


def parse_key(text):
    """A board key as written in configuration: 64 hex digits."""
    try:
        key = binascii.unhexlify(text)
    except (ValueError, TypeError):
        raise AuthError("key must be hex digits")
    if len(key) != KEY_BYTES:
        raise AuthError("key must be %d bytes (%d hex digits)" % (KEY_BYTES, 2 * KEY_BYTES))
    return key
