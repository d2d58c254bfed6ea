# The board's sound and light language.  Each pattern is a sequence of
# (frequency Hz, duration ms) steps; frequency 0 is silence.  The LED is lit
# while the buzzer sounds.  docs/firmware.md lists them for referees.
#
# Stored compactly (the board's RAM holds every constant of a loaded module):
# each pattern is a bytes string of step pairs, frequency in units of 100 Hz
# and duration in units of 10 ms; steps() gives them back in Hz and ms.  The
# comment beside each is the same pattern in Hz x ms.

PATTERNS = {
    # feedback to the person at the button
    "call": b"\x19\x08",                    # 2500x80: call registered locally
    "acked": b"\x19\x06\x00\x06\x19\x06",   # 2500x60, 0x60, 2500x60: the hub has it
    "count": b"\x12\x04",                   # 1800x40: one missing piece counted
    "confirm_armed": b"\x1e\x03",           # 3000x30: release now to confirm
    "void_armed": b"\x08\x03",              # 800x30: release now to void
    "confirmed": b"\x0f\x0a\x14\x0a\x19\x14",   # 1500x100, 2000x100, 2500x200: referee confirmed
    "voided": b"\x19\x0a\x14\x0a\x0f\x14",      # 2500x100, 2000x100, 1500x200: call voided
    "stray": b"\x04\x0f",                   # 400x150: not running, press noted only
    # hall signals, fired on the synchronised clock
    "start": b"\x14\x64",                   # 2000x1000
    "rotate": b"\x16\x1e\x00\x14\x16\x1e\x00\x14\x16\x1e",   # (2200x300, 0x200) x2, 2200x300
    "warn": b"\x10\x32\x00\x1e\x10\x32",    # 1600x500, 0x300, 1600x500
    "time_up": b"\x0c\xc8",                 # 1200x2000
    # board state
    "offline": b"\x00\x5a\x03\x0a",         # 0x900, 300x100: repeated while the link is down
    "config_error": b"\x05\x0f\x00\x0f\x05\x0f\x00\x0f\x05\x3c\x00\x96",
    # ^ 500x150, 0x150, 500x150, 0x150, 500x600, 0x1500
    "identify": b"\x1e\x0a\x00\x0a" * 10,   # (3000x100, 0x100) x10
}

LATE_MS = 150      # a scheduled signal later than this (delivery, boot) is skipped


def steps(name):
    """The pattern's steps as (frequency Hz, duration ms)."""
    p = PATTERNS[name]
    for i in range(0, len(p), 2):
        yield p[i] * 100, p[i + 1] * 10


def duration(name):
    return sum(ms for _, ms in steps(name))
