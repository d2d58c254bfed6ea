# Portable tests of firmware/signals.py: the patterns, packed in one bytes
# string, come back whole and in range (docs/firmware.md lists them).
from signals import LATE_MS, add, steps

NAMES = ("call", "acked", "count", "confirm_armed", "void_armed", "confirmed", "voided", "stray",
         "start", "rotate", "warn", "time_up", "offline", "config_error", "identify")


def test_every_pattern_decodes_in_range():
    for name in NAMES:
        st = list(steps(name))
        assert st, name
        for freq, ms in st:
            assert freq == 0 or 300 <= freq <= 3000, (name, freq)
            assert 10 <= ms <= 2000, (name, ms)


def test_some_patterns_as_documented():
    assert list(steps("call")) == [(2500, 80)]
    assert list(steps("acked")) == [(2500, 60), (0, 60), (2500, 60)]
    assert list(steps("confirmed")) == [(1500, 100), (2000, 100), (2500, 200)]
    assert list(steps("time_up")) == [(1200, 2000)]
    assert list(steps("config_error")) == [(500, 150), (0, 150), (500, 150), (0, 150), (500, 600), (0, 1500)]
    assert list(steps("identify")) == [(3000, 100), (0, 100)] * 10
    assert LATE_MS == 150


def test_unknown_name_is_an_error():
    try:
        list(steps("fanfare"))
    except ValueError:
        return
    raise AssertionError("an unknown pattern played")


def test_at_most_four_sounds_wait_and_an_acks_beep_gives_way_to_the_person_at_the_button():
    waiting = []
    for _ in range(5):
        add(waiting, "acked")
    assert waiting == ["acked"] * 4                  # a fifth ack: dropped
    add(waiting, "count")                          # a referee's count: heard, an ack's beep not
    add(waiting, 3)                                # the confirm's three blips
    assert waiting == ["acked", "acked", "count", 3]
    add(waiting, "acked")
    assert waiting == ["acked", "acked", "count", 3]
    full = ["call", "stray", "count", 2]
    add(full, "count")                             # nothing to give way: dropped
    assert full == ["call", "stray", "count", 2]
