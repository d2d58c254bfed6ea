"""The live marks of advancement_marks.py: hand-worked cases (their
derivation beside them), then every completion of small random rounds:
a CERTAIN entrant advances in each, an OUT one in none."""

from __future__ import annotations

import itertools
import random

import pytest

from tabletimer.hub.rules.advancement import Candidate, make_plan, result_key
from tabletimer.hub.rules.advancement_marks import CERTAIN, IN, OUT, Open, marks
from tabletimer.hub.rules.advancement_rule import AdvancementRule

MIN = 60_000


def fin(eid: str, source: str, place: int, minutes: float, country: str = "") -> Candidate:
    t = int(minutes * MIN)
    return Candidate(eid, eid.upper(), source, place, "finished", t, 500, country, place - 1,
                     result_key("finished", t, 500))


def solving(eid: str, source: str, country: str = "", elapsed_min: float | None = None) -> Open:
    floor = None if elapsed_min is None else result_key("finished", int(elapsed_min * MIN), 0)
    return Open(eid, eid.upper(), source, country, floor)


TOP3 = AdvancementRule(("g",), total=3)
TOP2 = AdvancementRule(("g",), total=2)


def test_the_first_finishers_are_certain_once_nobody_solving_can_finish_before_them() -> None:
    # g: a1 40:00 (1st), a2 42:00 (2nd); four still solving at 45:00 of the round: each finishes
    # at 45:00 at the earliest (a penalty only adds), behind both.  Top 3: a1 and a2 advance
    # whatever the four do; the third place is one of the four.
    ranked = [fin("a1", "g", 1, 40), fin("a2", "g", 2, 42)]
    opens = {"g": [solving(f"s{i}", "g", elapsed_min=45) for i in range(4)]}
    assert marks(TOP3, {"g": ranked}, opens) == {"a1": CERTAIN, "a2": CERTAIN}
    # at 41:00 the four could still all finish before a2 (41:00 < 42:00): a2 would be 6th.  a1's
    # 40:00 stays ahead of them: certain.  a2 is in the places as they stand: IN.
    opens = {"g": [solving(f"s{i}", "g", elapsed_min=41) for i in range(4)]}
    assert marks(TOP3, {"g": ranked}, opens) == {"a1": CERTAIN, "a2": IN}
    # with no floor known (a round not started, a pieces-ranked one) nobody is certain yet
    opens = {"g": [solving(f"s{i}", "g") for i in range(4)]}
    assert marks(TOP3, {"g": ranked}, opens) == {"a1": IN, "a2": IN}


def test_out_once_the_places_are_taken_by_results_already_recorded() -> None:
    # top 2 of g: a1 40:00, a2 42:00, a3 44:00, a4 46:00; two still solving at 45:00.  The
    # solving can only come after a2: a1 and a2 are certain, so a3 and a4 can no longer make it
    # (even if the two never finished, two places are a1's and a2's).
    ranked = [fin("a1", "g", 1, 40), fin("a2", "g", 2, 42), fin("a3", "g", 3, 44), fin("a4", "g", 4, 46)]
    opens = {"g": [solving("s1", "g", elapsed_min=45), solving("s2", "g", elapsed_min=45)]}
    assert marks(TOP2, {"g": ranked}, opens) == {"a1": CERTAIN, "a2": CERTAIN, "a3": OUT, "a4": OUT}


def test_a_country_place_across_a_finished_group_and_one_that_runs() -> None:
    # The final takes the best of each country, then the next best up to 3, by place then time.
    # group-a is over: a1 CZE 40:00, a2 NOR 41:00, a3 CZE 42:00.  group-b runs: b1 CZE 39:00 (1st),
    # bx (NOR) and by (DEN) still solving, no floor.
    # a1's worst case: bx and by both finish in 39:00 with b1, all three 1st of group-b.  Then CZE's
    # best is b1 (place 1, 39:00 before a1's 40:00), NOR's bx, DEN's by: the 3 places, a1 out of them.
    # b1's worst: bx and by finish before it (b1 3rd of group-b): CZE's best is a1.  So nobody is
    # certain yet.
    # As it stands (bx, by without a place): CZE b1 (place 1, 39:00 before a1's 40:00), NOR a2,
    # then the next best a1: b1, a2 and a1 are IN.
    # a3 at best: bx and by behind everybody (or out): CZE b1, NOR a2, the next best a1: a3 is 4th
    # of 3 places and CZE has its best already: OUT.
    rule = AdvancementRule(("group-a", "group-b"), total=3, per_country=1)
    a = [fin("a1", "group-a", 1, 40, "CZE"), fin("a2", "group-a", 2, 41, "NOR"), fin("a3", "group-a", 3, 42, "CZE")]
    b = [fin("b1", "group-b", 1, 39, "CZE")]
    opens = {"group-b": [solving("bx", "group-b", "NOR"), solving("by", "group-b", "DEN")]}
    assert marks(rule, {"group-a": a, "group-b": b}, opens) == {"a1": IN, "b1": IN, "a2": IN, "a3": OUT}


