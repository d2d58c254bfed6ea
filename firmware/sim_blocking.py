# The simulator's model of the ESP32's blocking calls (firmware/hardware_sim.py,
# "What the ESP32 does, modelled"), loaded only when a board's configuration
# sets a cost: os and gc as the firmware meets them on the chip, where a
# rename (the commit of a write-then-rename), a remove and a gc.collect()
# block the VM -- nothing runs meanwhile, not a pin interrupt's handler
# either.  Installed in sys.modules before the firmware imports them, so
# the firmware has no code for it.  Host only (hub/fleet/firmware_build.py).
# Also the model of a board that joined no WiFi (wifi(): the hall's access
# point refused its ssid or password, hardware_sim.py), loaded only then.

import gc
import os
import sys
import time


class _Blocking:
    # m: the module; hw: the Hardware (its costs, hw.sim; its busy windows)
    def __getattr__(self, name):
        f = getattr(self.m, name)
        if name not in ("rename", "remove", "collect"):
            return f
        c, b = self.hw.sim, self.hw.busy

        def slow(*a):
            f(*a)
            if name == "collect":
                t = c[3]
            else:
                c[4] += 1
                t = c[0] + (c[1] if c[2] and c[4] % c[2] == 0 else 0)
            if t > 0:
                b.append(time.time_ns() // 1000000)
                time.sleep_ms(t)
                b.append(time.time_ns() // 1000000)
                del b[:-16]
        return slow


def install(hw):
    for m in (os, gc):
        w = _Blocking()
        w.m, w.hw = m, hw
        sys.modules[m.__name__] = w


class _NoRoute:
    # the socket module of a board that joined no WiFi: no name resolves (the
    # chip's lwIP has no interface up, every connection fails), the rest is socket's
    def __getattr__(self, name):
        if name == "getaddrinfo":
            def none(*a):
                raise OSError(113)          # EHOSTUNREACH
            return none
        return getattr(self.m, name)


def wifi():
    # installed before the firmware's network code imports socket (the
    # hardware layer is built first, in config.boot; asyncio's stream
    # module, which opens the connections, is loaded at the first one)
    import socket
    w = _NoRoute()
    w.m = socket
    sys.modules["socket"] = w
