# mqtt_client.py - small asyncio MQTT 3.1.1 client for MicroPython (and CPython).
#
# Subset: CONNECT (clean session, keepalive, user/password, last will),
# PUBLISH QoS 0/1 both ways, SUBSCRIBE, PINGREQ keepalive, DISCONNECT.
# run() keeps the session up forever, reconnecting with exponential back-off.
# Every packet is built whole and written under a per-connection Lock, so
# concurrent publishers never interleave bytes on the socket.
try:
    import asyncio
except ImportError:  # old MicroPython
    import uasyncio as asyncio
import random
import socket

try:
    from time import ticks_ms, ticks_diff
except ImportError:  # CPython
    import time as _time

    def ticks_ms():
        return int(_time.monotonic() * 1000)

    def ticks_diff(a, b):
        return a - b

CONNECT_TIMEOUT_MS = 5000
# The receive buffer on MicroPython: one bytearray for the client's life,
# filled with readinto, so reading allocates nothing but each packet's body
# (and a heap too small for it fails at boot, not in the middle of a round).
# 1152 bytes hold any packet a board accepts: a signed payload of at most
# protocol.MAX_PAYLOAD (1024) + 65, a topic of at most 46, and the headers.
# A larger packet gets a buffer of its own while it is read.  CPython's
# streams have no readinto: there it is a bytes object that grows and shrinks.
RX_BUF = 1152
_READINTO = hasattr(getattr(asyncio, "StreamReader", None), "readinto")
SUBSCRIBE_TIMEOUT_MS = 5000
_PINGREQ = b"\xc0\x00"
_DISCONNECT = b"\xe0\x00"


async def _sleep_ms(ms):
    await asyncio.sleep(ms / 1000)


def _b(s):
    if isinstance(s, str):
        return s.encode()
    return s if isinstance(s, bytes) else bytes(s)


def _packet(b0, rl):
    # Fixed header (type byte + remaining-length varint); caller appends the rest.
    p = bytearray(1)
    p[0] = b0
    while True:
        d = rl & 0x7F
        rl >>= 7
        p.append(d | 0x80 if rl else d)
        if not rl:
            return p


def _u16(p, n):
    p.append(n >> 8)
    p.append(n & 0xFF)
    return p


def _add_str(p, s):
    _u16(p, len(s))
    p += s
    return p


