# The board's sound and light language.  Each pattern is a sequence of
# (frequency Hz, duration ms) steps; frequency 0 is silence.  The LED is lit
# while the buzzer sounds.  docs/firmware.md lists them for referees.
#
# Stored compactly (the board's RAM holds every constant of a loaded module;
# a dict of 15 bytes objects took 2 KB of it): the patterns are one bytes
# string, in the order of _NAMES, each one byte giving its length, then step
# pairs, frequency in units of 100 Hz and duration in units of 10 ms.
# steps() gives them back in Hz and ms.  The comment beside each is the same
# pattern in Hz x ms.  const() with a leading underscore: no global names.

try:
    from micropython import const
except ImportError:   # CPython (the portable tests)
    def const(v):
        return v

_NAMES = const(("call", "acked", "count", "confirm_armed", "void_armed", "confirmed", "voided", "stray",
         "start", "rotate", "warn", "time_up", "offline", "config_error", "identify"))

_STEPS = const(
    # feedback to the person at the button
    b"\x02\x19\x08"                     # call: 2500x80: call registered locally
    b"\x06\x19\x06\x00\x06\x19\x06"     # acked: 2500x60, 0x60, 2500x60: the hub has it
    b"\x02\x12\x04"                     # count: 1800x40: one missing piece counted
    b"\x02\x1e\x03"                     # confirm_armed: 3000x30: release now to confirm
    b"\x02\x08\x03"                     # void_armed: 800x30: release now to void
    b"\x06\x0f\x0a\x14\x0a\x19\x14"     # confirmed: 1500x100, 2000x100, 2500x200: referee confirmed
    b"\x06\x19\x0a\x14\x0a\x0f\x14"     # voided: 2500x100, 2000x100, 1500x200: call voided
    b"\x02\x04\x0f"                     # stray: 400x150: not running, press noted only
    # hall signals, fired on the synchronised clock
    b"\x02\x14\x64"                     # start: 2000x1000
    b"\x0a\x16\x1e\x00\x14\x16\x1e\x00\x14\x16\x1e"   # rotate: (2200x300, 0x200) x2, 2200x300
    b"\x06\x10\x32\x00\x1e\x10\x32"     # warn: 1600x500, 0x300, 1600x500
    b"\x02\x0c\xc8"                     # time_up: 1200x2000
    # board state
    b"\x04\x00\x5a\x03\x0a"             # offline: 0x900, 300x100: repeated while the link is down
    b"\x0c\x05\x0f\x00\x0f\x05\x0f\x00\x0f\x05\x3c\x00\x96"
    # ^ config_error: 500x150, 0x150, 500x150, 0x150, 500x600, 0x1500
    b"\x28\x1e\x0a\x00\x0a\x1e\x0a\x00\x0a\x1e\x0a\x00\x0a\x1e\x0a\x00\x0a\x1e\x0a\x00\x0a"
    b"\x1e\x0a\x00\x0a\x1e\x0a\x00\x0a\x1e\x0a\x00\x0a\x1e\x0a\x00\x0a\x1e\x0a\x00\x0a"
    # ^ identify: (3000x100, 0x100) x10
)

LATE_MS = 150      # a scheduled signal later than this (delivery, boot) is skipped
_WAITING = const(4)  # sounds waiting at most: more is late feedback, and a list growing in RAM


def add(sounds, name):
    """name (a pattern, or an int: that many count blips) into the sounds
    waiting to play (a list, played from its front), at most _WAITING.  When
    it is full, a sound for the person at the button takes the place of the
    first waiting "acked" (the hub's beep: a board sending its journal again
    after a reboot fills the list with them, and a referee counting missing
    pieces must hear each count's blip, or counts one twice); else it is
    dropped."""
    if len(sounds) >= _WAITING:
        if name == "acked" or "acked" not in sounds:
            return
        sounds.remove("acked")
    sounds.append(name)


def steps(name):
    """The pattern's steps as (frequency Hz, duration ms); ValueError for
    an unknown name."""
    p, i = _STEPS, 0
    for _ in range(_NAMES.index(name)):
        i += 1 + p[i]
    for j in range(i + 1, i + 1 + p[i], 2):
        yield p[j] * 100, p[j + 1] * 10
