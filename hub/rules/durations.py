"""Durations as format files and printed results write them: "1:23:45",
"83:12", "12.5s", "90m", "250ms" parsed to integer milliseconds, and
milliseconds printed at a format's resolution.  Pure.  (What an operator
types at the console is timetext.py.)"""

from __future__ import annotations

import re

_HMS = re.compile(r"^(\d+):([0-5]?\d):([0-5]?\d)(?:\.(\d{1,3}))?$")
_MS = re.compile(r"^(\d+):([0-5]?\d)(?:\.(\d{1,3}))?$")
_UNITS = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_UNIT_MS = {"h": 3_600_000, "m": 60_000, "s": 1000, "ms": 1}

DURATION_FORMS = '"H:MM:SS", "M:SS" (minutes may exceed 59, e.g. "83:12"), with optional ".fff", ' \
                 'or units such as "90m", "12.5s", "250ms", "1h30m"'
MAX_TEXT = 40           # longer is no duration ("9999...h" would overflow a float: never parsed)


def parse_duration(text: str) -> int:
    """A duration as integer milliseconds.  Accepted: "1:23:45", "83:12",
    "1:23:45.250", "12.5s", "90m", "2h", "250ms", "1h30m", each optionally
    preceded by "-".  Raises ValueError naming the accepted forms."""
    if not isinstance(text, str):
        raise ValueError(f"expected a duration string ({DURATION_FORMS}), got {text!r}")
    s = text.strip()
    if len(s) > MAX_TEXT:
        raise ValueError(f"expected a duration ({DURATION_FORMS}), got {len(s)} characters")
    sign = 1
    if s.startswith("-"):
        sign, s = -1, s[1:].strip()
    m = _HMS.match(s)
    if m:
        h, mi, se, frac = m.groups()
        return sign * ((int(h) * 3600 + int(mi) * 60 + int(se)) * 1000 + _frac_ms(frac))
    m = _MS.match(s)
    if m:
        mi, se, frac = m.groups()
        return sign * ((int(mi) * 60 + int(se)) * 1000 + _frac_ms(frac))
    pos, total = 0, 0.0
    for m in _UNITS.finditer(s):
        if m.start() != pos:
            break
        total += float(m.group(1)) * _UNIT_MS[m.group(2)]
        pos = m.end()
    if s and pos == len(s):
        ms = round(total)
        if abs(ms - total) > 1e-6:
            raise ValueError(f"{text!r} is not a whole number of milliseconds")
        return sign * ms
    raise ValueError(f"expected a duration ({DURATION_FORMS}), got {text!r}")


def _frac_ms(frac: str | None) -> int:
    return int((frac or "0").ljust(3, "0"))


def fmt_duration(ms: int | None, resolution_ms: int = 1000) -> str:
    """"1:23:45", with ".f"/".ff"/".fff" when the resolution is finer than a
    second; "-" for None."""
    if ms is None:
        return "-"
    sign = "-" if ms < 0 else ""
    ms = abs(ms)
    h, rest = divmod(ms, 3_600_000)
    m, rest = divmod(rest, 60_000)
    s, milli = divmod(rest, 1000)
    out = f"{sign}{h}:{m:02d}:{s:02d}"
    if resolution_ms < 1000:
        digits = 1 if resolution_ms % 100 == 0 else 2 if resolution_ms % 10 == 0 else 3
        out += "." + f"{milli:03d}"[:digits]
    elif milli:
        out += f".{milli:03d}"
    return out


def fmt_resolution(ms: int) -> str:
    if ms == 1000:
        return "whole seconds"
    return f"steps of {ms // 1000} s" if ms % 1000 == 0 else f"steps of {ms} ms"
