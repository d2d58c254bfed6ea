"""A format played faster: a demo's (`tabletimer demo --speed N`) and a
rehearsal's (`tabletimer rehearse --speed N`): its time limit, relay
rotations, replacement window and default warnings N times shorter, its
penalties and resolution the rules'.  Pure."""

from __future__ import annotations

import dataclasses
import math

from .durations import fmt_duration
from .format_model import MAX_ROUND_MS, Format


def faster(fmt: Format, speed: float, played: str = "demo") -> Format:
    """The format with its time limit, relay rotation interval,
    replacement window and default warnings divided by speed: a 90-minute
    round at 30x plays in 3 minutes; its title says so ("(demo at 30x)",
    played: "rehearsed" for a rehearsal's).  Penalties and the resolution
    stay the rules'."""
    if not (isinstance(speed, (int, float)) and math.isfinite(speed) and speed > 0):
        raise ValueError(f"--speed must be a positive number, not {speed}")
    if speed == 1:
        return fmt
    if not 1000 <= fmt.time_limit_ms / speed <= MAX_ROUND_MS:
        raise ValueError(f"--speed {speed:g} makes the round {fmt_duration(int(fmt.time_limit_ms / speed))} long; "
                         f"a round lasts 0:00:01 to {fmt_duration(MAX_ROUND_MS)}")
    for p in fmt.parts:
        if p.rotation_interval_ms and p.rotation_interval_ms / speed < 1000:
            raise ValueError(f"--speed {speed:g} makes the relay rotate more than once a second; "
                             f"at most {p.rotation_interval_ms // 1000}")
    parts = tuple(dataclasses.replace(p, rotation_interval_ms=int(p.rotation_interval_ms / speed))
                  if p.rotation_interval_ms else p for p in fmt.parts)
    no_show = int(fmt.no_show_after_ms / speed) if fmt.no_show_after_ms is not None else None
    return dataclasses.replace(fmt, time_limit_ms=int(fmt.time_limit_ms / speed), parts=parts,
                               no_show_after_ms=no_show, title=f"{fmt.title} ({played} at {speed:g}x)",
                               speed=speed)
