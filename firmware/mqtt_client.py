# mqtt_client.py - a small asyncio MQTT 3.1.1 client, written for the board
# (MicroPython); nothing in it is specific to MicroPython or CPython, so the
# tests also run it on CPython.
#
# Subset: CONNECT (clean session, keepalive, user/password, last will),
# PUBLISH QoS 0/1 both ways, SUBSCRIBE (QoS 1, at every connect), PINGREQ
# keepalive, DISCONNECT.  run() keeps the session up forever, reconnecting
# with exponential back-off.  Every packet is built whole (joined in one
# allocation of its size) and written under a per-connection busy mark
# (_busy), so concurrent publishers never interleave bytes.
#
# Kept lean: on the board every function, attribute name and string constant
# of a loaded module takes RAM.  Packets are read with readexactly (the
# header, then the body): nothing is kept between packets.  One longer than
# _MAX_PACKET is read in small pieces and dropped (a PUBLISH acknowledged):
# whoever has a login of the broker cannot make the board allocate what a
# packet claims.  While connected,
# run() awaits the reader task, which ends when the connection is lost (a
# read error, or _down() cancelling it): no timeout machinery stays alive.
# Timeouts are _timed(), not asyncio.wait_for, and writes take turns on
# _busy, not an asyncio.Lock: those would load asyncio.funcs and
# asyncio.lock, which then stay in the board's RAM.
import asyncio
import random
import time

try:
    from micropython import const
except ImportError:     # CPython (the tests run this client there too)
    def const(v):
        return v

# the longest packet read (a hub message: 1 KB at most, protocol.MAX_PAYLOAD,
# with its topic and MQTT header); a longer one is read and dropped in pieces
_MAX_PACKET = const(1280)


def _hdr(kind, n):
    # Fixed header: type byte + remaining length n (varint); the caller
    # appends the n bytes.
    p = bytearray((kind,))
    while True:
        d = n & 0x7F
        n >>= 7
        p.append(d | 0x80 if n else d)
        if not n:
            return p


async def _cancel_after(task, s):
    await asyncio.sleep(s)
    task.cancel()


def _str(b, s):
    # Appends a length-prefixed string field to the bytearray b.
    if isinstance(s, str):
        s = s.encode()
    b.append(len(s) >> 8)
    b.append(len(s) & 0xFF)
    b += s
    return b


