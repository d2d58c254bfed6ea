"""The team draw as the hall sees it (the `/draw` page): a round's `draw`
rows of the log in, JSON-ready data out.  Pure.

The latest draw counts (its number, the seed, read out so anyone can check
it: the same number with the same registrations gives the same teams, and
each team with its members); the draws before it are listed as superseded,
each with its number and when it was made.  Public: the members' names (as
the standings show them) and how the draw was made; never who drew or the
operator's reason (the operators' log)."""

from __future__ import annotations

from typing import Iterable


def draw_view(rows: Iterable[dict], title: str, started: bool) -> dict:
    """rows: the round's stored `draw` rows (id, received_ms, payload), in
    log order; started: the round's start is recorded (its teams fixed)."""
    draws = []
    for n, r in enumerate(rows, 1):
        p = r["payload"]
        draws.append({"n": n, "row": r["id"], "at_ms": r["received_ms"], "seed": p.get("seed"),
                      "size": p.get("size"), "registered": p.get("registered"),
                      "apart_by": p.get("apart_by") or "", "balance_by": p.get("balance_by") or "",
                      "teams": [{"id": t["id"], "name": t["name"], "members": list(t["members"])}
                                for t in p.get("teams") or []]})
    latest = draws[-1] if draws else None
    earlier = [{k: d[k] for k in ("n", "row", "at_ms", "seed")} for d in reversed(draws[:-1])]
    return {"title": title, "started": started, "draws": len(draws), "latest": latest,
            "superseded": earlier}
