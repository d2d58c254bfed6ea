"""Helpers for tests that run the hub as organizers do (`tabletimer run DIR`,
its own process) against real brokers and real board processes: the hub
resilience test and the chaos rehearsal.

Plain helpers (not a conftest): import with ``from hall import ...``.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
from pathlib import Path

from tabletimer.tools.simulator import SimBoard

TT = str(Path(sys.executable).parent / "tabletimer")


class Hub:
    """`tabletimer run DIR --broker ...` as a child process.  Its output (one
    line per stored event) is read all the time by a thread, so a long run
    never blocks the hub on a full pipe; `lines` holds it."""

    def __init__(self, ev: Path, port: int, *extra: str, timeout: float = 30.0) -> None:
        self.proc = subprocess.Popen(
            [TT, "run", str(ev), "--broker", f"mqtt://127.0.0.1:{port}", "--console-listen", "off", *extra],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.lines: list[str] = []
        self._connected = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        # wait until it is connected (or gone)
        if not self._connected.wait(timeout):
            self.kill()
            raise TimeoutError(f"the hub did not start in {timeout} s: {''.join(self.lines)[-2000:]}")
        if self.proc.poll() is not None and not any(li.startswith("broker on") for li in self.lines):
            raise RuntimeError(f"the hub exited ({self.proc.returncode}): {''.join(self.lines)[-2000:]}")

    def _read(self) -> None:
        assert self.proc.stdout
        for line in self.proc.stdout:
            self.lines.append(line)
            if line.startswith("broker on"):
                self._connected.set()
        self._connected.set()          # EOF: the hub is gone

    def kill(self) -> None:
        """SIGKILL: no clean shutdown at all."""
        self.proc.kill()
        self.proc.wait()
        self._reader.join(10)

    def stop(self, timeout: float = 30.0) -> str:
        """SIGTERM (a clean stop); the hub's whole output."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._reader.join(10)
        return "".join(self.lines)


def act(ev: Path, action: str, **fields) -> None:
    """`tabletimer act DIR ACTION key=value ...`"""
    args = [f"{k}={json.dumps(v) if not isinstance(v, str) else v}" for k, v in fields.items()]
    subprocess.run([TT, "act", str(ev), action, *args], check=True, capture_output=True)


def replay_json(ev: Path) -> list[dict]:
    """The standings `tabletimer replay DIR --json` rebuilds from the log."""
    out = subprocess.run([TT, "replay", str(ev), "--json"], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def stored_presses(ev: Path) -> list[dict]:
    from tabletimer.hub.store import EventStore

    store = EventStore(ev / "events.sqlite")
    try:
        return [e for e in store.events() if e["type"] == "press"]
    finally:
        store.close()


def acked_all(sim: SimBoard, n: int, timeout: float = 40) -> None:
    """Until the board has had n different events acknowledged."""
    got: set = set()

    def count(rec: dict) -> bool:
        if "acked" in rec:
            got.add(tuple(rec["acked"]))
        return len(got) >= n
    sim.wait_for(count, timeout=timeout)

