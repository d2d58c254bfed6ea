"""The engine's own guarantees, on random fact logs: folding facts one at a
time (re-ranking after each, as the live hub does) gives the same standings
as ranking them all at once and as folding them all at once (one code path:
each entrant's facts replayed by the rules as written)."""

from __future__ import annotations

import random

import pytest

from tabletimer.hub.rules.formats import load_format
from tabletimer.hub.rules.standings import (Confirm, Count, DidNotStart, Disqualified, Entrant, Member,
                                      Press, Reinstated, RoundStart, Standings, StartOffset, Swap,
                                      Void, rank)

MIN = 60_000


def random_log(rng: random.Random, fmt, n_entrants: int = 6, n_facts: int = 60):
    ents = [Entrant(f"E{i}", members=tuple(Member(f"m{k}", rng.random() < 0.8) for k in range(fmt.max_members))
                    if fmt.kind != "individual" else (), eligible=rng.random() < 0.8)
            for i in range(n_entrants)]
    n = len(fmt.puzzles)
    limit = fmt.time_limit_ms
    facts: list = []
    ids: list[str] = []
    if rng.random() < 0.9:
        facts.append(RoundStart(rng.choice((0, 5 * MIN))))
    for k in range(n_facts):
        e = rng.choice(ents).id
        r = rng.random()
        if r < 0.4:
            pid = f"p{k}" if rng.random() < 0.9 else ""
            facts.append(Press(e, rng.randint(1, n + (1 if rng.random() < 0.05 else 0)),
                               rng.randint(-5 * MIN, limit + 10 * MIN), pid))
            if pid:
                ids.append(pid)
        elif r < 0.6:
            if ids and rng.random() < 0.5:
                facts.append(Confirm(e if rng.random() < 0.5 else "", 0, rng.choice(ids),
                                     rng.randint(0, 3), rng.randint(0, 2), rng.choice((0, 0, 2, 3))))
            else:
                facts.append(Confirm(e, rng.randint(1, n), "", rng.randint(0, 3), rng.randint(0, 2),
                                     rng.choice((0, 0, 2))))
        elif r < 0.7:
            if ids:
                facts.append(Void(rng.choice(ids) if rng.random() < 0.9 else "nope"))
        elif r < 0.82:
            pz = rng.randint(1, n)
            if rng.random() < 0.5:
                facts.append(Count(e, pz, placed=rng.randint(-5, fmt.puzzles[pz - 1] + 5)))
            else:
                facts.append(Count(e, pz, remaining=rng.randint(0, fmt.puzzles[pz - 1])))
        elif r < 0.86:
            facts.append(StartOffset(e, rng.randint(0, 10 * MIN)))
        elif r < 0.9 and n > 1:
            a, b = rng.sample(range(1, n + 1), 2)
            facts.append(Swap(e, rng.randint(0, limit), a, b))
        elif r < 0.93:
            facts.append(rng.choice((DidNotStart(e), Disqualified(e, "x"), Reinstated(e))))
        elif r < 0.95:
            facts.append(RoundStart(rng.choice((0, 2 * MIN, 5 * MIN))))
    return ents, facts


def snapshot(rows):
    return [(r[:-1], r.splits) for r in rows]


@pytest.mark.parametrize("preset", ["cz-championship-individuals", "cz-championship-teams", "czjpa-teams",
                                    "dk-team-championship", "rogaland-individuals", "rogaland-teams"])