def test_a_round_not_started_leaves_everybody_uncertain_but_the_out() -> None:
    # top 2 of each round (per_source): group-a over (a1, a2, a3), group-b not started: its entrants
    # are open but take group-b's places, never group-a's: a1, a2 certain, a3 out.  A total of 3
    # across both by place instead: group-b's two first could tie a1 on place 1 and take both
    # remaining places... a1 (place 1, 40:00) against two of group-b with no floor (better than any
    # result): the worst case puts both ahead at place 1, a1 third: still in the 3.  a2 is not.
    a = [fin("a1", "group-a", 1, 40), fin("a2", "group-a", 2, 41), fin("a3", "group-a", 3, 42)]
    opens = {"group-b": [solving("b1", "group-b"), solving("b2", "group-b"), solving("b3", "group-b")]}
    per = AdvancementRule(("group-a", "group-b"), per_source=2)
    assert marks(per, {"group-a": a, "group-b": []}, opens) == {"a1": CERTAIN, "a2": CERTAIN, "a3": OUT}
    tot = AdvancementRule(("group-a", "group-b"), total=3)
    got = marks(tot, {"group-a": a, "group-b": []}, opens)
    # the worst case: b1, b2, b3 all at place 1 ahead of a1 on result: a1 is 4th of 3 -> not certain
    assert got == {"a1": IN, "a2": IN, "a3": IN}


def test_a_tie_the_desk_decides_is_never_certain() -> None:
    # top 1 of g: a1 and a2 both 40:00 (both 1st), nobody solving: a tie for the desk: neither is
    # certain nor in (the desk has not named whom it takes); neither is out either.
    ranked = [fin("a1", "g", 1, 40), fin("a2", "g", 1, 40)]
    assert marks(AdvancementRule(("g",), total=1, ties="desk"), {"g": ranked}, {}) == {}
    assert marks(AdvancementRule(("g",), total=1, ties="all"), {"g": ranked}, {}) == {"a1": CERTAIN, "a2": CERTAIN}
    assert marks(AdvancementRule(("g",), total=1, ties="none"), {"g": ranked}, {}) == {"a1": OUT, "a2": OUT}


# --- every completion of small rounds ---------------------------------------------------------

def _complete(ranked: list[tuple[str, str, str, int | None]], source: str) -> list[Candidate]:
    """(id, source, country, minutes or None: removed) -> the source's candidates, places by result."""
    live = [(e, c, m) for e, s, c, m in ranked if s == source and m is not None]
    live.sort(key=lambda x: x[2])
    out = []
    for i, (e, c, m) in enumerate(live):
        place = 1 + sum(1 for _, _, n in live if n < m)
        out.append(fin(e, source, place, m, c))
    return out


@pytest.mark.parametrize("seed", range(int(__import__("os").environ.get("TT_MARK_SEEDS", "60"))))
def test_certain_advances_and_out_does_not_in_every_completion(seed: int) -> None:
    rnd = random.Random(seed)
    srcs = ("s1", "s2")
    countries = ["CZE", "NOR", "DEN"]
    kind = rnd.choice(["total", "per_source", "per_country", "percent"])
    args: dict = {"ties": rnd.choice(["all", "none", "desk"]), "across": rnd.choice(["place", "result"])}
    if kind == "total":
        args["total"] = rnd.randint(1, 4)
    elif kind == "per_source":
        args["per_source"] = rnd.randint(1, 2)
        if rnd.random() < 0.5:
            args["total"] = rnd.randint(2, 5)
    elif kind == "per_country":
        args.update(per_country=1, total=rnd.randint(3, 5))
    else:
        args.update(percent=rnd.choice([34, 50, 75]), total=rnd.randint(2, 6) if rnd.random() < 0.5 else None)
    rule = AdvancementRule(srcs, **args)
    fixed = [(f"e{i}", rnd.choice(srcs), rnd.choice(countries), rnd.randint(40, 46)) for i in range(rnd.randint(2, 5))]
    opens = [(f"o{i}", rnd.choice(srcs), rnd.choice(countries)) for i in range(rnd.randint(1, 3))]
    now = {s: _complete(fixed, s) for s in srcs}
    got = marks(rule, now, {s: [Open(o, o.upper(), s, c) for o, src, c in opens if src == s] for s in srcs})
    choices = [None, 39, 40, 43, 46, 50]           # removed (a DNS, a DQ), ahead, tied, between, behind
    for pick in itertools.product(choices, repeat=len(opens)):
        every = fixed + [(o, s, c, m) for (o, s, c), m in zip(opens, pick)]
        for ids in _every_desk_choice(rule, {s: _complete(every, s) for s in srcs}):
            for e, mark in got.items():
                if mark == CERTAIN:
                    assert e in ids, (rule, every, e)
                if mark == OUT:
                    assert e not in ids, (rule, every, e)


def _every_desk_choice(rule: AdvancementRule, sources: dict[str, list[Candidate]]) -> list[set[str]]:
    """Who advances under each choice the desk can make at its ties (a tie
    decided can open the next: followed to the end)."""
    done: list[set[str]] = []
    todo: list[frozenset[str]] = [frozenset()]
    seen: set[frozenset[str]] = set()
    while todo:
        taken = todo.pop()
        if taken in seen:
            continue
        seen.add(taken)
        plan = make_plan(rule, sources, sorted(taken))
        if not plan.undecided:
            done.append(set(plan.ids))
            continue
        t = plan.undecided[0]
        free = [c.entrant for c in t.tied if c.entrant not in taken]
        n = t.places - len([c for c in t.tied if c.entrant in taken])
        if n < 0:                  # (taken at an earlier tie, tied again here: more than its places)
            continue
        for pick in itertools.combinations(free, n):
            todo.append(taken | set(pick))
    return done