class MQTTClient:
    def __init__(self, client_id, host, port=1883, keepalive=30, user=None, password=None,
                 will=None, on_message=None, on_connect=None,
                 backoff_min_ms=250, backoff_max_ms=10000, log=None):
        self.client_id = _b(client_id)
        self.host, self.port, self.keepalive = host, port, keepalive
        self.user, self.password = user, password
        self.will = will  # None, (topic, payload, qos, retain), or a callable returning one
        self.on_message, self.on_connect = on_message, on_connect
        self.backoff_min_ms, self.backoff_max_ms = backoff_min_ms, backoff_max_ms
        self._log = log
        self.connected = False
        self._subs = {}  # topic bytes -> qos
        self._pend = {}  # packet id -> [Event, acked]
        self._pid = 0
        self._r = self._w = self._lock = None
        self._buf = bytearray(RX_BUF) if _READINTO else None
        self._rx = self._buf or b""
        self._rxn = 0  # bytes received and not yet consumed, at the start of _rx
        self._session = False  # socket up, CONNACK ok, reader running
        self._tasks = ()  # type: tuple
        self._bg = set()  # running fire-and-forget tasks (CPython needs the refs)
        self._conn_ev = asyncio.Event()
        self._wake = asyncio.Event()  # set on connection loss and by stop()
        self._stopping = False
        self._last_rx = ticks_ms()
        self.pings = 0  # PINGRESPs received (diagnostics)

    def _say(self, msg):
        if self._log:
            try:
                self._log("mqtt: " + msg)
            except Exception:
                pass

    # ---- public API -------------------------------------------------------

    def subscribe(self, topic, qos=0):
        t, q = _b(topic), 1 if qos else 0
        self._subs[t] = q
        if self._session:
            self._spawn(self._sub(t, q))

    async def publish(self, topic, payload, qos=0, retain=False, timeout_ms=5000):
        if not self.connected:
            return False
        t, p, qos = _b(topic), _b(payload), 1 if qos else 0
        pkt = _add_str(_packet(0x30 | qos << 1 | (1 if retain else 0), 2 + len(t) + len(p) + 2 * qos), t)
        if not qos:
            pkt += p
            return await self._send(pkt)
        pid = self._new_pid()
        _u16(pkt, pid)
        pkt += p
        return await self._request(pid, pkt, timeout_ms)

    async def wait_connected(self):
        await self._conn_ev.wait()

    async def stop(self):
        self._stopping = True
        if self.connected:
            try:
                await asyncio.wait_for(self._send(_DISCONNECT), 1)
            except Exception:
                pass
        self.connected = False
        self._wake.set()
        await self._teardown()

    async def run(self):
        delay = self.backoff_min_ms
        try:
            while not self._stopping:
                self._wake.clear()
                try:
                    await asyncio.wait_for(self._open(), CONNECT_TIMEOUT_MS / 1000)
                    if self._stopping:
                        break
                    delay = self.backoff_min_ms
                    self._session = True
                    self._last_rx = ticks_ms()
                    w = self._w
                    self._tasks = (asyncio.create_task(self._reader(w)),
                                   asyncio.create_task(self._pinger(w)) if self.keepalive else None)
                    for t, q in list(self._subs.items()):
                        if not await self._sub(t, q):
                            raise OSError("resubscribe failed")
                    if self._wake.is_set():
                        raise OSError("lost during setup")
                    self.connected = True
                    self._conn_ev.set()
                    self._say("connected to %s:%d" % (self.host, self.port))
                    if self.on_connect:
                        try:
                            await self.on_connect()
                        except Exception as e:
                            self._say("on_connect failed: %r" % (e,))
                    await self._wake.wait()
                except Exception as e:
                    self._say("connection error: %r" % (e,))
                await self._teardown()
                if self._stopping:
                    break
                # half the back-off plus a random part of the other half: boards
                # that lost the broker together (a restart, the hall's WiFi) must
                # not all come back in the same instant, again and again
                wait = delay // 2 + random.getrandbits(16) % (delay // 2 + 1)
                self._say("reconnect in %d ms" % wait)
                self._wake.clear()  # from here only stop() cuts the back-off short
                try:
                    await asyncio.wait_for(self._wake.wait(), wait / 1000)
                except Exception:
                    pass
                delay = min(delay * 2, self.backoff_max_ms)
        finally:
            await self._teardown()
            self._stopping = False

    # ---- internals --------------------------------------------------------

    def _spawn(self, coro, what=None):
        self._bg.add(asyncio.create_task(self._guard(coro, what)))

    async def _guard(self, coro, what):
        try:
            await coro
        except Exception as e:
            self._say("%s failed: %r" % (what, e))
        finally:
            self._bg.discard(asyncio.current_task())

    def _new_pid(self):
        pid = self._pid
        while True:
            pid = pid % 65535 + 1
            if pid not in self._pend:
                self._pid = pid
                return pid

    async def _open(self):
        r, w = await asyncio.open_connection(self.host, self.port)
        self._r, self._w, self._lock = r, w, asyncio.Lock()
        self._rx, self._rxn = self._buf or b"", 0
        try:
            s = getattr(w, "s", None)  # MicroPython: the socket itself
            if s is None:
                s = w.get_extra_info("socket")
            s.setsockopt(getattr(socket, "IPPROTO_TCP", 6), getattr(socket, "TCP_NODELAY", 1), 1)
        except Exception:
            pass
        will = self.will() if callable(self.will) else self.will   # may change per connection
        flags, fields = 0x02, [self.client_id]  # 0x02: clean session
        if will:
            flags |= 0x04 | (will[2] & 3) << 3 | (0x20 if will[3] else 0)
            fields += (_b(will[0]), _b(will[1]))
        if self.user is not None:
            flags |= 0x80
            fields.append(_b(self.user))
        if self.password is not None:
            flags |= 0x40
            fields.append(_b(self.password))
        p = _packet(0x10, 10 + sum(2 + len(f) for f in fields))
        p += b"\x00\x04MQTT\x04"
        p.append(flags)
        _u16(p, min(self.keepalive, 65535))
        for f in fields:
            _add_str(p, f)
        w.write(p)
        await w.drain()
        b0, body = await self._read(r)
        if b0 != 0x20 or len(body) != 2:
            raise OSError("expected CONNACK")
        if body[1]:
            raise OSError("CONNACK refused rc=%d" % body[1])

    async def _fill(self, r, n):
        """Make the receive buffer hold at least n bytes.  Reading whatever
        has arrived (usually a whole packet, or several) costs one trip
        through the event loop instead of one per header byte."""
        while self._rxn < n:
            if _READINTO:
                if n > len(self._rx):  # larger than RX_BUF: a buffer of its own
                    big = bytearray(n)
                    big[:self._rxn] = memoryview(self._rx)[:self._rxn]
                    self._rx = big
                k = await r.readinto(memoryview(self._rx)[self._rxn:])
            else:
                data = await r.read(1024)
                self._rx += data
                k = len(data)
            if not k:
                raise EOFError("connection closed")
            self._rxn += k

    async def _read(self, r):
        await self._fill(r, 2)
        n = sh = 0
        i = 1
        while True:
            await self._fill(r, i + 1)
            d = self._rx[i]
            i += 1
            n |= (d & 0x7F) << sh
            if not d & 0x80:
                break
            sh += 7
            if sh > 21:
                raise OSError("bad remaining length")
        end = i + n
        await self._fill(r, end)
        rx = self._rx
        b0, body = rx[0], bytes(memoryview(rx)[i:end])
        rest = self._rxn - end
        if not _READINTO:
            self._rx = rx[end:]
        elif rx is not self._buf and self._buf is not None:  # an oversized packet's own buffer,
            self._rx = self._buf                                # read exactly to its end
        else:  # move what follows to the front, in pieces that do not overlap
            mv, k = memoryview(rx), 0
            while k < rest:
                c = min(end, rest - k)
                mv[k:k + c] = mv[end + k:end + k + c]
                k += c
        self._rxn = rest
        self._last_rx = ticks_ms()
        return b0, body

    async def _send(self, pkt):
        w, lock = self._w, self._lock
        if w is None or lock is None:
            return False
        try:
            async with lock:
                if self._w is None or w is not self._w:
                    return False
                w.write(pkt)
                await w.drain()
            return True
        except Exception as e:
            self._down("write: %r" % (e,), w)
            return False

    async def _request(self, pid, pkt, timeout_ms):
        # Send pkt, wait for the PUBACK/SUBACK carrying pid; True if it came.
        ev = asyncio.Event()
        e = [ev, False]
        self._pend[pid] = e
        try:
            if await self._send(pkt):
                await asyncio.wait_for(ev.wait(), timeout_ms / 1000)
        except Exception:  # timeout
            pass
        finally:
            self._pend.pop(pid, None)
        return e[1]

    async def _sub(self, t, q):
        pid = self._new_pid()
        pkt = _add_str(_u16(_packet(0x82, 5 + len(t)), pid), t)
        pkt.append(q)
        ok = await self._request(pid, pkt, SUBSCRIBE_TIMEOUT_MS)
        if not ok:
            self._say("no SUBACK for %r" % (t,))
        return ok

    def _down(self, why, w):
        # Connection w is lost: fail waiters now, wake run() to tear down.
        if w is None or w is not self._w:
            return
        if why and (self.connected or self._session):
            self._say("connection lost (%s)" % why)
        self.connected = self._session = False
        self._conn_ev.clear()
        for e in self._pend.values():
            e[0].set()
        self._wake.set()

    async def _teardown(self):
        self._down(None, self._w)
        self.connected = self._session = False
        self._conn_ev.clear()
        cur = asyncio.current_task()
        for t in self._tasks:
            if t is not None and t is not cur:
                try:
                    t.cancel()
                except Exception:
                    pass
        self._tasks = ()
        w, self._w, self._r = self._w, None, None
        if w is not None:
            try:
                w.close()  # no-op on MicroPython, wait_closed() closes there
                await asyncio.wait_for(w.wait_closed(), 1)
            except Exception:
                pass

    async def _reader(self, w):
        r = self._r
        try:
            while True:
                b0, body = await self._read(r)
                t = b0 & 0xF0
                if t == 0x30:
                    await self._rx_publish(b0, body)
                elif t == 0x40 or t == 0x90:  # PUBACK / SUBACK
                    e = self._pend.get(body[0] << 8 | body[1])
                    if t == 0x90 and body[2] & 0x80:
                        self._say("subscription refused")
                    if e:
                        e[1] = True
                        e[0].set()
                elif t == 0xD0:
                    self.pings += 1
        except Exception as e:
            self._down("read: %r" % (e,), w)

    async def _rx_publish(self, b0, body):
        tl = body[0] << 8 | body[1]
        topic = body[2:2 + tl].decode()
        i = 2 + tl
        qos = (b0 >> 1) & 3
        if qos:
            pid = body[i:i + 2]
            i += 2
        if self.on_message:
            try:
                res = self.on_message(topic, body[i:])
                if res is not None and hasattr(res, "send"):
                    # async callback: own task, so it may await a QoS1
                    # publish (whose PUBACK this read loop must read)
                    self._spawn(res, "on_message")
            except Exception as e:
                self._say("on_message failed: %r" % (e,))
        if qos == 1:
            await self._send(b"\x40\x02" + pid)

    async def _pinger(self, w):
        # Wake every keepalive/4: PINGREQ every keepalive/2, and drop the
        # connection when nothing was received for 1.5 * keepalive.
        ka = self.keepalive * 1000
        n = 0
        while w is self._w:
            await _sleep_ms(ka // 4)
            if ticks_diff(ticks_ms(), self._last_rx) > ka * 3 // 2:
                self._down("keepalive timeout", w)
                return
            n += 1
            lock = self._lock
            if not n & 1 and lock is not None and not lock.locked():  # never block on a stuck socket
                self._spawn(self._send(_PINGREQ))
