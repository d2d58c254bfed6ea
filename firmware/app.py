# The board program: wires the pure logic (board.py) to the journal, the MQTT
# client and the hardware layer.  Tasks: MQTT link, button edges, inputs,
# sender, clock sync, scheduled signals, sound player (which also blinks the
# link-down LED) and the hardware's own task.  None of them waits on
# another: a press is journaled at once even while the link is down, and
# scheduled signals fire on the board's own synchronised clock whether or
# not the hub is reachable.  A task's loop survives an error (a MemoryError
# on a fragmented heap, above all): it logs it and carries on.  The
# watchdog is fed only while the inputs, the scheduled signals, the sound
# player and the sender all loop: one that hangs resets the board.  An
# exception that escapes (a task's, or the program's) is fatal: recorded in
# flash (the file `fault`), then a reset; the next boot reports it to the hub.
# While a station runs (a finish call may come, stamped when the soft pin
# interrupt's handler runs: after any blocking call) acknowledged entries
# stay in flash: their removal waits (docs/firmware.md, "Soft interrupts").
#
# Lean on RAM, which is the board's scarcest resource (docs/benchmarks.md,
# "Firmware heap"): every function, global, attribute name and string of a
# loaded module stays in it, and so do a running task's locals.

import asyncio
import binascii
import gc
import json
import os
import sys

from micropython import const

import protocol
import signals
from auth import AuthError, Signer
from board import Board
from journal import Journal, write_atomic
from localclock import LocalClock
from mqtt_client import MQTTClient

# last: where a module's code lands in the heap shapes the holes left
# between what stays (measured, 2026-12-06: imported first, the 72 KB heap
# test failed 4 runs of 5, a message's 211 bytes found nowhere; here 10 of 10
# passed, as before it was a module of its own)
import hub_order  # noqa: E402

# const() with a leading underscore: folded into the bytecode, no global
# (each module-level name costs RAM on the board)
_FW_VERSION = const("0.6.1")
_SYNC_BURST = const(6)            # requests right after (re)connecting
_SYNC_BURST_GAP_MS = const(100)
_SYNC_INTERVAL_MS = const(30000)
_SYNC_GOOD_MS = const(20)           # a trusted exchange's round trip at most this...
_SYNC_POOR_GAP_MS = const(2000)     # ...else ask again this soon
_SEND_POLL_MS = const(250)
_INPUT_IDLE_MS = const(1000)
_SIGNAL_LEAD_MS = const(15)       # wake this early, then sleep the exact rest
_SPIN_MS = const(2)               # ... and spin through the last of it
_WATCHDOG_MS = const(8000)        # config "timings": watchdog_ms
_GC_EVERY = const(4096)           # bytes allocated between two collections
# acknowledged entries stay in flash until this long after the round's end:
# a hub that takes over (a higher term) gets them again (on_message), the
# ones its copy of the log missed included (docs/protocol.md, "Terms")
_KEEP_MS = const(600000)
# App.hub_ctr: what the board holds of its hub (hub_order.py, which owns
# the list and names every index); the ones read here:
_HUB_JUMP = const(2)    # a counter refused as a jump, for the next sync request (0: none)
_HUB_TERM = const(3)    # the highest hub term seen
_HUB_PROOF = const(4)   # that term's proof
# what hub_order.check says changed besides hub_ctr (its bits, named alike)
_SAVE = const(1)        # the schedule's term or proof
_TOOK_OVER = const(2)   # a hub of a higher term, proven
# App.flags: the tasks the board cannot do without that looped since the
# watchdog was last fed (by the inputs task, once all have)
_LOOPED_SIGNALS = const(1)    # scheduled_signals
_LOOPED_PLAYER = const(2)     # player
_LOOPED_SENDER = const(4)     # sender
_LOOPED_ALL = const(_LOOPED_SIGNALS | _LOOPED_PLAYER | _LOOPED_SENDER)


