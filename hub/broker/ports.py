"""Ports for servers started later: a port chosen now for a process that binds
it a moment later (the embedded broker, a Mosquitto child, a test's hub).

Asking the kernel for port 0 and closing the socket hands out a port from its
ephemeral range, the one it also takes the source ports of outgoing
connections from.  Between that probe and the server's bind, any connection
made on the machine (a board, a browser, a client of another test) may be
given the same port as its source port, and the server then cannot listen.
So free_port() hands out ports below that range (Linux starts it at 32768,
macOS and Windows at 49152), where the kernel never puts a source port.
Each pytest-xdist worker (PYTEST_XDIST_WORKER, gw0, gw1, ...) takes its own
slice of them, and a process walks its slice in turn from a random start, so
two probes do not pick the same port before either is bound.  Several pytest
runs at once (tools/dev.py's whole suite: three) each start their workers'
slices at TT_PORT_SLICES_FROM (their gw0, gw1, ... are the same names); a
run without workers takes slice TT_PORT_SLICES_FROM when it is set (the
hall's run), else every port of the range.
"""

from __future__ import annotations

import os
import random
import socket
import subprocess
import time

LOW, HIGH = 20000, 32000     # below every common ephemeral range; above the well-known services
SLICE = 1000                 # ports per test worker: 12 workers' worth


def own_ports() -> range:
    """The ports this process hands out: its test worker's slice, its run's
    (TT_PORT_SLICES_FROM), or all."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    first = os.environ.get("TT_PORT_SLICES_FROM", "")
    first_slice = int(first) if first.isdigit() else 0
    if worker.startswith("gw") and worker[2:].isdigit():
        n = first_slice + int(worker[2:])
    elif first.isdigit():
        n = first_slice
    else:
        return range(LOW, HIGH)
    start = LOW + (n * SLICE) % (HIGH - LOW)
    return range(start, start + SLICE)


OWN_PORTS = own_ports()
_next = random.randrange(len(OWN_PORTS))


def free_port(host: str = "127.0.0.1") -> int:
    """A port on host that nothing listens on or is bound to now, outside the
    ephemeral range (above); the kernel's choice if the whole slice is taken."""
    global _next
    for _ in range(len(OWN_PORTS)):
        port = OWN_PORTS[_next % len(OWN_PORTS)]
        _next += 1
        with socket.socket() as s:      # no SO_REUSEADDR: a port in TIME_WAIT is passed over
            try:
                s.bind((host, port))
            except OSError:
                continue
            return port
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def wait_port(host: str, port: int, timeout: float = 5.0, proc: subprocess.Popen | None = None) -> None:
    """Return once host:port accepts a connection; TimeoutError after
    timeout; RuntimeError at once if proc (the server) exits meanwhile."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with socket.create_connection((host, port), timeout=0.5):
                return
        except OSError:
            if proc is not None and proc.poll() is not None:
                raise RuntimeError(f"process exited with code {proc.returncode} before {host}:{port} opened")
            if time.monotonic() > deadline:
                raise TimeoutError(f"nothing listens on {host}:{port} after {timeout} s")
            time.sleep(0.05)   # polling a port: there is no event to await
