# Portable tests of firmware/localclock.py with a simulated wrapping tick
# counter (the ESP32's ticks_ms period is 2**30; the unix port never wraps in
# a test's lifetime).
from localclock import LocalClock

PERIOD = 1 << 30


class FakeTicks:
    def __init__(self, start):
        self.t = start

    def ticks_ms(self):
        return self.t % PERIOD

    def ticks_diff(self, a, b):
        d = (a - b) % PERIOD
        return d - PERIOD if d >= PERIOD // 2 else d


def test_unwraps_across_the_period():
    ft = FakeTicks(PERIOD - 500)
    c = LocalClock(ft.ticks_ms, ft.ticks_diff)
    assert c.now() == 0
    ft.t += 300
    assert c.now() == 300
    ft.t += 400                      # raw ticks wrapped to 200
    assert ft.ticks_ms() == 200
    assert c.now() == 700
    for _ in range(5):               # many periods, sampled often enough
        ft.t += PERIOD // 4
        c.now()
    assert c.now() == 700 + 5 * (PERIOD // 4)


def test_ticks_captured_earlier_convert_backwards():
    ft = FakeTicks(PERIOD - 10)
    c = LocalClock(ft.ticks_ms, ft.ticks_diff)
    irq_ticks = ft.ticks_ms()        # captured in the interrupt
    ft.t += 25                       # handled 25 ms later, after a wrap
    assert c.now() == 25
    assert c.at(irq_ticks) == 0
