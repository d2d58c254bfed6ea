"""Helpers for tests that run the hub as organizers do (`tabletimer run DIR`,
its own process) against real brokers and real board processes: the hub
resilience test and the chaos rehearsal.

Plain helpers (not a conftest): import with ``from hall import ...``.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tabletimer.tools.testing.hub_process import TT, stored_presses   # noqa: F401  (re-exported)
from tabletimer.tools.testing.hub_process import HubProcess as Hub     # noqa: F401
from tabletimer.tools.simulator import SimBoard


def act(ev: Path, action: str, **fields) -> None:
    """`tabletimer act DIR ACTION key=value ...`"""
    args = [f"{k}={json.dumps(v) if not isinstance(v, str) else v}" for k, v in fields.items()]
    subprocess.run([TT, "act", str(ev), action, *args], check=True, capture_output=True)


def replay_json(ev: Path) -> list[dict]:
    """The standings `tabletimer replay DIR --json` rebuilds from the log."""
    out = subprocess.run([TT, "replay", str(ev), "--json"], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)["standings"]


def acked_all(sim: SimBoard, n: int, timeout: float = 40) -> None:
    """Until the board has had n different events acknowledged."""
    got: set = set()

    def count(rec: dict) -> bool:
        if "acked" in rec:
            got.add(tuple(rec["acked"]))
        return len(got) >= n
    sim.wait_for(count, timeout=timeout)

