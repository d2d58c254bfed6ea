"""Who advances to a round from its source rounds, by its advancement rule
(advancement_rule.py): the plan, pure -- the source rounds' standings in,
who advances (from where, by which part of the rule), the ties at a cut,
the reserves in order and what stops the plan out.  Nothing is decided
silently: a tie the rule leaves to the desk stays open in the plan until the
desk names whom it takes.

The steps, in this order (docs/formats.md, "[advancement]"):
1. the pool: every entrant with a place in a source round, but the
   withdrawn, and, with `beat`, those whose result does not beat it;
2. per_source: the best N of each source round, by its places;
3. per_country: the best K of each country, across the sources;
4. total (and percent): the next best, across the sources, until the total
   is reached (the places the steps before gave count towards it).
Across rounds entrants are compared by their place in their round, then by
their result (across = "place"), or by their result alone ("result"); equal
keys are a tie.  At each cut the rule's `ties` says what happens to those
tied on it: all advance, none does, or the desk takes as many as there are
places (the plan's `undecided` until it does).  The reserves are the rest
of the pool in that order; a withdrawal is the plan made again without the
withdrawn (whom it brings in: `replacements`)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Iterable, Sequence

from .advancement_rule import AdvancementRule

NO_TIME = 2 ** 62


@dataclass(frozen=True)
class Candidate:
    """An entrant of a source round as its standings leave it.  result: the
    round's own comparison (smaller is better, result_key); order: its
    row's position in the standings."""
    entrant: str
    name: str
    source: str
    place: int | None
    status: str
    net_time_ms: int | None
    pieces: int
    country: str = ""
    order: int = 0
    result: tuple[int, ...] = ()

    @property
    def ranked(self) -> bool:
        return self.place is not None


def result_key(status: str, net_time_ms: int | None, pieces: int, order_by: str = "time") -> tuple[int, ...]:
    """An entrant's result as a key that compares across rounds of the same
    format (smaller is better): by time, finishers by net time, then the
    rest by pieces; by pieces, pieces first, then the time."""
    t = net_time_ms if net_time_ms is not None else NO_TIME
    if order_by == "pieces":
        return (-pieces, t)
    return (0, t) if status == "finished" else (1, -pieces)


@dataclass(frozen=True)
class Pick:
    candidate: Candidate
    why: str                  # which part of the rule: "the best 3 of group-a", "best of CZE", "next best"


@dataclass(frozen=True)
class Tie:
    """Entrants tied on a cut: `places` of them can advance by this step."""
    step: str
    places: int
    tied: tuple[Candidate, ...]
    rule: str                 # all | none | desk
    taken: tuple[str, ...] = ()    # the desk's choice, once it made it

    @property
    def undecided(self) -> bool:
        return self.rule == "desk" and len(self.taken) != self.places


@dataclass(frozen=True)
class Plan:
    rule: AdvancementRule
    advancing: tuple[Pick, ...]           # in seating order: places, then results, across the sources
    reserves: tuple[Candidate, ...]       # in order: the first takes the first place that frees
    ties: tuple[Tie, ...]
    out: tuple[tuple[Candidate, str], ...]     # who cannot advance, and why
    problems: tuple[str, ...] = ()        # what stops the plan from being applied, and what to do
    warnings: tuple[str, ...] = ()
    source_hash: str = ""

    @property
    def undecided(self) -> tuple[Tie, ...]:
        return tuple(t for t in self.ties if t.undecided)

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(p.candidate.entrant for p in self.advancing)


