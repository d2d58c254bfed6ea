"""The printed figures of the benchmarks: the host clock they are read on
(now_ms), percentiles and their one-line spread, and the Report that
collects the figures (printed as each is measured, then as one table) and
counts the events lost."""

from __future__ import annotations

import time


def now_ms() -> float:
    return time.time_ns() / 1e6


def pct(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    k = min(len(s) - 1, max(0, int(round(p / 100 * (len(s) - 1)))))
    return s[k]


def spread(values: list[float]) -> str:
    return (f"p50 {pct(values, 50):7.1f}  p99 {pct(values, 99):7.1f}  max {max(values):7.1f} ms"
            if values else "no samples")


class Report:
    def __init__(self) -> None:
        self.rows: list[tuple[str, str, str]] = []       # (figure, value, note)
        self.lost = 0

    def add(self, figure: str, value: str, note: str = "") -> None:
        self.rows.append((figure, value, note))
        print(f"  {figure}: {value}{'   ' + note if note else ''}", flush=True)

    def table(self) -> str:
        w = max(len(r[0]) for r in self.rows)
        v = max(len(r[1]) for r in self.rows)
        lines = [f"{'figure':<{w}}  {'value':<{v}}  note", "-" * (w + v + 30)]
        lines += [f"{a:<{w}}  {b:<{v}}  {c}" for a, b, c in self.rows]
        return "\n".join(lines)
