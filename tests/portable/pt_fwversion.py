# Portable tests of firmware/firmware_update.py's version order (issue 44, item 6):
# the board's floor against an older firmware, and the hub's desk, run the
# same function (docs/firmware.md, "Versions").
from firmware_update import older

TMP = None   # set by the runner


def test_numbers_compare_as_numbers_a_missing_one_is_zero():
    assert older("0.9.2", "0.10.0") and not older("0.10.0", "0.9.2")
    assert older("0.3.0", "0.4.0") and older("0.4.0", "1.0.0") and older("1.0.9", "1.1")
    assert not older("1.0", "1.0.0") and not older("1.0.0", "1.0")
    assert not older("0.3.0", "0.3.0")              # the same version: not older (sent again, taken)
    assert older("0.9.9", "0.09.10") and not older("007", "7")


def test_a_suffix_comes_before_the_same_numbers_without_one():
    # the replayed update: 0.8.0-old under a board on 0.9.0, or on 0.8.0
    assert older("0.8.0-old", "0.9.0") and older("0.8.0-old", "0.8.0")
    assert not older("0.8.0", "0.8.0-old") and not older("0.9.0", "0.8.0-old")
    assert older("1.0.0-rc1", "1.0.0") and older("1.0.0+dev", "1.0.0") and older("1.0rc1", "1.0")
    assert not older("0.9.0-ota", "0.8.9")          # the numbers first: a suffix only breaks a tie


def test_two_suffixes_of_the_same_numbers_compare_as_text():
    assert older("0.8.0-old", "0.8.0-rc1") and not older("0.8.0-rc1", "0.8.0-old")
    assert older("1.0.0-rc1", "1.0.0-rc2") and not older("1.0.0-rc2", "1.0.0-rc2")
    assert older("0.9.0-e2e", "0.9.0-ota")


def test_a_version_without_numbers_comes_before_every_numbered_one():
    assert older("dev", "0.0.1") and older("dev", "0") and not older("0.0.1", "dev")
    assert older("", "0.1")
