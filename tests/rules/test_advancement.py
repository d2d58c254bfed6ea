"""The advancement rule and its plan (hub/rules/advancement_rule.py,
advancement.py), pure, against hand-worked oracles: each derivation is
written out beside it."""

from __future__ import annotations

import pytest

from tabletimer.hub.rules.advancement import Candidate, make_plan, replacements, result_key, source_hash
from tabletimer.hub.rules.advancement_rule import AdvancementRule, RuleError, parse_rule
from tabletimer.hub.rules.formats import FormatError, loads

MIN = 60_000

# --- the oracle: 3 groups of 12 into a final of 10, "best 1 of each country, then the next best" ---
#
# Group A's k-th place finished in 38 + 2k minutes (a1 40:00, a2 42:00, ...), group B's in
# 39 + 2k (b1 41:00, ...), group C's in 38 + 2k minutes and 30 s (c1 40:30, ...): no two equal.
COUNTRIES = {
    "a": "CZE NOR CZE DEN CZE NOR ESP CZE NOR CZE DEN CZE",
    "b": "CZE CZE NOR CZE DEN CZE CZE NOR ISL CZE CZE NOR",
    "c": "NOR CZE CZE NOR CZE ESP CZE DEN CZE CZE NOR POL",
}
OFFSET_MS = {"a": 0, "b": MIN, "c": MIN // 2}


def group(g: str) -> list[Candidate]:
    out = []
    for k, country in enumerate(COUNTRIES[g].split(), start=1):
        t = (38 + 2 * k) * MIN + OFFSET_MS[g]
        out.append(Candidate(f"{g}{k}", f"{g.upper()} {k}", f"group-{g}", k, "finished", t, 500, country,
                             k - 1, result_key("finished", t, 500)))
    return out


def groups() -> dict[str, list[Candidate]]:
    return {f"group-{g}": group(g) for g in "abc"}


FINAL = AdvancementRule(("group-a", "group-b", "group-c"), total=10, per_country=1, ties="desk")


def test_three_groups_of_12_into_a_final_of_10_by_the_best_of_each_country_then_the_next_best() -> None:
    # Across the groups entrants compare by place, then time: place 1 is a1 40:00, c1 40:30,
    # b1 41:00; place 2 a2 42:00, c2 42:30, b2 43:00; place 3 a3 44:00, c3 44:30, b3 45:00; ...
    # Step 1, the best of each country, in that order:
    #   CZE a1 (place 1, 40:00)            NOR c1 (place 1, 40:30: a2 is only 2nd)
    #   DEN a4 (place 4; b5, c8 behind)    ESP c6 (place 6 beats a7's place 7, though a7 is a group A 7th)
    #   ISL b9 (its only one, 9th of B)    POL c12 (its only one, last of C)
    # = 6 places.  Step 2, the next best up to 10: 4 more, in the order above without those
    # taken: b1 (place 1), a2, c2, b2 (place 2).  Seating order: the pool's, place then time.
    # The reserves start with place 3: a3, c3, b3, then place 4: c4, b4 (a4 is in).
    plan = make_plan(FINAL, groups())
    assert not plan.problems and not plan.ties
    assert list(plan.ids) == ["a1", "c1", "b1", "a2", "c2", "b2", "a4", "c6", "b9", "c12"]
    why = {p.candidate.entrant: p.why for p in plan.advancing}
    assert why["a1"] == "best of CZE" and why["c6"] == "best of ESP" and why["c12"] == "best of POL"
    assert why["b1"] == why["b2"] == "next best"
    assert [c.entrant for c in plan.reserves[:5]] == ["a3", "c3", "b3", "c4", "b4"]
    assert len(plan.reserves) == 36 - 10


def test_a_withdrawal_is_replaced_by_the_first_reserve() -> None:
    # b2 (in as a next best) withdraws: the plan made again without b2 keeps the 6 country
    # places and fills 4 from b1, a2, c2 and then the first reserve a3 (place 3, 44:00).
    before = make_plan(FINAL, groups())
    after = make_plan(FINAL, groups(), withdrawn=["b2"])
    came, left = replacements(after, before.ids, "b2")
    assert came == [before.reserves[0].entrant] == ["a3"] and left == []
    assert len(after.ids) == 10 and "b2" not in after.ids


def test_a_withdrawal_of_a_countrys_only_finalist_brings_its_next_best_not_the_first_reserve() -> None:
    # a4 was DEN's best; without a4, DEN's best is b5 (place 5, 49:00), ahead of c8: b5 takes
    # the country's place; the next best stay b1, a2, c2, b2 (a3 stays the first reserve).
    before = make_plan(FINAL, groups())
    after = make_plan(FINAL, groups(), withdrawn=["a4"])
    assert replacements(after, before.ids, "a4") == (["b5"], [])
    assert after.reserves[0].entrant == "a3"


# --- ties at the cut: one round, top 3, places 1, 2, 3, 3 (x3 and y3 tied on 44:00) ---

def tied_round() -> dict[str, list[Candidate]]:
    rows = [("w1", 1, 40), ("w2", 2, 42), ("x3", 3, 44), ("y3", 3, 44), ("z5", 5, 46)]
    return {"heat": [Candidate(e, e, "heat", p, "finished", m * MIN, 500, "", i,
                               result_key("finished", m * MIN, 500)) for i, (e, p, m) in enumerate(rows)]}


@pytest.mark.parametrize("ties,advancing,reserves,problems", [
    # all: both tied advance with the two ahead of them: 4 in a round of 3
    ("all", ["w1", "w2", "x3", "y3"], ["z5"], 0),
    # none: neither does: 2 advance, the tied are the first reserves, in the standings' order
    ("none", ["w1", "w2"], ["x3", "y3", "z5"], 0),
    # desk: the 2 ahead advance, the third place is the desk's, shown as a problem until it says
    ("desk", ["w1", "w2"], ["x3", "y3", "z5"], 1),
])
def test_a_tie_at_the_cut_under_each_tie_rule(ties, advancing, reserves, problems) -> None:
    plan = make_plan(AdvancementRule(("heat",), total=3, ties=ties), tied_round())
    assert list(plan.ids) == advancing
    assert [c.entrant for c in plan.reserves] == reserves
    assert len(plan.ties) == 1 and plan.ties[0].places == 1
    assert [c.entrant for c in plan.ties[0].tied] == ["x3", "y3"]
    assert len(plan.problems) == problems
    if problems:
        assert "the desk decides" in plan.problems[0] and "--take" in plan.problems[0]


def test_the_desk_takes_one_of_the_tied() -> None:
    plan = make_plan(AdvancementRule(("heat",), total=3, ties="desk"), tied_round(), taken=["y3"])
    assert list(plan.ids) == ["w1", "w2", "y3"] and not plan.problems and not plan.undecided
    assert "the desk's choice" in plan.advancing[-1].why
    # a take that is not one of the tied is refused, never applied silently
    wrong = make_plan(AdvancementRule(("heat",), total=3, ties="desk"), tied_round(), taken=["z5"])
    assert any("--take z5" in p for p in wrong.problems)


def test_a_tie_across_rounds_by_place_and_equal_time() -> None:
    # two heats; the 2nd of each finished in 42:00: by place, then time, they are tied for the
    # last place of 3 (the two winners ahead); by result alone too
    heats = {h: [Candidate(f"{h}{k}", "", h, k, "finished", m * MIN, 500, "", k - 1,
                           result_key("finished", m * MIN, 500)) for k, m in ((1, 40 + i), (2, 42))]
             for i, h in enumerate(("p", "q"))}
    plan = make_plan(AdvancementRule(("p", "q"), total=3, ties="none"), heats)
    assert list(plan.ids) == ["p1", "q1"] and [c.entrant for c in plan.ties[0].tied] == ["p2", "q2"]


def test_per_source_percent_and_a_time_to_beat() -> None:
    # per_source 2 of each group: a1 a2, b1 b2, c1 c2 (6), seated place then time
    plan = make_plan(AdvancementRule(("group-a", "group-b", "group-c"), per_source=2), groups())
    assert list(plan.ids) == ["a1", "c1", "b1", "a2", "c2", "b2"]
    # 25 % of 36 ranked = 9: the first 9 across (places 1-3)
    plan = make_plan(AdvancementRule(("group-a", "group-b", "group-c"), percent=25), groups())
    assert list(plan.ids) == ["a1", "c1", "b1", "a2", "c2", "b2", "a3", "c3", "b3"]
    # a finish under 43:00: a1 a2 (40, 42), b1 (41), c1 c2 (40:30, 42:30); b2's 43:00 does not beat it
    plan = make_plan(AdvancementRule(("group-a", "group-b", "group-c"), total=10, beat_finished=True,
                                     beat_ms=43 * MIN), groups())
    assert sorted(plan.ids) == ["a1", "a2", "b1", "c1", "c2"]
    assert any("only 5 can advance" in w for w in plan.warnings)


# --- bad input ---

def test_a_rule_that_asks_for_more_than_the_sources_hold_is_a_problem() -> None:
    plan = make_plan(AdvancementRule(("group-a",), total=20), {"group-a": group("a")})
    assert any("asks for 20 entrants but group-a hold 12" in p for p in plan.problems)


def test_an_entrant_without_a_country_is_a_problem_under_per_country() -> None:
    g = groups()
    g["group-b"][3] = Candidate("b4", "", "group-b", 4, "finished", 47 * MIN, 500, "", 3,
                                result_key("finished", 47 * MIN, 500))
    plan = make_plan(FINAL, g)
    assert any("no country for b4 (group-b)" in p and "country column" in p for p in plan.problems)


def test_guaranteed_places_over_the_total_are_a_problem() -> None:
    plan = make_plan(AdvancementRule(("group-a", "group-b", "group-c"), total=5, per_country=1), groups())
    assert any("guaranteed places (6" in p for p in plan.problems)


def test_dns_dq_and_unranked_never_advance_and_say_why() -> None:
    rows = group("a")
    rows[0] = Candidate("a1", "", "group-a", None, "dq", None, 0, "CZE", 0, ())
    plan = make_plan(AdvancementRule(("group-a",), total=2), {"group-a": rows})
    assert list(plan.ids) == ["a2", "a3"] and ("disqualified" in dict((c.entrant, w) for c, w in plan.out)["a1"])


def test_the_source_hash_changes_with_a_result() -> None:
    g = groups()
    h = source_hash(g)
    assert h == source_hash(groups()) and len(h) == 64
    g["group-c"][11] = Candidate("c12", "", "group-c", 12, "finished", 99 * MIN, 500, "POL", 11, ())
    assert source_hash(g) != h


@pytest.mark.parametrize("table,error", [
    ({"total": 3}, "advancement.from"),
    ({"from": ["a", "a"], "total": 3}, "named twice"),
    ({"from": ["a"]}, "say how many"),
    ({"from": ["a"], "percent": 80}, "advancement.percent: expected a whole number 1..75"),
    ({"from": ["a"], "total": 3, "ties": "coin"}, "advancement.ties"),
    ({"from": ["a"], "total": 3, "beat": "soon"}, "advancement.beat"),
    ({"from": ["a"], "total": 3, "country": "x"}, "advancement.country: unknown key"),
])
def test_a_bad_rule_names_its_key(table, error) -> None:
    with pytest.raises(RuleError, match=error):
        parse_rule(table)


def test_a_format_carries_its_rule_and_says_it() -> None:
    from tabletimer.hub.rules.format_model import describe
    text = """
[format]
title = "Final"
summary = "the final"
[entrants]
kind = "individual"
[round]
time_limit = "90m"
puzzles = [500]
[advancement]
from = ["group-a", "group-b", "group-c"]
total = 10
per_country = 1
beat = "finished"
"""
    fmt = loads(text, "final.toml")
    assert fmt.advancement == AdvancementRule(("group-a", "group-b", "group-c"), total=10, per_country=1,
                                              beat_finished=True)
    assert "the best 1 of each country, then the next best up to 10" in describe(fmt)
    with pytest.raises(FormatError, match=r"final.toml: advancement.total"):
        loads(text.replace("total = 10", "total = 0"), "final.toml")
