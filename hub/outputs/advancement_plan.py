"""`tabletimer advance`'s plan from the event folder: the round's rule (its
format's [advancement]), its source rounds' standings read from their logs
(finished or not, official or not), the round's own log (started? applied
already? withdrawals), the plan of rules/advancement.py and its text.
Reads only; the command (cli/advance.py) writes."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..event.fold.competition import Competition
from ..event.folder import advance_files, event_folder
from ..event.log.rows import RowKind, kind_of
from ..rules.advancement import Candidate, Plan, make_plan, result_key
from ..rules.advancement_rule import AdvancementRule
from ..rules.formats import FormatError, fmt_duration
from ..rules.standings import StandingRow
from .round_log import folded_log


@dataclass
class SourceRound:
    name: str
    rows: list[StandingRow] = field(default_factory=list)
    candidates: list[Candidate] = field(default_factory=list)
    entrant_rows: dict[str, dict[str, str]] = field(default_factory=dict)
    official: bool = False
    provisional: int = 0             # rows not confirmed (a finish, a count)
    problem: str | None = None       # why it cannot feed the round: not started, in progress, unreadable
    start_ms: int | None = None      # its round start (None: not started)
    offsets: dict[str, int] = field(default_factory=dict)    # entrant -> its start offset (if any)
    order: str = "time"              # its format's ranking: time | pieces


@dataclass
class RoundAdvance:
    """What `advance` knows of the round: its folder, rule, sources, log."""
    event: event_folder.EventFolder
    rule: AdvancementRule
    sources: dict[str, SourceRound]
    started: bool
    applied: list[dict]              # its log's advance rows, in order (payload + "id")
    plan: Plan
    problems: list[str]              # what stops an apply (the plan's own too)

    @property
    def last(self) -> dict | None:
        return self.applied[-1] if self.applied else None

    @property
    def not_official(self) -> list[str]:
        return [s.name for s in self.sources.values() if not s.official]

    @property
    def code(self) -> str:
        """The plan's code the desk applies it with: its source hash's first 12."""
        return self.plan.source_hash[:12]


def _read_log(ev: event_folder.EventFolder) -> Competition | None:
    if not ev.db.exists():
        return None
    return folded_log(ev)


def advance_rows(comp: Competition) -> list[dict]:
    """A round's log's advance rows (apply, withdraw), in order: payload + "id"."""
    return [dict(r["payload"], id=r["id"]) for r in comp.rows
            if kind_of(r) is RowKind.OP_ADVANCE and r["id"] not in comp.flagged]


def went_on(ev: event_folder.EventFolder) -> list[str]:
    """Who a round fed by earlier ones holds by its last advance row (its
    apply, or the withdrawal after it), in seating order; [] before it."""
    rows = advance_rows(folded_log(ev)) if ev.format.advancement is not None and ev.db.exists() else []
    return [str(e) for e in rows[-1].get("entrants") or ()] if rows else []


def load_source(hall: Path, name: str, now_ms: int, need_country: bool) -> SourceRound:
    src = SourceRound(name)
    try:
        ev = event_folder.load(hall, name)
        comp = _read_log(ev)
        countries = advance_files.countries(ev.files / "entrants.csv")
        _, raw = advance_files.read_rows(ev.files / "entrants.csv")
    except (event_folder.EventFolderError, FormatError) as e:
        src.problem = f"cannot be read: {e}"
        return src
    src.entrant_rows = {r.get("id", ""): r for r in raw}
    if need_country and countries is None:
        src.problem = (f"{ev.files / 'entrants.csv'} has no country column: the rule's per_country needs "
                       f"one (add a column country with each entrant's country)")
    if comp is None or comp.start_ms is None:
        src.problem = src.problem or (f"has not started (no round start in its log): its results feed the round "
                                      f"once it has run")
        return src
    rows, left = comp.standings_as_they_stand(now_ms)
    if left is not None:
        src.problem = src.problem or (f"is still in progress ({fmt_duration(left)} left): advance once its time "
                                      f"is up and its results are checked")
    src.rows, src.official = rows, comp.official_book().official() is not None
    src.start_ms, src.order = comp.start_ms, ev.format.order
    src.offsets = {e.id: comp.offset_of(e.id) for e in ev.entrants} if ev.format.start_offsets else {}
    src.provisional = sum(1 for r in rows if r.provisional)
    order_by = ev.format.order
    src.candidates = [Candidate(r.entrant, r.name, name, r.place, r.status, r.net_time_ms, r.pieces,
                                (countries or {}).get(r.entrant, ""), i,
                                result_key(r.status, r.net_time_ms, r.pieces, order_by))
                      for i, r in enumerate(rows)]
    return src


def load_advance(hall: str | Path, round: str, now_ms: int, taken: tuple[str, ...] = (),
                 withdrawn: tuple[str, ...] = ()) -> RoundAdvance:
    """The round's rule, sources, log and plan at now_ms; EventFolderError
    for a round that cannot be read or has no rule (what to do said)."""
    hall = Path(hall)
    ev = event_folder.load(hall, round)
    rule = ev.format.advancement
    if rule is None:
        raise event_folder.EventFolderError(
            f"round {ev.round}'s format ({ev.files / 'format.toml'}) has no [advancement]: add one saying "
            f"where its entrants come from (docs/formats.md, \"[advancement]\")")
    if ev.round in rule.sources:
        raise event_folder.EventFolderError(f"round {ev.round}'s [advancement] names itself in from")
    comp = _read_log(ev)
    applied = advance_rows(comp) if comp else []
    sources = {s: load_source(hall, s, now_ms, bool(rule.per_country)) for s in rule.sources}
    gone = tuple(dict.fromkeys([*(r["withdrawn"] for r in applied if r.get("withdrawn")), *withdrawn]))
    last_apply = next((r for r in reversed(applied) if r.get("phase") == "apply"), None)
    if last_apply is not None and not taken:
        taken = tuple(last_apply.get("taken") or ())
    plan = make_plan(rule, {s: src.candidates for s, src in sources.items()}, taken, gone)
    problems = [f"{s.name} {s.problem}" for s in sources.values() if s.problem] + list(plan.problems)
    return RoundAdvance(ev, rule, sources, comp is not None and comp.start_ms is not None, applied, plan, problems)


def _result(c: Candidate, step: int) -> str:
    if c.status == "finished" and c.net_time_ms is not None:
        return fmt_duration(c.net_time_ms, step)
    return f"{c.pieces} pieces" if c.place is not None else c.status


def plan_text(ra: RoundAdvance) -> str:
    """The plan as the desk reads it: who advances, from where and why, the
    ties, the reserves in order, who cannot advance; then what stops it."""
    plan, step = ra.plan, ra.event.format.resolution_ms
    out = [f"round {ra.event.round}: its entrants advance {ra.rule.describe()}"]
    for s in ra.sources.values():
        state = (s.problem or ("official" if s.official else
                               f"not official{f', {s.provisional} provisional' if s.provisional else ''}"))
        out.append(f"  {s.name}: {sum(1 for c in s.candidates if c.ranked)} ranked, {state}")
    official = [s.name for s in ra.sources.values() if s.official]
    out.append(f"official: {', '.join(official) or 'none'}; not official: {', '.join(ra.not_official) or 'none'}"
               + (" (applied only with --as-they-are)" if ra.not_official else ""))
    out.append(f"source results: sha256 {plan.source_hash}")
    out.append(f"advancing ({len(plan.advancing)}), in seating order (the previous rounds' positions):")
    for i, p in enumerate(plan.advancing, start=1):
        c = p.candidate
        country = f" [{c.country}]" if c.country else ""
        out.append(f"  {i:3}. {c.entrant:8} {c.name[:28]:28}{country:6} {c.source} place {c.place}, "
                   f"{_result(c, step)}: {p.why}")
    for t in plan.ties:
        word = {"all": "all advance", "none": "none advances",
                "desk": "the desk's choice: " + ", ".join(t.taken) if not t.undecided else "THE DESK DECIDES"}
        out.append(f"tie at the cut of {t.step}: {', '.join(c.entrant for c in t.tied)} for {t.places} "
                   f"place(s): {word[t.rule]}")
    out.append(f"reserves ({len(plan.reserves)}), in order (a withdrawal: the rule made again without the "
               f"withdrawn, which takes the first reserve unless a country's or a round's place frees):")
    for i, c in enumerate(plan.reserves[:20], start=1):
        out.append(f"  R{i:<3} {c.entrant:8} {c.name[:28]:28} {c.source} place {c.place}, {_result(c, step)}")
    if len(plan.reserves) > 20:
        out.append(f"  ... and {len(plan.reserves) - 20} more")
    if plan.out:
        out.append("cannot advance: " + ", ".join(f"{c.entrant} ({why})" for c, why in plan.out[:30])
                   + (" ..." if len(plan.out) > 30 else ""))
    return "\n".join(out)
