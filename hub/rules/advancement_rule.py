"""A round's advancement rule: where its entrants come from (one or more
earlier rounds of the event) and how many of them, as a format's
`[advancement]` table says it (docs/formats.md, "[advancement]").  Read and
checked here, pure; the selection itself is advancement.py.

    [advancement]
    from = ["group-a", "group-b", "group-c"]   # the source rounds (required)
    total = 10             # how many advance in all: the next best fill up to it
    per_source = 3         # the best N of each source round advance
    per_country = 1        # the best K of each country (entrants.csv's country column)
    percent = 50           # at most this % of the ranked entrants (<= 75, as the WCA's rule)
    beat = "finished"      # a result to beat: "finished", or a time ("1:30:00": faster than it)
    ties = "desk"          # entrants tied at a cut: "all" advance, "none" does, or the "desk" decides
    across = "place"       # compare entrants of different rounds by "place" (then result) or "result"

A problem is a RuleError naming the key; formats.py makes it a FormatError
naming the file."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .durations import fmt_duration, parse_duration

TIE_RULES = ("all", "none", "desk")
ACROSS = ("place", "result")
MAX_PERCENT = 75            # the WCA's rule 9p1: at least a quarter of a round is eliminated
MAX_SOURCES = 50
MAX_COUNT = 10_000          # format_model.MAX_ENTRANTS (not imported: format_model imports this module)
KEYS = ("from", "total", "per_source", "per_country", "percent", "beat", "ties", "across")
_ROUND = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,31}")     # event/folder/rounds.py's names


class RuleError(ValueError):
    """An [advancement] table that is not valid: the message names the key."""


@dataclass(frozen=True)
class AdvancementRule:
    sources: tuple[str, ...]
    total: int | None = None
    per_source: int | None = None
    per_country: int | None = None
    percent: int | None = None
    beat_finished: bool = False         # only finishers advance
    beat_ms: int | None = None          # only a finish faster than this (net time) advances
    ties: str = "desk"
    across: str = "place"

    def describe(self) -> str:
        """The rule in one line, as the plan and `formats show --explain` say it."""
        parts = []
        if self.per_source:
            parts.append(f"the best {self.per_source} of each round")
        if self.per_country:
            parts.append(f"the best {self.per_country} of each country")
        if self.total is not None or self.percent is not None:
            cap = " and ".join(x for x in (f"{self.total}" if self.total is not None else "",
                                            f"{self.percent} % of the ranked" if self.percent else "") if x)
            parts.append(f"{'then ' if parts else ''}the next best up to {cap}"
                         + (" (the fewer)" if self.total is not None and self.percent else ""))
        beat = (f"; only a finish faster than {fmt_duration(self.beat_ms)}" if self.beat_ms is not None
                else "; only finishers" if self.beat_finished else "")
        return (f"from {', '.join(self.sources)}: {', '.join(parts)}{beat}; ties at a cut: "
                f"{ {'all': 'all advance', 'none': 'none advances', 'desk': 'the desk decides'}[self.ties]}; "
                f"rounds compared by {'place, then result' if self.across == 'place' else 'result'}")


def _count(data: dict, k: str, hi: int = MAX_COUNT) -> int | None:
    v = data.get(k)
    if v is None:
        return None
    if not isinstance(v, int) or isinstance(v, bool) or not 1 <= v <= hi:
        raise RuleError(f"advancement.{k}: expected a whole number 1..{hi}, got {v!r}")
    return v


def _choice(data: dict, k: str, choices: tuple[str, ...], default: str) -> str:
    v = data.get(k, default)
    if v not in choices:
        raise RuleError(f"advancement.{k}: expected one of {', '.join(repr(c) for c in choices)}, got {v!r}")
    return v


def parse_rule(data: Any) -> AdvancementRule:
    """The rule of a parsed `[advancement]` table (RuleError naming the key)."""
    if not isinstance(data, dict):
        raise RuleError("advancement: expected a table ([advancement])")
    unknown = sorted(set(data) - set(KEYS))
    if unknown:
        raise RuleError(f"advancement.{unknown[0]}: unknown key (known keys here: {', '.join(KEYS)})")
    src = data.get("from")
    if isinstance(src, str):
        src = [src]
    if not isinstance(src, list) or not 1 <= len(src) <= MAX_SOURCES or not all(
            isinstance(s, str) and _ROUND.fullmatch(s) for s in src):
        raise RuleError(f"advancement.from: expected a list of 1..{MAX_SOURCES} round names "
                        f"(e.g. [\"group-a\", \"group-b\"]), got {src!r}")
    if len(set(src)) != len(src):
        raise RuleError(f"advancement.from: a round named twice: {src!r}")
    total, per_source, per_country = _count(data, "total"), _count(data, "per_source"), _count(data, "per_country")
    percent = _count(data, "percent", MAX_PERCENT)
    if total is None and per_source is None and per_country is None and percent is None:
        raise RuleError("advancement: say how many advance: total, per_source, per_country or percent")
    beat = data.get("beat")
    beat_ms = None
    if beat is not None and beat != "finished":
        try:
            beat_ms = parse_duration(beat)
        except ValueError as e:
            raise RuleError(f"advancement.beat: \"finished\" or a time to beat: {e}") from None
        if beat_ms <= 0:
            raise RuleError(f"advancement.beat: a positive time, got {beat!r}")
    return AdvancementRule(tuple(src), total, per_source, per_country, percent, beat is not None, beat_ms,
                           _choice(data, "ties", TIE_RULES, "desk"), _choice(data, "across", ACROSS, "place"))
