# Entry point on the ESP32 (run by MicroPython after boot.py).  The
# configuration is checked first, alone (config.py is unloaded before the rest
# of the firmware is loaded: the two never share the heap).
import gc
import os
import sys

import hardware_esp32

import config
path = "/config.json"
try:
    os.stat(path[:-5] + "-previous.json")    # update.names(): a settings trial
except OSError:
    b = config.boot(hardware_esp32, path)   # a bad one: the configuration error, forever
else:
    import update                             # loaded only for a trial
    b = update.boot(hardware_esp32, path)
del config
sys.modules.pop("config")
gc.collect()     # its code and the configuration's text: gone before the rest loads
import app
try:
    app.main(b)
except KeyboardInterrupt:
    # Ctrl-C on the serial console (a developer, or mpremote copying files):
    # the REPL takes over.  The watchdog, once started, cannot be stopped, so
    # a timer feeds it from now on (reset the board to run the program again).
    import machine
    _wdt = machine.WDT(timeout=8000)
    machine.Timer(0).init(period=2000, callback=lambda t: _wdt.feed())
