"""A host (or several) on the hall network without a login floods a hub's web
server, or the hall's pages' server, while a referee's phone, the console
and a projector keep asking; prints how many of their requests were
answered (issue #33 items 2 and 3).

    .venv/bin/python -m tabletimer.tools.attack.web_flood URL --kind slow \\
        --from 127.0.0.2 --connections 1100 --reopen 10 --seconds 30 \\
        --cookie REFEREE_TOKEN --bearer CONSOLE_TOKEN \\
        --probe GET:/t/Table%201 --probe POST:/r/api/act --probe GET:/rows?after=0

    .venv/bin/python -m tabletimer.tools.attack.web_flood HALL_URL --kind streams \\
        --from 127.0.1.1-80 --connections 480 --seconds 30 \\
        --probe STREAM:/h/api/stream?screen=SCREEN_TOKEN --probe STREAM:/h/api/stream \\
        --probe GET:/h/api/standings

--kind slow: each of the flood's connections sends the start of a request
and nothing more, and is opened again every --reopen seconds (at once,
with 0) whether or not the server closed it.  --kind streams: each opens
the hall's stream (GET --path, default /h/api/stream) and holds it; one
refused tries again every --reopen seconds.  The connections are spread
over the --from addresses (A, A,B or a range 127.0.1.1-80: on Linux every
127.0.0.0/8 address is this machine).

The probes go from --probe-from (default 127.0.0.1) every --every seconds,
each on a connection of its own, with the referee's cookie and the
console's bearer token when given: METHOD:PATH (GET, POST: a small JSON
body the act endpoint refuses 400, which is an answer; STREAM: the status
line of a server-sent-events stream, then closed).  A probe is answered
when it gets any status but 503 within 5 s.
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import resource
import time
from collections import Counter
from urllib.parse import urlsplit

PROBE_TIMEOUT_S = 5.0


def addresses(spec: str) -> list[str]:
    """'127.0.0.2' / '127.0.0.2,127.0.0.3' / '127.0.1.1-80' -> the addresses."""
    out: list[str] = []
    for part in spec.split(","):
        part = part.strip()
        if "-" in part:
            first, last = part.rsplit("-", 1)
            base = ipaddress.IPv4Address(first)
            span = int(last) - int(first.rsplit(".", 1)[1])
            out += [str(base + i) for i in range(span + 1)]
        elif part:
            out.append(part)
    return out


def room_for(n: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = n + 256 if hard == resource.RLIM_INFINITY else min(n + 256, hard)
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))


class Flood:
    def __init__(self, host: str, port: int, kind: str, sources: list[str], n: int, reopen: float,
                 path: str) -> None:
        self.host, self.port, self.kind, self.reopen, self.path = host, port, kind, reopen, path
        self.slots = [sources[i % len(sources)] for i in range(n)]
        self.held = 0              # connections open and not refused now
        self.opened = 0
        self.refused = 0
        self.stop = asyncio.Event()

    async def run(self) -> None:
        await asyncio.gather(*(self._slot(src) for src in self.slots))

    async def _slot(self, src: str) -> None:
        while not self.stop.is_set():
            began = time.monotonic()
            try:
                r, w = await asyncio.open_connection(self.host, self.port, local_addr=(src, 0))
            except OSError:
                await self._pause(began)
                continue
            self.opened += 1
            counted = False
            try:
                if self.kind == "slow":
                    w.write(b"GET / HTTP/1.1\r\nHost: hub\r\n")      # and never the rest
                    self._count(+1)
                    counted = True
                    got = await self._until_closed(r, self.reopen or 3600)
                    if got.startswith(b"HTTP/1.1 503"):
                        self.refused += 1
                else:
                    w.write(f"GET {self.path} HTTP/1.1\r\nHost: hall\r\nAccept: text/event-stream\r\n\r\n".encode())
                    line = await asyncio.wait_for(r.readline(), 10)
                    if line.startswith(b"HTTP/1.1 200"):
                        self._count(+1)
                        counted = True
                        await self._until_closed(r, 3600)
                    else:
                        self.refused += 1
            except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError):
                pass
            finally:
                if counted:
                    self._count(-1)
                w.close()
            await self._pause(began)

    def _count(self, d: int) -> None:
        self.held += d

    async def _until_closed(self, r: asyncio.StreamReader, limit: float) -> bytes:
        """What the server sends until it closes (or limit s, or the end)."""
        got = b""
        stop = asyncio.ensure_future(self.stop.wait())
        try:
            deadline = time.monotonic() + limit
            while (left := deadline - time.monotonic()) > 0 and not self.stop.is_set():
                read = asyncio.ensure_future(r.read(65536))
                done, _ = await asyncio.wait({read, stop}, timeout=left, return_when=asyncio.FIRST_COMPLETED)
                if read not in done:
                    read.cancel()
                    break
                chunk = read.result()
                if not chunk:
                    break
                got = (got + chunk)[:64]
        finally:
            stop.cancel()
        return got

    async def _pause(self, began: float) -> None:
        wait = max(0.05, self.reopen - (time.monotonic() - began)) if self.reopen else 0.05
        try:
            await asyncio.wait_for(self.stop.wait(), wait)
        except asyncio.TimeoutError:
            pass


async def probe(host: str, port: int, spec: str, src: str, cookie: str | None, bearer: str | None) -> str:
    """One probe: its status ('200', '503') or what went wrong ('no answer')."""
    method, _, path = spec.partition(":")
    body = b'{"action": "probe"}' if method == "POST" else b""
    head = [f"{'GET' if method == 'STREAM' else method} {path} HTTP/1.1", f"Host: {host}:{port}",
            "Connection: close", "Accept: " + ("text/event-stream" if method == "STREAM" else "*/*")]
    if cookie:
        head.append(f"Cookie: tt_referee={cookie}")
    if bearer:
        head.append(f"Authorization: Bearer {bearer}")
    if method == "POST":
        head += ["Content-Type: application/json", "X-TableTimer: 1", f"Content-Length: {len(body)}"]
    try:
        r, w = await asyncio.wait_for(asyncio.open_connection(host, port, local_addr=(src, 0)), PROBE_TIMEOUT_S)
    except (OSError, asyncio.TimeoutError):
        return "no connection"
    try:
        w.write(("\r\n".join(head) + "\r\n\r\n").encode() + body)
        line = await asyncio.wait_for(r.readline(), PROBE_TIMEOUT_S)
        parts = line.split()
        return parts[1].decode() if len(parts) > 1 else "closed"
    except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError):
        return "no answer"
    finally:
        w.close()


async def attack(args) -> dict[str, Counter]:
    u = urlsplit(args.url)
    host, port = u.hostname or "127.0.0.1", u.port or 80
    flood = Flood(host, port, args.kind, addresses(args.sources), args.connections, args.reopen, args.path)
    running = asyncio.ensure_future(flood.run())
    results: dict[str, Counter] = {spec: Counter() for spec in args.probe}
    await asyncio.sleep(args.warmup)           # the flood takes its places first
    t0 = time.monotonic()
    held = []
    while time.monotonic() - t0 < args.seconds:
        round_at = time.monotonic()
        held.append(flood.held)
        answers = await asyncio.gather(*(probe(host, port, spec, args.probe_from, args.cookie, args.bearer)
                                         for spec in args.probe))
        for spec, status in zip(args.probe, answers):
            results[spec][status] += 1
        await asyncio.sleep(max(0.0, args.every - (time.monotonic() - round_at)))
    flood.stop.set()
    await running
    print(f"flood: {args.kind}, {args.connections} connections from {len(set(flood.slots))} address(es)"
          f" ({args.sources}), reopened every {args.reopen:g} s; {args.seconds:g} s of probes every "
          f"{args.every:g} s from {args.probe_from}")
    print(f"  the flood's connections open at the probes (neither refused nor closed yet): "
          f"{min(held) if held else 0}..{max(held) if held else 0}; refused (503) {flood.refused} "
          f"of {flood.opened} opened")
    for spec, counts in results.items():
        n = sum(counts.values())
        ok = n - counts["503"] - counts["no answer"] - counts["no connection"] - counts["closed"]
        shown = ", ".join(f"{k} x{v}" for k, v in sorted(counts.items()))
        print(f"  probe {spec}: {ok}/{n} answered ({shown})")
    return results


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tabletimer.tools.attack.web_flood", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("url", help="the server: http://HOST:PORT (the hub's web server, or the hall's)")
    ap.add_argument("--kind", choices=("slow", "streams"), default="slow")
    ap.add_argument("--from", dest="sources", default="127.0.0.2", help="the flood's source addresses")
    ap.add_argument("--connections", type=int, default=1100)
    ap.add_argument("--reopen", type=float, default=10.0, help="seconds; 0: at once")
    ap.add_argument("--path", default="/h/api/stream", help="--kind streams: the stream's path")
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--every", type=float, default=3.0)
    ap.add_argument("--warmup", type=float, default=3.0, help="seconds of flood before the first probe")
    ap.add_argument("--probe", action="append", default=[], metavar="METHOD:PATH")
    ap.add_argument("--probe-from", default="127.0.0.1")
    ap.add_argument("--cookie", help="a referee's sign-in token (the tt_referee cookie)")
    ap.add_argument("--bearer", help="the console's token")
    args = ap.parse_args(argv)
    if not args.probe:
        ap.error("give at least one --probe METHOD:PATH")
    room_for(args.connections + 64)
    asyncio.run(attack(args))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
