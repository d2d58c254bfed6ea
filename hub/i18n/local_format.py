"""Times, dates and numbers as a language writes them (Babel's CLDR data):
a clock time (14:05 or 14.05), a date, a decimal mark (1:02:03,4 in Czech,
Danish and Norwegian), a count's digit grouping."""

from __future__ import annotations

from datetime import date, datetime

from babel.dates import format_date, format_datetime, format_time
from babel.numbers import format_decimal, get_decimal_symbol

# the locale each language's times and numbers are written in: the hub's English is
# written as in Britain (14:05, 14 June 2026), as the hub has always written its times
FORMATS_AS = {"en": "en_GB"}


def _locale(lang: str) -> str:
    return FORMATS_AS.get(lang, lang)


def decimal_mark(lang: str) -> str:
    return get_decimal_symbol(_locale(lang))


def clock(moment: datetime, lang: str, seconds: bool = True) -> str:
    """A clock time: 14:05:09 (en, cs, da, nb as each writes it)."""
    return format_time(moment, "medium" if seconds else "short", locale=_locale(lang))


def day(d: date, lang: str) -> str:
    """A date in words: 14 June 2026, 14. června 2026, 14. juni 2026."""
    return format_date(d, "long", locale=_locale(lang))


def moment(m: datetime, lang: str) -> str:
    """A date and clock time, short."""
    return format_datetime(m, "short", locale=_locale(lang))


def number(n: float, lang: str) -> str:
    return format_decimal(n, locale=_locale(lang))


def duration(text: str, lang: str) -> str:
    """A duration written h:mm:ss.f with the language's decimal mark
    (1:02:03.4 -> 1:02:03,4)."""
    mark = decimal_mark(lang)
    return text if mark == "." else text.replace(".", mark)
