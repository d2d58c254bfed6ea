# Simulated hardware layer for the unix MicroPython port: the same interface
# as hardware_esp32.py, driven through stdin and reporting on stdout, so a
# simulator or a test can press buttons and watch the buzzer.
#
# stdin commands (one per line):
#   press <station> [hold_ms]        a clean press, released after hold_ms (80)
#   down <station> / up <station>    one clean edge
#   edges <station> <ms>:<level> ... raw edges at offsets from now (bounce
#                                    noise); level 1 = pressed, 0 = released
# stdout: one JSON object per line, each with "t" (host ms when emitted);
# {"sim": ...} lines are hardware events:
#   {"sim": "press", "station": 1, "true": <host ms>}   the true press instant
#   {"sim": "buzz", "freq": 2000, "true": <host ms>}, {"sim": "led", "on": 1}
#   {"watchdog": <ms>}: the watchdog started (ms), or was fed (0); SimBoard
#   keeps its timer and kills the board (the reset) if it runs out
# The board's clock is the host clock shifted by clock_offset_ms and running
# drift_ppm fast or slow, so clock sync has real work to do; an offset just
# below 2**30 makes the ticks wrap soon after boot.

import asyncio
import json
import sys
import time

from micropython import const

_PERIOD = const(1 << 30)   # the ESP32's ticks_ms period


def _host_ms():
    return time.time_ns() // 1000000


class Hardware:
    kind = "sim"

    def __init__(self, cfg):
        sim = cfg.get("sim") or {}
        self.offset = int(sim.get("clock_offset_ms", 0))
        self.drift_ppm = int(sim.get("drift_ppm", 0))
        self.root = sim.get("root", ".")
        self.stations = len(cfg["buttons"])
        self._t0 = _host_ms()
        self.edges = []                     # (station, level, ticks) not yet handled
        # an Event, not a ThreadSafeFlag as on the ESP32: the edges come from
        # this board's own event loop, not from an interrupt, and on the unix
        # port a ThreadSafeFlag makes the loop poll every millisecond (it is
        # not a file descriptor), 1-2 % of a core per board
        self.press_flag = asyncio.Event()
        self.buzz = 0                       # the buzzer's frequency

    @staticmethod
    def fallback():
        """For signalling a configuration error: no configuration needed."""
        return Hardware({"buttons": [0]})

    # -- clock ---------------------------------------------------------
    def ticks_ms(self):
        e = _host_ms() - self._t0
        return (e + e * self.drift_ppm // 1000000 + self.offset) % _PERIOD

    def ticks_diff(self, a, b):
        d = (a - b) % _PERIOD
        return d - _PERIOD if d >= _PERIOD // 2 else d

    # -- outputs -------------------------------------------------------
    def emit(self, msg):
        # "t": when the board said it, in host ms (what a benchmark measures by:
        # when the reading process gets to the line depends on its own load)
        msg["t"] = _host_ms()
        print(json.dumps(msg))

    def buzzer(self, freq):
        if freq != self.buzz:
            self.buzz = freq
            self.emit({"sim": "buzz", "freq": freq, "true": _host_ms()})

    def led(self, on):
        pass    # follows the buzzer; not reported, to keep the output short

    def log(self, msg):
        self.emit({"log": msg})

    def watchdog(self, t):
        # the chip's timer is SimBoard's (tools/simulator.py), outside the
        # board's heap: started with t ms, fed with 0 (no "t": SimBoard
        # takes the instant it reads the line)
        print('{"watchdog":%d}' % t)

    # -- network -------------------------------------------------------
    async def connect_network(self, cfg):
        return True

    def network_ok(self):
        return True

    def rssi(self):
        return -55

    # -- inputs --------------------------------------------------------
    def edge(self, station, level, first=True):
        """What the pin interrupt does on the real board (first: a press edge
        is reported as the true press instant)."""
        t = self.ticks_ms()
        if level and first:
            self.emit({"sim": "press", "station": station, "true": _host_ms(), "ticks": t})
        self.edges.append((station, level, t))
        self.press_flag.set()

    async def _edges(self, station, edges, t):
        """Edges [(offset, level)] at offsets from t (host ticks); only the
        first press edge of a command is reported as the true press instant."""
        reported = False
        for offset, level in edges:
            wait = time.ticks_diff(time.ticks_add(t, offset), time.ticks_ms())
            if wait > 0:
                await asyncio.sleep_ms(wait)
            self.edge(station, level, not reported)
            reported = reported or level == 1

    async def run(self):
        """Read commands from stdin until EOF, then stop the board."""
        reader = asyncio.StreamReader(sys.stdin)
        while True:
            line = await reader.readline()
            if not line:
                return
            words = line.decode().split()
            try:
                cmd, station = words[0], int(words[1])
                t0 = time.ticks_ms()
                if cmd == "press":
                    hold = int(words[2]) if len(words) > 2 else 80
                    asyncio.create_task(self._edges(station, [(0, 1), (hold, 0)], t0))
                elif cmd in ("down", "up"):
                    self.edge(station, 1 if cmd == "down" else 0)
                elif cmd == "edges":
                    plan = []
                    for w in words[2:]:
                        ms, level = w.split(":")
                        plan.append((int(ms), int(level)))
                    asyncio.create_task(self._edges(station, plan, t0))
                else:
                    raise ValueError
            except (IndexError, ValueError):
                self.log("bad sim command: %r" % line)
