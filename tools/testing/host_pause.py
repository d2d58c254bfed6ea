"""The host stands still: processes stopped (SIGSTOP) for a while, then
continued (SIGCONT), as a laptop's suspend, a virtual machine's pause or a
snapshot stops every program on it at once.  Done by a process of its own,
so that the caller can stop itself with the rest (its threads, a
simulator's chip thread among them, stand still too).  Linux: the run's
processes are found in /proc.

    stand_still([os.getpid(), *descendants(os.getpid())], 20)

    python -m tabletimer.tools.testing.host_pause SECONDS LAG PID...
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path


def descendants(pid: int) -> list[int]:
    """The processes pid started and theirs, however deep (read from /proc:
    Linux), parents before their children."""
    children: dict[int, list[int]] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                # the parent's pid is the 2nd field after the command's name (which may hold ") ")
                ppid = int((d / "stat").read_bytes().rpartition(b")")[2].split()[1])
            except (OSError, IndexError, ValueError):      # gone meanwhile
                continue
            children.setdefault(ppid, []).append(int(d.name))
    found, todo = [], list(children.get(pid, []))
    while todo:
        p = todo.pop(0)
        found.append(p)
        todo += children.get(p, [])
    return found


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:          # ended meanwhile
        pass


def stand_still(pids: list[int], seconds: float, lag: float = 0.0) -> None:
    """Stops every process of pids at once, for `seconds`, then continues
    them in their order, `lag` seconds apart (0: at once).  Returns once
    they are all continued; the caller may be one of them."""
    subprocess.run([sys.executable, "-m", "tabletimer.tools.testing.host_pause", f"{seconds:g}", f"{lag:g}",
                    *map(str, pids)],
                   start_new_session=True, check=True)     # not stopped with its caller's group or session


def main(argv: list[str]) -> None:
    seconds, lag, pids = float(argv[0]), float(argv[1]), [int(p) for p in argv[2:]]
    for p in pids:
        _signal(p, signal.SIGSTOP)
    time.sleep(seconds)
    for i, p in enumerate(pids):
        if i and lag:
            time.sleep(lag)
        _signal(p, signal.SIGCONT)


if __name__ == "__main__":
    main(sys.argv[1:])
