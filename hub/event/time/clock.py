"""The hub clock: "hub time", integer milliseconds since 1970-01-01 UTC, on
the round's time base (time_base.py): the base's offset plus the laptop's
boot clock (host_clock.py), which counts through sleep and is never
stepped.  So a laptop that sleeps mid-round, or whose clock NTP (or a
person) steps, does not move recorded times.

`HubClock()` takes its base from the wall clock; `HubClock.for_log(rows)`
from the log's clock rows (this boot's latest anchor: the running hub's
time, for every process on this laptop), as time_base.choose_base says.
The base moves only by `adopt`: another round's of this boot, or the
boards' (they kept another: a new generation).
"""

from __future__ import annotations

from . import host_clock
from .time_base import CLOCK_ROW, Base, Chosen, choose_base, clock_row_problem, wall_base


def clock_rows(rows: list[dict]) -> list[dict]:
    """The payloads of the log's readable clock rows."""
    return [r["payload"] for r in rows if r.get("source") == "hub" and r.get("type") == CLOCK_ROW
            and isinstance(r.get("payload"), dict) and clock_row_problem(r["payload"]) is None]


class HubClock:
    def __init__(self, base: Base | None = None) -> None:
        if base is None:
            r = host_clock.read()
            base = wall_base(r.wall_ns, r.boot_ns)
        self._base = base
        self.chosen: Chosen | None = None       # how for_log chose it (its warnings)

    @classmethod
    def for_log(cls, rows: list[dict]) -> "HubClock":
        """The clock of a process opening a log (rows: the log's)."""
        r = host_clock.read()
        last = max((row["received_ms"] for row in rows if type(row.get("received_ms")) is int), default=None)
        chosen = choose_base(clock_rows(rows), last, host_clock.boot_id(), r.wall_ns, r.boot_ns)
        clock = cls(chosen.base)
        clock.chosen = chosen
        return clock

    @property
    def base(self) -> Base:
        return self._base

    def now_ms(self) -> int:
        return self._base.offset_ms + host_clock.boot_ns() // 1_000_000

    def adopt(self, base: Base) -> None:
        """Take another base: of this boot, another round's log's; the boards'
        (a new generation: time_base.BoardsWitness)."""
        self._base = base             # (one assignment: a reader sees the old base or the new)
