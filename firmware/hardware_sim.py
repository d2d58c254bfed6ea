# Simulated hardware layer for the unix MicroPython port: the same interface
# as hardware_esp32.py, driven through stdin and reporting on stdout, so a
# simulator or a test can press buttons and watch the buzzer.
#
# stdin commands (one per line):  press <station>
# stdout: one JSON object per line; {"sim": ...} lines are hardware events:
#   {"sim": "press", "station": 1, "true": <host ms>}   the true press instant
#   {"sim": "buzz", "freq": 2000}, {"sim": "led", "on": 1}
# The board's clock is the host clock shifted by clock_offset_ms and running
# drift_ppm fast or slow, so clock sync has real work to do.

import asyncio
import json
import sys
import time

PERIOD = 1 << 30   # the ESP32's ticks_ms period


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
        self.presses = []                   # (station, ticks) not yet handled
        self.press_flag = asyncio.ThreadSafeFlag()

    # -- clock ---------------------------------------------------------
    def ticks_ms(self):
        e = _host_ms() - self._t0
        return (e + e * self.drift_ppm // 1000000 + self.offset) % PERIOD

    def ticks_diff(self, a, b):
        d = (a - b) % PERIOD
        return d - PERIOD if d >= PERIOD // 2 else d

    # -- outputs -------------------------------------------------------
    def emit(self, obj):
        print(json.dumps(obj))

    def buzzer(self, freq):
        self.emit({"sim": "buzz", "freq": freq})

    def led(self, on):
        self.emit({"sim": "led", "on": 1 if on else 0})

    def log(self, msg):
        self.emit({"log": msg})

    # -- network -------------------------------------------------------
    async def connect_network(self, cfg):
        return True

    def network_ok(self):
        return True

    def rssi(self):
        return None

    def storage_root(self):
        return self.root

    # -- inputs --------------------------------------------------------
    def press(self, station):
        """What the pin interrupt does on the real board."""
        t = self.ticks_ms()
        self.emit({"sim": "press", "station": station, "true": _host_ms()})
        self.presses.append((station, t))
        self.press_flag.set()

    async def run(self):
        """Read commands from stdin until EOF, then stop the board."""
        reader = asyncio.StreamReader(sys.stdin)
        while True:
            line = await reader.readline()
            if not line:
                return
            words = line.decode().split()
            try:
                if words[0] == "press":
                    self.press(int(words[1]))
                else:
                    raise ValueError
            except (IndexError, ValueError):
                self.log("bad sim command: %r" % line)
