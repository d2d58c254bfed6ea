# Portable tests of firmware/hub_order.py: which of its hub's commands a
# board takes (the boot and install named, the hub's term and its proof,
# the counter rising, the clock-jump bound), on MicroPython and CPython.
import binascii
import hashlib

from auth import AuthError
from hub_order import check

# App.hub_ctr's fields and check()'s answer, as hub_order.py names them
CTR, BASE, JUMP, TERM, PROOF = 0, 1, 2, 3, 4
SAVE, TOOK_OVER = 1, 2
JUMP_MS = 300000
BOOT, BI = 3, "0a1b"


def proofs(n=8):
    # a hub's chain of term proofs (hub/protocol/hub_secret.py): term k's,
    # hashed once (SHA-256's first 16 bytes), is term k-1's
    chain = [hashlib.sha256(b"the hubs' secret").digest()[:16]]
    for _ in range(n - 1):
        chain.append(hashlib.sha256(chain[-1]).digest()[:16])
    chain.reverse()                      # chain[0]: term 1's
    return [None] + [binascii.hexlify(p).decode() for p in chain]


P = proofs()


def held(term=1, proof=None):
    # what App holds at boot: no counter taken, the saved schedule's term
    return [0, None, 0, term, proof]


def cmd(ctr, term=1, proof=None, boot=BOOT, bi=BI, typ="identify"):
    m = {"v": 1, "type": typ, "exp": 0, "bt": boot, "bi": bi, "term": term}
    if ctr is not None:
        m["ctr"] = ctr
    if proof is not None:
        m["hash"] = proof
    return m


def sched(ev="e1", term=1, proof=None):
    m = {"v": 1, "type": "sched", "id": 7, "start": None, "end": None, "signals": [], "ev": ev, "term": term}
    if proof is not None:
        m["hash"] = proof
    return m


def refused(h, msg, now, sc=None, why=""):
    try:
        check(h, msg, now, BOOT, BI, sc)
    except AuthError as e:
        assert why in str(e), (why, str(e))
        return
    raise AssertionError("taken: %r" % (msg,))


def test_a_counter_must_rise_within_a_term():
    h = held()
    assert check(h, cmd(5000), 1000, BOOT, BI, None) == 0
    assert h == [5000, 4000, 0, 1, None]            # the base: the counter less the local time
    refused(h, cmd(5000), 1100, why="replayed or unnumbered")
    refused(h, cmd(4999), 1100, why="replayed or unnumbered")
    refused(h, cmd(None), 1100, why="replayed or unnumbered")
    assert h == [5000, 4000, 0, 1, None]
    assert check(h, cmd(5001), 1100, BOOT, BI, None) == 0
    assert h[CTR] == 5001 and h[BASE] == 4000


def test_a_command_for_another_boot_is_refused_before_any_counter_moves():
    h = held(1, P[1])
    sc = {"ev": "e1", "term": 1, "hash": P[1]}
    for m in (cmd(10 ** 12, boot=BOOT - 1), cmd(10 ** 12, bi="ffff"), cmd(10 ** 12, bi=None),
              cmd(10 ** 12, term=2, proof=P[2], boot=BOOT + 1)):      # a higher term's too
        refused(h, m, 1000, sc, why="for boot")
    assert h == [0, None, 0, 1, P[1]] and sc == {"ev": "e1", "term": 1, "hash": P[1]}
    # this boot's hub is the one that sets the base: a counter far below the replayed ones
    assert check(h, cmd(2000), 1000, BOOT, BI, sc) == 0
    assert h == [2000, 1000, 0, 1, P[1]]


def test_an_old_term_is_refused():
    h = held(3, P[3])
    sc = {"ev": "e1", "term": 3, "hash": P[3]}
    refused(h, cmd(10 ** 9, term=2, proof=P[2]), 0, sc, why="an old hub's (term 2, not 3)")
    refused(h, cmd(10 ** 9), 0, sc, why="an old hub's (term 1, not 3)")
    refused(h, sched("e1", 2, P[2]), 0, sc, why="an old hub's")     # its schedule too
    assert h == [0, None, 0, 3, P[3]] and sc["term"] == 3


