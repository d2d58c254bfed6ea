"""Live marks while a source round runs: from the source rounds' standings
as they stand and the next round's advancement rule (advancement_rule.py),
who is certain to advance, who is in the qualifying places but not yet
certain, and who can no longer make it.  Pure; the plan itself is
advancement.py's, and every mark is that plan made on a scenario.

An entrant is *open* while its result can still change by solving: still
solving or waiting in a round that runs, or any entrant of a source round
that has not started.  Recorded results count as recorded (a void, a
penalty or a correction later makes the marks again: they are made at
every change).  Then, for an entrant with a place:

- CERTAIN: it advances even in the worst case for it: every open entrant
  takes the best result it can still get (its `floor`: in a time-ranked
  round, an entrant solving for E minutes finishes no faster than E, as a
  penalty only adds; otherwise better than anybody) and the best place
  with it, ranked, with its own country; the entrant and the others of
  its round are pushed down a place by each open one of their round not
  behind them, while the ranked of the other rounds keep their places (an
  open entrant that ties them rather than passing them leaves them theirs:
  by place across rounds that is the worse case).  Whatever the open
  entrants do, none gets further ahead of the entrant than that, and no
  place of the rule (per_source, per_country, total, percent) grows for it
  by another's better result.  A tie at a cut the desk decides is not
  certain.  Under ties = "all" an open entrant tying one behind the
  entrant at a cut brings that one in too: the worst case counts a place
  of the total fewer for each open entrant.
- OUT: it does not advance even in the best cases for it: every open
  entrant ranked behind everybody and claiming no country's place; every
  open entrant without a place (a DNS, a DQ: fewer ranked, a smaller
  percent); and, across rounds by place, the other rounds' ranked pushed
  down a place by each open entrant of theirs as if it passed them, while
  it stays behind everybody (better than can happen); each under a tie
  the desk decides taking all the tied, and the desk taking as many as
  there are places (the first of them, or the last).  Under ties = "none"
  nobody is out while an entrant is open: one finishing in exactly the
  time of another at a cut takes both out of it and frees a place.
- IN: neither, and it advances in the plan as the standings stand now (the
  open entrants not counted): in the qualifying places, not yet certain.
- no mark: neither, and not in the places now (it may still make it), or
  without a place yet (solving).

tests/rules/test_advancement_marks.py checks the marks on hand-worked cases
and against every completion of small rounds."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Mapping, Sequence

from .advancement import Candidate, make_plan
from .advancement_rule import AdvancementRule

CERTAIN, IN, OUT = "certain", "in", "out"
BEST = (-(2 ** 62),)          # a result key better than any (result_key's are bigger)


@dataclass(frozen=True)
class Open:
    """An entrant whose result can still change: floor is the best result
    key it can still get (None: any)."""
    entrant: str
    name: str
    source: str
    country: str = ""
    floor: tuple[int, ...] | None = None


def _placed(ranked: Sequence[Candidate], opens: Sequence[Open], how: str) -> list[Candidate]:
    """A source's candidates with its open entrants ranked.  how: "ahead"
    (each at its floor, at the best place it can take: as if it tied the
    others; the ranked keep their places, the best case for them), "push"
    (the same, and each ranked entrant pushed down by every open entrant
    whose floor is not behind it: the worst case for them), "behind"
    (behind everybody, claiming no country's place), "passed" (behind too,
    yet the ranked pushed down as by "push": across rounds by place, an
    open entrant passing the others of its round is the best case for an
    entrant of another round; not a case that can happen, a better one
    than any that can)."""
    if how in ("ahead", "push"):
        floors = [o.floor if o.floor is not None else BEST for o in opens]
        moved = [dataclasses.replace(c, place=(c.place or 0) + sum(1 for f in floors if f <= c.result))
                 for c in ranked] if how == "push" else list(ranked)
        come = [Candidate(o.entrant, o.name, o.source, 1 + sum(1 for c in ranked if c.result < f), "finished",
                          None, 0, o.country, -1, f) for o, f in zip(opens, floors)]
        return come + moved
    if how == "passed":
        floors = [o.floor if o.floor is not None else BEST for o in opens]
        ranked = [dataclasses.replace(c, place=(c.place or 0) + sum(1 for f in floors if f <= c.result))
                  for c in ranked]
    # behind everybody of every round, by place too (a round of few: its last place is no one's)
    tail = [Candidate(o.entrant, o.name, o.source, 10 ** 6, "unfinished", None, 0, "", 10 ** 6 + i,
                      (2 ** 62,)) for i, o in enumerate(opens)]
    return list(ranked) + tail


def _advancing(rule: AdvancementRule, sources: Mapping[str, Sequence[Candidate]],
               opens: Mapping[str, Sequence[Open]], how: str, pushed: str = "", desk_picks: bool = False,
               every_pick: bool = False) -> set[str]:
    """Who advances in a scenario: "now" (as the standings stand), "removed"
    (the open entrants without a place), "behind", "passed" for the
    ranked of the source `pushed` (the other rounds' pushed down), or
    "worst" for the ranked of the source `pushed` (the others' ranked kept
    in their places)."""
    def ranked(s: str) -> list[Candidate]:
        return [c for c in sources.get(s, ()) if c.ranked]

    made: dict[str, Sequence[Candidate]]
    if how == "now":
        made = {s: list(sources.get(s, ())) for s in rule.sources}
    elif how == "removed":
        made = {s: ranked(s) for s in rule.sources}
    elif how == "behind":
        made = {s: _placed(ranked(s), opens.get(s, ()), "behind") for s in rule.sources}
    elif how == "passed":
        made = {s: _placed(ranked(s), opens.get(s, ()), "behind" if s == pushed else "passed")
                for s in rule.sources}
    else:
        made = {s: _placed(ranked(s), opens.get(s, ()), "push" if s == pushed else "ahead") for s in rule.sources}
    if not desk_picks:
        return set(make_plan(rule, made).ids)
    got: set[str] | None = None
    for first in (True, False):            # the desk takes the first of the tied, or the last
        taken: list[str] = []
        for _ in range(20):
            plan = make_plan(rule, made, taken)
            if not plan.undecided:
                break
            t = plan.undecided[0]
            free = [c.entrant for c in t.tied if c.entrant not in taken]
            n = t.places - (len(t.tied) - len(free))
            taken += (free if first else free[::-1])[:max(n, 0)] or free[:1]
        ids = set(plan.ids) - ({c.entrant for t in plan.undecided for c in t.tied} if every_pick else set())
        got = ids if got is None else (got & ids if every_pick else got | ids)
    return got or set()


def marks(rule: AdvancementRule, sources: Mapping[str, Sequence[Candidate]],
          opens: Mapping[str, Sequence[Open]]) -> dict[str, str]:
    """entrant id -> CERTAIN, IN or OUT (no key: no mark) for the ranked
    candidates of the sources.  sources: each source round's candidates as
    its standings stand (the open entrants among them without a place, or
    left out); opens: each source's open entrants."""
    open_ids = {o.entrant for os in opens.values() for o in os}
    ranked = [c for s in rule.sources for c in sources.get(s, ()) if c.ranked and c.entrant not in open_ids]
    sources = {s: [c for c in sources.get(s, ()) if c.entrant not in open_ids] for s in rule.sources}
    worst_rule = rule
    n_open = len(open_ids)
    if rule.ties == "all" and n_open and (rule.total is not None or rule.percent is not None):
        # an open entrant finishing in exactly the time of one behind the entrant, at a cut where all
        # the tied advance, brings that one in too: a place fewer for each open entrant
        every = len(ranked) + n_open + sum(1 for s in rule.sources for c in sources.get(s, ()) if not c.ranked)
        caps = [x for x in (rule.total, every * rule.percent // 100 if rule.percent is not None else None)
                if x is not None]
        worst_rule = dataclasses.replace(rule, total=max(min(caps) - n_open, 0), percent=None)
    # a tie the desk decides: the desk takes as many as there are places (the first, or the last):
    # certain only if in under both
    desk = rule.ties == "desk"
    worst = {s: _advancing(worst_rule, sources, opens, "worst", s, desk, True) & _advancing(
        worst_rule, sources, opens, "worst", s) for s in rule.sources if sources.get(s)}
    now = _advancing(rule, sources, opens, "now")
    best: dict[str, set[str]] = {s: set() for s in rule.sources}
    # a tie the desk decides may go either way: the best cases take all the tied, and the desk's
    # picks of as many as there are places (the first of them, or the last)
    for r, picks in ([(rule, False)] if rule.ties != "desk" else
                     [(dataclasses.replace(rule, ties="all"), False), (rule, True)]):
        both = _advancing(r, sources, opens, "behind", "", picks) | _advancing(r, sources, opens, "removed", "", picks)
        for s in rule.sources:
            best[s] |= both | (_advancing(r, sources, opens, "passed", s, picks) if rule.across == "place"
                               else set())
    out: dict[str, str] = {}
    for c in ranked:
        if c.entrant in worst[c.source]:
            out[c.entrant] = CERTAIN
        elif c.entrant not in best[c.source] and not (rule.ties == "none" and open_ids):
            out[c.entrant] = OUT
        elif c.entrant in now:
            out[c.entrant] = IN
    return out
