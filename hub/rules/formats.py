"""Competition formats: a declarative TOML file per category/round that an
organizer selects (a shipped preset) or copies and edits, validated on load.

`load_format(path_or_name)` reads a file (or the preset of that name) and
returns a `Format`; `validate(data, source)` checks an already parsed dict.
Every problem is a `FormatError` whose message names the file, the dotted key
and what was expected.  The keys, with the seed rule each one implements, are
described in docs/formats.md.  Pure apart from reading the file in
`load_format`.
"""

from __future__ import annotations

import difflib
import re
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

# --- durations -------------------------------------------------------------------------------

_HMS = re.compile(r"^(\d+):([0-5]?\d):([0-5]?\d)(?:\.(\d{1,3}))?$")
_MS = re.compile(r"^(\d+):([0-5]?\d)(?:\.(\d{1,3}))?$")
_UNITS = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_UNIT_MS = {"h": 3_600_000, "m": 60_000, "s": 1000, "ms": 1}

DURATION_FORMS = '"H:MM:SS", "M:SS" (minutes may exceed 59, e.g. "83:12"), with optional ".fff", ' \
                 'or units such as "90m", "12.5s", "250ms", "1h30m"'


def parse_duration(text: str) -> int:
    """A duration as integer milliseconds.  Accepted: "1:23:45", "83:12",
    "1:23:45.250", "12.5s", "90m", "2h", "250ms", "1h30m", each optionally
    preceded by "-".  Raises ValueError naming the accepted forms."""
    if not isinstance(text, str):
        raise ValueError(f"expected a duration string ({DURATION_FORMS}), got {text!r}")
    s = text.strip()
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


# --- the parsed format ------------------------------------------------------------------------

ENTRANT_KINDS = ("individual", "pair", "team")
WORK_MODES = ("single", "parallel", "relay", "fixed", "chosen")
MISSING_ACTIONS = ("time", "subtract")
MISSING_CATEGORIES = ("lost", "adjacent")      # categories that may be exempt
COUNT_ENTRIES = ("placed", "remaining")
FINISHED_PUZZLE_CREDIT = ("present", "full")
ORDERS = ("time", "pieces")
TIE_BREAKS = ("none", "last_complete_puzzle")


class FormatError(ValueError):
    """A competition format file is not valid: the message names the file,
    the dotted key and what was expected."""


@dataclass(frozen=True)
class Part:
    """Consecutive part of a round: its puzzles and how they are worked.
    work: single (one puzzle) | parallel (each puzzle by its own group, no
    moving) | relay (one member per station, clockwise rotation every
    rotation_interval_ms among unfinished puzzles) | fixed (one at a time in
    the listed order) | chosen (one at a time, entrant's order, swap only by
    packing the unfinished one away)."""
    name: str
    work: str
    puzzles: tuple[int, ...]          # piece counts
    first: int                        # round-wide number of its first puzzle (1-based)
    workers: str = ""                 # who works a puzzle (informational): individuals, pairs, team
    rotation_interval_ms: int | None = None
    rotation: str | None = None       # "clockwise" (relay only)

    @property
    def numbers(self) -> range:
        """The round-wide puzzle (station) numbers of this part."""
        return range(self.first, self.first + len(self.puzzles))


