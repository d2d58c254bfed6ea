# The board program: wires the pure logic (board.py) to the journal, the MQTT
# client and the hardware layer.  Tasks: MQTT link, presses, sender, clock
# sync, and the hardware's own task.  None of them waits on another: a press
# is journaled at once even while the link is down.

import asyncio
import gc

import config
import protocol
from board import Board
from journal import Journal
from localclock import LocalClock
from mqtt_client import MQTTClient

FW_VERSION = "0.1.0"
SYNC_BURST = 6            # requests right after (re)connecting
SYNC_BURST_GAP_MS = 100
SYNC_INTERVAL_MS = 10000
SEND_POLL_MS = 250
ACK_BEEP = (60, 2500)     # short buzz: the hub has the press


class App:
    def __init__(self, hw, cfg):
        self.hw = hw
        self.cfg = cfg
        self.board_id = cfg["board"]
        self.journal = Journal(hw.storage_root())
        boot = self.journal.next_boot()
        self.clock = LocalClock(hw.ticks_ms, hw.ticks_diff)
        self.board = Board(self.board_id, boot, len(cfg["buttons"]), self.journal.load())
        bid = self.board_id
        self.t_status = protocol.board_topic(bid, protocol.STATUS)
        self.t_evt = protocol.board_topic(bid, protocol.EVENT)
        self.t_sync = protocol.board_topic(bid, protocol.SYNC)
        b = cfg["broker"]
        self.mqtt = MQTTClient(
            "tt-" + bid, b["host"], b.get("port", 1883),
            keepalive=b.get("keepalive", 30),
            user=b.get("user"), password=b.get("password"),
            will=(self.t_status, protocol.encode(protocol.status_offline(boot)), 1, True),
            on_message=self.on_message, on_connect=self.on_connect, log=hw.log)
        self.mqtt.subscribe(protocol.board_topic(bid, protocol.CMD), 1)
        self.mqtt.subscribe(protocol.BROADCAST_CMD, 1)
        self.mqtt.subscribe(protocol.HUB_STATUS, 1)
        self.kick = asyncio.Event()       # something to send
        self.sync_now = asyncio.Event()   # start a sync burst
        self.sync_burst = 0
        self.hub_online = False

    # -- MQTT callbacks ------------------------------------------------
    async def on_connect(self):
        msg = protocol.status_online(self.board.boot, FW_VERSION, self.board.stations)
        await self.mqtt.publish(self.t_status, protocol.encode(msg), qos=1, retain=True)
        self.sync_burst = SYNC_BURST
        self.sync_now.set()
        self.kick.set()

    def on_message(self, topic, payload):
        now = self.clock.now()            # t4 of a sync reply: read first
        try:
            msg = protocol.decode(payload)
        except protocol.ProtocolError as e:
            self.hw.log("dropped message on %s: %s" % (topic, e))
            return
        typ = msg["type"]
        if typ == protocol.T_SYNC and "t2" in msg:
            was_ready = self.board.sync.ready
            sample = self.board.sync_reply(msg, now)
            if sample is not None:
                self.hw.emit({"sync": sample})
                if not was_ready:
                    for e in self.board.resolve_times():
                        self.journal.put(e)
                    self.kick.set()
        elif typ == protocol.T_ACK:
            if self.board.ack(msg["boot"], msg["seq"]):
                self.journal.remove(msg["boot"], msg["seq"])
                self.hw.emit({"acked": [msg["boot"], msg["seq"]]})
                asyncio.create_task(self.beep(*ACK_BEEP))
        elif typ == protocol.T_HUB:
            online = msg["state"] == protocol.ONLINE
            if online and not self.hub_online:
                self.board.retry_all_now()
                self.sync_burst = SYNC_BURST
                self.sync_now.set()
                self.kick.set()
            self.hub_online = online

    # -- tasks ---------------------------------------------------------
    async def beep(self, ms, freq):
        self.hw.buzzer(freq)
        await asyncio.sleep_ms(ms)
        self.hw.buzzer(0)

    async def presses(self):
        hw = self.hw
        while True:
            await hw.press_flag.wait()
            while hw.presses:
                station, ticks = hw.presses.pop(0)
                try:
                    e = self.board.press(station, self.clock.at(ticks))
                except ValueError as err:
                    hw.log(str(err))
                    continue
                self.journal.put(e)       # durable before anything else
                hw.emit({"journaled": [e["boot"], e["seq"]]})
                self.kick.set()

    async def sender(self):
        while True:
            try:
                await asyncio.wait_for_ms(self.kick.wait(), SEND_POLL_MS)
            except asyncio.TimeoutError:
                pass
            self.kick.clear()
            if not self.mqtt.connected:
                continue
            for e in self.board.due(self.clock.now()):
                ok = await self.mqtt.publish(self.t_evt, protocol.encode(Board.event_message(e)), qos=1)
                if not ok:
                    break

    async def syncer(self):
        while True:
            gap = SYNC_BURST_GAP_MS if self.sync_burst > 0 else SYNC_INTERVAL_MS
            try:
                await asyncio.wait_for_ms(self.sync_now.wait(), gap)
            except asyncio.TimeoutError:
                pass
            self.sync_now.clear()
            if self.mqtt.connected:
                if self.sync_burst > 0:
                    self.sync_burst -= 1
                msg = protocol.encode(self.board.sync_request(self.clock.now()))
                await self.mqtt.publish(self.t_sync, msg, qos=0)
            gc.collect()

    async def run(self):
        hw = self.hw
        if not await hw.connect_network(self.cfg):
            hw.log("network not connected yet; retrying in the background")
        for coro in (self.mqtt.run(), self.presses(), self.sender(), self.syncer()):
            asyncio.create_task(coro)
        await hw.run()                    # the simulator returns on stdin EOF
        if self.mqtt.connected:
            msg = protocol.status_offline(self.board.boot)
            await self.mqtt.publish(self.t_status, protocol.encode(msg), qos=1, retain=True)
        await self.mqtt.stop()


def main(hardware, config_path):
    try:
        cfg = config.load(config_path)
    except config.ConfigError as e:
        print("configuration error:", e)
        raise
    asyncio.run(App(hardware.Hardware(cfg), cfg).run())
