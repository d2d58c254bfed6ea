"""One host opens N TCP connections to a broker and never sends a CONNECT;
meanwhile a client with a valid CONNECT connects from another address.
Prints how many of the flood's sockets the broker holds open over time,
and how long the client's CONNACK took, for the embedded broker and
Mosquitto, each started here on 127.0.0.1 (the flood from 127.0.0.2, the
client from 127.0.0.3: other addresses of this machine).

    .venv/bin/python -m tabletimer.tools.attack.connect_flood [--sockets 1100] [--nofile 1024]

--nofile: the brokers' open-files limit (a laptop's usual 1,024; default:
this shell's).  The figures go into docs/operations.md with the command."""

from __future__ import annotations

import argparse
import resource
import socket
import tempfile
import time

from tabletimer.hub.broker.broker import EmbeddedBroker
from tabletimer.hub.broker.ports import wait_port
from tabletimer.tools.testing.local_mosquitto import LocalMosquitto, mosquitto_path

FLOOD_FROM, CLIENT_FROM = "127.0.0.2", "127.0.0.3"


def still_open(socks: list[socket.socket]) -> int:
    n = 0
    for s in socks:
        try:
            if s.recv(1, socket.MSG_DONTWAIT) != b"":
                n += 1
        except (BlockingIOError, TimeoutError):      # nothing to read: open
            n += 1
        except OSError:                             # reset: cut
            pass
    return n


def connack_s(port: int, timeout: float) -> float | None:
    """Seconds from a client's TCP connect (from CLIENT_FROM) to its
    CONNACK, None if none came within timeout.  A plain socket, not paho:
    with the flood's thousand sockets open, paho's select() cannot take a
    descriptor numbered over 1,024."""
    cid = b"probe-%d" % time.monotonic_ns()
    body = b"\x00\x04MQTT\x04\x02\x00\x1e" + len(cid).to_bytes(2, "big") + cid
    t0 = time.monotonic()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout,
                                      source_address=(CLIENT_FROM, 0)) as s:
            s.sendall(bytes([0x10, len(body)]) + body)
            s.settimeout(max(0.1, timeout - (time.monotonic() - t0)))
            answer = s.recv(4)
    except OSError:
        return None
    return time.monotonic() - t0 if answer[:2] == b"\x20\x02" and answer[3:4] == b"\x00" else None


def flood(port: int, n: int, watch_s: float) -> dict:
    socks, refused_at_connect = [], 0
    t0 = time.monotonic()
    for _ in range(n):
        s = socket.socket()
        s.bind((FLOOD_FROM, 0))
        s.settimeout(2)
        try:
            s.connect(("127.0.0.1", port))
            s.setblocking(False)       # (with a timeout, even a MSG_DONTWAIT read waits)
            socks.append(s)
        except OSError:
            refused_at_connect += 1
            s.close()
    opened_s = time.monotonic() - t0
    out = {"sockets": n, "refused at connect": refused_at_connect, "opened in s": round(opened_s, 2)}
    time.sleep(0.5)
    out["open after 0.5 s"] = still_open(socks)
    c = connack_s(port, 15)
    out["client CONNACK during the flood (s)"] = None if c is None else round(c, 3)
    mark = time.monotonic()
    while time.monotonic() - mark < watch_s:
        time.sleep(1)
    out[f"open after {watch_s + 0.5:g} s"] = still_open(socks)
    for s in socks:
        s.close()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sockets", type=int, default=1100)
    ap.add_argument("--watch", type=float, default=10.0, help="seconds to watch the flood after the probe")
    ap.add_argument("--nofile", type=int, help="the brokers' open-files limit (soft)")
    a = ap.parse_args(argv)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = max(soft, a.sockets + 200)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(want, hard) if hard != resource.RLIM_INFINITY else want, hard))
    brokers = [("embedded", None)] + ([("mosquitto", None)] if mosquitto_path() else [])
    for kind, _ in brokers:
        if a.nofile:                     # the broker inherits it; this process takes its own back after
            resource.setrlimit(resource.RLIMIT_NOFILE, (a.nofile, hard))
        if kind == "embedded":
            b = EmbeddedBroker(tempfile.mkdtemp(prefix="flood-")).start()
            port, stop = b.port, b.stop
        else:
            m = LocalMosquitto(log=False).start()
            port, stop = m.port, m.stop
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(want, hard) if hard != resource.RLIM_INFINITY else want,
                                                    hard))
        try:
            wait_port("127.0.0.1", port)
            before = connack_s(port, 5)
            r = flood(port, a.sockets, a.watch)
        finally:
            stop()
        limit = a.nofile or soft
        print(f"{kind} (open files {limit}): client CONNACK before the flood "
              f"{None if before is None else round(before, 3)} s; " + "; ".join(f"{k} {v}" for k, v in r.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