@dataclass(frozen=True)
class Format:
    name: str
    title: str
    summary: str
    source: str                       # where the rules come from (seed file, section)
    notes: str
    path: str                         # the file this was read from
    # entrants
    kind: str                         # individual | pair | team
    min_members: int
    max_members: int
    capacity: int | None
    # round
    time_limit_ms: int
    resolution_ms: int
    parts: tuple[Part, ...]
    start_offsets: bool               # per-entrant new start time allowed
    offset_extends_limit: bool        # the limit runs from the entrant's own start
    # missing pieces at a finish
    missing_action: str               # time | subtract
    penalty_per_piece_ms: int
    exempt: frozenset[str]            # subset of {"lost", "adjacent"}
    # unfinished
    min_group: int
    count_entry: str                  # placed | remaining (the referee's default form)
    finished_puzzle_credit: str       # present | full
    # ranking
    order: str                        # time | pieces
    tie_break: str                    # none | last_complete_puzzle
    # prizes
    awards: int
    eligible_members_min: int         # official when >= this many members are eligible
    eligibility: str
    info: dict[str, Any] = field(default_factory=dict)   # informational keys, by dotted name

    @property
    def puzzles(self) -> tuple[int, ...]:
        """Piece counts of all puzzles of the round, numbered 1.. in order."""
        return tuple(p for part in self.parts for p in part.puzzles)

    @property
    def relay(self) -> Part | None:
        return next((p for p in self.parts if p.work == "relay"), None)

    def puzzles_text(self) -> str:
        """"500", "1000 + 500 (chosen order)", "4x500 relay | 2x500 | 500 | 1000"."""
        def one(part: Part) -> str:
            counts: list[str] = []
            for n in dict.fromkeys(part.puzzles):
                k = part.puzzles.count(n)
                counts.append(f"{k}x{n}" if k > 1 else str(n))
            text = " + ".join(counts) if part.work in ("fixed", "chosen") else ", ".join(counts)
            if part.work in ("fixed", "chosen", "relay"):
                text += {"fixed": " (fixed order)", "chosen": " (chosen order)",
                         "relay": " relay"}[part.work]
            return text
        return " | ".join(one(p) for p in self.parts)

    def kind_text(self) -> str:
        if self.kind == "team":
            m = (str(self.min_members) if self.min_members == self.max_members
                 else f"{self.min_members}-{self.max_members}")
            return f"team of {m}"
        return self.kind


# --- validation -------------------------------------------------------------------------------

class _Table:
    """Reads the keys of one TOML table, recording which were used, so that
    unknown keys are reported."""

    def __init__(self, data: Any, source: str, prefix: str):
        if not isinstance(data, dict):
            raise FormatError(f"{source}: {prefix or 'file'}: expected a table, got {_show(data)}")
        self.data, self.source, self.prefix = data, source, prefix
        self.used: set[str] = set()

    def key(self, k: str) -> str:
        return f"{self.prefix}.{k}" if self.prefix else k

    def fail(self, k: str, expected: str, got: Any = ...) -> FormatError:
        tail = "" if got is ... else f", got {_show(got)}"
        return FormatError(f"{self.source}: {self.key(k)}: expected {expected}{tail}")

    def has(self, k: str) -> bool:
        return k in self.data

    def raw(self, k: str, default: Any = ...) -> Any:
        self.used.add(k)
        if k not in self.data:
            if default is ...:
                raise FormatError(f"{self.source}: {self.key(k)}: missing (required)")
            return default
        return self.data[k]

    def text(self, k: str, default: Any = ..., choices: tuple[str, ...] | None = None) -> Any:
        v = self.raw(k, default)
        if v is None and default is None:
            return None
        if not isinstance(v, str):
            raise self.fail(k, "a string" if not choices else f"one of {_alts(choices)}", v)
        if choices and v not in choices:
            raise self.fail(k, f"one of {_alts(choices)}", v)
        return v

    def whole(self, k: str, default: Any = ..., lo: int | None = None, hi: int | None = None) -> Any:
        v = self.raw(k, default)
        if v is None and default is None:
            return None
        if not isinstance(v, int) or isinstance(v, bool):
            raise self.fail(k, "a whole number", v)
        if lo is not None and v < lo or hi is not None and v > hi:
            rng = (f">= {lo}" if hi is None else f"<= {hi}" if lo is None else f"{lo}..{hi}")
            raise self.fail(k, f"a whole number {rng}", v)
        return v

    def flag(self, k: str, default: Any = ...) -> Any:
        v = self.raw(k, default)
        if not isinstance(v, bool):
            raise self.fail(k, "true or false", v)
        return v

    def duration(self, k: str, default: Any = ..., positive: bool = True) -> Any:
        v = self.raw(k, default)
        if v is None and default is None:
            return None
        try:
            ms = parse_duration(v)
        except ValueError as e:
            raise FormatError(f"{self.source}: {self.key(k)}: {e}") from None
        if positive and ms <= 0:
            raise self.fail(k, "a positive duration", v)
        return ms

    def table(self, k: str, required: bool = False) -> "_Table":
        v = self.raw(k, ... if required else {})
        return _Table(v, self.source, self.key(k))

    def done(self) -> None:
        unknown = sorted(set(self.data) - self.used)
        if unknown:
            known = ", ".join(sorted(self.used))
            raise FormatError(f"{self.source}: {self.key(unknown[0])}: unknown key"
                              f" (known keys here: {known})")