class Wake:
    # What a task waits on, with a timeout: wait(t) returns when set() is
    # called or after t ms, whichever comes first; a set() while nobody waits
    # makes the next wait() return at once.  One task waits on each.  An
    # asyncio.Event under asyncio.wait_for_ms does the same with a runner
    # task and a closure per wait, about 1 KB of RAM per waiting task; here
    # set() wakes the waiter by cancelling its sleep.  set() must be called
    # from a task, not from an interrupt (that is ThreadSafeFlag's job).
    def __init__(self):
        self.on = False
        self.task = None

    def set(self):
        self.on = True
        t, self.task = self.task, None
        if t is not None:
            t.cancel()

    async def wait(self, t):
        if not self.on:
            self.task = asyncio.current_task()
            try:
                await asyncio.sleep_ms(t)
            except asyncio.CancelledError:   # set() (possibly just as the sleep ended)
                pass
            self.task = None
        self.on = False


class App:
    def __init__(self, hw, cfg, fault):
        self.hw = hw
        self.cfg = cfg
        self.fault = fault        # what ended the last boot (config.boot()): in every birth
        self.signer = Signer(cfg["key"])
        self.journal = Journal(hw.root)
        boot = self.journal.next_boot()
        self.clock = LocalClock(hw.ticks_ms, hw.ticks_diff)
        self.board = Board(boot, len(cfg["buttons"]), self.journal.load, cfg.get("timings"),
                           cfg.get("install"))
        try:                      # the stations' state, as save_state() wrote it
            with open(hw.root + "/stations.json") as f:
                self.board.restore(json.load(f))
        except (OSError, ValueError):
            pass
        self.ctr = 0              # counter of every message this boot signs
        # the hub's counters, term and proof, in hub_order.py's order: none
        # taken this boot yet, the term and proof the saved schedule kept
        sc = self.board.sched or {}
        self.hub_ctr = [0, None, 0, sc.get("term", 1), sc.get("hash")]
        bid = cfg["board"]
        self.topic = protocol.board_topic(bid, "")   # + protocol.STATUS etc.: the board's topics
        b = cfg["broker"]
        tls = b.get("ca")                  # TLS: only a broker this CA signed
        if tls:
            import ssl
            ca, tls = binascii.a2b_base64(tls), ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            # not the default (CERT_NONE on the unix port: any CA, any name);
            # the ESP32 stubs lack the attribute the port has
            tls.verify_mode = ssl.CERT_REQUIRED      # type: ignore[attr-defined]
            tls.load_verify_locations(cadata=ca)
        self.mqtt = MQTTClient(
            "tt-" + bid, b["host"], b.get("port", 1883), ssl=tls,
            keepalive=b.get("keepalive", 30), user=b.get("user"), password=b.get("password"),
            will=self.will, failover=b.get("failover", 30) * 1000,
            subs=(self.topic + protocol.CMD, self.topic + protocol.SCHED),
            on_message=self.on_message, on_connect=self.on_connect, log=hw.log)
        self.kick = Wake()                 # something to send
        self.sync_now = Wake()             # start a sync burst
        self.sched_changed = Wake()
        self.input_wake = Wake()           # a button edge came
        self.sounds = []                   # feedback patterns waiting to play
        self.sound = Wake()                # one more in sounds
        self.sync_burst = 0
        self.flags = 0                     # _LOOPED_*: the tasks that looped since the last feed
        # acknowledged entries still in flash, runs of keys flat (boot,
        # first seq, last seq, boot, ...: Journal.forget):
        # kept for a hub that takes over (_KEEP_MS after the round's end:
        # on_message sends them to it again), and a remove blocks the VM (and
        # a finish call's stamp) for a flash write, now and then a sector
        # erase, so it waits until no station runs, or a clean stop (a power
        # loss meanwhile: the next boot sends them again, and the hub acks
        # the copy)
        self.gone = []

    # -- signing -------------------------------------------------------
    def seal(self, topic, msg):
        self.ctr += 1
        b = self.board
        # 'bi' (this flash's install id) unless the event says it already
        # ('in': made under this install): RAM on the busiest path
        protocol.stamp(msg, self.ctr, b.boot, None if msg.get("in") == b.bi else b.bi)
        # signed as Signer.sign does (body, "\n", MAC in hex), in parts that
        # the MQTT client writes one after the other: never joined in RAM
        body = protocol.encode(msg)
        return body, b"\n", binascii.hexlify(self.signer.mac(body, topic))

    async def send(self, topic, msg, qos=0, retain=False):
        return await self.mqtt.publish(topic, self.seal(topic, msg), qos=qos, retain=retain)

    def will(self):
        """Called before every CONNECT: the last will gets the next counter,
        the birth message right after it (the hub accepts a will only between
        the previous and the latest birth, so a stale one is rejected)."""
        t = self.topic + protocol.STATUS
        return (t, b"".join(self.seal(t, protocol.status_offline(self.board.boot))), 1, True)

    # -- MQTT callbacks ------------------------------------------------
    async def on_connect(self):
        gc.collect()
        h = self.hub_ctr
        msg = protocol.status_online(self.board.boot, _FW_VERSION, self.board.stations,
                                     mem=gc.mem_free(), up=self.clock.now() // 1000,
                                     rssi=self.hw.rssi(), fault=self.fault, term=h[_HUB_TERM])
        if h[_HUB_TERM] > 1 and h[_HUB_PROOF]:
            msg["hash"] = h[_HUB_PROOF]   # the term's proof: the hubs check it (only a hub can make it)
        try:                  # for the hall check: the flash free, and the journal's entries
            s = os.statvfs(self.hw.root)
            n = 0
            for _ in os.ilistdir(self.journal.dir):
                n += 1
            msg["flash"] = [s[0] * s[3], n]
        except (OSError, AttributeError):
            pass
        await self.send(self.topic + protocol.STATUS, msg, qos=1, retain=True)
        self.sync_burst = _SYNC_BURST
        self.sync_now.set()
        self.kick.set()

    def on_message(self, topic, payload):
        now = self.clock.now()            # t4 of a sync reply: read first
        b = self.board
        try:
            msg = protocol.decode(self.signer.open(topic, payload))
            # taken only if for this boot, of the hub's term, its counter
            # rising (hub_order.py: the policy, pure; here what follows)
            r = hub_order.check(self.hub_ctr, msg, now, b.boot, b.bi, b.sched)
        except (protocol.ProtocolError, AuthError) as e:
            self.hw.log("rejected message on %s: %s" % (topic, e))
            return
        if r & _TOOK_OVER:
            # a hub that took over: every entry still in flash goes to it
            # again (the old hub acknowledged some perhaps after its last
            # row reached the one taking over; the new hub stores each once)
            self.gone = []
            b.backlog = (0, 0)
            self.kick.set()
        if r & _SAVE:                     # the schedule's term and proof: kept across reboots
            self.save_state()
        typ = msg["type"]
        if typ == protocol.T_SYNC and "t2" in msg:
            was_ready = self.board.sync.ready
            sample = self.board.sync_reply(msg, now)
            if sample is not None:
                self.hw.emit({"sync": sample})
                if not was_ready:
                    for entry in self.board.resolve_times():
                        self.journal.put(entry)
                    self.kick.set()
                self.sched_changed.set()   # the signal instants moved a little
        elif typ == protocol.T_ACK:
            if self.board.ack(msg["boot"], msg["seq"], msg.get("in")):
                g = self.gone                              # out of flash later (sender)
                if g and g[-3] == msg["boot"] and g[-1] + 1 == msg["seq"]:
                    g[-1] += 1                             # the run goes on: nothing allocated
                else:
                    g += (msg["boot"], msg["seq"], msg["seq"])
                self.kick.set()                            # room for one from the journal
                self.hw.emit({"acked": [msg["boot"], msg["seq"]]})
                self.play("acked")
        elif typ == protocol.T_SCHED:
            if self.board.set_schedule(msg):
                self.save_state()
                self.hw.emit({"sched": msg["id"]})
                self.sched_changed.set()
        elif typ == protocol.T_IDENTIFY:
            hub_now = self.board.sync.to_hub(now)
            if hub_now is None or hub_now <= msg["exp"]:
                self.play("identify")
        elif typ == "config" or typ == "fw":
            # the hub's settings, or a firmware update's part: checked,
            # staged, answered, then a restart on them (settings_update.py,
            # firmware_update.py: each loaded only now, its names out of RAM
            # otherwise; by __import__ of a literal over 10 characters, not
            # even its name is a qstr until then)
            try:
                if typ == "fw":
                    __import__("firmware_update").check(self, msg, _FW_VERSION)
                else:
                    __import__("settings_update").check(self, msg)
            except MemoryError as e:
                # no RAM for the module (a half-loaded module's names are
                # never freed): the board restarts with its RAM whole, on
                # its version; the next birth's fault says why (MemoryError:
                # the hub ends the update there)
                with open(self.hw.root + "/fault", "w") as f:
                    f.write(repr(e))
                self.hw.reset()
        elif typ == protocol.T_HUB and msg["state"] == protocol.ONLINE:
            # the hub (re)connected, signed and numbered on this board's own
            # topic (an unsigned broadcast let anyone start sync storms):
            # what waits goes now, and the clock syncs again
            self.board.retry_all_now()
            self.sync_burst = _SYNC_BURST
            self.sync_now.set()
            self.kick.set()
        # an event's answers: messages of their own, or in the event's ack
        # (our birth says "ack": 2; a copy's ack, of an entry already
        # retired, carries none).  What the hub recorded for a call: for a
        # display at the station (the competitor confirms the time); the
        # board only reports it.
        r = msg if typ == protocol.T_RECORDED else msg.get("recorded")
        if r:
            self.hw.emit({"recorded": [r["station"], r["time"], r["confirmed"]]})
        if "st" in msg:
            # the hub's state of the stations (a stations message, or the
            # ack of the event that changed them): the board follows it
            changed = self.board.update(msg["st"], now)
            if changed:
                self.save_state()
                for n, sound in changed:
                    self.hw.emit({"station": n, "sound": sound})
                    self.play(sound)

    # -- sounds --------------------------------------------------------
    def play(self, name):
        signals.add(self.sounds, name)    # at most 4 waiting; an ack's beep gives way
        self.sound.set()

    async def player(self):
        """Plays the feedback sounds in turn.  Between them, while the link
        is down, the LED blinks the offline pattern (no sound: the hall must
        not hear a board's WiFi trouble); a sound cuts the blink short."""
        hw = self.hw
        while True:
            self.flags |= _LOOPED_PLAYER
            try:
                if self.sounds:
                    n = self.sounds.pop(0)
                    if type(n) is int:        # a count the confirm's release records: a blip each
                        for _ in range(n):
                            await pattern(hw, "count")
                            await asyncio.sleep_ms(120)
                    else:
                        await pattern(hw, n)
                elif not self.mqtt.connected or not hw.network_ok():
                    for freq, ms in signals.steps("offline"):
                        hw.led(freq > 0)
                        await self.sound.wait(ms)
                        if self.sounds:
                            break
                    hw.led(False)
                else:
                    await self.sound.wait(1000)
            except Exception as e:    # a MemoryError on a fragmented heap, above all
                survive(hw, e)
                await asyncio.sleep_ms(100)

    async def scheduled_signals(self):
        """Scheduled hall signals, on the board's synchronised clock."""
        b = self.board
        while True:
            self.flags |= _LOOPED_SIGNALS
            try:
                now = self.clock.now()
                t = b.sync.to_hub(now)
                gone = []
                sig = b.next_signal(t, signals.LATE_MS, gone)
                for s in gone:          # too late for them (a busy board, a reboot): said, never played late
                    b.mark_played(s)
                    self.hw.emit({"late": s[1], "at": s[0], "delay": t - s[0]})
                if sig is None:
                    wait = _INPUT_IDLE_MS
                else:
                    wait = b.sync.to_local(sig[0]) - now
                if sig is None or wait > _SIGNAL_LEAD_MS:
                    await self.sched_changed.wait(min(_INPUT_IDLE_MS, max(1, wait - _SIGNAL_LEAD_MS)))
                    continue
                if wait > _SPIN_MS:
                    await asyncio.sleep_ms(wait - _SPIN_MS)
                target = now + wait
                first = next(signals.steps(sig[1]))[0]
                t = self.clock.now()
                while t < target:                  # the last ms: spin, a sleep may overshoot
                    t = self.clock.now()
                self.hw.buzzer(first)              # sound first, book-keeping after
                # woken late (a busy host): said, not hidden; read just before
                # the sound (the simulated buzzer's report can block on a pipe)
                late = t - target
                self.hw.led(first > 0)
                b.mark_played(sig)
                self.hw.emit({"signal": sig[1], "at": sig[0], "delay": late, "err": b.sync.error_bound()})
                await pattern(self.hw, sig[1])
            except Exception as e:    # a MemoryError on a fragmented heap, above all
                survive(self.hw, e)
                await asyncio.sleep_ms(100)

    # -- tasks ---------------------------------------------------------
    async def edges(self):
        """Wakes inputs() for each batch of button edges (the hardware sets
        its press_flag in the pin interrupt: a ThreadSafeFlag on the ESP32,
        which clears as wait() returns; an Event in the simulator)."""
        flag = self.hw.press_flag
        while True:
            await flag.wait()
            flag.clear()
            self.input_wake.set()

    async def inputs(self):
        t = 0
        while True:
            await self.input_wake.wait(t)
            try:
                t = self.handle_inputs()
                # fed only if the other tasks the board cannot do without
                # looped too: one that hangs (or a VM stuck in a loop) resets
                # the board.  (In the try: the simulator's feed allocates.)
                if self.flags == _LOOPED_ALL:
                    self.flags = 0
                    self.hw.watchdog(0)
            except Exception as e:    # a MemoryError on a fragmented heap, above all
                survive(self.hw, e)
                t = 100

    def handle_inputs(self):
        """Feeds the button edges to the debouncers, acts on the settled
        transitions and the hold feedback due; returns how long (ms) the
        inputs task may wait for the next edge before something is due.
        (Not in inputs() itself: a task's locals stay in RAM all along.)"""
        hw, b = self.hw, self.board
        actions = []
        while hw.edges:
            station, level, ticks = hw.edges.pop(0)
            if 1 <= station <= b.stations:
                s = b.st[station - 1]
                # a burst that settled before this edge came (both read at
                # once, this task having run late) is a transition of its own
                r = s.edge(level, self.clock.at(ticks))
                if r is not None:
                    hw.emit({"input": [s.number, r[0]]})
                    actions += b.transition(s.number, r[0], r[1])
        now = self.clock.now()
        for s in b.st:
            r = s.poll(now)
            if r is not None:
                hw.emit({"input": [s.number, r[0]]})
                actions += b.transition(s.number, r[0], r[1])
        actions += b.hold_feedback(now)
        changed = False
        for kind, what in actions:
            if kind == "event":
                try:
                    self.journal.put(what)   # durable before anything else
                except Exception:
                    # not in flash (a full heap, a full flash): kept in RAM
                    # then, even beyond the window, and sent until acked
                    b.store(what)
                    raise
                # (a short press at a call: "missing", the count, when it counted one)
                hw.emit({"journaled": [what["boot"], what["seq"]], "type": what["type"],
                         "missing": what.get("missing")})
                # a stray changes no station's state: no second flash write
                changed = changed or what["type"] != "stray"
                self.kick.set()
            else:
                self.play(what)
        if changed:
            self.save_state()
        due = b.next_hold_ms(now)
        for s in b.st:
            t = s.settles_at()
            if t is not None and (due is None or t < due):
                due = t
        return _INPUT_IDLE_MS if due is None else max(1, min(_INPUT_IDLE_MS, due - now))

    def save_state(self):
        # (its path made each time, not an attribute: a name, a qstr, less)
        write_atomic(self.hw.root + "/stations.json", self.board.snapshot())

    def running(self):
        # a round runs on a station now: nothing may change the board
        # (settings_update.busy, firmware_update.busy), its acknowledged entries stay (sender)
        b = self.board
        now = b.sync.to_hub(self.clock.now())
        for n in range(1, b.stations + 1):
            if b.state(n, now) == "running":
                return True
        return False

    async def sender(self):
        while True:
            await self.kick.wait(_SEND_POLL_MS)
            self.flags |= _LOOPED_SENDER
            try:
                b = self.board
                for e in b.fill(self.journal.load):   # acknowledged ones made room
                    self.journal.put(e)
                if self.mqtt.connected:
                    for e in b.due(self.clock.now()):
                        if not await self.send(self.topic + protocol.EVENT, Board.event_message(e),
                                               qos=1):
                            break
                g = self.gone
                if g and not self.running():
                    sc = b.sched
                    now = b.sync.to_hub(self.clock.now())
                    if not (sc and sc["end"] and now and now < sc["end"] + _KEEP_MS):
                        self.journal.forget(g, 4)    # a few at a time: a signal may be due
            except Exception as e:    # a MemoryError on a fragmented heap, above all:
                survive(self.hw, e)  # the event is sent again at its next retry

    async def syncer(self):
        while True:
            d = self.board.sync.delay
            if self.sync_burst > 0:
                gap = _SYNC_BURST_GAP_MS
            elif d is None or d > _SYNC_GOOD_MS or self.board.sync.g[1] is not None:
                # no exchange with a short round trip among the last few (busy
                # WiFi, a hub that was slow to answer), or the hub's clock
                # jumped (it hears so in each request): keep asking, more often
                gap = _SYNC_POOR_GAP_MS
            else:
                gap = _SYNC_INTERVAL_MS
            await self.sync_now.wait(gap)
            try:
                if self.mqtt.connected:
                    if self.sync_burst > 0:
                        self.sync_burst -= 1
                    msg = self.board.sync_request(self.clock.now())
                    h = self.hub_ctr
                    d = h[_HUB_JUMP]
                    if d:                 # a command refused as a jump: the hub hears of it
                        msg["hub_ctr"] = d
                    if await self.send(self.topic + protocol.SYNC, msg) and h[_HUB_JUMP] == d:
                        h[_HUB_JUMP] = 0
                gc.collect()
                self.hw.emit({"heap": [gc.mem_alloc(), gc.mem_free()]})
            except Exception as e:    # a MemoryError on a fragmented heap, above all
                survive(self.hw, e)

    async def run(self):
        hw = self.hw
        if not await hw.connect_network(self.cfg):
            hw.log("no network yet; retrying")
        hw.watchdog((self.cfg.get("timings") or {}).get("watchdog_ms", _WATCHDOG_MS))
        self.cfg = None       # not needed any more (the hardware layer keeps what it must): RAM
        # an exception escaping a task is fatal (main() records it and resets)
        asyncio.get_event_loop().set_exception_handler(fail)
        for coro in (self.mqtt.run(), self.edges(), self.inputs(), self.sender(), self.syncer(),
                     self.scheduled_signals(), self.player()):
            asyncio.create_task(coro)
        # a trial's boot (new settings or a new firmware): the entry script
        # imported update.py, its door to boot_trial.py
        u = sys.modules.get("update")
        if u:
            asyncio.create_task(u.run(self))
        hw.emit({"booted": self.board.boot, "fw": _FW_VERSION})
        await hw.run()                    # the simulator returns on stdin EOF
        self.journal.forget(self.gone, 1 << 30)   # a clean stop: no station's timing to spare
        if self.mqtt.connected:
            await self.send(self.topic + protocol.STATUS, protocol.status_offline(self.board.boot), qos=1,
                            retain=True)
        await self.mqtt.stop()


