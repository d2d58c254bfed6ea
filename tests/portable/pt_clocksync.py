# Portable tests of shared/clocksync.py.
from clocksync import OffsetEstimator, offset_delay

HOURS = 3 * 3600 * 1000


def exchange(offset, up, down, t1, hold=1):
    """A request leaving the board at local t1, `up` ms to the hub, the hub
    holding it `hold` ms, `down` ms back.  hub = local + offset."""
    t2 = t1 + offset + up
    t3 = t2 + hold
    t4 = t3 - offset + down
    return t1, t2, t3, t4


def test_symmetric_exchange_is_exact():
    off, dly = offset_delay(*exchange(HOURS, 5, 5, 1000))
    assert off == HOURS and dly == 10


def test_asymmetry_error_is_within_half_delay():
    off, dly = offset_delay(*exchange(-HOURS, 2, 30, 1000))
    assert dly == 32
    assert abs(off - -HOURS) <= dly // 2


def test_minimum_delay_sample_wins():
    est = OffsetEstimator(window=4)
    assert not est.ready and est.to_hub(5) is None and est.error_bound() is None
    est.add(*exchange(HOURS, 40, 2, 0))      # bad, asymmetric
    est.add(*exchange(HOURS, 1, 1, 100))     # best
    est.add(*exchange(HOURS, 25, 3, 200))
    assert est.offset == HOURS and est.delay == 2
    assert est.to_hub(10) == HOURS + 10
    assert est.error_bound() == 2


def test_window_forgets_old_best():
    est = OffsetEstimator(window=2)
    est.add(*exchange(HOURS, 1, 1, 0))
    est.add(*exchange(HOURS + 3, 5, 5, 100))
    est.add(*exchange(HOURS + 3, 6, 6, 200))
    assert est.delay == 10 and est.offset == HOURS + 3


def test_negative_delay_rejected():
    est = OffsetEstimator()
    try:
        est.add(0, 100, 200, 50)
    except ValueError:
        return
    raise AssertionError("negative delay accepted")
