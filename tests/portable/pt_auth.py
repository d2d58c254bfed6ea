# Portable tests of shared/auth.py: HMAC-SHA256 against RFC 4231 vectors,
# signing, verification, tampering.
import binascii

import hashlib

from auth import AuthError, Signer, equal, parse_key, proves


def hx(b):
    return binascii.hexlify(b).decode()


def test_rfc4231_case_1_and_2():
    s = Signer(b"\x0b" * 20)
    assert hx(s.mac(b"Hi There")) == \
        "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
    s = Signer(b"Jefe")
    assert hx(s.mac(b"what do ya want for nothing?")) == \
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"


def test_rfc4231_long_key_is_hashed():
    s = Signer(b"\xaa" * 131)
    assert hx(s.mac(b"Test Using Larger Than Block-Size Key - Hash Key First")) == \
        "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"


def test_a_mac_streamed_is_the_mac_of_the_whole():
    # start(), the message fed in parts, end(): what mac() gives of it whole
    # (a firmware's manifest, checked as its chunks come: firmware/firmware_update.py)
    s = Signer(b"Jefe")
    h = s.start()
    for part in (b"what do ya ", b"", b"want for nothing?"):
        h.update(part)
    assert hx(s.end(h)) == \
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
    h = s.start()
    h.update(b"tt/v1/b/t1/evt\n")
    h.update(b'{"a": 1}')
    assert s.end(h) == s.mac(b'{"a": 1}', "tt/v1/b/t1/evt") != s.mac(b'{"a": 1}')


KEY = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"


def expect_auth_error(fn, *args):
    try:
        fn(*args)
    except AuthError:
        return
    raise AssertionError("accepted: %r" % (args,))


def test_sign_and_open():
    s = Signer(KEY)
    p = s.sign("tt/v1/b/t1/evt", b'{"a": 1}')
    assert p.startswith(b'{"a": 1}\n') and len(p) == 8 + 1 + 64
    assert s.open("tt/v1/b/t1/evt", p) == b'{"a": 1}'
    # the board's MQTT client hands over a view into the packet: the body
    # is a view too (no copy on the board's heap), of the same bytes
    packet = b"\x00\x05topic" + p
    body = s.open("tt/v1/b/t1/evt", memoryview(packet)[7:])
    assert isinstance(body, memoryview) and bytes(body) == b'{"a": 1}'
    expect_auth_error(s.open, "tt/v1/b/t1/evt", memoryview(packet)[8:])   # one byte short


def test_tampering_is_detected():
    s = Signer(KEY)
    p = s.sign("tt/v1/b/t1/evt", b'{"a": 1}')
    expect_auth_error(s.open, "tt/v1/b/t2/evt", p)                     # moved topic
    expect_auth_error(s.open, "tt/v1/b/t1/evt", p.replace(b"1", b"2", 1))   # changed body
    expect_auth_error(s.open, "tt/v1/b/t1/evt", b'{"a": 1}')          # unsigned
    expect_auth_error(s.open, "tt/v1/b/t1/evt", b'{"a": 1}\n' + b"zz" * 32)
    other = Signer(KEY.replace("00", "11"))
    expect_auth_error(other.open, "tt/v1/b/t1/evt", p)                 # wrong key


def test_equal_and_keys():
    assert equal(b"abc", b"abc") and not equal(b"abc", b"abd") and not equal(b"ab", b"abc")
    assert len(parse_key(KEY)) == 32
    expect_auth_error(parse_key, "abcd")
    expect_auth_error(parse_key, "zz" * 32)


def chain(p, n):
    for _ in range(n):
        p = hashlib.sha256(p).digest()[:16]
    return p


def test_a_terms_proof_hashes_down_to_the_proof_held():
    # the proof of term 3 hashed once is term 2's, twice term 1's
    p3 = b"\x07" * 16
    p2, p1 = chain(p3, 1), chain(p3, 2)
    assert len(p2) == 16 and chain(p2, 1) == p1 and p3 != p2 != p1
    assert proves(hx(p3), 1, hx(p2)) and proves(hx(p3), 2, hx(p1)) and proves(hx(p2), 1, hx(p1))
    assert not proves(hx(p3), 1, hx(p1))               # one step short
    assert not proves(hx(p1), 1, hx(p2))               # a lower term's proof proves nothing higher
    assert not proves(hx(p2), 0, hx(p2))               # no step: no higher term
    top = b"\x09" * 16
    assert proves(hx(top), 64, hx(chain(top, 64)))      # the chain's 64 terms: the longest way down
    assert not proves(hx(top), 65, hx(chain(top, 65)))  # beyond it: never hashed that far
    # what a forger or a garbled message gives: no proof, never an exception (the board carries on)
    for bad in (None, 7, "", "zz" * 16, hx(p3)[:30], hx(p3 + b"\x00")):
        assert not proves(bad, 1, hx(p2))
    assert not proves(hx(p3), 1, None)
