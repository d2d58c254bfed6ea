"""The team draw (rules/team_draw.py): repeatable by its seed, keep-apart,
the last teams when the count does not divide, balance by an earlier
round's rank, and the draws refused with what to do."""

from __future__ import annotations

import random

import pytest

from tabletimer.hub.rules.team_draw import DrawError, Person, draw_teams, team_sizes


def people(n: int, clubs: int = 0) -> list[Person]:
    return [Person(f"{i:02d}", f"Puzzler {i}", f"Club {i % clubs}" if clubs else "") for i in range(1, n + 1)]


def members(draw) -> list[list[str]]:
    return [[p.id for p in t.members] for t in draw.teams]


def test_same_seed_same_teams_another_seed_other_teams_any_row_order():
    ps = people(40, clubs=10)
    a = draw_teams(ps, 4, 1234, 4, 4)
    shuffled = list(ps)
    random.Random(9).shuffle(shuffled)
    assert members(draw_teams(shuffled, 4, 1234, 4, 4)) == members(a)      # the rows' order does not matter
    assert members(draw_teams(ps, 4, 1235, 4, 4)) != members(a)
    assert [t.id for t in a.teams] == [f"T{i:02d}" for i in range(1, 11)]
    assert [t.name for t in a.teams][:2] == ["Team 1", "Team 2"]
    assert sorted(p for m in members(a) for p in m) == sorted(p.id for p in ps)
    assert a.how == "10 teams of 4"


def test_the_global_random_is_not_used():
    random.seed(1)
    a = members(draw_teams(people(12), 4, 7, 4, 4))
    random.seed(2)
    assert members(draw_teams(people(12), 4, 7, 4, 4)) == a


def test_keep_apart_by_club():
    for seed in range(30):
        d = draw_teams(people(40, clubs=10), 4, seed, 4, 4)      # 10 clubs of 4: each team one of each of 4 clubs
        for t in d.teams:
            clubs = [p.group for p in t.members]
            assert len(set(clubs)) == len(clubs), (seed, t)


def test_keep_apart_with_a_big_club_and_uneven_teams():
    ps = [Person(f"{i:02d}", f"P{i}", "Big" if i <= 11 else ("" if i % 3 else "Small")) for i in range(1, 42)]
    d = draw_teams(ps, 4, 5, 3, 4)
    assert len(d.teams) == 11
    for t in d.teams:
        assert [p.group for p in t.members].count("Big") == 1
        assert [p.group for p in t.members].count("Small") <= 1


def test_impossible_keep_apart_names_the_group():
    ps = people(20) + [Person(f"x{i}", f"Novak {i}", "Novak family") for i in range(6)]   # 26: 7 teams ... 6 Novaks fit
    draw_teams(ps, 4, 1, 3, 4)
    ps += [Person(f"y{i}", f"Novak {i + 6}", " novak  FAMILY") for i in range(3)]       # 9 Novaks, 8 teams
    with pytest.raises(DrawError, match="'Novak family' has 9 registered, more than the 8 teams"):
        draw_teams(ps, 4, 1, 3, 4)


def test_fewer_than_one_team_is_refused():
    with pytest.raises(DrawError, match="3 registered: a team of 4 needs 4"):
        draw_teams(people(3), 4, 1, 3, 4)


def test_duplicate_names_and_ids_are_refused():
    with pytest.raises(DrawError, match="two registrations named 'Anna Novak' .ids 1 and 2."):
        draw_teams([Person("1", "Anna Novak"), Person("2", "anna  novak"), Person("3", "B"), Person("4", "C")],
                   2, 1, 2, 2)
    with pytest.raises(DrawError, match="id '1' is registered twice"):
        draw_teams([Person("1", "A"), Person("1", "B")], 2, 1, 2, 2)


@pytest.mark.parametrize("count,size,lo,hi,sizes", [
    (40, 4, 4, 4, [4] * 10),
    (41, 4, 3, 4, [4] * 8 + [3] * 3),           # one team more, three of them one smaller
    (42, 4, 4, 5, [5, 5] + [4] * 8),            # no team of 3 allowed: two of them one bigger
    (10, 4, 1, 50, [4, 3, 3]),
    (4, 4, 4, 4, [4]),
])
def test_the_last_teams(count, size, lo, hi, sizes):
    assert team_sizes(count, size, lo, hi) == sizes


def test_a_count_the_format_cannot_split_says_what_to_do():
    with pytest.raises(DrawError, match="41 registered do not make teams of 4 .* register 3 more, or leave 1 out"):
        team_sizes(41, 4, 4, 4)
    with pytest.raises(DrawError, match="teams of 5: the round's format has teams of 3-4 members"):
        team_sizes(40, 5, 3, 4)


def test_balance_by_rank_snakes():
    ps = people(12)
    ranks = {p.id: i + 1 for i, p in enumerate(ps)}             # 01 first ... 12 last
    d = draw_teams(ps, 4, 3, 4, 4, ranks=ranks)
    assert members(d) == [["01", "06", "07", "12"], ["02", "05", "08", "11"], ["03", "04", "09", "10"]]
    sums = [sum(ranks[p] for p in m) for m in members(d)]
    assert max(sums) - min(sums) == 0


def test_balance_with_unranked_and_keep_apart():
    ps = people(16, clubs=4)
    ranks = {p.id: i + 1 for i, p in enumerate(ps[:8])}
    a = draw_teams(ps, 4, 11, 4, 4, ranks=ranks)
    assert members(a) == members(draw_teams(ps, 4, 11, 4, 4, ranks=ranks))
    for t in a.teams:
        assert len({p.group for p in t.members}) == 4
        assert sum(1 for p in t.members if p.id in ranks) == 2      # each team two of the ranked
