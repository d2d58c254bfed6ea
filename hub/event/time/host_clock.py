"""The laptop's own clocks, read here and nowhere else in the hub (the edge:
what the hub knows of its host's time).

Three clocks, because a laptop's clocks fail in three ways:
- the wall clock (time.time_ns): stepped by NTP or by a person, at any time;
- the awake clock: stops while the laptop sleeps (Linux CLOCK_MONOTONIC,
  macOS CLOCK_UPTIME_RAW: Python's time.monotonic on either);
- the boot clock: counts through sleep and is never stepped (Linux
  CLOCK_BOOTTIME, macOS CLOCK_MONOTONIC, which there counts through sleep).
Hub time runs on the boot clock (event/time/clock.py): a suspend does not stop
it, a stepped wall clock does not move it.  The awake clock is read only to
tell that the laptop slept, and for how long.

`boot_id()` names this boot of the machine: the boot clock's readings
compare only within one boot (it starts again at a reboot).
"""

from __future__ import annotations

import subprocess
import sys
import time
from dataclasses import dataclass
from functools import lru_cache

BRACKET_TRIES = 8       # readings bracketed by two boot-clock ones: the tightest is kept
BRACKET_NS = 50_000     # within 50 µs: as good as it gets

if hasattr(time, "CLOCK_BOOTTIME"):                      # Linux
    BOOT_CLOCK: int | None = time.CLOCK_BOOTTIME
    AWAKE_CLOCK: int | None = time.CLOCK_MONOTONIC
elif sys.platform == "darwin":                          # macOS: MONOTONIC counts through sleep there
    BOOT_CLOCK = time.CLOCK_MONOTONIC
    AWAKE_CLOCK = getattr(time, "CLOCK_UPTIME_RAW", None)
else:                                                   # no clock known to count through sleep
    BOOT_CLOCK = AWAKE_CLOCK = None

# whether the hub's clock keeps running while the laptop sleeps (else it is
# the awake clock, and a suspend is found by the boards and the wall clock)
SLEEP_PROOF = BOOT_CLOCK is not None


@dataclass(frozen=True)
class Reading:
    """One instant on the three clocks, in ns."""
    wall_ns: int
    awake_ns: int
    boot_ns: int


def boot_ns() -> int:
    """The boot clock now (ns): the clock hub time runs on."""
    if BOOT_CLOCK is None:
        return time.monotonic_ns()
    return time.clock_gettime_ns(BOOT_CLOCK)


def awake_ns() -> int:
    if AWAKE_CLOCK is None:
        return time.monotonic_ns()
    return time.clock_gettime_ns(AWAKE_CLOCK)


def read() -> Reading:
    """The three clocks at one instant: the wall and awake clocks read
    between two readings of the boot clock and paired with their middle; of
    a few tries, the one whose two boot readings are closest (a process
    preempted between two readings -- 20 ms on a loaded machine -- would put
    the pair that far apart)."""
    best: tuple[int, Reading] | None = None
    for _ in range(BRACKET_TRIES):
        b1 = boot_ns()
        w = time.time_ns()
        a = awake_ns()
        b2 = boot_ns()
        if best is None or b2 - b1 < best[0]:
            best = (b2 - b1, Reading(w, a, (b1 + b2) // 2))
        if best[0] < BRACKET_NS:
            break
    assert best is not None
    return best[1]


@lru_cache(maxsize=1)
def boot_id() -> str:
    """This boot of the machine ('' where it cannot be read): Linux's
    random boot id, macOS's boot session UUID."""
    try:
        if sys.platform == "darwin":
            out = subprocess.run(["sysctl", "-n", "kern.bootsessionuuid"], capture_output=True,
                                 text=True, timeout=5)
            return out.stdout.strip()
        with open("/proc/sys/kernel/random/boot_id") as f:
            return f.read().strip()
    except (OSError, subprocess.SubprocessError):
        return ""