def source_hash(sources: dict[str, Sequence[Candidate]]) -> str:
    """The sha256 of the source results the plan reads (each source's rows:
    entrant, place, status, net time, pieces, country), hex: a result
    changed since a plan was made changes it."""
    doc = {name: [[c.entrant, c.place, c.status, c.net_time_ms, c.pieces, c.country] for c in rows]
           for name, rows in sorted(sources.items())}
    return hashlib.sha256(json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def order_key(c: Candidate, across: str = "place") -> tuple:
    """How entrants of different rounds compare (smaller is better): by
    their place in their round, then their result ("place"), or by their
    result alone ("result")."""
    return (c.place, c.result) if across == "place" else c.result


def ranks_across(rounds: Sequence[Sequence[Candidate]], across: str = "place") -> dict[str, int]:
    """The places of the ranked entrants of several rounds taken together
    (entrant -> 1, 2, ...), as a plan orders them (order_key): equal keys
    share a place, the next skipped (1, 2, 2, 4).  One in several rounds
    keeps its best.  One round: its own order (its places, then results)."""
    best: dict[str, tuple] = {}
    for cands in rounds:
        for c in cands:
            if c.ranked:
                k = order_key(c, across)
                if c.entrant not in best or k < best[c.entrant]:
                    best[c.entrant] = k
    keys = sorted(best.values())
    first: dict[tuple, int] = {}
    for i, k in enumerate(keys, start=1):
        first.setdefault(k, i)
    return {e: first[k] for e, k in best.items()}


class _Plan:
    """The plan as it is made, step by step."""

    def __init__(self, rule: AdvancementRule, pool: list[Candidate], taken: set[str]):
        self.rule, self.pool, self.taken = rule, pool, taken
        self.chosen: dict[str, str] = {}          # entrant -> why
        self.ties: list[Tie] = []

    def key(self, c: Candidate) -> tuple:
        return order_key(c, self.rule.across)

    def cut(self, ordered: list[Candidate], n: int, step: str, why: str, key) -> None:
        """The first n of ordered (the chosen already among them count),
        under the rule's ties at the cut."""
        if n <= 0 or not ordered:
            return
        if len(ordered) <= n or key(ordered[n - 1]) != key(ordered[n]):
            self.choose(ordered[:n], why)
            return
        edge = key(ordered[n - 1])
        before = [c for c in ordered if key(c) < edge]
        tied = [c for c in ordered if key(c) == edge]
        self.choose(before, why)
        already = [c for c in tied if c.entrant in self.chosen]     # (by a step before)
        places = n - len(before) - len(already)
        tied = [c for c in tied if c.entrant not in self.chosen]
        if places <= 0:
            return
        rule = self.rule.ties
        taken = tuple(c.entrant for c in tied if c.entrant in self.taken) if rule == "desk" else ()
        self.ties.append(Tie(step, places, tuple(tied), rule, taken))
        if rule == "all":
            self.choose(tied, f"{why} (tied at the cut: all advance)")
        elif rule == "desk" and len(taken) == places:
            self.choose([c for c in tied if c.entrant in self.taken], f"{why} (tied at the cut: the desk's choice)")

    def choose(self, cands: Iterable[Candidate], why: str) -> None:
        for c in cands:
            self.chosen.setdefault(c.entrant, why)


def make_plan(rule: AdvancementRule, sources: dict[str, Sequence[Candidate]], taken: Iterable[str] = (),
              withdrawn: Iterable[str] = ()) -> Plan:
    """The plan of the rule on the source rounds' candidates (every row of
    each source's standings, in its order).  taken: whom the desk takes at
    ties it decides; withdrawn: entrants who gave up their place."""
    gone = set(withdrawn)
    problems: list[str] = []
    warnings: list[str] = []
    missing = [s for s in rule.sources if s not in sources]
    if missing:
        problems.append(f"no standings of {', '.join(missing)}")
    every = [c for s in rule.sources for c in sources.get(s, ())]
    out: list[tuple[Candidate, str]] = []
    pool: list[Candidate] = []
    for c in every:
        if c.entrant in gone:
            out.append((c, "withdrawn"))
        elif not c.ranked:
            out.append((c, {"dns": "did not start", "dq": "disqualified"}.get(c.status, f"no place ({c.status})")))
        elif rule.beat_finished and c.status != "finished":
            out.append((c, "did not finish (the rule: a finish to advance)"))
        elif rule.beat_ms is not None and (c.net_time_ms is None or c.net_time_ms >= rule.beat_ms):
            out.append((c, "did not beat the time to beat"))
        else:
            pool.append(c)
    ranked = sum(1 for c in every if c.ranked)
    pl = _Plan(rule, [], set(taken))
    pool.sort(key=lambda c: (pl.key(c), rule.sources.index(c.source), c.order))
    pl.pool = pool
    total = rule.total
    if rule.percent is not None:
        cap = ranked * rule.percent // 100
        total = cap if total is None else min(total, cap)
    if rule.total is not None and rule.total > len(every):
        problems.append(f"the rule asks for {rule.total} entrants but {', '.join(rule.sources)} hold "
                        f"{len(every)}: lower advancement.total in the round's format.toml, or add the "
                        f"missing rounds to advancement.from")
    if rule.per_source:
        for s in rule.sources:
            own = sorted((c for c in pool if c.source == s), key=lambda c: (c.place, c.order))
            pl.cut(own, rule.per_source, f"the best {rule.per_source} of {s}", f"the best {rule.per_source} of {s}",
                   lambda c: c.place)
    if rule.per_country:
        nameless = [c for c in pool if not c.country]
        if nameless:
            problems.append(f"no country for {', '.join(f'{c.entrant} ({c.source})' for c in nameless[:10])}"
                            + (" ..." if len(nameless) > 10 else "")
                            + ": fill the country column of their round's entrants.csv")
        countries = list(dict.fromkeys(c.country for c in pool if c.country))
        for country in countries:
            own = [c for c in pool if c.country == country]
            word = "best" if rule.per_country == 1 else f"best {rule.per_country}"
            pl.cut(own, rule.per_country, f"the {word} of {country}", f"{word} of {country}", pl.key)
    if total is not None:
        if len(pl.chosen) > total:
            problems.append(f"the rule's guaranteed places ({len(pl.chosen)}: per_source, per_country) are "
                            f"more than the total {total}: raise advancement.total, or lower per_country or "
                            f"per_source")
        else:
            rest = [c for c in pool if c.entrant not in pl.chosen]
            first = not pl.chosen           # (no step before: the best N, not the "next" best)
            pl.cut(rest, total - len(pl.chosen), f"the {'best' if first else 'next best up to'} {total}",
                   f"the best {total}" if first else "next best", pl.key)
        if len(pool) < total:
            warnings.append(f"only {len(pool)} can advance of the {total} the rule asks for (the rest did "
                            f"not start, were disqualified, withdrew or did not beat the rule's result)")
    advancing = tuple(Pick(c, pl.chosen[c.entrant]) for c in pool if c.entrant in pl.chosen)
    reserves = tuple(c for c in pool if c.entrant not in pl.chosen)
    for t in pl.ties:
        if t.undecided:
            problems.append(f"a tie at the cut of {t.step}: {', '.join(c.entrant for c in t.tied)} for "
                            f"{t.places} place(s): the desk decides: name whom it takes with --take ID")
        elif t.rule == "desk" and any(e not in {c.entrant for c in t.tied} for e in t.taken):
            problems.append(f"--take names an entrant not tied at {t.step}")
    tied_ids = {c.entrant for t in pl.ties if t.rule == "desk" for c in t.tied}
    stray = sorted(set(taken) - tied_ids)
    if stray:
        problems.append(f"--take {', '.join(stray)}: not tied at a cut the desk decides (the plan's ties "
                        f"name those it may take)")
    return Plan(rule, advancing, reserves, tuple(pl.ties), tuple(out), tuple(problems), tuple(warnings),
                source_hash(sources))


def replacements(plan: Plan, before: Sequence[str], withdrawn: str) -> tuple[list[str], list[str]]:
    """A withdrawal: (who comes in, who else would leave) between the round's
    entrants before it and the plan made again without the withdrawn (who
    else would leave: nobody, but for a rule that cuts where a place freed
    changes a tie; the desk decides then)."""
    now = plan.ids
    came = [e for e in now if e not in before]
    left = [e for e in before if e not in now and e != withdrawn]
    return came, left
