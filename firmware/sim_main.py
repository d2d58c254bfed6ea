# Entry point of a simulated board on the unix MicroPython port:
#   micropython sim_main.py <config.json>
# As main.py: the configuration first, alone, then the rest of the firmware.
import gc
import sys

import hardware_sim

import config
b = config.boot(hardware_sim, sys.argv[1] if len(sys.argv) > 1 else "config.json")
del config
sys.modules.pop("config")
gc.collect()     # its code and the configuration's text: gone before the rest loads
import app
app.main(b)
