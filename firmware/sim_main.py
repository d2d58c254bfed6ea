# Entry point of a simulated board on the unix MicroPython port:
#   micropython sim_main.py <config.json>
import sys

import app
import hardware_sim

app.main(hardware_sim, sys.argv[1] if len(sys.argv) > 1 else "config.json")
