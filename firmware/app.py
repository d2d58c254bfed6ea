# The board program: wires the pure logic (board.py) to the journal, the MQTT
# client and the hardware layer.  Tasks: MQTT link, inputs, sender, clock
# sync, scheduled signals, sound player, link watch and the hardware's own
# task.  None of them waits on another: a press is journaled at once even
# while the link is down, and scheduled signals fire on the board's own
# synchronised clock whether or not the hub is reachable.

import asyncio
import gc
import json
import sys

from micropython import const

import protocol
import signals
from auth import AuthError, Signer
from board import Board
from journal import Journal, write_atomic
from localclock import LocalClock
from mqtt_client import MQTTClient

FW_VERSION = "0.2.0"
# const() with a leading underscore: folded into the bytecode, no global
# (each module-level name costs RAM on the board)
_SYNC_BURST = const(6)            # requests right after (re)connecting
_SYNC_BURST_GAP_MS = const(100)
_SYNC_INTERVAL_MS = const(30000)
_SYNC_GOOD_MS = const(20)           # a trusted exchange's round trip at most this...
_SYNC_POOR_GAP_MS = const(2000)     # ...else ask again this soon
_SEND_POLL_MS = const(250)
_INPUT_IDLE_MS = const(1000)
_SIGNAL_LEAD_MS = const(15)       # wake this early, then sleep the exact rest
_SPIN_MS = const(2)               # ... and spin through the last of it