def _show(v: Any) -> str:
    if isinstance(v, dict):
        return "a table"
    if isinstance(v, list):
        return "a list"
    return repr(v)


def _alts(choices: tuple[str, ...]) -> str:
    return ", ".join(f'"{c}"' for c in choices)


def _puzzles(t: _Table, k: str) -> tuple[int, ...]:
    v = t.raw(k)
    if not isinstance(v, list) or not v:
        raise t.fail(k, "a non-empty list of piece counts, e.g. [500]", v)
    for i, n in enumerate(v):
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            raise FormatError(f"{t.source}: {t.key(k)}[{i}]: expected a piece count >= 1, got {_show(n)}")
    return tuple(v)


def _part(t: _Table, first: int, default_name: str, limit_ms: int, kind: str, max_members: int,
          ) -> Part:
    name = t.text("name", default_name)
    work = t.text("work", choices=WORK_MODES)
    puzzles = _puzzles(t, "puzzles")
    workers = t.text("workers", "")
    interval = rotation = None
    if work == "single" and len(puzzles) != 1:
        raise t.fail("puzzles", 'exactly one puzzle for work = "single"', list(puzzles))
    if work == "relay":
        interval = t.duration("rotation_interval")
        if interval >= limit_ms:
            raise t.fail("rotation_interval", "less than round.time_limit", t.data["rotation_interval"])
        rotation = t.text("rotation", "clockwise", choices=("clockwise",))
        if len(puzzles) < 2:
            raise t.fail("puzzles", "at least 2 stations for a relay", list(puzzles))
        if len(puzzles) < max_members:
            raise t.fail("puzzles", f"at least as many relay stations as members"
                                    f" (entrants.max_members = {max_members})", list(puzzles))
        if kind == "individual":
            raise t.fail("work", 'a relay needs pairs or teams (entrants.kind), not "individual"', work)
    else:
        for k in ("rotation_interval", "rotation"):
            if t.has(k):
                raise t.fail(k, 'nothing: only a relay (work = "relay") rotates', t.data[k])
    t.done()
    return Part(name, work, puzzles, first, workers, interval, rotation)


