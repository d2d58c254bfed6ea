"""Helpers for tests that run the hub as organizers do (`tabletimer run DIR`,
its own process) against real brokers and real board processes: the hub
resilience test and the chaos rehearsal.

Plain helpers (not a conftest): import with ``from hall import ...``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from tabletimer.hub.protocol.hub_secret import ensure_secret
from tabletimer.hub.protocol.keys import BoardKeys
from tabletimer.hub.event.folder import event_folder

from tabletimer.tools.testing.hub_process import TT, stored_presses  # noqa: F401  (re-exported)
from tabletimer.tools.testing.hub_process import HubProcess as Hub  # noqa: F401
from tabletimer.hub.fleet.simulator import SimBoard


def act(ev: Path, action: str, **fields) -> None:
    """`tabletimer act DIR ACTION key=value ...`"""
    args = [f"{k}={json.dumps(v) if not isinstance(v, str) else v}" for k, v in fields.items()]
    subprocess.run([TT, "act", str(ev), action, *args], check=True, capture_output=True)


def primary_and_standby_copy(tmp: Path, title: str = "", board: str | None = None,
                             table: str = "T1") -> tuple[Path, Path, bytes | None]:
    """Two laptops' folders as docs/operations.md makes them: the primary's
    event (Anna and Ben; on `board`'s buttons 1 and 2 at `table` when a
    board is given, with its key), its hub secret as `tabletimer init`
    makes it, and the standby's copy of the folder taken before the event.
    Returns (primary, copy, the board's key or None)."""
    ev = event_folder.init(tmp / "primary", "czjpa-individuals", *([title] if title else []))
    (ev / "entrants.csv").write_text("id,name,eligible\n1,Anna,yes\n2,Ben,yes\n")
    key = None
    if board:
        (ev / "stations.csv").write_text(f"board,button,table,entrant\n{board},1,{table},1\n{board},2,{table},2\n")
        key = BoardKeys(ev / "board-keys.json").ensure(board)
    ensure_secret(ev)
    copy = tmp / "standby"
    shutil.copytree(ev, copy)
    return ev, copy, key


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