class App:
    def __init__(self, hw, cfg):
        self.hw = hw
        self.cfg = cfg
        self.board_id = cfg["board"]
        self.signer = Signer(cfg["key"])
        self.journal = Journal(hw.storage_root())
        boot = self.journal.next_boot()
        self.clock = LocalClock(hw.ticks_ms, hw.ticks_diff)
        self.board = Board(self.board_id, boot, len(cfg["buttons"]), self.journal.load(),
                           cfg.get("timings"))
        self.state_path = hw.storage_root() + "/stations.json"
        try:
            with open(self.state_path) as f:
                self.board.restore(json.loads(f.read()))
        except (OSError, ValueError):
            pass
        self.ctr = 0              # counter of every message this boot signs
        self.birth_ctr = 0
        self.hub_ctr = 0          # highest counter seen from the hub
        bid = self.board_id
        self.t_status = protocol.board_topic(bid, protocol.STATUS)
        self.t_evt = protocol.board_topic(bid, protocol.EVENT)
        self.t_sync = protocol.board_topic(bid, protocol.SYNC)
        self.t_cmd = protocol.board_topic(bid, protocol.CMD)
        self.t_sched = protocol.board_topic(bid, protocol.SCHED)
        b = cfg["broker"]
        self.mqtt = MQTTClient(
            "tt-" + bid, b["host"], b.get("port", 1883),
            keepalive=b.get("keepalive", 30), user=b.get("user"), password=b.get("password"),
            will=self.will, on_message=self.on_message, on_connect=self.on_connect, log=hw.log)
        for t in (self.t_cmd, self.t_sched, protocol.HUB_STATUS):
            self.mqtt.subscribe(t, 1)
        self.kick = asyncio.Event()        # something to send
        self.sync_now = asyncio.Event()    # start a sync burst
        self.sched_changed = asyncio.Event()
        self.sounds = []                   # feedback patterns waiting to play
        self.sound_flag = asyncio.Event()
        self.sync_burst = 0
        self.hub_online = False

    # -- signing -------------------------------------------------------
    def seal(self, topic, msg):
        self.ctr += 1
        protocol.stamp(msg, self.ctr, self.board.boot)
        return self.signer.sign(topic, protocol.encode(msg))

    async def send(self, topic, msg, qos=0, retain=False):
        return await self.mqtt.publish(topic, self.seal(topic, msg), qos=qos, retain=retain)

    def will(self):
        """Called before every CONNECT: the last will gets the next counter,
        the birth message right after it (the hub accepts a will only between
        the previous and the latest birth, so a stale one is rejected)."""
        return (self.t_status, self.seal(self.t_status, protocol.status_offline(self.board.boot)), 1, True)

    # -- MQTT callbacks ------------------------------------------------
    async def on_connect(self):
        gc.collect()
        msg = protocol.status_online(self.board.boot, FW_VERSION, self.board.stations,
                                     mem=gc.mem_free(), up=self.clock.now() // 1000,
                                     rssi=self.hw.rssi())
        await self.send(self.t_status, msg, qos=1, retain=True)
        self.sync_burst = _SYNC_BURST
        self.sync_now.set()
        self.kick.set()

    def on_message(self, topic, payload):
        now = self.clock.now()            # t4 of a sync reply: read first
        try:
            if topic == protocol.HUB_STATUS:
                msg = protocol.decode(payload)     # broadcast, unsigned: nothing but that
                if msg["type"] != protocol.T_HUB:
                    raise AuthError("only the hub's status may come unsigned")
            else:
                msg = protocol.decode(self.signer.open(topic, payload))
                if msg["type"] != protocol.T_SCHED:   # schedules are ordered by id
                    ctr = msg.get("ctr")
                    if ctr is None or ctr <= self.hub_ctr:
                        raise AuthError("replayed or unnumbered hub message")
                    self.hub_ctr = ctr
        except (protocol.ProtocolError, AuthError) as e:
            self.hw.log("rejected message on %s: %s" % (topic, e))
            return
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
            if self.board.ack(msg["boot"], msg["seq"]):
                self.journal.remove(msg["boot"], msg["seq"])
                self.hw.emit({"acked": [msg["boot"], msg["seq"]]})
                self.play("acked")
        elif typ == protocol.T_SCHED:
            if self.board.set_schedule(msg):
                self.save_state()
                self.hw.emit({"sched": msg["id"]})
                self.sched_changed.set()
        elif typ == protocol.T_RECORDED:
            # what the hub recorded for a call: for a display at the station
            # (the competitor confirms the time); the board only reports it
            self.hw.emit({"recorded": [msg["station"], msg["time"], msg["confirmed"]]})
        elif typ == protocol.T_IDENTIFY:
            hub_now = self.board.hub_time(now)
            if hub_now is None or hub_now <= msg["exp"]:
                self.play("identify")
        elif typ == protocol.T_HUB:
            online = msg["state"] == protocol.ONLINE
            if online and not self.hub_online:
                self.board.retry_all_now()
                self.sync_burst = _SYNC_BURST
                self.sync_now.set()
                self.kick.set()
            self.hub_online = online

    # -- sounds --------------------------------------------------------
    def play(self, name):
        self.sounds.append(name)
        self.sound_flag.set()

    async def pattern(self, name, led_only=False):
        hw = self.hw
        for freq, ms in signals.steps(name):
            if not led_only:
                hw.buzzer(freq)
            hw.led(freq > 0)
            await asyncio.sleep_ms(ms)
        hw.buzzer(0)
        hw.led(False)

    async def player(self):
        while True:
            await self.sound_flag.wait()
            self.sound_flag.clear()
            while self.sounds:
                await self.pattern(self.sounds.pop(0))

    async def scheduled_signals(self):
        """Scheduled hall signals, on the board's synchronised clock."""
        b = self.board
        while True:
            self.sched_changed.clear()
            now = self.clock.now()
            sig = b.next_signal(b.hub_time(now), signals.LATE_MS)
            if sig is None:
                wait = _INPUT_IDLE_MS
            else:
                wait = b.sync.to_local(sig[0]) - now
            if sig is None or wait > _SIGNAL_LEAD_MS:
                try:
                    await asyncio.wait_for_ms(self.sched_changed.wait(),
                                              min(_INPUT_IDLE_MS, max(1, wait - _SIGNAL_LEAD_MS)))
                except asyncio.TimeoutError:
                    pass
                continue
            if wait > _SPIN_MS:
                await asyncio.sleep_ms(wait - _SPIN_MS)
            target = now + wait
            while self.clock.now() < target:   # the last ms: spin, a sleep may overshoot
                pass
            first = signals.PATTERNS[sig[1]][0] * 100
            self.hw.buzzer(first)              # sound first, book-keeping after
            self.hw.led(first > 0)
            b.mark_played(sig)
            self.hw.emit({"signal": sig[1], "at": sig[0]})
            await self.pattern(sig[1])

    # -- tasks ---------------------------------------------------------
    async def inputs(self):
        hw, b = self.hw, self.board
        while True:
            now = self.clock.now()
            due = b.next_hold_ms(now)
            for s in b.st:
                t = s.deb.settles_at()
                if t is not None and (due is None or t < due):
                    due = t
            timeout = _INPUT_IDLE_MS if due is None else max(1, min(_INPUT_IDLE_MS, due - now))
            try:
                await asyncio.wait_for_ms(hw.press_flag.wait(), timeout)
            except asyncio.TimeoutError:
                pass
            while hw.edges:
                station, level, ticks = hw.edges.pop(0)
                if 1 <= station <= b.stations:
                    b.st[station - 1].deb.edge(level, self.clock.at(ticks))
            now = self.clock.now()
            actions = []
            for s in b.st:
                r = s.deb.poll(now)
                if r is not None:
                    hw.emit({"input": [s.number, r[0]]})
                    actions += b.transition(s.number, r[0], r[1])
            actions += b.hold_feedback(now)
            changed = False
            for kind, what in actions:
                if kind == "event":
                    self.journal.put(what)       # durable before anything else
                    hw.emit({"journaled": [what["boot"], what["seq"]], "type": what["type"]})
                    changed = True
                    self.kick.set()
                else:
                    self.play(what)
            if changed:
                self.save_state()

    def save_state(self):
        write_atomic(self.state_path, json.dumps(self.board.snapshot()))

    async def sender(self):
        while True:
            try:
                await asyncio.wait_for_ms(self.kick.wait(), _SEND_POLL_MS)
            except asyncio.TimeoutError:
                pass
            self.kick.clear()
            if not self.mqtt.connected:
                continue
            for e in self.board.due(self.clock.now()):
                if not await self.send(self.t_evt, Board.event_message(e), qos=1):
                    break

    async def syncer(self):
        while True:
            d = self.board.sync.delay
            if self.sync_burst > 0:
                gap = _SYNC_BURST_GAP_MS
            elif d is None or d > _SYNC_GOOD_MS:
                # no exchange with a short round trip among the last few (busy
                # WiFi, a hub that was slow to answer): keep asking, more often
                gap = _SYNC_POOR_GAP_MS
            else:
                gap = _SYNC_INTERVAL_MS
            try:
                await asyncio.wait_for_ms(self.sync_now.wait(), gap)
            except asyncio.TimeoutError:
                pass
            self.sync_now.clear()
            if self.mqtt.connected:
                if self.sync_burst > 0:
                    self.sync_burst -= 1
                await self.send(self.t_sync, self.board.sync_request(self.clock.now()))
            gc.collect()
            self.hw.emit({"heap": [gc.mem_alloc(), gc.mem_free()]})

    async def link_watch(self):
        """While the link is down, the LED blinks the offline pattern (no
        sound: the hall must not hear a board's WiFi trouble)."""
        while True:
            if not self.mqtt.connected or not self.hw.network_ok():
                await self.pattern("offline", led_only=True)
            else:
                await asyncio.sleep_ms(1000)

    async def run(self):
        hw = self.hw
        if not await hw.connect_network(self.cfg):
            hw.log("network not connected yet; retrying in the background")
        for coro in (self.mqtt.run(), self.inputs(), self.sender(), self.syncer(),
                     self.scheduled_signals(), self.player(), self.link_watch()):
            asyncio.create_task(coro)
        hw.emit({"booted": self.board.boot, "fw": FW_VERSION})
        await hw.run()                    # the simulator returns on stdin EOF
        if self.mqtt.connected:
            await self.send(self.t_status, protocol.status_offline(self.board.boot), qos=1, retain=True)
        await self.mqtt.stop()


async def config_error(hw_module, err):
    """No usable configuration: say so forever, serve nothing."""
    hw = hw_module.Hardware.fallback()
    hw.log("configuration error: %s" % err)
    hw.emit({"config_error": str(err)})
    while True:
        for freq, ms in signals.steps("config_error"):
            hw.buzzer(freq)
            hw.led(freq > 0)
            await asyncio.sleep_ms(ms)


def main(hardware, config_path):
    import config     # needed only here: unloaded after, so its code frees RAM
    try:
        cfg = config.load(config_path)
    except config.ConfigError as e:
        asyncio.run(config_error(hardware, e))
        return
    finally:
        del config
        sys.modules.pop("config", None)
    app = App(hardware.Hardware(cfg), cfg)
    gc.collect()      # boot's garbage (config text, module loading) before the tasks start
    asyncio.run(app.run())
