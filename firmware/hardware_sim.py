# Simulated hardware layer for the unix MicroPython port: the same interface
# as hardware_esp32.py, driven through stdin and reporting on stdout, so a
# simulator or a test can press buttons and watch the buzzer.
#
# stdin, one line each (SimBoard sends them at their instants; a test speaks
# its gestures -- press, down, up, edges -- to SimBoard, hub/fleet/simulator.py):
#   edge <station> <level> <host ms> <first>
#       a contact changes to level (1 pressed, 0 released) at that instant
#       (told up to LEAD_MS ahead: it happens at its instant, in time order
#       with the other changes and the board's own timers, whatever the
#       host's load);
#       first: 1 if it is the first press edge of a gesture
# stdout: one JSON object per line, each with "t" (host ms when emitted):
#   {"sim": "press", "station": 1, "true": <host ms>, "ticks": <ticks>}
#       a gesture's first press edge: "true" the instant the contact closed,
#       "ticks" the board's ticks_ms() as its pin interrupt's handler read it,
#       "delay" ms from "true" to then (a blocking call in the way)
#   {"sim": "buzz", "freq": 2000, "true": <host ms>}
#   {"sim": "volume", "volume": 40}: the buzzer's volume set (at boot when the
#       configuration has one, and by a settings change, at once)
#   {"watchdog": <ms>}: the watchdog started (ms), or was fed (0); SimBoard
#   keeps its timer, on the chip's time (a host that stood still froze the
#   chip: not counted), and kills the board (the reset) if it runs out
#   {"sim": "reset"}: machine.reset() after a fatal error; exit status 3
#   {"fault": "..."}: at boot, what ended the last one
#
# What the ESP32 does, modelled:
# - Pin interrupts are soft (ports/esp32/machine_pin.c: the ISR only calls
#   mp_sched_schedule; Pin.irq(hard=False)): the handler -- reading
#   ticks_ms() -- runs when the VM next runs Python: at once if it is idle,
#   or as a blocking call ends.  A contact that changed during one is
#   stamped at its end, as the chip's handler would be.
# - Blocking calls: the VM runs nothing meanwhile.  The firmware's os and gc
#   modules are wrapped (sim_blocking.py, installed in sys.modules before the
#   firmware imports them: no firmware code for it): each rename (the
#   commit of a write-then-rename) and remove in flash blocks for
#   flash_write_ms, plus flash_erase_ms every flash_erase_every-th of them
#   (a 4 KB sector erased when LittleFS compacts a metadata block); each
#   explicit gc.collect() for gc_collect_ms after the real collection
#   (sim_blocking.py, loaded only if a cost is set: the model is the
#   simulator's code, not the board's, and stays out of its heap otherwise).
#   Config "sim" keys, whole ms, 0 (the default) for none; ESTIMATES, not
#   measured on a chip (docs/firmware.md, "Soft interrupts").
# - WiFi: the hall's access point, if the "sim" keys name one
#   ("access_point": {"ssid", "password"}): a board whose "wifi" does not match
#   joins no network (network_ok() False, no socket reaches anything).
# The board's clock is the host clock shifted by clock_offset_ms and running
# drift_ppm fast or slow, so clock sync has real work to do; an offset just
# below 2**30 makes the ticks wrap soon after boot.  It runs on while the host
# stands still (this process stopped, the machine paused), as a board's
# crystal does while the hub laptop is paused: after the pause the board's
# stamps and its sync with the hub are still true, its timers late.

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
        self.drift_ppm = int(sim.get("drift_ppm", 0))
        self.root = sim.get("root", ".")
        # the modelled blocking calls (ms): flash write, erase, erase every
        # n-th write, collection; then the count of writes so far
        g = sim.get
        self.sim = [g("flash_write_ms", 0), g("flash_erase_ms", 0), g("flash_erase_every", 0),
                    g("gc_collect_ms", 0), 0]
        self.busy = []                     # start, end (host ms) of the latest blocking calls
        if self.sim[0] or self.sim[1] or self.sim[3]:
            import sim_blocking          # only then: its code is the simulator's, not the chip's
            sim_blocking.install(self)
        # the hall's access point (sim "access_point": {"ssid", "password"}):
        # a board whose "wifi" names another network or password joins none,
        # and then no socket reaches anything, as on the chip with no IP
        # address; without one, the network is always there
        ap = sim.get("access_point")
        w = cfg.get("wifi") or {}
        self.wifi = ap is None or (ap.get("ssid") == w.get("ssid")
                                   and ap.get("password", "") == w.get("password", ""))
        if not self.wifi:
            import sim_blocking          # its model of no network (the simulator's code, not the chip's)
            sim_blocking.wifi()
        self.stations = len(cfg["buttons"])
        # the clock: host ms at boot, and the offset (one name: each is a qstr)
        self._t0 = (_host_ms(), int(sim.get("clock_offset_ms", 0)))
        self.edges = []                     # (station, level, ticks) not yet handled
        # the contacts' changes told ahead, not yet due: (host ms, station, level,
        # first), in time order ("entries": a name the firmware has, no new qstr)
        self.entries = []
        # an Event, not a ThreadSafeFlag as on the ESP32: the edges come from
        # this board's own event loop, not from an interrupt, and on the unix
        # port a ThreadSafeFlag makes the loop poll every millisecond (it is
        # not a file descriptor), 1-2 % of a core per board
        self.press_flag = asyncio.Event()
        self.buzz = 0                       # the buzzer's frequency
        v = (cfg.get("buzzer") or {}).get("volume")
        if v:
            self.volume(v)

    @staticmethod
    def fallback():
        """For signalling a configuration error: no configuration needed."""
        return Hardware({"buttons": [0]})

    # -- clock ---------------------------------------------------------
    def ticks_ms(self, t=None):
        t0 = self._t0
        e = (t or _host_ms()) - t0[0]
        return (e + e * self.drift_ppm // 1000000 + t0[1]) % _PERIOD

    def ticks_diff(self, a, b):
        d = (a - b) % _PERIOD
        return d - _PERIOD if d >= _PERIOD // 2 else d

    # -- outputs -------------------------------------------------------
    def emit(self, msg):
        # "t": when the board said it, in host ms (what a benchmark measures by:
        # when the reading process gets to the line depends on its own load)
        msg["t"] = _host_ms()
        print(json.dumps(msg))

    def volume(self, level):
        # the chip's PWM duty from the next sound on (hardware_esp32.py): said
        self.emit({"sim": "volume", "volume": level})

    def buzzer(self, freq):
        if freq != self.buzz:
            self.buzz = freq
            self.emit({"sim": "buzz", "freq": freq, "true": _host_ms()})

    def led(self, on):
        pass    # follows the buzzer; not reported, to keep the output short

    def log(self, msg):
        self.emit({"log": msg})

    def reset(self):
        # machine.reset() after a fatal error (app.main): the process ends
        self.emit({"sim": "reset"})
        sys.exit(3)

    def watchdog(self, t):
        # the chip's timer is SimBoard's (hub/fleet/simulator.py), outside the
        # board's heap: started with t ms, fed with 0 (no "t": SimBoard
        # takes the instant it reads the line)
        print('{"watchdog":%d}' % t)

    # -- network -------------------------------------------------------
    async def connect_network(self, cfg):
        if not self.wifi:
            await asyncio.sleep_ms(2000)    # the chip tries, then gives up (hardware_esp32: 20 s)
        return self.wifi

    def network_ok(self):
        return self.wifi

    def rssi(self):
        return -55 if self.wifi else None

    # -- inputs ---------------------------------------------------------
    async def run(self):
        """Read the contacts' changes from stdin until EOF, then stop the
        board.  For each, what its pin interrupt's handler does: read
        ticks_ms() -- as the handler runs: at the instant the contact
        changed, or as the blocking call it came in ended -- and record the
        edge."""
        reader = asyncio.StreamReader(sys.stdin)
        while True:
            line = await reader.readline()
            if not line:
                return
            try:
                _, station, level, at, first = line.split()
                station, at, level, first = int(station), int(at), int(level), first == b"1"
            except ValueError:
                self.log("bad sim command: %r" % line)
                continue
            # told ahead (hub/fleet/simulator.py): the contact changes at its instant
            # and in time order, however late the host's threads run.  Each change
            # waits in a sorted list; whichever wait ends hands over all that are
            # due, oldest first.  (A wait of its own per change, measured from the
            # line's reading, could end after a later change's wait if it started
            # late: the debouncer, given a release after the next press, makes one
            # long press of the two, and a referee's confirm is lost.)
            p = self.entries
            p.append((at, station, level, first))
            p.sort()
            if at > _host_ms():
                asyncio.create_task(self.schedule(at))
            else:
                self.due(at)

    # (names the firmware or the interpreter has already: each new one is a qstr,
    # test_firmware_heap.py; "schedule" is micropython.schedule's)
    async def schedule(self, at):
        await asyncio.sleep_ms(at - _host_ms())     # the wait taken as it starts
        self.due(at)

    def due(self, at):
        # the contacts' changes due by at (or by now, if later), oldest first
        p, now = self.entries, max(at, _host_ms())
        while p and p[0][0] <= now:
            at, station, level, first = p.pop(0)
            self.edge(station, level, at, first)

    def edge(self, station, level, at, first):
        h, b = at, self.busy
        for i in range(0, len(b), 2):
            if b[i] <= at < b[i + 1]:
                h = b[i + 1]
        t = self.ticks_ms(h)
        if first:
            self.emit({"sim": "press", "station": station, "true": at, "ticks": t, "delay": h - at})
        self.edges.append((station, level, t))
        self.press_flag.set()
