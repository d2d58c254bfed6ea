"""SIGTERM and SIGHUP stop the hub and the standby (hub/cli/common.py,
stop_on_signals): the stop event is set from a thread of its own, never by
the handler on the main thread, where the Event's lock may be held (a hub
ignored SIGTERM so for an hour in a test, 2026-12-04)."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = r'''
import os, signal, threading
from tabletimer.hub.runtime.signals import stop_on_signals
for sig in (signal.SIGTERM, signal.SIGHUP):
    stop = threading.Event()
    stop_on_signals(stop)
    set_by = []
    plain_set = stop.set
    stop.set = lambda: (set_by.append(threading.current_thread().name), plain_set())
    os.kill(os.getpid(), sig)
    assert stop.wait(10), f"{sig.name}: the stop event not set within 10 s"
    print(sig.name, set_by)
# a serving hub's Ctrl-C (issue 45, item 16): a stop request too, never a KeyboardInterrupt raised
# into whatever the main thread runs; the signal's name said
stop, why = threading.Event(), []
stop_on_signals(stop, (signal.SIGINT,), said=why)
try:
    os.kill(os.getpid(), signal.SIGINT)
    assert stop.wait(10), "SIGINT: the stop event not set within 10 s"
except KeyboardInterrupt:
    raise SystemExit("SIGINT raised KeyboardInterrupt")
print("SIGINT", why)
'''


def test_sigterm_and_sighup_set_the_stop_event_from_a_thread_of_their_own():
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["SIGTERM ['stop-on-signal']", "SIGHUP ['stop-on-signal']",
                                        "SIGINT ['SIGINT']"], done.stdout
