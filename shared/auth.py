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

try:
    from micropython import const
except ImportError:   # CPython
    def const(v):
        return v

_KEY_BYTES = const(32)
_MAC_HEX = const(64)
_PROOF = const(16)     # a hub term's proof: bytes (32 hex digits on the wire)
_TERMS = const(64)     # the hub terms an event's chain of proofs holds (hub_secret.TERMS)


class AuthError(ValueError):
    pass


class Signer:
    """HMAC-SHA256 with one key; the padded keys are computed once."""

    def __init__(self, key):
        if isinstance(key, str):
            key = parse_key(key)
        if len(key) > 64:
            key = hashlib.sha256(key).digest()
        self._ipad = bytearray(64)
        self._opad = bytearray(64)
        for i in range(64):             # the key, zero-padded to 64 bytes
            k = key[i] if i < len(key) else 0
            self._ipad[i] = k ^ 0x36
            self._opad[i] = k ^ 0x5C

    # HMAC streamed: start() gives the inner hash (update() it with the
    # message as it comes: a firmware's files, chunk by chunk), end() the
    # MAC of what it was fed.  (start, end: names the interpreter has
    # already, no qstr in the board's RAM.)
    def start(self):
        """The HMAC's inner hash, the key's inner pad fed: feed it the
        message with update(), then give it to end()."""
        return hashlib.sha256(self._ipad)

    def end(self, sha256):
        """The HMAC-SHA256 (32 bytes) of what the hash start() gave was fed
        (the argument's name is one the interpreter has already)."""
        outer = hashlib.sha256(self._opad)
        outer.update(sha256.digest())
        return outer.digest()

    def mac(self, data, topic=None):
        """HMAC-SHA256 of data; with a topic, of topic + "\\n" + data (the
        parts fed in turn: no copy of the message on the board's heap)."""
        inner = self.start()
        if topic is not None:
            inner.update(topic.encode())
            inner.update(b"\n")
        inner.update(data)
        return self.end(inner)

    def sign(self, topic, body):
        """body: bytes (the JSON text) -> the signed payload."""
        return b"\n".join((body, binascii.hexlify(self.mac(body, topic))))

    def open(self, topic, payload):
        """The signed payload (bytes, or a memoryview of them: the board's
        MQTT client gives one) -> its body, of the same kind (a view: no copy
        on the board's heap), or AuthError."""
        cut = len(payload) - _MAC_HEX - 1
        if cut < 0 or payload[cut] != 10:        # body, "\n", the MAC in hex
            raise AuthError("unsigned or malformed signature")
        body = payload[:cut]
        hexmac = bytes(payload[cut + 1:])
        if hexmac != hexmac.lower():
            raise AuthError("signature must be lowercase hex")
        try:
            got = binascii.unhexlify(hexmac)
        except ValueError:
            raise AuthError("signature is not hex")
        if not equal(got, self.mac(body, topic)):
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
    if len(key) != _KEY_BYTES:
        raise AuthError("key must be %d bytes (%d hex digits)" % (_KEY_BYTES, 2 * _KEY_BYTES))
    return key



def proves(a, steps, b):
    """Whether a (hex) is the proof of the hub term `steps` (1.._TERMS)
    above the term whose proof b (hex) is: hashed `steps` times (each time
    the first 16 bytes of SHA-256), a is b.  The hubs make the chain from
    their secret (hub/protocol/hub_secret.py): nobody without it can make a
    term's proof before a hub has used it (docs/protocol.md, "Hub terms")."""
    if not 0 < steps <= _TERMS:
        return False
    try:
        a = binascii.unhexlify(a)
        b = binascii.unhexlify(b)
    except (ValueError, TypeError):
        return False
    if len(a) != _PROOF:
        return False
    for _ in range(steps):
        a = hashlib.sha256(a).digest()[:_PROOF]
    return equal(a, b)