def test_a_new_term_needs_a_valid_proof():
    h = held(1, P[1])
    h[CTR], h[BASE] = 9000, 8000
    sc = {"ev": "e1", "term": 1, "hash": P[1]}
    refused(h, cmd(100, term=2), 1000, sc, why="term 2 without a hub's proof")
    refused(h, cmd(100, term=2, proof=P[3]), 1000, sc, why="without a hub's proof")   # another term's
    refused(h, cmd(100, term=2, proof="zz"), 1000, sc, why="without a hub's proof")
    refused(h, cmd(100, term=2, proof=P[1]), 1000, sc, why="without a hub's proof")   # the held one
    assert h == [9000, 8000, 0, 1, P[1]] and sc == {"ev": "e1", "term": 1, "hash": P[1]}
    # proven: taken, its counters afresh (a counter below the old hub's), the schedule keeps it
    assert check(h, cmd(100, term=2, proof=P[2]), 1000, BOOT, BI, sc) == SAVE | TOOK_OVER
    assert h == [100, -900, 0, 2, P[2]] and sc == {"ev": "e1", "term": 2, "hash": P[2]}
    refused(h, cmd(10 ** 9), 1000, sc, why="an old hub's (term 1, not 2)")        # the old primary
    # terms skipped (2 -> 5): proven by hashing down three times
    assert check(h, cmd(50, term=5, proof=P[5]), 2000, BOOT, BI, None) == TOOK_OVER   # no schedule to save
    assert h == [50, -1950, 0, 5, P[5]]


def test_a_refused_command_of_a_new_term_takes_nothing():
    # proven, but unnumbered: the term is not taken, nothing written
    h = held(1, P[1])
    sc = {"ev": "e1", "term": 1, "hash": P[1]}
    refused(h, cmd(None, term=2, proof=P[2]), 1000, sc, why="unnumbered")
    assert h == [0, None, 0, 1, P[1]] and sc["term"] == 1


def test_the_clock_jump_bound():
    h = held(1, P[1])
    assert check(h, cmd(10000), 0, BOOT, BI, None) == 0          # base 10000
    # ahead of the board's clock by the bound more than the first (and 1 ms a second: drift)
    now = 1000
    assert check(h, cmd(10000 + now + JUMP_MS + 1), now, BOOT, BI, None) == 0
    refused(h, cmd(10000 + now + JUMP_MS + 2), now, why="counter jump (%d)" % (10000 + now + JUMP_MS + 2))
    assert h[JUMP] == 10000 + now + JUMP_MS + 2                   # reported at the next sync
    assert h[CTR] == 10000 + now + JUMP_MS + 1 and h[BASE] == 10000
    now = 3600000                                                  # an hour on: 3.6 s of drift allowed
    assert check(h, cmd(10000 + now + JUMP_MS + 3600), now, BOOT, BI, None) == 0
    refused(h, cmd(10000 + now + JUMP_MS + 3601), now, why="counter jump")
    # the first command of a new term sets its own base: no jump for it
    assert check(h, cmd(10 ** 12, term=2, proof=P[2]), now, BOOT, BI, None) == TOOK_OVER
    assert h[BASE] == 10 ** 12 - now


def test_a_schedule_names_no_boot_and_moves_no_counter():
    h = held()
    h[CTR], h[BASE] = 500, 400
    sc = {"ev": "e1", "term": 1}
    assert check(h, sched("e1"), 1000, BOOT, BI, sc) == 0        # retained: for any boot
    assert h == [500, 400, 0, 1, None]


def test_a_schedule_of_another_event_brings_its_own_terms():
    # a board reused for another event: that event's hub, term 1, after a term 4
    h = held(4, P[4])
    sc = {"ev": "e1", "term": 4, "hash": P[4]}
    assert check(h, sched("e2", 1), 0, BOOT, BI, sc) == 0
    assert h[TERM] == 1 and h[PROOF] is None
    sc = {"ev": "e2", "term": 1}                     # the board holds it (Board.set_schedule)
    # the last event's hub, term 4: not this event's chain, unproven here
    refused(h, cmd(10 ** 9, term=4, proof=P[4]), 0, sc, why="term 4 without a hub's proof")


def test_the_first_proof_a_term_1_hub_gives_is_kept():
    h = held()
    sc = {"ev": "e1", "term": 1}
    assert check(h, sched("e1", 1, P[1]), 0, BOOT, BI, sc) == SAVE
    assert h[PROOF] == P[1] and sc == {"ev": "e1", "term": 1, "hash": P[1]}
    assert check(h, sched("e1", 1, P[1]), 0, BOOT, BI, sc) == 0   # kept already: nothing to save
    h = held()
    assert check(h, sched("e1", 1, P[1]), 0, BOOT, BI, None) == 0   # no schedule held: none saved
    assert h[PROOF] == P[1]
