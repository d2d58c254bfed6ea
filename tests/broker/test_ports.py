"""free_port(): ports for servers that bind them later, outside the range the
kernel takes outgoing connections' source ports from (hub/broker/ports.py)."""

import os
import socket
import subprocess
import sys

from tabletimer.hub.broker import ports


def ephemeral_low() -> int:
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            return int(f.read().split()[0])
    except OSError:
        return 49152       # macOS, Windows


def test_the_ports_lie_below_the_kernels_range_for_outgoing_connections():
    given = [ports.free_port() for _ in range(50)]
    assert all(ports.LOW <= p < ports.HIGH for p in given), given
    assert ports.HIGH <= ephemeral_low(), (ports.HIGH, ephemeral_low())
    assert len(set(given)) == 50, "a port was handed out twice in a row"


def test_a_port_someone_is_bound_to_is_passed_over():
    taken = []
    try:
        for _ in range(3):
            s = socket.socket()
            s.bind(("127.0.0.1", ports.free_port()))
            taken.append(s)
        held = {s.getsockname()[1] for s in taken}
        for _ in range(len(ports.OWN_PORTS) - 3):      # every other port of the slice, once
            assert ports.free_port() not in held
    finally:
        for s in taken:
            s.close()


def worker_ports(worker: str, slices_from: str | None = None) -> set[int]:
    code = ("from tabletimer.hub.broker import ports\n"
            "print(*[ports.free_port() for _ in range(200)])")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_XDIST_WORKER", "TT_PORT_SLICES_FROM")}
    if worker:
        env["PYTEST_XDIST_WORKER"] = worker
    if slices_from is not None:
        env["TT_PORT_SLICES_FROM"] = slices_from
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env).stdout
    return {int(p) for p in out.split()}


def test_each_test_worker_has_ports_of_its_own():
    a, b = worker_ports("gw0"), worker_ports("gw1")
    assert a and b and not a & b
    assert all(ports.LOW <= p < ports.LOW + ports.SLICE for p in a)
    assert all(ports.LOW + ports.SLICE <= p < ports.LOW + 2 * ports.SLICE for p in b)


def test_the_whole_suites_runs_have_ports_of_their_own():
    """tools/dev.py's three runs at once: the waiting tests' gw1 and the
    computing tests' gw1 are both "gw1"; each run starts its slices at
    TT_PORT_SLICES_FROM, the hall's (no workers) takes that slice alone
    (two runs' gw0 once took one port: a hub could not listen)."""
    waiting, computing, hall = worker_ports("gw1", "0"), worker_ports("gw1", "6"), worker_ports("", "9")
    assert not waiting & computing and not hall & (waiting | computing)
    assert all(ports.LOW + 7 * ports.SLICE <= p < ports.LOW + 8 * ports.SLICE for p in computing)
    assert all(ports.LOW + 9 * ports.SLICE <= p < ports.LOW + 10 * ports.SLICE for p in hall)
