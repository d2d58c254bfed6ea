"""Competition formats: a declarative TOML file per category/round that an
organizer selects (a shipped preset) or copies and edits, validated on load.

`load_format(path_or_name)` reads a file (or the preset of that name) and
returns a `Format`; `validate(data, source)` checks an already parsed dict.
Every problem is a `FormatError` whose message names the file, the dotted key
and what was expected.  The keys, with the seed rule each one implements, are
described in docs/formats.md.  Pure apart from reading the file in
`load_format`.  What a format is (`Format`, `Part`) is format_model.py;
durations as text, durations.py.
"""

from __future__ import annotations

import difflib
import tomllib
from importlib import resources
from pathlib import Path
from typing import Any

from .advancement_rule import RuleError, parse_rule
from .durations import DURATION_FORMS, fmt_duration, fmt_resolution, parse_duration
from .format_model import (COUNT_ENTRIES, ENTRANT_KINDS, FINISHED_PUZZLE_CREDIT, MAX_ENTRANTS, MAX_LINE,
                           MAX_MEMBERS, MAX_PARAGRAPH, MAX_PENALTY_S, MAX_PIECES, MAX_PUZZLES, MAX_ROTATIONS,
                           MAX_ROUND_MS, MIN_ROTATION_MS, MISSING_ACTIONS, MISSING_CATEGORIES, OFFICIAL_MOMENTS, ORDERS,
                           TIE_BREAKS, WORK_MODES, Format, FormatError, Part, describe)

