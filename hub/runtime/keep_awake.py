"""Keeping the hub's laptop awake while the hub runs: a laptop on battery
that sleeps after 10 idle minutes would stop acknowledging the boards in
the middle of a round.  The operating system is asked, as its own tools do:
on Linux logind's inhibitor lock (`systemd-inhibit`: sleep, idle, and the
lid switch), on macOS a power assertion (`caffeinate`).  The lock is held
by a child process that ends with the hub, even a killed hub: on Linux it
waits on a pipe only the hub holds open, on macOS caffeinate watches the
hub's pid.  Where neither can be had, the hub says so at start, with what to
do by hand."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass

SETTLE_S = 1.0       # an inhibitor that has not failed within this is held
WHY = "TableTimer: the hub is timing a round"


@dataclass
class Awake:
    """The held lock (proc) and what to say of it."""
    said: str
    proc: subprocess.Popen | None = None

    def release(self) -> None:
        p, self.proc = self.proc, None
        if p is not None and p.poll() is None:
            p.terminate()
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                p.kill()


def command(platform: str = sys.platform, pid: int | None = None) -> list[str] | None:
    """The command that holds the laptop awake while it runs (None: no
    such command on this system)."""
    if platform == "darwin":
        tool = shutil.which("caffeinate")
        # -i: no idle sleep, -s: no system sleep on AC, -w: until the hub's pid is gone
        return [tool, "-i", "-s", "-w", str(pid or os.getpid())] if tool else None
    tool = shutil.which("systemd-inhibit")
    if tool is None:
        return None
    # 'cat' reads the pipe only the hub holds: it ends when the hub does, however it ends
    return [tool, "--what=sleep:idle:handle-lid-switch", "--who=TableTimer", f"--why={WHY}",
            "--mode=block", "cat"]


ADVICE = ("turn automatic sleep off in the laptop's power settings, keep it plugged in and its lid open "
          "(a sleeping hub stops acknowledging the boards; its clock carries on, and it says so)")


def keep_awake(platform: str = sys.platform) -> Awake:
    """Hold the laptop awake; Awake.said tells the operator how it went."""
    cmd = command(platform)
    if cmd is None:
        tool = "caffeinate" if platform == "darwin" else "systemd-inhibit"
        return Awake(f"warning: cannot keep this laptop awake ({tool} not found): {ADVICE}")
    try:
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, start_new_session=True)
    except OSError as e:
        return Awake(f"warning: cannot keep this laptop awake ({cmd[0]}: {e.strerror or e}): {ADVICE}")
    try:
        proc.wait(SETTLE_S)
    except subprocess.TimeoutExpired:
        return Awake(f"the laptop is kept awake while the hub runs ({os.path.basename(cmd[0])})", proc)
    err = (proc.stderr.read() if proc.stderr else b"").decode(errors="replace").strip().splitlines()
    why = err[-1] if err else f"it exited with code {proc.returncode}"
    return Awake(f"warning: cannot keep this laptop awake ({os.path.basename(cmd[0])}: {why}): {ADVICE}")
