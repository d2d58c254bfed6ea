"""Ranking of a single individual round: finishers by time from the start,
then everyone without a finish.  Equal results share a place (1, 2, 2, 4).
Pure: no I/O."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Standing:
    place: int
    entrant: str
    status: str              # 'finished' | 'running'
    time_ms: int | None      # finish time minus start, None if not finished
    finish_at_ms: int | None
    confirmed: bool = False  # a referee confirmed the finish (else provisional)


def rank_single_round(start_ms: int | None, entrants: list[str],
                      finishes: dict[str, int], confirmed: set[str] = frozenset()) -> list[Standing]:
    """entrants: everyone in the round; finishes: entrant -> hub time of the
    finish press.  Before the start nobody has a time."""
    rows: list[tuple[int | None, str]] = []
    for e in entrants:
        at = finishes.get(e)
        rows.append((at - start_ms if at is not None and start_ms is not None else None, e))
    rows.sort(key=lambda r: (r[0] is None, r[0] if r[0] is not None else 0, r[1]))
    out: list[Standing] = []
    for i, (t, e) in enumerate(rows):
        place = out[-1].place if out and out[-1].time_ms == t else i + 1
        out.append(Standing(place, e, "finished" if t is not None else "running", t,
                            finishes.get(e) if t is not None else None, e in confirmed))
    return out
