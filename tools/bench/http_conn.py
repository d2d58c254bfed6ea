"""HTTP/1.1 by hand, as a phone's browser speaks it to the hub's web server:
one keep-alive connection (Conn), its requests, and the server-sent events
of a page's stream as they arrive."""

from __future__ import annotations

import asyncio
import socket
import time

IDLE_REUSE_S = 8.0        # the hub closes a connection idle for 10 s (web/server.py REQUEST_TIMEOUT_S)


class Conn:
    """One keep-alive HTTP/1.1 connection (a phone's browser's)."""

    def __init__(self, port: int, cookie: str | None, local: str | None = None) -> None:
        """local: the source address (127.0.0.N: a device of its own; the hub
        serves at most connection_limits.PER_ADDRESS connections from one)."""
        self.port = port
        self.cookie = cookie
        self.local = local
        self.r: asyncio.StreamReader | None = None
        self.w: asyncio.StreamWriter | None = None
        self.used = 0.0

    async def open(self) -> None:
        self.close()
        self.r, self.w = await asyncio.open_connection("127.0.0.1", self.port,
                                                       local_addr=(self.local, 0) if self.local else None)
        sock = self.w.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.used = time.monotonic()

    def close(self) -> None:
        if self.w is not None:
            self.w.close()
        self.r = self.w = None

    def head(self, method: str, path: str, body: bytes = b"", extra: dict | None = None) -> bytes:
        h = {"Host": f"127.0.0.1:{self.port}", "Connection": "keep-alive", "Accept": "*/*"}
        if self.cookie:
            h["Cookie"] = f"tt_referee={self.cookie}"
        if method == "POST":
            h.update({"Content-Type": "application/json", "X-TableTimer": "1", "Content-Length": str(len(body))})
        h.update(extra or {})
        return (f"{method} {path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in h.items())
                + "\r\n").encode() + body

    async def status_and_headers(self) -> tuple[int, dict[str, str]]:
        assert self.r is not None
        line = await self.r.readline()
        if not line:
            raise ConnectionError("closed")
        status = int(line.split()[1])
        headers: dict[str, str] = {}
        while True:
            h = await self.r.readline()
            if h in (b"\r\n", b"\n", b""):
                break
            k, _, v = h.decode("latin-1").partition(":")
            headers[k.strip().lower()] = v.strip()
        return status, headers

    async def request(self, method: str, path: str, body: bytes = b"",
                      before_write=None) -> tuple[int, bytes]:
        """(status, body); before_write() is called just before the request
        is written (a fresh connection first, if this one has been idle
        long enough for the hub to close it)."""
        if self.w is None or time.monotonic() - self.used > IDLE_REUSE_S:
            await self.open()
        assert self.r is not None and self.w is not None
        if before_write:
            before_write()
        self.w.write(self.head(method, path, body))
        status, headers = await self.status_and_headers()
        if "content-length" in headers:
            data = await self.r.readexactly(int(headers["content-length"]))
        else:
            data = b""
            async for chunk in self.chunks(headers):
                data += chunk
        self.used = time.monotonic()
        if headers.get("connection", "").lower() == "close":
            self.close()
        return status, data

    async def views(self, headers: dict[str, str], clock, on_chunk=None):
        """A server-sent-events body's views as they arrive: (clock() at the
        arrival of their chunk, the data line's bytes); the pages' pings
        (named events) are skipped.  on_chunk(n): every chunk's size."""
        buf = b""
        async for chunk in self.chunks(headers):
            t = clock()
            if on_chunk is not None:
                on_chunk(len(chunk))
            buf += chunk
            while b"\n\n" in buf:
                event, buf = buf.split(b"\n\n", 1)
                lines = event.split(b"\n")
                if any(line.startswith(b"event:") for line in lines):
                    continue                 # a ping (the hub is there), not a view
                for line in lines:
                    if line.startswith(b"data:"):
                        yield t, line[5:]

    async def chunks(self, headers: dict[str, str]):
        """The body's pieces as they arrive (chunked, or until the end)."""
        assert self.r is not None
        if "chunked" not in headers.get("transfer-encoding", ""):
            while True:
                data = await self.r.read(65536)
                if not data:
                    return
                yield data
        while True:
            line = await self.r.readline()
            if not line:
                return
            size = int(line.split(b";")[0].strip() or b"0", 16)
            if size == 0:
                await self.r.readline()
                return
            data = await self.r.readexactly(size + 2)
            yield data[:-2]