def validate(data: dict, source: str, name: str | None = None) -> Format:
    """Check a parsed format file and build the Format.  `source` names the
    file in error messages; `name` defaults to the file's stem."""
    root = _Table(data, source, "")
    fmt_t = root.table("format", required=True)
    title = fmt_t.text("title")
    summary = fmt_t.text("summary")
    src = fmt_t.text("source", "")
    notes = fmt_t.text("notes", "")
    fmt_t.done()

    info: dict[str, Any] = {}
    ent = root.table("entrants", required=True)
    kind = ent.text("kind", choices=ENTRANT_KINDS)
    fixed = {"individual": 1, "pair": 2}.get(kind)
    if fixed:
        lo = ent.whole("min_members", fixed, lo=fixed, hi=fixed)
        hi = ent.whole("max_members", fixed, lo=fixed, hi=fixed)
    else:
        lo = ent.whole("min_members", lo=1)
        hi = ent.whole("max_members", lo=1)
        if hi < lo:
            raise ent.fail("max_members", f"at least entrants.min_members ({lo})", hi)
    capacity = ent.whole("capacity", None, lo=1)
    for k in ("max_at_table", "table_share_above"):
        if ent.has(k):
            info[ent.key(k)] = ent.whole(k, lo=1)
    if ent.has("no_show_after"):
        info[ent.key("no_show_after")] = ent.duration("no_show_after")
    ent.done()

    rnd = root.table("round", required=True)
    limit = rnd.duration("time_limit")
    res = rnd.duration("resolution", "1s")
    if res > 60_000:
        raise rnd.fail("resolution", 'a duration from "1ms" to "60s"', rnd.data["resolution"])
    offsets = rnd.flag("start_offsets", False)
    extends = rnd.flag("offset_extends_limit", True)
    if rnd.has("pack_before_next"):
        info[rnd.key("pack_before_next")] = rnd.flag("pack_before_next")
    parts: list[Part] = []
    if rnd.has("parts"):
        for k in ("puzzles", "work", "workers"):
            if rnd.has(k):
                raise rnd.fail(k, "nothing: with round.parts, puzzles and work belong to each part",
                               rnd.data[k])
        plist = rnd.raw("parts")
        if not isinstance(plist, list) or not plist:
            raise rnd.fail("parts", "a non-empty list of tables ([[round.parts]])", plist)
        first = 1
        for i, pd in enumerate(plist):
            part = _part(_Table(pd, source, f"round.parts[{i}]"), first, f"part {i + 1}", limit,
                         kind, hi)
            parts.append(part)
            first += len(part.puzzles)
    else:
        puzzles = _puzzles(rnd, "puzzles")
        shim = {"work": rnd.raw("work", "single"), "puzzles": list(puzzles),
                "workers": rnd.raw("workers", "")}
        for k in ("rotation_interval", "rotation"):
            if rnd.has(k):
                shim[k] = rnd.raw(k)
        parts.append(_part(_Table(shim, source, "round"), 1, "round", limit, kind, hi))
    rnd.done()

    mp = root.table("missing_pieces")
    action = mp.text("action", "time", choices=MISSING_ACTIONS)
    per_piece = mp.whole("seconds_per_piece", 10 if action == "time" else 0, lo=0)
    if action == "subtract" and mp.has("seconds_per_piece") and per_piece:
        raise mp.fail("seconds_per_piece", 'nothing (or 0) with action = "subtract": missing'
                                           ' pieces are subtracted from the pieces, not timed', per_piece)
    exempt_raw = mp.raw("exempt", [])
    if not isinstance(exempt_raw, list) or any(e not in MISSING_CATEGORIES for e in exempt_raw):
        raise mp.fail("exempt", f"a list of {_alts(MISSING_CATEGORIES)}", exempt_raw)
    mp.done()

    un = root.table("unfinished")
    min_group = un.whole("min_group", 3, lo=1)
    count_entry = un.text("count_entry", "placed", choices=COUNT_ENTRIES)
    credit = un.text("finished_puzzles", "present", choices=FINISHED_PUZZLE_CREDIT)
    un.done()

    rk = root.table("ranking")
    order = rk.text("order", "time", choices=ORDERS)
    tie = rk.text("tie_break", "none", choices=TIE_BREAKS)
    if action == "subtract" and order == "time":
        raise FormatError(f"{source}: missing_pieces.action: \"subtract\" needs ranking.order ="
                          f" \"pieces\" (finishers ranked by time would ignore missing pieces)")
    rk.done()

    pr = root.table("prizes")
    awards = pr.whole("awards", 3, lo=0, hi=capacity)
    emin = pr.whole("eligible_members_min", 0, lo=0, hi=hi)
    eligibility = pr.text("eligibility", "")
    pr.done()
    root.done()

    return Format(
        name=name or Path(source).stem, title=title, summary=summary, source=src, notes=notes,
        path=source, kind=kind, min_members=lo, max_members=hi, capacity=capacity,
        time_limit_ms=limit, resolution_ms=res, parts=tuple(parts), start_offsets=offsets,
        offset_extends_limit=extends, missing_action=action,
        penalty_per_piece_ms=per_piece * 1000, exempt=frozenset(exempt_raw), min_group=min_group,
        count_entry=count_entry, finished_puzzle_credit=credit, order=order, tie_break=tie,
        awards=awards, eligible_members_min=emin, eligibility=eligibility, info=info)


