"""A hub's standings (`tabletimer replay DIR --json`) against the ranking
engine's on the truth (every finish call at its true instant): for the
end-to-end rounds that know what was pressed when (the chaos rehearsal, the
takeover of a hall).  Plain helper: ``from standings_check import ...``."""

from __future__ import annotations


def _close(a: int | None, b: int | None, tol: int) -> bool:
    return a == b if a is None or b is None else abs(a - b) <= tol


def compare_standings(rows: list[dict], expected, tol_ms: int, tolerances: dict[str, int] | None = None) -> list[str]:
    """The hub's standings against the truth's: the same statuses, pieces,
    penalties and press ids per puzzle; times within tol_ms, or an
    entrant's own tolerance (tolerances: its call's stated clock error, when
    larger; laps, the difference of two presses, within twice that); the
    same order and places, but for entrants whose times are too close to
    order within their tolerances.  Returns the differences."""
    def tol(entrant: str) -> int:
        return max(tol_ms, (tolerances or {}).get(entrant, 0))
    exp = {x.entrant: x for x in expected}
    got = {r["entrant"]: r for r in rows}
    if sorted(got) != sorted(exp):
        return [f"entrants differ: {sorted(got)} vs {sorted(exp)}"]
    problems = []
    for e, x in exp.items():
        g = got[e]
        for k in ("status", "provisional", "pieces", "penalty_ms", "deducted_pieces", "official"):
            if g[k] != getattr(x, k):
                problems.append(f"{e}: {k} {g[k]!r}, expected {getattr(x, k)!r}")
        for k in ("time_ms", "net_time_ms"):
            if not _close(g[k], getattr(x, k), tol(e)):
                problems.append(f"{e}: {k} {g[k]}, expected {getattr(x, k)}")
        gs = {s["puzzle"]: s for s in g["splits"]}
        for s in x.splits:
            h = gs.get(s.puzzle)
            if h is None:
                problems.append(f"{e} puzzle {s.puzzle}: no split")
                continue
            for k in ("status", "press_id", "confirmed", "missing_found", "penalty_ms", "credited"):
                if h[k] != getattr(s, k):
                    problems.append(f"{e} puzzle {s.puzzle}: {k} {h[k]!r}, expected {getattr(s, k)!r}")
            if not _close(h["time_ms"], s.time_ms, tol(e)) or not _close(h["lap_ms"], s.lap_ms, 2 * tol(e)):
                problems.append(f"{e} puzzle {s.puzzle}: time/lap {h['time_ms']}/{h['lap_ms']}, "
                                f"expected {s.time_ms}/{s.lap_ms}")

    def near(a, b) -> bool:         # finish times too close to order within the sync error
        return (a.net_time_ms is not None and b.net_time_ms is not None
                and abs(a.net_time_ms - b.net_time_ms) <= tol(a.entrant) + tol(b.entrant))
    order, want = [r["entrant"] for r in rows], [x.entrant for x in expected]
    for i, (a, b) in enumerate(zip(order, want)):
        if a != b and not near(exp[a], exp[b]):
            problems.append(f"place {i + 1}: {a}, expected {b}")
    for e, x in exp.items():
        if (got[e]["place"], got[e]["award_place"]) != (x.place, x.award_place) and not any(
                near(x, o) for o in expected if o.entrant != e):
            problems.append(f"{e}: place {got[e]['place']}/{got[e]['award_place']}, "
                            f"expected {x.place}/{x.award_place}")
    return problems
