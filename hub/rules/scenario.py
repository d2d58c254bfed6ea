"""Scenario files: a whole competition written by hand - the format, the
entrants and a timeline of presses, confirmations, counts and corrections
with times since the start - turned into (format, entrants, facts) for the
ranking engine.  The file format is described in docs/scenarios.md.

Errors are `ScenarioError`s naming the file, the entry (e.g. `timeline[4]`,
shown with its content) and the key.  Pure apart from reading files in
`load_scenario`.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .formats import Format, FormatError, fmt_duration, load_format, parse_duration
from .standings import (Confirm, Count, DidNotStart, Disqualified, Entrant, Fact, Member, Press,
                        Reinstated, RoundStart, StandingRow, StartOffset, Swap, Void, rank)


class ScenarioError(ValueError):
    """A scenario file is not valid: the message names the file, the entry and the key."""


@dataclass
class Scenario:
    path: str
    title: str
    format: Format
    entrants: list[Entrant]
    facts: list[Fact]
    now_ms: int | None = None
    expect: list[dict] = field(default_factory=list)

    def standings(self) -> list[StandingRow]:
        return rank(self.format, self.entrants, self.facts, self.now_ms)


VERBS = ("press", "confirm", "count", "void", "correct", "swap", "start", "dns", "dq", "reinstate")
_EXTRA: dict[str, set[str]] = {
    "press": {"puzzle", "id"},
    "confirm": {"puzzle", "id", "missing", "found", "lost", "adjacent"},
    "count": {"puzzle", "placed", "remaining"},
    "void": {"puzzle"},
    "correct": {"puzzle"},
    "swap": {"packed", "opened"},
    "start": set(),
    "dns": set(),
    "dq": {"reason"},
    "reinstate": set(),
}
_NEEDS_AT = {"press", "correct", "swap", "start"}
_TOP = {"format", "title", "now", "entrants", "timeline", "expect"}
_ENTRANT_KEYS = {"id", "name", "members", "ineligible", "eligible"}
_EXPECT_KEYS = {"entrant", "place", "award", "status", "time", "net", "penalty", "pieces",
                "provisional", "official", "deducted"}


def load_scenario(path: str | Path) -> Scenario:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as e:
        raise ScenarioError(f"{p}: cannot read the scenario ({e.strerror or e})") from None
    return loads_scenario(text, str(p), p.parent)


def loads_scenario(text: str, source: str = "<scenario>", base_dir: str | Path = ".") -> Scenario:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError(f"{source}: not valid TOML: {e}") from None
    return _Reader(source, Path(base_dir), text).read(data)


def _show(entry: dict) -> str:
    parts = []
    for k, v in entry.items():
        parts.append(f"{k} = {v!r}" if not isinstance(v, str) else f'{k} = "{v}"')
    return "{ " + ", ".join(parts) + " }"


def _entry_lines(text: str, name: str, entries: list) -> dict[int, int]:
    """Best effort: the line (1-based) of each entry of `name = [ ... ]`
    written as inline tables, found in order by their keys and values."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if re.match(rf"\s*{name}\s*=\s*\[", line)), None)
    out: dict[int, int] = {}
    if start is None:
        return out
    cursor = start
    for i, e in enumerate(entries):
        if not isinstance(e, dict) or not e:
            break
        pats = []
        for k, v in e.items():
            pats.append(re.compile(rf"(^|[{{,\s]){re.escape(k)}\s*="))
            if isinstance(v, str):
                pats.append(re.compile(re.escape(f'"{v}"') + "|" + re.escape(f"'{v}'")))
            elif isinstance(v, (int, bool)):
                pats.append(re.compile(rf"=\s*{re.escape(str(v).lower() if isinstance(v, bool) else str(v))}\b"))
        found = next((j for j in range(cursor, len(lines))
                      if all(p.search(lines[j].split("#")[0]) for p in pats)), None)
        if found is None:
            break
        out[i] = found + 1
        cursor = found
    return out


class _Reader:
    def __init__(self, source: str, base: Path, text: str = ""):
        self.source, self.base, self.text = source, base, text

    def where(self, name: str, entries: list, i: int) -> str:
        if not hasattr(self, "_lines"):
            self._lines: dict[str, dict[int, int]] = {}
        if name not in self._lines:
            self._lines[name] = _entry_lines(self.text, name, entries)
        line = self._lines[name].get(i)
        return f"{name}[{i}]{f' (line {line})' if line else ''} {_show(entries[i])}"

    def err(self, where: str, msg: str) -> ScenarioError:
        return ScenarioError(f"{self.source}: {where}: {msg}")

    def duration(self, where: str, v: Any) -> int:
        try:
            return parse_duration(v)
        except ValueError as e:
            raise self.err(where, str(e)) from None

    def read(self, data: dict) -> Scenario:
        for k in data:
            if k not in _TOP:
                raise self.err(k, f"unknown key (known: {', '.join(sorted(_TOP))})")
        if "format" not in data:
            raise self.err("format", 'missing: name a preset (see `tabletimer formats`) or a'
                                     ' format file path, e.g. format = "cz-championship-individuals"')
        fref = data["format"]
        if not isinstance(fref, str):
            raise self.err("format", f"expected a preset name or a file path, got {fref!r}")
        try:
            ref: str | Path = fref
            if fref.endswith(".toml") or "/" in fref:
                ref = self.base / fref
            fmt = load_format(ref)
        except FormatError as e:
            raise self.err("format", str(e)) from None
        title = data.get("title", Path(self.source).stem)
        if not isinstance(title, str):
            raise self.err("title", f"expected a string, got {title!r}")
        now = None if "now" not in data else self.duration("now", data["now"])
        self.fmt = fmt
        entrants = self.entrants(data.get("entrants"))
        facts = self.timeline(data.get("timeline", []), entrants, now)
        expect = self.expectations(data.get("expect", []))
        return Scenario(self.source, title, fmt, entrants, facts, now, expect)

    # -- entrants --

    def entrants(self, raw: Any) -> list[Entrant]:
        fmt = self.fmt
        if not isinstance(raw, list) or not raw:
            raise self.err("entrants", 'expected a non-empty list, e.g. entrants = [ { id = "A",'
                                       ' name = "Anna" } ]')
        out: list[Entrant] = []
        seen: set[str] = set()
        for i, e in enumerate(raw):
            where = f"entrants[{i}]"
            if not isinstance(e, dict):
                raise self.err(where, f"expected a table like {{ id = \"A\" }}, got {e!r}")
            where = self.where("entrants", raw, i)
            for k in e:
                if k not in _ENTRANT_KEYS:
                    tip = (" (a key after an [[entrants]] table belongs to that table: put top-level"
                           " keys such as timeline before the first [[entrants]])"
                           if k in _TOP else "")
                    raise self.err(where, f"{k}: unknown key (known: {', '.join(sorted(_ENTRANT_KEYS))}){tip}")
            eid = e.get("id")
            if not isinstance(eid, str) or not eid.strip():
                raise self.err(where, "id: expected a non-empty string")
            if eid in seen:
                raise self.err(where, f"id: {eid!r} is used twice")
            seen.add(eid)
            name = e.get("name", "")
            if not isinstance(name, str):
                raise self.err(where, f"name: expected a string, got {name!r}")
            eligible = e.get("eligible", True)
            if not isinstance(eligible, bool):
                raise self.err(where, f"eligible: expected true or false, got {eligible!r}")
            members_raw = e.get("members", [])
            if not isinstance(members_raw, list) or not all(isinstance(m, str) for m in members_raw):
                raise self.err(where, "members: expected a list of names")
            inel = e.get("ineligible", [])
            if not isinstance(inel, list) or not all(isinstance(m, str) and m in members_raw for m in inel):
                raise self.err(where, "ineligible: expected a list of names from members")
            if members_raw and fmt.kind != "individual" and not (
                    fmt.min_members <= len(members_raw) <= fmt.max_members):
                raise self.err(where, f"members: a {fmt.kind} of {fmt.name} has"
                                      f" {fmt.min_members}-{fmt.max_members} members, got {len(members_raw)}")
            if len(set(members_raw)) != len(members_raw):
                raise self.err(where, "members: a name is listed twice")
            members = tuple(Member(m, m not in inel) for m in members_raw)
            out.append(Entrant(eid, name, members, eligible))
        if fmt.capacity is not None and len(out) > fmt.capacity:
            raise self.err("entrants", f"{len(out)} entrants, but {fmt.name} takes at most {fmt.capacity}")
        self.ids = {e.id for e in out}
        return out

    # -- timeline --

    def timeline(self, raw: Any, entrants: list[Entrant], now: int | None) -> list[Fact]:
        if not isinstance(raw, list):
            raise self.err("timeline", "expected a list of events, e.g. timeline = [ { at = \"41:07\","
                                       " press = \"A\" } ]")
        fmt = self.fmt
        n = len(fmt.puzzles)
        facts: list[Fact] = [RoundStart(0)]
        press_ids: set[str] = set()
        current: dict[tuple[str, int], list[str]] = {}     # (entrant, puzzle) -> live press ids
        auto = 0
        for i, ev in enumerate(raw):
            where = f"timeline[{i}]"
            if not isinstance(ev, dict):
                raise self.err(where, f"expected a table like {{ at = \"41:07\", press = \"A\" }}, got {ev!r}")
            where = self.where("timeline", raw, i)
            verbs = [k for k in ev if k in VERBS]
            if len(verbs) != 1:
                raise self.err(where, f"expected exactly one of {', '.join(VERBS)}"
                                      f"{', got ' + ', '.join(verbs) if verbs else ''}")
            verb = verbs[0]
            allowed = _EXTRA[verb] | {verb, "at"}
            for k in ev:
                if k not in allowed:
                    raise self.err(where, f"{k}: not a key of a {verb} event (keys: {', '.join(sorted(allowed))})")
            at = None
            if "at" in ev:
                at = self.duration(f"{where}: at", ev["at"])
                if at < 0:
                    raise self.err(where, "at: expected a time since the start (not negative)")
            elif verb in _NEEDS_AT:
                raise self.err(where, f"at: a {verb} needs the time it happened, e.g. at = \"41:07\"")
            if now is not None and at is not None and at > now:
                continue
            target = ev[verb]
            if verb == "void":
                facts.append(self.void(where, ev, current, press_ids))
                continue
            if verb == "correct":
                # as the hub's `act correct`: the press is voided and made
                # again at the corrected time, keeping its confirmations
                old = self.void(where, dict(ev, void=target), current, press_ids)
                ent, pz = next((f.entrant, f.puzzle) for f in facts
                               if isinstance(f, Press) and f.press_id == old.press_id)
                auto += 1
                pid = f"{ent}:{pz}#{auto}"
                press_ids.add(pid)
                current.setdefault((ent, pz), []).append(pid)
                facts += [old, Press(ent, pz, at, pid)]          # type: ignore[arg-type]
                facts += [Confirm(ent, pz, pid, c.missing_found, c.missing_lost, c.missing_adjacent)
                          for c in list(facts) if isinstance(c, Confirm) and (
                              c.press_id == old.press_id or (not c.press_id and (c.entrant, c.puzzle) == (ent, pz)))]
                continue
            ent = self.entrant(where, verb, target)

            def puzzle() -> int:
                if "puzzle" not in ev:
                    if n == 1:
                        return 1
                    raise self.err(where, f"puzzle: required, {fmt.name} has puzzles 1-{n}")
                pz = ev["puzzle"]
                if not isinstance(pz, int) or isinstance(pz, bool) or not 1 <= pz <= n:
                    raise self.err(where, f"puzzle: expected 1-{n}, got {pz!r}")
                return pz

            if verb == "press":
                pz = puzzle()
                given = ev.get("id")
                if given is None:
                    auto += 1
                    pid = f"{ent}:{pz}#{auto}"
                elif not isinstance(given, str) or not given or given in press_ids or given in self.ids:
                    raise self.err(where, f"id: expected a new press id (not an entrant id), got {given!r}")
                else:
                    pid = given
                press_ids.add(pid)
                current.setdefault((ent, pz), []).append(pid)
                facts.append(Press(ent, pz, at, pid))       # type: ignore[arg-type]
            elif verb == "confirm":
                pz = puzzle() if "puzzle" in ev or "id" not in ev else 0
                pid = ev.get("id", "")
                if pid and pid not in press_ids:
                    raise self.err(where, f"id: no press with id {pid!r} so far")
                if not pid and not current.get((ent, pz)):
                    raise self.err(where, f"no press of {ent} for puzzle {pz} to confirm so far")
                if "missing" in ev and "found" in ev:
                    raise self.err(where, "missing, found: the same thing - give one")
                mf = self.pieces(where, ev, "missing" if "missing" in ev else "found")
                ml = self.pieces(where, ev, "lost")
                ma = self.pieces(where, ev, "adjacent")
                if ma == 1:
                    raise self.err(where, "adjacent: a production fault is 2 or more adjacent missing"
                                          " pieces; a single one is `missing`")
                facts.append(Confirm(ent, pz, pid, mf, ml, ma))
            elif verb == "count":
                pz = puzzle()
                has_p, has_r = "placed" in ev, "remaining" in ev
                if has_p == has_r:
                    raise self.err(where, "expected exactly one of placed, remaining")
                k = "placed" if has_p else "remaining"
                v = self.pieces(where, ev, k)
                if v > fmt.puzzles[pz - 1]:
                    raise self.err(where, f"{k}: puzzle {pz} has {fmt.puzzles[pz - 1]} pieces, got {v}")
                facts.append(Count(ent, pz, v if has_p else None, None if has_p else v))
            elif verb == "swap":
                part = next((p for p in fmt.parts if p.work == "chosen"), None)
                if part is None:
                    raise self.err(where, f"swap: {fmt.name} has no part worked in a chosen order")
                a = self.in_part(where, ev, "packed", part)
                b = self.in_part(where, ev, "opened", part)
                if a == b:
                    raise self.err(where, "opened: must differ from packed")
                facts.append(Swap(ent, at, a, b))            # type: ignore[arg-type]
            elif verb == "start":
                if not fmt.start_offsets:
                    raise self.err(where, f"start: {fmt.name} gives no per-entrant start times"
                                          " (round.start_offsets = false)")
                facts.append(StartOffset(ent, at))           # type: ignore[arg-type]
            elif verb == "dns":
                facts.append(DidNotStart(ent))
            elif verb == "dq":
                reason = ev.get("reason")
                if not isinstance(reason, str) or not reason.strip():
                    raise self.err(where, "reason: a disqualification needs a reason")
                facts.append(Disqualified(ent, reason))
            elif verb == "reinstate":
                facts.append(Reinstated(ent))
        return facts

    def entrant(self, where: str, verb: str, v: Any) -> str:
        if not isinstance(v, str) or v not in self.ids:
            shown = ", ".join(sorted(self.ids)[:20])
            raise self.err(where, f"{verb}: unknown entrant {v!r} (entrants: {shown})")
        return v

    def pieces(self, where: str, ev: dict, k: str) -> int:
        v = ev.get(k, 0)
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            raise self.err(where, f"{k}: expected a number of pieces >= 0, got {v!r}")
        return v

    def in_part(self, where: str, ev: dict, k: str, part) -> int:
        v = ev.get(k)
        if not isinstance(v, int) or isinstance(v, bool) or v not in part.numbers:
            raise self.err(where, f"{k}: expected a puzzle of {part.name}"
                                  f" ({part.first}-{part.numbers[-1]}), got {v!r}")
        return v

    def void(self, where: str, ev: dict, current: dict[tuple[str, int], list[str]],
             press_ids: set[str]) -> Void:
        v = ev["void"]
        for lst in current.values():
            if v in lst:
                lst.remove(v)
                return Void(v)
        if v in press_ids:
            raise self.err(where, f"void: press {v!r} is already voided")
        if isinstance(v, str) and v in self.ids:
            n = len(self.fmt.puzzles)
            pz = ev.get("puzzle", 1 if n == 1 else None)
            if pz is None:
                raise self.err(where, f"puzzle: required to void a press of {v} ({self.fmt.name}"
                                      f" has puzzles 1-{n})")
            live = current.get((v, pz))
            if not live:
                raise self.err(where, f"void: {v} has no press for puzzle {pz} to void")
            return Void(live.pop(0))
        raise self.err(where, f"void: expected a press id or an entrant id, got {v!r}")

    # -- expectations --

    def expectations(self, raw: Any) -> list[dict]:
        if not isinstance(raw, list):
            raise self.err("expect", "expected a list, e.g. expect = [ { entrant = \"A\", place = 1 } ]")
        out = []
        for i, x in enumerate(raw):
            where = f"expect[{i}]"
            if not isinstance(x, dict):
                raise self.err(where, f"expected a table, got {x!r}")
            where = self.where("expect", raw, i)
            for k in x:
                if k not in _EXPECT_KEYS:
                    raise self.err(where, f"{k}: unknown key (keys: {', '.join(sorted(_EXPECT_KEYS))})")
            if x.get("entrant") not in self.ids:
                raise self.err(where, f"entrant: unknown entrant {x.get('entrant')!r}")
            e = dict(x)
            for k in ("time", "net", "penalty"):
                if k in e and e[k] is not False:
                    e[k] = self.duration(f"{where}: {k}", e[k])
            out.append(e)
        return out


def check_expectations(scn: Scenario, rows: list[StandingRow]) -> list[str]:
    """Differences between the scenario's `expect` entries and the rows."""
    by = {r.entrant: r for r in rows}
    problems: list[str] = []
    fields = {"place": "place", "award": "award_place", "status": "status", "time": "time_ms",
              "net": "net_time_ms", "penalty": "penalty_ms", "pieces": "pieces",
              "provisional": "provisional", "official": "official", "deducted": "deducted_pieces"}
    for x in scn.expect:
        r = by[x["entrant"]]
        for k, attr in fields.items():
            if k not in x:
                continue
            want = x[k]
            got = getattr(r, attr)
            if want is False and k in ("place", "award", "time", "net"):
                want = None
            if want != got:
                show = (lambda v: fmt_duration(v, scn.format.resolution_ms) if k in ("time", "net", "penalty")
                        and isinstance(v, int) else repr(v))
                problems.append(f"{x['entrant']}: {k} expected {show(want)}, got {show(got)}")
    return problems


__all__ = ["Scenario", "ScenarioError", "load_scenario", "loads_scenario", "check_expectations"]