def test_incremental_bulk_and_replayed_agree(preset):
    fmt = load_format(preset)
    for seed in range(60):
        rng = random.Random(seed)
        ents, facts = random_log(rng, fmt)
        now = rng.choice((None, fmt.time_limit_ms // 2))
        bulk = rank(fmt, ents, facts, now)

        live = Standings(fmt, ents)
        for f in facts:
            live.apply(f)
            if rng.random() < 0.3:
                live.rows(now)
        assert snapshot(live.rows(now)) == snapshot(bulk), (preset, seed)

        replay = Standings(fmt, ents)       # all at once, through extend
        replay.extend(facts)
        assert snapshot(replay.rows(now)) == snapshot(bulk), (preset, seed)


def test_places_awards_and_statuses_are_consistent_on_random_logs():
    fmt = load_format("rogaland-teams")
    for seed in range(100):
        rng = random.Random(1000 + seed)
        ents, facts = random_log(rng, fmt, n_entrants=10)
        rows = rank(fmt, ents, facts)
        out = [r for r in rows if r.status in ("dns", "dq")]
        assert rows[len(rows) - len(out):] == out, "dns and dq come last"
        assert [r.entrant for r in out] == sorted((r.entrant for r in out),
                                                  key=lambda e: (by(rows, e).status != "dq", e))
        assert all(r.place is None and r.award_place is None for r in out)
        ranked = [r for r in rows if r.place is not None]
        assert all(r.status == "waiting" for r in rows if r.place is None and r not in out)
        for i, r in enumerate(ranked):
            assert r.place <= i + 1
            if i and r.place != ranked[i - 1].place:
                assert r.place == i + 1
        awards = [r.award_place for r in ranked if r.award_place is not None]
        assert all(1 <= a <= fmt.awards for a in awards) and awards == sorted(awards)
        assert all(r.official for r in ranked if r.award_place is not None)
        for r in rows:
            assert 0 <= r.pieces <= sum(fmt.puzzles)
            assert (r.net_time_ms is not None) == (r.status == "finished")


@pytest.mark.parametrize("preset", ["cz-championship-teams", "dk-team-championship", "rogaland-individuals"])
def test_nobody_running_has_a_place_on_random_logs(preset):
    """A live view: entrants whose time is not up have no place and no award
    place, come after the ranked ones, and the ranked ones' places and award
    places count only the ranked (1, 2, 2, 4 among them)."""
    fmt = load_format(preset)
    for seed in range(60):
        rng = random.Random(2000 + seed)
        ents, facts = random_log(rng, fmt, n_entrants=8)
        now = rng.choice((fmt.time_limit_ms // 2, fmt.time_limit_ms + 3 * MIN))
        rows = rank(fmt, ents, facts, now)
        running = [r for r in rows if r.status == "running"]
        assert all(r.place is None and r.award_place is None and r.provisional for r in running), (preset, seed)
        ranked = [r for r in rows if r.place is not None]
        assert rows[:len(ranked)] == ranked, (preset, seed)
        assert rows[len(ranked):len(ranked) + len(running)] == running, (preset, seed)
        for r in ranked:
            first = next(k for k, x in enumerate(ranked) if x.place == r.place)
            assert r.place == first + 1, (preset, seed)
        official = [r for r in ranked if r.official]
        for r in official:
            first = next(k for k, x in enumerate(official) if x.place == r.place) + 1
            assert r.award_place == (first if first <= fmt.awards else None), (preset, seed)


def by(rows, e):
    return next(r for r in rows if r.entrant == e)


def test_rows_are_fresh_and_summaries_cached():
    fmt = load_format("czjpa-individuals")
    st = Standings(fmt, [Entrant("A"), Entrant("B")])
    st.extend([RoundStart(0), Press("A", 1, 50 * MIN, "a")])
    first = st.rows()
    assert first[0].entrant == "A" and first[0].provisional
    st.apply(Confirm(press_id="a", missing_found=1))
    second = st.rows()
    assert second[0].net_time_ms == 50 * MIN + 10_000 and not second[0].provisional
    assert first[0].net_time_ms == 50 * MIN           # earlier results are not changed
    st.apply(Void("a"))
    assert st.rows()[0].status == "unfinished"


def test_a_confirmation_waits_for_its_press():
    """The log may hold a confirmation before the press it names (a board's
    press delivered late): it applies when the press arrives."""
    fmt = load_format("czjpa-individuals")
    rows = rank(fmt, [Entrant("A")], [RoundStart(0), Confirm(press_id="a", missing_found=2),
                                      Press("A", 1, 50 * MIN, "a")])
    assert rows[0].penalty_ms == 20_000 and not rows[0].provisional


def test_duplicate_entrant_ids_are_refused():
    with pytest.raises(ValueError):
        Standings(load_format("czjpa-individuals"), [Entrant("A"), Entrant("A")])


def test_a_dns_says_why_when_its_fact_does_and_a_reinstatement_clears_it():
    """An absent entrant whose station went to another (hub/event/fold/replacements.py)
    is DNS with the reason the fold gives; a plain DNS has none."""
    fmt = load_format("czjpa-individuals")
    ents = [Entrant("1", "Anna"), Entrant("2", "Ben"), Entrant("N1", "Jana")]
    facts = [RoundStart(0), DidNotStart("1", "absent: the station went to Jana (N1)"), DidNotStart("2"),
             Press("N1", 1, 50 * MIN, "p1")]
    rows = rank(fmt, ents, facts)
    assert [(r.entrant, r.status, r.place, r.time_ms, r.reason) for r in rows] == [
        ("N1", "finished", 1, 50 * MIN, ""), ("1", "dns", None, None, "absent: the station went to Jana (N1)"),
        ("2", "dns", None, None, "")]
    assert {r.entrant: r.reason for r in rank(fmt, ents, facts + [Reinstated("1")])}["1"] == ""


def test_before_an_armed_start_every_entrant_waits_none_runs():
    """Issue 45 item 7: a start armed for later is not a round under way: a
    live view before it has every entrant "waiting" (no place), and at the
    start they are "running"; once over, the format ranks them."""
    fmt = load_format("czjpa-individuals")
    ents = [Entrant("A"), Entrant("B")]
    facts = [RoundStart(10 * MIN)]
    assert [(r.status, r.place) for r in rank(fmt, ents, facts, now_ms=10 * MIN - 272_000)] == [
        ("waiting", None), ("waiting", None)]
    assert [r.status for r in rank(fmt, ents, facts, now_ms=10 * MIN)] == ["running", "running"]
    assert [r.status for r in rank(fmt, ents, facts)] == ["unfinished", "unfinished"]
