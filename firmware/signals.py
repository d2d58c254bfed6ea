# The board's sound and light language.  Each pattern is a tuple of
# (frequency Hz, duration ms) steps; frequency 0 is silence.  The LED is lit
# while the buzzer sounds.  docs/firmware.md lists them for referees.

PATTERNS = {
    # feedback to the person at the button
    "call": ((2500, 80),),                                  # call registered locally
    "acked": ((2500, 60), (0, 60), (2500, 60)),             # the hub has it
    "count": ((1800, 40),),                                 # one missing piece counted
    "confirm_armed": ((3000, 30),),                         # release now to confirm
    "void_armed": ((800, 30),),                             # release now to void
    "confirmed": ((1500, 100), (2000, 100), (2500, 200)),   # referee confirmed
    "voided": ((2500, 100), (2000, 100), (1500, 200)),      # call voided
    "stray": ((400, 150),),                                 # not running: press noted only
    # hall signals, fired on the synchronised clock
    "start": ((2000, 1000),),
    "rotate": ((2200, 300), (0, 200), (2200, 300), (0, 200), (2200, 300)),
    "warn": ((1600, 500), (0, 300), (1600, 500)),
    "time_up": ((1200, 2000),),
    # board state
    "offline": ((0, 900), (300, 100)),                      # repeated while the link is down
    "config_error": ((500, 150), (0, 150), (500, 150), (0, 150), (500, 600), (0, 1500)),
    "identify": ((3000, 100), (0, 100)) * 10,
}

LATE_MS = 150      # a scheduled signal later than this (delivery, boot) is skipped


def duration(name):
    return sum(ms for _, ms in PATTERNS[name])