# the format's model is in format_model.py, durations in durations.py; their names here too,
# for those who load formats
__all__ = ["DURATION_FORMS", "fmt_duration", "fmt_resolution", "parse_duration", "COUNT_ENTRIES",
           "ENTRANT_KINDS", "FINISHED_PUZZLE_CREDIT", "MISSING_ACTIONS", "MISSING_CATEGORIES", "ORDERS",
           "TIE_BREAKS", "WORK_MODES", "Format", "FormatError", "Part", "describe", "validate",
           "preset_names", "unknown_preset", "preset_text", "format_text", "load_format", "loads",
           "all_presets"]


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

    def text(self, k: str, default: Any = ..., choices: tuple[str, ...] | None = None,
             most: int = MAX_LINE) -> Any:
        v = self.raw(k, default)
        if v is None and default is None:
            return None
        if not isinstance(v, str):
            raise self.fail(k, "a string" if not choices else f"one of {_alts(choices)}", v)
        if choices and v not in choices:
            raise self.fail(k, f"one of {_alts(choices)}", v)
        if len(v) > most:
            raise self.fail(k, f"a text of at most {most} characters, got {len(v)}")
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

    def duration(self, k: str, default: Any = ..., positive: bool = True, most: int = MAX_ROUND_MS) -> Any:
        v = self.raw(k, default)
        if v is None and default is None:
            return None
        try:
            ms = parse_duration(v)
        except ValueError as e:
            raise FormatError(f"{self.source}: {self.key(k)}: {e}") from None
        if positive and ms <= 0:
            raise self.fail(k, "a positive duration", v)
        if ms > most:
            raise self.fail(k, f'a duration up to "{fmt_duration(most)}"', v)
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
    if len(v) > MAX_PUZZLES:
        raise t.fail(k, f"at most {MAX_PUZZLES} puzzles in a round, got {len(v)}")
    for i, n in enumerate(v):
        if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= MAX_PIECES:
            raise FormatError(f"{t.source}: {t.key(k)}[{i}]: expected a piece count 1..{MAX_PIECES},"
                              f" got {_show(n)}")
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
        if interval < MIN_ROTATION_MS or limit_ms > interval * MAX_ROTATIONS:
            least = max(MIN_ROTATION_MS, -(-limit_ms // MAX_ROTATIONS))
            raise t.fail("rotation_interval", f'at least "{fmt_duration(least)}" (at most {MAX_ROTATIONS}'
                                              f" rotations within round.time_limit, each at least 1 s apart)",
                         t.data["rotation_interval"])
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
    summary = fmt_t.text("summary", most=MAX_PARAGRAPH)
    src = fmt_t.text("source", "", most=MAX_PARAGRAPH)
    notes = fmt_t.text("notes", "", most=MAX_PARAGRAPH)
    fmt_t.done()

    info: dict[str, Any] = {}
    ent = root.table("entrants", required=True)
    kind = ent.text("kind", choices=ENTRANT_KINDS)
    fixed = {"individual": 1, "pair": 2}.get(kind)
    if fixed:
        lo = ent.whole("min_members", fixed, lo=fixed, hi=fixed)
        hi = ent.whole("max_members", fixed, lo=fixed, hi=fixed)
    else:
        lo = ent.whole("min_members", lo=1, hi=MAX_MEMBERS)
        hi = ent.whole("max_members", lo=1, hi=MAX_MEMBERS)
        if hi < lo:
            raise ent.fail("max_members", f"at least entrants.min_members ({lo})", hi)
    capacity = ent.whole("capacity", None, lo=1, hi=MAX_ENTRANTS)
    if ent.has("max_at_table"):
        info[ent.key("max_at_table")] = ent.whole("max_at_table", lo=1, hi=MAX_ENTRANTS)
    # seating (rules/seating.py): one entrant a table up to this many, two a table above it
    share_above = ent.whole("table_share_above", None, lo=1, hi=MAX_ENTRANTS)
    no_show = ent.duration("no_show_after", None, positive=False)
    if no_show is not None and no_show < 0:
        raise ent.fail("no_show_after", "a duration of 0 or more", ent.data["no_show_after"])
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
        if first - 1 > MAX_PUZZLES:
            raise rnd.fail("parts", f"at most {MAX_PUZZLES} puzzles in a round, got {first - 1}")
    else:
        puzzles = _puzzles(rnd, "puzzles")
        shim = {"work": rnd.raw("work", "single"), "puzzles": list(puzzles),
                "workers": rnd.raw("workers", "")}
        for k in ("rotation_interval", "rotation"):
            if rnd.has(k):
                shim[k] = rnd.raw(k)
        parts.append(_part(_Table(shim, source, "round"), 1, "round", limit, kind, hi))
    rnd.done()
    if no_show is not None and no_show >= limit:
        raise ent.fail("no_show_after", f"less than round.time_limit ({fmt_duration(limit)})",
                       ent.data["no_show_after"])

    mp = root.table("missing_pieces")
    action = mp.text("action", "time", choices=MISSING_ACTIONS)
    per_piece = mp.whole("seconds_per_piece", 10 if action == "time" else 0, lo=0, hi=MAX_PENALTY_S)
    if action == "subtract" and mp.has("seconds_per_piece") and per_piece:
        raise mp.fail("seconds_per_piece", 'nothing (or 0) with action = "subtract": missing'
                                           ' pieces are subtracted from the pieces, not timed', per_piece)
    exempt_raw = mp.raw("exempt", [])
    if not isinstance(exempt_raw, list) or any(e not in MISSING_CATEGORIES for e in exempt_raw):
        raise mp.fail("exempt", f"a list of {_alts(MISSING_CATEGORIES)}", exempt_raw)
    mp.done()

    un = root.table("unfinished")
    min_group = un.whole("min_group", 3, lo=1, hi=MAX_PIECES)
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
    awards = pr.whole("awards", 3, lo=0, hi=capacity or MAX_ENTRANTS)
    emin = pr.whole("eligible_members_min", 0, lo=0, hi=hi)
    eligibility = pr.text("eligibility", "", most=MAX_PARAGRAPH)
    pr.done()

    rs = root.table("results")
    official_at = rs.text("official_at", "checks", choices=OFFICIAL_MOMENTS)
    rs.done()
    advancement = None
    if root.has("advancement"):
        try:
            advancement = parse_rule(root.raw("advancement"))
        except RuleError as e:
            raise FormatError(f"{source}: {e}") from None
    root.done()

    return Format(
        name=name or Path(source).stem, title=title, summary=summary, source=src, notes=notes,
        path=source, kind=kind, min_members=lo, max_members=hi, capacity=capacity,
        time_limit_ms=limit, resolution_ms=res, parts=tuple(parts), start_offsets=offsets,
        offset_extends_limit=extends, missing_action=action,
        penalty_per_piece_ms=per_piece * 1000, exempt=frozenset(exempt_raw), min_group=min_group,
        count_entry=count_entry, finished_puzzle_credit=credit, order=order, tie_break=tie,
        awards=awards, eligible_members_min=emin, eligibility=eligibility, no_show_after_ms=no_show,
        table_share_above=share_above, official_at=official_at, info=info, advancement=advancement)


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
