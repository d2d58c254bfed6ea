"""A laptop's clock faults, made on a hub process for the tests: a suspend
(the process and its children stopped, their awake clocks left behind by
as long), a stepped wall clock, a reboot's new boot clock.  The faults are
modelled in the hub's processes by clock_faults/sitecustomize.py (the
environment from `env()`); the hub above the clocks is the real one."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

from .host_pause import descendants

HOOK = Path(__file__).parent / "clock_faults"


class ClockFaults:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.faults: dict[str, int] = {}
        self._write()

    def env(self, base: dict | None = None) -> dict:
        """The environment for a process whose clocks these faults move."""
        env = dict(os.environ if base is None else base)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(HOOK), env.get("PYTHONPATH")) if p)
        env["TT_CLOCK_FAULTS"] = str(self.path)
        return env

    def _write(self) -> None:
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.faults))
        os.replace(tmp, self.path)

    def set(self, **faults: int) -> None:
        """slept_ms, wall_ms, boot_ms (sitecustomize.py), from now on."""
        self.faults.update(faults)
        self._write()

    def suspend(self, pid: int, seconds: float) -> int:
        """The laptop sleeps for `seconds`: the process pid and its
        descendants stopped, their awake clocks left behind by as long as
        they were stopped (set before they run again), then continued
        (host_pause.stand_still stops them too, but cannot set the clocks
        in between).  Returns the ms slept."""
        pids = [pid, *descendants(pid)]
        for p in pids:
            os.kill(p, signal.SIGSTOP)
        began = time.monotonic_ns()
        time.sleep(seconds)
        slept = (time.monotonic_ns() - began) // 1_000_000
        self.set(slept_ms=self.faults.get("slept_ms", 0) + slept)
        for p in pids:
            os.kill(p, signal.SIGCONT)
        return slept

