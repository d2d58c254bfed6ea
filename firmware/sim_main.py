# Entry point of a simulated board on the unix MicroPython port:
#   micropython sim_main.py <config.json>
# As main.py: the configuration first, alone, then the rest of the firmware.
import gc
import os
import sys

import hardware_sim

import config
path = sys.argv[1] if len(sys.argv) > 1 else "config.json"
try:
    os.stat(path[:-5] + "-previous.json")    # update.names(): a settings trial
except OSError:
    b = config.boot(hardware_sim, path)
else:
    import update                             # loaded only for a trial
    b = update.boot(hardware_sim, path)

del config
sys.modules.pop("config")
gc.collect()     # its code and the configuration's text: gone before the rest loads
import app
app.main(b)
