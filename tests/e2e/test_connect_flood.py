"""No host without a login can lock the boards out of the embedded broker
(issue #33, 1): one host's sockets that never send a CONNECT held amqtt's
connection slots for over 90 s, a board with a valid login timed out, and
nothing said so.  Now one address gets PER_HOST connections at once (one
more is cut at once), a connection has CONNECT_DEADLINE_S to send its
CONNECT, and the hub alerts what the broker refused.  A real hub, the real
broker process, a real board (the firmware in micropython); the flood from
127.0.0.2 (another address on this machine: 127.0.0.1 itself is not
counted, it is where the hub and the simulators connect from)."""

from __future__ import annotations

import resource
import socket
import sys

import pytest

from brokers import require_mosquitto
from rig import Rig, synced
from waiting import until
from tabletimer.hub.broker.connection_gate import CONNECT_DEADLINE_S, PER_HOST
from tabletimer.hub.broker.open_files import BROKER_FILES

FLOOD = PER_HOST + 24


def closed(s: socket.socket) -> bool:
    """The broker closed (or cut) s; without waiting."""
    try:
        return s.recv(1, socket.MSG_DONTWAIT) == b""
    except BlockingIOError:
        return False
    except OSError:             # reset: cut
        return True


def test_one_hosts_idle_sockets_are_cut_alerted_and_a_board_still_gets_in(tmp_path, embedded_broker):
    r = Rig(tmp_path, embedded_broker)
    flood: list[socket.socket] = []
    try:
        svc = r.start_hub()
        for _ in range(FLOOD):
            s = socket.socket()
            s.bind(("127.0.0.2", 0))
            s.connect((embedded_broker.host, embedded_broker.port))
            flood.append(s)
        until(lambda: sum(map(closed, flood)) >= FLOOD - PER_HOST,
              "the connections over one address's share cut at once", timeout=10,
              seen=lambda: sum(map(closed, flood)))
        b1 = r.board("B1")           # while PER_HOST idle sockets of the flood are still open
        synced(b1)
        b1.press(1)
        until(lambda: all(map(closed, flood)), f"every idle socket cut after {CONNECT_DEADLINE_S} s",
              timeout=CONNECT_DEADLINE_S + 10, seen=lambda: sum(map(closed, flood)))
        line = until(lambda: [a for a in svc.alerts() if a.startswith("the broker refused ")
                              and f"refused {FLOOD} connection(s) from 127.0.0.2" in a],
                     "the alert of the flood with every refused connection counted", timeout=20,
                     seen=lambda: svc.alerts())
        assert f"({FLOOD - PER_HOST} over the limit open at once from one address, {PER_HOST} without a " \
               f"login in time" in line[0], line
    finally:
        for s in flood:
            s.close()
        r.close()


def soft_open_files(pid: int) -> int:
    with open(f"/proc/{pid}/limits") as f:
        line = next(li for li in f if li.startswith("Max open files"))
    return int(line.split()[3])


@pytest.fixture
def laptop_limit():
    """This process's soft open-files limit at a laptop's usual 1,024 while
    the test starts its brokers (they inherit it), then back."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (1024, hard))
    try:
        yield min(BROKER_FILES, hard)
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/PID/limits")
def test_both_brokers_take_the_open_files_a_flood_would_exhaust(tmp_path, laptop_limit):
    """Mosquitto at 1,024 open files held 1,017 sockets of one host's flood
    and let no client in (tools/attack/connect_flood.py): each broker's
    process now raises its own limit (to 65,536 where the system allows)."""
    require_mosquitto()
    from tabletimer.hub.broker.broker import EmbeddedBroker, free_port
    from tabletimer.hub.event.folder import event_folder
    from tabletimer.tools.testing.hub_process import HubProcess

    with EmbeddedBroker(tmp_path / "embedded") as b:
        assert soft_open_files(b.proc.pid) >= laptop_limit
    ev = event_folder.init(tmp_path / "event", "czjpa-individuals")
    hub = HubProcess(ev, None, "--port", str(free_port()), "--broker-kind", "mosquitto")
    try:
        first = next(li for li in hub.lines if li.startswith("broker:"))
        pid = int(first.split("pid ")[1].split(")")[0])
        assert soft_open_files(pid) >= laptop_limit, first
    finally:
        hub.stop()
