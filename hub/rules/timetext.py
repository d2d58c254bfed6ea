"""Times as an operator types them: durations ("90" seconds, "1:30",
"0:01:30.5"), clock times today ("10:30"), and hub ms (13 digits).  Pure."""

from __future__ import annotations

import datetime as dt
import re

from .durations import fmt_duration

# what an operator types: digits only (no "1e309", "inf", "nan" or "1_000" that float() and int()
# take), and few of them: a time or a duration that long is a slip of the keyboard, never parsed
# (a float overflows, a clock time's hour overflows the system's)
_SECONDS = re.compile(r"^(?:\d+(?:\.\d*)?|\.\d+)$")
_WHOLE = re.compile(r"^\d+$")
MAX_TEXT = 24
HUB_MS_DIGITS = (11, 16)     # hub ms as typed: 13 digits now; a 2**53 ms limit has 16


def parse_duration_ms(text: str, what: str) -> int:
    """"90" (seconds), "1:30", "0:01:30", "1:30.5" -> ms."""
    t = text.strip()
    parts = t.split(":")
    if (len(t) > MAX_TEXT or not 1 <= len(parts) <= 3 or not _SECONDS.match(parts[-1])
            or not all(_WHOLE.match(p) for p in parts[:-1])):
        raise ValueError(f"{what}: expected seconds or h:mm:ss, not {_shown(text)}")
    secs = float(parts[-1])
    mins = int(parts[-2]) if len(parts) > 1 else 0
    hours = int(parts[-3]) if len(parts) > 2 else 0
    return round(((hours * 60 + mins) * 60 + secs) * 1000)


def _shown(text: str) -> str:
    """What the operator typed, as an error message quotes it (a long one cut)."""
    return repr(text) if len(text) <= 40 else f"{text[:40]!r}... ({len(text)} characters)"


def _hub_ms(t: str) -> int | None:
    """Hub ms as typed (11-16 ASCII digits), None for anything else but
    more digits (ValueError: no time)."""
    if not _WHOLE.match(t) or len(t) < HUB_MS_DIGITS[0]:
        return None
    if len(t) > HUB_MS_DIGITS[1]:
        raise ValueError(f"at: hub ms has 13 digits, not {len(t)}")
    return int(t)


def parse_clock_time(text: str, now_ms: int) -> int:
    """A start instant: hub ms (13 digits) or a local clock time HH:MM[:SS]
    today."""
    t = text.strip()
    ms = _hub_ms(t)
    if ms is not None:
        return ms
    parts = t.split(":")
    if len(parts) in (2, 3) and all(_WHOLE.match(x) and len(x) <= 2 for x in parts):
        h, m, s = ([int(x) for x in parts] + [0])[:3]
        if h <= 23 and m <= 59 and s <= 59:
            day = dt.datetime.fromtimestamp(now_ms / 1000)
            return int(day.replace(hour=h, minute=m, second=s, microsecond=0).timestamp() * 1000)
    raise ValueError(f"at: a clock time HH:MM[:SS] or hub ms, not {_shown(text)}")


# a round start typed as a clock time: one this far in the past, or this far ahead, is asked
# about first (a cue recorded a few minutes late is not; an hour's slip or a time of yesterday
# read as today is)
START_PAST_ASK_MS = 5 * 60_000
START_AHEAD_ASK_MS = 3 * 3_600_000


def start_clock_doubt(text: str, at_ms: int, now_ms: int) -> str | None:
    """Why a round start typed as a clock time (parse_clock_time: today's)
    asks the operator first: in the past by more than START_PAST_ASK_MS, or
    ahead by more than START_AHEAD_ASK_MS (a time just before midnight, meant
    for yesterday, read as today's); None when it is plainly meant, and for
    hub ms (which say the instant exactly)."""
    t = text.strip()
    if _WHOLE.match(t):
        return None
    read = f"at={t} is read as today {fmt_clock(at_ms)}"
    if at_ms < now_ms - START_PAST_ASK_MS:
        return (f"{read}, {fmt_duration((now_ms - at_ms) // 1000 * 1000)} ago: the round would have been under way since "
                "then, every entrant's time counted from it")
    if at_ms > now_ms + START_AHEAD_ASK_MS:
        return (f"{read}, {fmt_duration((at_ms - now_ms) // 1000 * 1000)} from now: the boards would wait until then "
                "(a time of yesterday is given as hub ms)")
    return None


def parse_hub_time(text: str, start_ms: int | None, what: str = "at") -> int:
    """An instant during the round: hub ms (11+ digits), or h:mm:ss[.fff]
    since the round start (as the standings show times)."""
    t = text.strip()
    ms = _hub_ms(t)
    if ms is not None:
        return ms
    if start_ms is None:
        raise ValueError(f"{what}: the round has not started, so give the time as hub ms, not {_shown(text)}")
    return start_ms + parse_duration_ms(t, what)


def fmt_clock(ms: int) -> str:
    """A hub instant as this machine's local clock time, HH:MM:SS."""
    return dt.datetime.fromtimestamp(ms / 1000).strftime("%H:%M:%S")