# --- loading ----------------------------------------------------------------------------------

def _preset_dir():
    return resources.files("tabletimer.hub.rules").joinpath("presets")


def preset_names() -> list[str]:
    return sorted(p.name[:-5] for p in _preset_dir().iterdir() if p.name.endswith(".toml"))


def unknown_preset(name: str) -> FormatError:
    """The error for a preset name that is not one: the nearest names first."""
    names = preset_names()
    near = difflib.get_close_matches(name, names, n=3, cutoff=0.5)
    hint = f"did you mean {' or '.join(repr(n) for n in near)}? " if near else ""
    return FormatError(f"no such preset {name!r}; {hint}(presets: {', '.join(names)}; "
                       f"or give a path to a .toml file)")


def preset_text(name: str) -> str:
    """A shipped preset's file text (FormatError naming the nearest presets
    for a name that is not one)."""
    if name not in preset_names():
        raise unknown_preset(name)
    return _preset_dir().joinpath(f"{name}.toml").read_text(encoding="utf-8")


def format_text(path_or_name: str | Path) -> str:
    """The file text of a preset or a format file (what `formats show` prints)."""
    p = Path(path_or_name)
    if _looks_like_path(path_or_name):
        return p.read_text(encoding="utf-8")
    return preset_text(str(path_or_name))


def _looks_like_path(x: str | Path) -> bool:
    s = str(x)
    return isinstance(x, Path) or s.endswith(".toml") or "/" in s or "\\" in s


def load_format(path_or_name: str | Path) -> Format:
    """A format from a file path (anything ending in .toml or containing a
    path separator) or a shipped preset name (see `preset_names()`)."""
    if _looks_like_path(path_or_name):
        p = Path(path_or_name)
        try:
            raw = p.read_bytes()
        except OSError as e:
            raise FormatError(f"{p}: cannot read the format file ({e.strerror or e})") from None
        return loads(raw.decode("utf-8", errors="replace"), str(p))
    name = str(path_or_name)
    return loads(preset_text(name), f"presets/{name}.toml", name=name)


def loads(text: str, source: str, name: str | None = None) -> Format:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise FormatError(f"{source}: not valid TOML: {e}") from None
    return validate(data, source, name)


def all_presets() -> list[Format]:
    return [load_format(n) for n in preset_names()]


def describe(fmt: Format) -> str:
    """A few lines that say what the format does (for `formats show`)."""
    lines = [f"{fmt.name}: {fmt.title}", f"  {fmt.summary}"]
    cap = f", at most {fmt.capacity}" if fmt.capacity else ""
    lines.append(f"  entrants: {fmt.kind_text()}{cap}")
    lines.append(f"  time limit {fmt_duration(fmt.time_limit_ms)}, times recorded and compared in"
                 f" {fmt_resolution(fmt.resolution_ms)} (truncated)")
    for part in fmt.parts:
        nums = f"{part.first}" if len(part.puzzles) == 1 else f"{part.first}-{part.numbers[-1]}"
        extra = (f", rotate {part.rotation} every {fmt_duration(part.rotation_interval_ms)}"
                 if part.work == "relay" else "")
        lines.append(f"  {part.name}: puzzle {nums} = {list(part.puzzles)}, work {part.work}{extra}")
    return "\n".join(lines)

