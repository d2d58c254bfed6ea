"""The benchmarks that are modules of their own, as `tabletimer bench` runs
them: the ranking (tools/bench/ranking, in this process), the firmware heap
(tools/bench/firmware_heap), the press-stamp delay (tools/bench/firmware_timing)
and TLS's cost to a board's heap (tools/bench/tls_heap), each run as it is."""

from __future__ import annotations

import subprocess
import sys

from tabletimer.tools.bench.report import Report


def bench_rank(report: Report, quick: bool) -> None:
    from tabletimer.tools.bench import ranking as br
    scratch, live = br.bench("team championship (8 puzzles)", "cz-championship-teams", br.team_facts,
                             5000, 3 if quick else 9)
    report.add("rank 5,000 entrants x 20 facts, live (as the hub does)", f"{live:.1f} ms (best)",
               f"from scratch {scratch:.1f} ms (best), once at hub start")


def _bench_module(report: Report, module: str, picks, label: str) -> None:
    """Run a benchmark module as it is, show its output, report its line
    that picks() chooses (the last)."""
    out = subprocess.run([sys.executable, "-m", module], capture_output=True, text=True)
    print(out.stdout, flush=True)
    lines = [ln.strip() for ln in out.stdout.splitlines() if picks(ln)]
    report.add(label, lines[-1] if lines else f"see above (exit {out.returncode})")


def bench_heap(report: Report) -> None:
    _bench_module(report, "tabletimer.tools.bench.firmware_heap", lambda ln: "smallest" in ln.lower(),
                  "firmware heap")


def bench_timing(report: Report) -> None:
    _bench_module(report, "tabletimer.tools.bench.firmware_timing",
                  lambda ln: ln.startswith("worst press-stamp delay"), "press-stamp delay (firmware, modelled)")


def bench_tls(report: Report) -> None:
    _bench_module(report, "tabletimer.tools.bench.tls_heap", lambda ln: ln.startswith("TLS costs"),
                  "TLS to the broker (firmware heap)")