class MQTTClient:
    # will: None, (topic, payload, qos, retain), or a callable returning one
    # (called before every CONNECT).  subs: topics subscribed (QoS 1) at
    # every connect.  on_message(topic str, payload memoryview): a plain
    # function, called in the read loop (start a task for anything that
    # must await); the view is of the packet read, good during the call.
    # on_connect: a coroutine function, awaited after every connect.
    # ssl: an ssl.SSLContext (TLS, the broker's certificate checked against
    # the host name or address dialled) or None (plain TCP).
    def __init__(self, client_id, host, port=1883, keepalive=30, user=None, password=None,
                 will=None, subs=(), on_message=None, on_connect=None,
                 backoff_min_ms=250, backoff_max_ms=10000, log=print, ssl=None, failover=30000):
        # attributes named as the parameters: on the board each new name
        # takes RAM (a qstr).  host: a name, or a list of them (the hub, its
        # standby): the first is dialled; after failover ms without a
        # connection, the next (the list turned: it stays on the one that
        # answers, and comes back to the first only when that one fails too)
        self.client_id = client_id
        self.host = host if isinstance(host, list) else [host]
        self.failover = failover
        self.port = port
        self.ssl = ssl
        self.keepalive = keepalive
        self.user = user
        self.password = password
        self.will = will
        # the SUBSCRIBE's filters, QoS 1 each, made once: sent at every
        # connect, and again after a message was not handled (_pinger)
        p = bytearray()
        for t in subs:
            _str(p, t).append(1)
        self.subs = p
        self.on_message = on_message
        self.on_connect = on_connect
        self.backoff_min_ms = backoff_min_ms
        self.backoff_max_ms = backoff_max_ms
        self.log = log
        self.connected = False
        self.pings = 0              # PINGRESPs received (diagnostics)
        self._w = self._busy = self._rd = None
        self._pend = {}             # packet id -> its answer (_req)
        self._pid = 0
        self.idle = 0               # keepalive/4 periods since a packet came (a ROM qstr: no RAM)
        self._stop = False
        self.resub = False          # subscribe again: a message was not handled

    async def publish(self, topic, payload, qos=0, retain=False):
        # True once sent (QoS 0) or acknowledged (QoS 1); False if not
        # connected, the write failed or no PUBACK came within 5 s.  The
        # payload: bytes, str, or a tuple of bytes written one after the
        # other (the board's signed messages: never joined on its heap).
        if not self.connected:
            return False
        h = _str(bytearray(), topic)
        if isinstance(payload, str):
            payload = payload.encode()
        if not isinstance(payload, tuple):
            payload = (payload,)
        b0 = (0x32 if qos else 0x30) | (1 if retain else 0)
        if qos:
            return await self._req(b0, h, payload)
        n = len(h)
        for x in payload:
            n += len(x)
        return await self._send(_hdr(b0, n) + h, payload)

    async def stop(self):
        # DISCONNECT (no will) and end run(): at once when connected, else
        # after its back-off wait.
        self._stop = True
        if self.connected:
            try:
                await self._timed(self._send(b"\xe0\x00"), 1)
            except Exception:
                pass
        self._down(None, self._w)

    async def run(self):
        delay = self.backoff_min_ms
        since = time.time()     # s: since when this host has not answered (0: it does)
        while not self._stop:
            pinger = err = None
            try:
                rd = await self._timed(self._open(), 5)
                delay = self.backoff_min_ms
                since = 0
                if not self._stop:      # stop() while connecting: tear down at once
                    self.connected = True
                    self.log("mqtt: connected")
                    if self.keepalive:
                        pinger = asyncio.create_task(self._pinger(self._w))
                    if self.on_connect:
                        await self.on_connect()
                    await rd            # the reader: until the connection is lost
            except asyncio.CancelledError:   # the reader, cancelled by _down()
                pass
            except Exception as e:
                err = e
            self._down(None, self._w)
            if pinger:
                pinger.cancel()
            w, self._w = self._w, None
            # half the back-off plus a random part of the other half: boards
            # that lost the broker together (a restart, the hall's WiFi) must
            # not all come back in the same instant, again and again
            wait = delay // 2 + random.getrandbits(16) % (delay // 2 + 1)
            delay = min(delay * 2, self.backoff_max_ms)
            h = self.host
            if not since:
                since = time.time()         # the connection just lost
            elif len(h) > 1 and (time.time() - since) * 1000 >= self.failover:
                h.append(h.pop(0))          # the next broker (the standby's), tried at once
                since, wait, delay = time.time(), 0, self.backoff_min_ms
                self.log("mqtt: no broker for a while: trying " + h[0])
            try:
                if err is not None:
                    self.log("mqtt: error %r" % (err,))
                if w:
                    w.close()
                    await self._timed(w.wait_closed(), 1)
                if not self._stop:
                    self.log("mqtt: reconnect in %d ms" % wait)
            except Exception:      # even that may fail on a full heap: carry on
                pass
            if self._stop:
                break
            await asyncio.sleep(wait / 1000)
        self._stop = False

    async def _pinger(self, w):
        # Wakes every keepalive/4: PINGREQ every other time, and drops the
        # connection when nothing came for 1.5 keepalives.
        n = 0
        while True:
            await asyncio.sleep(self.keepalive / 4)
            n += 1
            self.idle += 1
            if self.idle > 6:
                self._down("keepalive timeout", w)
            elif self._busy is None:    # never queue behind a stuck write
                try:
                    if self.resub:
                        asyncio.create_task(self._req(0x82, b"", (self.subs,)))
                        self.resub = False
                    elif not n & 1:
                        asyncio.create_task(self._send(b"\xc0\x00"))
                except MemoryError:     # a fragmented heap: the next period
                    pass

    async def _open(self):
        r, w = await asyncio.open_connection(self.host[0], self.port, ssl=self.ssl)
        self._w, self.idle = w, 0
        try:   # MicroPython's stream: its socket; CPython's streams set TCP_NODELAY themselves
            getattr(w, "s").setsockopt(6, 1, 1)   # IPPROTO_TCP, TCP_NODELAY
        except Exception:
            pass
        will = self.will() if callable(self.will) else self.will   # may change per connection
        p = bytearray(b"\x00\x04MQTT\x04\x02")    # protocol 3.1.1, flags: clean session
        p.append(self.keepalive >> 8)
        p.append(self.keepalive & 0xFF)
        _str(p, self.client_id)
        if will:
            p[7] |= 0x04 | will[2] << 3 | (0x20 if will[3] else 0)
            _str(_str(p, will[0]), will[1])
        if self.user is not None:
            p[7] |= 0x80
            _str(p, self.user)
        if self.password is not None:
            p[7] |= 0x40
            _str(p, self.password)
        w.write(_hdr(0x10, len(p)) + p)
        await w.drain()
        a = await r.readexactly(4)
        if a[0] != 0x20 or a[3]:
            raise OSError("CONNACK refused", a[3])
        rd = self._rd = asyncio.create_task(self._reader(r, w))
        if self.subs:
            if not await self._req(0x82, b"", (self.subs,)):
                raise OSError("no SUBACK came")    # (over 10 characters: not a qstr)
        return rd

    async def _timed(self, coro, s):
        # Awaits coro for at most s seconds: OSError("timeout") after.
        t = asyncio.create_task(coro)
        k = asyncio.create_task(_cancel_after(t, s))
        try:
            return await t
        except asyncio.CancelledError:
            if not k.done():       # cancelled by someone else: not a timeout
                raise
            raise OSError("timeout")
        finally:
            k.cancel()

    async def _req(self, kind, topic, payload):
        # A PUBLISH (kind 0x32|retain: topic field, packet id, payload
        # parts) or a SUBSCRIBE (0x82: no topic, the packet id, the filters
        # as the one part); True once its PUBACK/SUBACK came.
        pid = self._pid
        while True:
            pid = pid % 65535 + 1
            if pid not in self._pend:
                break
        self._pid = pid
        # never raises (a task of its own may run it: an exception escaping
        # a task is fatal on the board)
        try:
            self._pend[pid] = False     # True once answered (_got), None: the connection went (_down)
            # the payload is written after the header, not joined to it: no
            # second copy of the largest thing on the heap
            n = len(topic) + 2
            for x in payload:
                n += len(x)
            if await self._send(b"".join((_hdr(kind, n), topic, pid.to_bytes(2, "big"))), payload):
                # its answer, looked for every 5 ms for up to 5 s: no Event
                # and no timeout task per message on the board's heap
                for _ in range(1000):
                    if self._pend[pid] is not False:
                        break
                    await asyncio.sleep(0.005)
        except Exception:       # a MemoryError: not sent, or its answer not seen
            pass
        return self._pend.pop(pid, None) is True

    async def _send(self, b, payload=None):
        # Writes one whole packet; True if written.  One write at a time per
        # connection: _busy is the writer a write is under way on (drain()
        # yields, and waits while the socket's buffer is full); the others
        # look again every millisecond meanwhile.
        w = self._w
        while w is not None and self._busy is w:
            try:
                await asyncio.sleep(0.001)
            except MemoryError:     # (a float on the heap) it never raises: a task of its own may call it
                pass
        if w is not self._w or w is None:
            return False
        self._busy = w
        try:
            w.write(b)
            for x in payload or ():
                w.write(x)
            await w.drain()
            return True
        except Exception as e:
            self._down(e, w)
            return False
        finally:
            if self._busy is w:
                self._busy = None

    async def _reader(self, r, w):
        try:
            while True:
                b0, d = await r.readexactly(2)
                n, sh = d & 0x7F, 7
                while d & 0x80:          # (a broker's bad length: MemoryError below)
                    d = (await r.readexactly(1))[0]
                    n |= (d & 0x7F) << sh
                    sh += 7
                if n > _MAX_PACKET:
                    ack = await self._junk(r, b0, n)
                else:
                    ack = self._got(b0, memoryview(await r.readexactly(n)))
                if ack:
                    await self._send(ack)
        except Exception as e:
            self._down(e, w)

    async def _junk(self, r, kind, n):
        # A packet longer than any the hub sends (a login of the hall's
        # broker can publish anything, retained too): read and dropped in
        # small pieces, never allocated whole; a PUBLISH is acknowledged
        # (a retained one would come again at every connect).  Returns
        # the PUBACK to send, if any.  Not a PUBLISH: the connection goes.
        if kind & 0xF0 != 0x30:
            raise OSError("packet too long")
        left = n
        ack = None
        if kind & 0x06:                  # QoS 1: the topic, then the packet id
            h = await r.readexactly(2)
            t = h[0] << 8 | h[1]
            left -= 4 + t
            if left < 0:
                raise OSError("packet too long")
            while t > 0:                 # the topic, skipped
                k = min(t, 64)
                await r.readexactly(k)
                t -= k
            ack = b"\x40\x02" + await r.readexactly(2)
        while left > 0:
            k = min(left, 64)
            await r.readexactly(k)
            left -= k
        self.idle = 0
        try:
            self.log("mqtt: error %r" % (OSError("packet too long", n),))
        except MemoryError:
            pass
        return ack

    def _got(self, kind, body):
        # One packet received (body: a memoryview); returns the PUBACK to
        # send, if any.  (Not in _reader itself: a task's locals stay in RAM
        # all along.)
        self.idle = 0
        t = kind & 0xF0
        if t == 0x30:        # PUBLISH
            n = body[0] << 8 | body[1]
            i = 2 + n + (2 if kind & 0x06 else 0)
            try:
                # the payload as a view into the packet: no copy of it
                self.on_message(str(body[2:2 + n], "utf-8"), body[i:])
            except Exception as e:
                # a MemoryError: not handled, and with a clean session never
                # delivered again: the subscriptions are made again
                # (_pinger), and the broker sends the retained messages
                # again (the board's schedule); the others, their senders
                # send again.  (Any other error would come again with it.)
                if isinstance(e, MemoryError):
                    self.resub = True
                try:
                    self.log("mqtt: on_message %r" % (e,))
                except MemoryError:
                    pass
            if kind & 0x06:    # QoS 1
                return b"\x40\x02" + bytes(body[2 + n:i])
        elif t == 0x40 or t == 0x90:     # PUBACK, SUBACK
            if t == 0x90 and 0x80 in bytes(body[2:]):
                self.log("mqtt: subscription refused")
            n = body[0] << 8 | body[1]
            if n in self._pend:
                self._pend[n] = True
        elif t == 0xD0:      # PINGRESP
            self.pings += 1
        return None

    def _down(self, msg, w):
        # Connection w is lost: fail the waiting requests now, end the
        # reader (which wakes run() to tear the connection down).  Nothing
        # to do for a connection already gone.
        if w is not self._w:
            return
        if msg and self.connected:
            try:                # msg: a text or the exception; logging allocates
                self.log("mqtt: connection lost: %r" % (msg,) if isinstance(msg, Exception)
                         else "mqtt: connection lost: " + msg)
            except MemoryError:
                pass
        self.connected = False
        for k in self._pend:        # the requests waiting: failed
            self._pend[k] = None
        rd = self._rd
        if rd and rd is not asyncio.current_task():
            rd.cancel()
