"""Firmware over the air for a whole hall (issue 29): N simulated boards
running the real firmware, a hub (`tabletimer run`) and this machine's
Mosquitto; `tabletimer boards update DIR --all` timed as an organizer runs
it.  The floor, measured in the same run: one board updated alone (the
first, to another version), the time a board takes with the broker and the
hub to itself.  Printed: the hall's time and its ratio to the floor, each
board's time (its first 'receiving' to its 'committed' in the hub's log),
and the boards left on a broken version (not committed, or a pointer that
is not the new version's): the target is 0.

    .venv/bin/python -m tabletimer.tools.bench.ota [--boards 75] [--trial 30]

docs/benchmarks.md, "Firmware over the air".
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tabletimer.hub.protocol.keys import BoardKeys
from tabletimer.hub.event.folder import event_folder
from tabletimer.hub.event.log.store import EventStore
from tabletimer.tools.bench.report import Report, pct
from tabletimer.hub.fleet.simulator import SimBoard
from tabletimer.tools.testing.hub_process import TT, HubProcess
from tabletimer.tools.testing.local_mosquitto import LocalMosquitto, mosquitto_path


def _hall(root: Path, n: int) -> tuple[Path, list[str]]:
    ev = event_folder.init(root / "event", "czjpa-individuals", "OTA bench")
    boards = [f"U{i:02d}" for i in range(1, n + 1)]
    (ev / "entrants.csv").write_text("id,name,eligible\n" + "".join(f"I{i},Entrant {i},yes\n" for i in range(1, n + 1)))
    (ev / "stations.csv").write_text("board,button,table,entrant\n"
                                     + "".join(f"{b},1,Table {b},I{i}\n" for i, b in enumerate(boards, 1)))
    return ev, boards


def _update(ev: Path, version: str, trial: int, *which: str) -> tuple[float, subprocess.CompletedProcess]:
    t0 = time.monotonic()
    done = subprocess.run([TT, "boards", "update", str(ev), *which, "--family", "sim", "--version", version,
                           "--trial", str(trial)], capture_output=True, text=True, timeout=1800)
    return time.monotonic() - t0, done


def _per_board(ev: Path, version: str) -> dict[str, float]:
    """board -> seconds from its first 'receiving' to its 'committed' of
    version (the same request: its id)."""
    store = EventStore(ev / "events.sqlite")
    try:
        rows = [e for e in store.events() if e["type"] == "fw"]
    finally:
        store.close()
    first: dict[tuple[str, object], int] = {}
    took: dict[str, float] = {}
    for e in rows:
        p, key = e["payload"], (e["board"], e["payload"].get("id"))
        if p.get("state") == "receiving":
            first.setdefault(key, e["received_ms"])
        elif p.get("state") == "committed" and p.get("fw") == version and key in first:
            took[e["board"]] = (e["received_ms"] - first[key]) / 1000
    return took


def _on_version(sim: SimBoard, version: str) -> bool:
    """The board boots the new version, committed (its pointer), and said so."""
    try:
        pointer = json.loads((sim.dir / "fw" / "boot.json").read_text())
    except (OSError, ValueError):
        return False
    return (pointer[2] is None and (sim.dir / pointer[0] / "manifest.txt").read_text().split()[1] == version
            and any(r.get("booted") and r.get("fw") == version for r in sim.records))


def run(n: int, trial: int, report: Report) -> int:
    """The benchmark; the number of boards left on a broken version."""
    root = Path(tempfile.mkdtemp(prefix="tt-ota-"))
    ev, boards = _hall(root, n)
    keys = BoardKeys(ev / "board-keys.json")
    mosq = LocalMosquitto(log=False).start()
    sims = {b: SimBoard(b, "127.0.0.1", mosq.port, root / "boards", key=keys.ensure(b)) for b in boards}
    hub = None
    try:
        hub = HubProcess(ev, mosq.port)
        for s in sims.values():
            s.reboots = True                    # the chip boots again after machine.reset()
            s.start()
        for s in sims.values():
            s.wait_for(lambda r: "sync" in r, timeout=120)
        # the floor: one board alone
        floor_s, one = _update(ev, "0.9.0-floor", trial, boards[0])
        if one.returncode != 0:
            raise RuntimeError(f"the floor's update failed:\n{one.stdout}{one.stderr}")
        report.add("one board alone (floor)", f"{floor_s:.1f} s", f"board {boards[0]}, `boards update` start to end")
        hall_s, done = _update(ev, "0.9.1-hall", trial, "--all")
        summary = [ln for ln in done.stdout.splitlines() if ln.startswith("-- ")]
        report.add(f"the hall, {n} boards (--all)", f"{hall_s:.1f} s = {hall_s / floor_s:.1f} x the floor",
                   f"exit {done.returncode}; {summary[-1] if summary else 'no summary line'}")
        took = list(_per_board(ev, "0.9.1-hall").values())
        if took:
            report.add("per board, receiving -> committed",
                       f"p50 {pct(took, 50):.1f}  p99 {pct(took, 99):.1f}  max {max(took):.1f} s",
                       f"{len(took)} boards committed")
        broken = [b for b, s in sims.items() if not _on_version(s, "0.9.1-hall")]
        report.add("boards not on the new version, committed", str(len(broken)),
                   ", ".join(broken[:10]) + (" ..." if len(broken) > 10 else "") or "target 0")
        if done.returncode != 0:
            print(done.stdout[-4000:], done.stderr[-2000:], file=sys.stderr)
        return len(broken)
    finally:
        if hub is not None:
            hub.stop()
        for s in sims.values():
            s.stop()
        mosq.stop()
        shutil.rmtree(root, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tabletimer.tools.bench.ota", description=__doc__.splitlines()[0])
    ap.add_argument("--boards", type=int, default=75, help="simulated boards in the hall (default 75)")
    ap.add_argument("--trial", type=int, default=30,
                    help="each new version's trial limit in seconds (default 30; the board's default 120)")
    a = ap.parse_args(argv)
    if a.boards < 1:
        ap.error("--boards needs at least 1")
    if mosquitto_path() is None:
        print("this benchmark needs Mosquitto: apt-get install mosquitto (or brew install mosquitto)", file=sys.stderr)
        return 2
    report = Report()
    print(f"firmware over the air: {a.boards} simulated boards (the real firmware), Mosquitto, `tabletimer run`",
          flush=True)
    broken = run(a.boards, a.trial, report)
    print(report.table())
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
