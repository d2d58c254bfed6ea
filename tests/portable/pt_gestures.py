# Portable tests of firmware/gestures.py: debouncing and hold classification.
from gestures import Debouncer, classify

PRESSED, RELEASED = 1, 0
SHORT, CONFIRM, VOID = None, "confirm", "void"


def feed(d, edges):
    for level, t in edges:
        d.edge(level, t)


def test_bouncy_press_is_one_press_at_the_first_edge():
    d = Debouncer(30)
    feed(d, [(PRESSED, 1000), (RELEASED, 1003), (PRESSED, 1005), (RELEASED, 1009), (PRESSED, 1012)])
    assert d.poll(1030) is None                  # still settling (last edge 1012)
    assert d.settles_at() == 1042
    assert d.poll(1042) == (PRESSED, 1000)
    assert d.poll(1100) is None                  # reported once


def test_glitch_that_settles_back_is_ignored():
    d = Debouncer(30)
    feed(d, [(PRESSED, 100), (RELEASED, 102)])
    assert d.poll(200) is None
    assert d.stable == RELEASED


def test_a_press_read_late_with_its_release_is_a_press_not_a_glitch():
    """The inputs task ran late (another task held the loop): the press and
    its release, 80 ms apart, are read together 200 ms after the press.  The
    press had settled before the release came: two transitions, each at its
    first edge, not a glitch that settled back."""
    d = Debouncer(30)
    assert d.edge(PRESSED, 1000) is None
    assert d.edge(RELEASED, 1080) == (PRESSED, 1000)
    assert d.poll(1200) == (RELEASED, 1080)
    assert d.poll(1300) is None
    # a bounce inside the settling time is still one burst
    assert d.edge(PRESSED, 2000) is None and d.edge(RELEASED, 2010) is None
    assert d.edge(PRESSED, 2020) is None
    assert d.poll(2100) == (PRESSED, 2000)


def test_bouncy_release_is_stamped_at_its_first_edge():
    d = Debouncer(30)
    feed(d, [(PRESSED, 0)])
    assert d.poll(30) == (PRESSED, 0)
    feed(d, [(RELEASED, 500), (PRESSED, 503), (RELEASED, 507)])
    assert d.poll(540) == (RELEASED, 500)


def test_classify_by_hold():
    assert classify(80, 2000, 6000) == SHORT
    assert classify(1999, 2000, 6000) == SHORT
    assert classify(2000, 2000, 6000) == CONFIRM
    assert classify(5999, 2000, 6000) == CONFIRM
    assert classify(6000, 2000, 6000) == VOID
    assert classify(500, confirm_ms=400, void_ms=900) == CONFIRM
