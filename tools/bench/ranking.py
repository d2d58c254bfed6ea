"""Benchmark of the ranking engine (hub/rules/standings.py): 5,000 entrants with 20
facts each.

    .venv/bin/python -m tabletimer.tools.bench.ranking [--entrants 5000] [--repeat 15]

Prints the best and median wall time of `rank()` from scratch (then, timed
separately, its phases: folding the facts, evaluating each entrant, sorting
and building the rows), and of what the live hub does after each stored
event (apply one fact to a `Standings` that holds all the others, then
`rows()`), for two mixes:
- the team championship (8 puzzles in four parts): per team presses,
  confirmations, double presses, a voided press for one team in five, and
  piece counts for the teams that do not finish;
- single-puzzle individuals with referee corrections: per entrant presses,
  voids, re-presses, confirmations, re-confirmations, a start offset, counts.
Not a test: the figure depends on the machine.
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import time

from tabletimer.hub.rules.formats import load_format
from tabletimer.hub.rules.standings import (Confirm, Count, Entrant, Press, RoundStart, Standings,
                                      StartOffset, Void, rank)

MIN = 60_000


def team_facts(n: int, rng: random.Random) -> tuple[list[Entrant], list]:
    """Per team exactly 20 facts.  Teams that finish (60%): 8 presses and 8
    confirmations, a bounced double press, a corrected confirmation, and for one team
    in five a premature press that the referee voids (else two more
    bounces).
    Others: presses and confirmations of the puzzles they finished, then
    piece counts of the rest."""
    entrants = [Entrant(f"T{i:04d}", f"Team {i}") for i in range(n)]
    facts: list = [RoundStart(0)]
    for e in entrants:
        fs: list = []
        t = 0
        finished = 8 if rng.random() < 0.6 else rng.randint(2, 7)
        for pz in range(1, finished + 1):
            t += rng.randint(15 * MIN, 35 * MIN) + rng.randint(0, 999)
            pid = f"{e.id}/{pz}"
            fs.append(Press(e.id, pz, t, pid))
            if rng.random() < 0.5:
                fs.append(Confirm(press_id=pid, missing_found=rng.choice((0, 0, 0, 1, 2))))
            else:
                fs.append(Confirm(e.id, pz, missing_found=rng.choice((0, 0, 0, 1, 2))))
        if finished == 8:
            fs.append(Press(e.id, 8, t + 400, f"{e.id}/8b"))          # bounce: the earliest counts
            if rng.random() < 0.2:
                fs.insert(0, Press(e.id, 1, 60_000, f"{e.id}/early"))
                fs.append(Void(f"{e.id}/early"))
            else:
                fs.append(Press(e.id, 8, t + 900, f"{e.id}/8c"))
                fs.append(Press(e.id, 8, t + 1300, f"{e.id}/8d"))
            fs.append(Confirm(e.id, 3, missing_found=1))                 # a corrected confirmation
        else:
            pz = finished + 1
            while len(fs) < 20:
                fs.append(Count(e.id, pz, placed=rng.randint(0, 900 if pz == 8 else 450)))
                pz = pz + 1 if pz < 8 else pz
        assert len(fs) == 20, len(fs)
        facts.extend(fs)
    return entrants, facts


def individual_facts(n: int, rng: random.Random) -> tuple[list[Entrant], list]:
    entrants = [Entrant(f"E{i:04d}", f"Entrant {i}", eligible=rng.random() < 0.8) for i in range(n)]
    facts: list = [RoundStart(0)]
    for e in entrants:
        fs: list = [StartOffset(e.id, rng.choice((0, 0, 2 * MIN)))]
        for k in range(5):          # four false calls voided, then the real finish
            pid = f"{e.id}/{k}"
            fs.append(Press(e.id, 1, rng.randint(40 * MIN, 119 * MIN), pid))
            fs.append(Confirm(press_id=pid, missing_found=rng.randint(0, 2),
                              missing_lost=rng.randint(0, 1)))
            if k < 4:
                fs.append(Void(pid))
        while len(fs) < 20:
            fs.append(Count(e.id, 1, remaining=rng.randint(0, 100)))
        facts.extend(fs[:20])
    return entrants, facts


def bench(label: str, fmt_name: str, make, n: int, repeat: int) -> tuple[float, float]:
    """(best ms of rank() from scratch, best ms of one more fact + rows() on
    a live Standings holding all the facts)."""
    rng = random.Random(1)
    fmt = load_format(fmt_name)
    entrants, facts = make(n, rng)
    rank(fmt, entrants, facts)          # warm up
    times = []
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        rows = rank(fmt, entrants, facts)
        times.append((time.perf_counter() - t0) * 1000)
    assert len(rows) == n
    fold, evaluate = [], []
    for _ in range(repeat):     # the same work as rank(), phase by phase
        gc.collect()
        gc.disable()
        t0 = time.perf_counter()
        st = Standings(fmt, entrants)
        st.extend(facts)
        t1 = time.perf_counter()
        st.rows()
        t2 = time.perf_counter()
        gc.enable()
        fold.append((t1 - t0) * 1000)
        evaluate.append((t2 - t1) * 1000)
    live = Standings(fmt, entrants)
    live.extend(facts)
    live.rows()
    inc = []
    for i in range(repeat):
        e = entrants[(i * 97) % n].id
        t0 = time.perf_counter()
        live.apply(Count(e, 1, placed=i))
        live.rows()
        inc.append((time.perf_counter() - t0) * 1000)
    print(f"{label}: {n} entrants, {len(facts) - 1} facts ({(len(facts) - 1) / n:.0f} each)\n"
          f"  rank() from scratch:             best {min(times):6.1f} ms, median {statistics.median(times):6.1f} ms\n"
          f"    of which fold (best/median):   {min(fold):5.1f} / {statistics.median(fold):5.1f} ms, "
          f"evaluate + sort + rows {min(evaluate):5.1f} / {statistics.median(evaluate):5.1f} ms\n"
          f"  live: one more fact, re-rank:    best {min(inc):6.1f} ms, median {statistics.median(inc):6.1f} ms")
    return min(times), min(inc)


def calibrate() -> float:
    """Microseconds for sum(range(1000)): a rough measure of the machine's
    Python speed, to compare the figures across machines."""
    import timeit
    return min(timeit.repeat("sum(range(1000))", number=2000, repeat=5)) / 2000 * 1e6


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--entrants", type=int, default=5000)
    ap.add_argument("--repeat", type=int, default=15)
    a = ap.parse_args(argv)
    print(f"machine: sum(range(1000)) takes {calibrate():.1f} us")
    bench("team championship (8 puzzles)", "cz-championship-teams", team_facts, a.entrants, a.repeat)
    bench("individuals with corrections", "rogaland-individuals", individual_facts, a.entrants, a.repeat)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
