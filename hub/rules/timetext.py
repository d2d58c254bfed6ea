"""Times as an operator types them: durations ("90" seconds, "1:30",
"0:01:30.5"), clock times today ("10:30"), and hub ms (13 digits).  Pure."""

from __future__ import annotations

import datetime as dt


def parse_duration_ms(text: str, what: str) -> int:
    """"90" (seconds), "1:30", "0:01:30", "1:30.5" -> ms."""
    t = text.strip()
    try:
        parts = t.split(":")
        if not 1 <= len(parts) <= 3 or any(p == "" for p in parts):
            raise ValueError
        secs = float(parts[-1])
        mins = int(parts[-2]) if len(parts) > 1 else 0
        hours = int(parts[-3]) if len(parts) > 2 else 0
        if secs < 0 or mins < 0 or hours < 0:
            raise ValueError
    except ValueError:
        raise ValueError(f"{what}: expected seconds or h:mm:ss, not {text!r}") from None
    return round(((hours * 60 + mins) * 60 + secs) * 1000)


def parse_clock_time(text: str, now_ms: int) -> int:
    """A start instant: hub ms (13 digits) or a local clock time HH:MM[:SS]
    today."""
    t = text.strip()
    if t.isdigit() and len(t) >= 11:
        return int(t)
    try:
        parts = [int(x) for x in t.split(":")]
        if len(parts) not in (2, 3):
            raise ValueError
        h, m, s = (parts + [0])[:3]
        day = dt.datetime.fromtimestamp(now_ms / 1000)
        return int(day.replace(hour=h, minute=m, second=s, microsecond=0).timestamp() * 1000)
    except ValueError:
        raise ValueError(f"at: a clock time HH:MM[:SS] or hub ms, not {text!r}") from None


def parse_hub_time(text: str, start_ms: int | None, what: str = "at") -> int:
    """An instant during the round: hub ms (11+ digits), or h:mm:ss[.fff]
    since the round start (as the standings show times)."""
    t = text.strip()
    if t.isdigit() and len(t) >= 11:
        return int(t)
    if start_ms is None:
        raise ValueError(f"{what}: the round has not started, so give the time as hub ms, not {text!r}")
    return start_ms + parse_duration_ms(t, what)


def fmt_clock(ms: int) -> str:
    """A hub instant as this machine's local clock time, HH:MM:SS."""
    return dt.datetime.fromtimestamp(ms / 1000).strftime("%H:%M:%S")
