"""The simulated chip takes its contacts' changes in time order, however
late the host runs the board's process: a release told ahead and then a
stall of the board's event loop must not reach the firmware after the next
press: its debouncer would make one long press of the two, and a referee's
confirming hold is lost.  (Found while chasing a CI run's lost confirm; that
run's board records do not show this was its cause.)"""

from __future__ import annotations

import ast
import os
import subprocess
import time
from pathlib import Path

from tabletimer.hub.fleet.simulator import micropython_binary, micropython_path

HERE = Path(__file__).resolve().parent


def test_a_release_told_ahead_is_taken_before_the_next_press_after_a_stall():
    p = subprocess.Popen([micropython_binary(), str(HERE / "sim_contacts_script.py")], text=True,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         env=dict(os.environ, MICROPYPATH=micropython_path()))
    try:
        assert p.stdout.readline() == "ready\n"
        now = time.time_ns() // 1_000_000
        # station 1: released 250 ms from now, pressed again 150 ms later; station 2 pressed between
        lines = [f"edge 1 0 {now + 250} 0", f"edge 2 1 {now + 330} 1", f"edge 1 1 {now + 400} 0"]
        out, _ = p.communicate("".join(ln + "\n" for ln in lines), timeout=30)
    finally:
        p.kill()
    assert out.rstrip().endswith("end"), out
    got = ast.literal_eval(out.splitlines()[-2])
    assert got == [(1, 0), (2, 1), (1, 1)], got