def survive(hw, e):
    # logs an error a task carries on after.  The log allocates, and on a
    # full heap may fail again: that MemoryError must not end the task
    # (an exception escaping a task is fatal: fail() below).
    try:
        hw.log(repr(e))
    except MemoryError:
        pass


def fail(loop, context):
    # the event loop's handler of an exception that ended a task: fatal
    raise context["exception"]


async def pattern(hw, name):
    """Plays a sound pattern on the buzzer, the LED lit while it sounds."""
    for freq, ms in signals.steps(name):
        hw.buzzer(freq)
        hw.led(freq > 0)
        await asyncio.sleep_ms(ms)
    hw.buzzer(0)
    hw.led(False)


def main(b):
    """Run the board on what config.boot() made: [the hardware layer, the
    configuration, what ended the last boot or None] (emptied here: the
    entry script keeps no reference to the configuration).  An exception
    that escapes the program (or a task: see run()) is fatal: its traceback
    goes to flash, then the board resets; the next boot reports it."""
    hw, cfg, fault = b
    b.clear()
    try:
        app = App(hw, cfg, fault)
        del cfg, fault    # app.run() lets go of the configuration once the network is up
        gc.collect()      # boot's garbage (config text, module loading) before the tasks start
        # and from now on a collection after every 4 KB allocated, not only
        # when the heap is full: garbage does not pile up between the few
        # objects that stay, so the free heap stays in pieces large enough
        # (the 64 KB heap test: an allocation failed in 7 of 8 runs without
        # it, 0 with it; docs/benchmarks.md).  A collection blocks the VM
        # (a few ms on an ESP32's heap, not measured on hardware here).
        gc.threshold(_GC_EVERY)
        asyncio.run(app.run())
    except Exception as e:
        try:
            with open(hw.root + "/fault", "w") as f:
                sys.print_exception(e, f)
            sys.print_exception(e)
        finally:
            hw.reset()
