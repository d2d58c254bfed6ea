"""The laptop clock faults a CI machine cannot make, put into a process of
the hub by the tests (tools/testing/host_clock_faults.py puts this folder on
its PYTHONPATH): Python imports this module at its start.  Like the ESP32's
simulated pins, this is the one place the laptop's clocks are modelled;
everything above them is the real hub.

$TT_CLOCK_FAULTS names a JSON file, read again whenever it changes:
  {"slept_ms": N}   the awake clocks (time.monotonic, CLOCK_MONOTONIC) are N ms
                    behind: what a suspend of N ms leaves (written by a test
                    while the process is stopped, so no reading goes back)
  {"wall_ms": N}    the wall clock (time.time, CLOCK_REALTIME) is stepped by N
  {"boot_ms": N}    every clock but the wall is N ms behind: the boot clock
                    started again, as after a reboot
"""

import json
import os
import time

_PATH = os.environ.get("TT_CLOCK_FAULTS")

if _PATH:
    _seen = [None, {}]                  # the file's mtime, its faults

    def _faults():
        try:
            m = os.stat(_PATH).st_mtime_ns
        except OSError:
            return _seen[1]
        if m != _seen[0]:
            try:
                with open(_PATH) as f:
                    _seen[1] = json.load(f)
                _seen[0] = m
            except ValueError:          # being written: the last faults meanwhile
                pass
        return _seen[1]

    def _ns(kind):
        f = _faults()
        if kind == "wall":
            return f.get("wall_ms", 0) * 1_000_000
        late = f.get("boot_ms", 0)
        if kind == "awake":
            late += f.get("slept_ms", 0)
        return -late * 1_000_000

    _time_ns, _mono_ns, _gettime_ns = time.time_ns, time.monotonic_ns, time.clock_gettime_ns
    _KIND = {time.CLOCK_REALTIME: "wall", time.CLOCK_MONOTONIC: "awake"}
    if hasattr(time, "CLOCK_BOOTTIME"):
        _KIND[time.CLOCK_BOOTTIME] = "boot"

    def _clock_gettime_ns(clk):
        kind = _KIND.get(clk)
        return _gettime_ns(clk) + (_ns(kind) if kind else 0)

    time.time_ns = lambda: _time_ns() + _ns("wall")
    time.time = lambda: time.time_ns() / 1e9
    time.monotonic_ns = lambda: _mono_ns() + _ns("awake")
    time.monotonic = lambda: time.monotonic_ns() / 1e9
    time.clock_gettime_ns = _clock_gettime_ns
    time.clock_gettime = lambda clk: _clock_gettime_ns(clk) / 1e9
