# Entry point on the ESP32 (run by MicroPython after boot.py).  The
# configuration is checked first, alone (config.py is unloaded before the rest
# of the firmware is loaded: the two never share the heap).
import gc
import json
import os
import sys

try:
    # -- the version booted (docs/firmware.md, "Firmware over the air"); the
    # same block in main.py and sim_main.py (test_firmware_update_boot.py).
    # fw/boot.json: [the version's folder ("": the first flash's files),
    # the previous one's, null or a trial: [boots, limit s, request, version]]
    try:
        with open("fw/boot.json") as f:
            v = json.load(f)
    except (OSError, ValueError):
        v = None                          # never updated: the first flash's files
    if v and v[2]:                        # a trial's boot: counted before anything of it loads
        v[2][0] += 1
        if v[2][0] > 3:                   # boot_trial._BOOTS boots: the previous version again
            e = "firmware %s rolled back: 3 boots without hearing the hub" % v[2][3]
            try:
                with open("/data/fault") as f:     # what ended the last boot (an import that raised)
                    e += " (last: %s)" % f.read().strip().split("\n")[-1]
            except OSError:
                pass
            with open("/data/fault", "w") as f:
                f.write(e[:160])
            v = [v[1], v[0], None]
        with open("fw/boot.json.tmp", "w") as f:
            json.dump(v, f)
        os.rename("fw/boot.json.tmp", "fw/boot.json")
    if v and v[0]:
        sys.path.insert(0, v[0])
    if v and v[2]:
        import update                     # the new version's door to its boot_trial.py: it commits it, or goes back (run)
    del v
    # -- end of the version booted
    import hardware_esp32

    import config
    path = "/config.json"
    try:
        os.stat(path[:-5] + "-previous.json")    # boot_trial.names(): a settings trial
    except OSError:
        b = config.boot(hardware_esp32, path)   # a bad one: the configuration error, forever
    else:
        import update                             # loaded only for a trial (boot_trial.boot)
        b = update.boot(hardware_esp32, path)
    del config
    sys.modules.pop("config")
    gc.collect()     # its code and the configuration's text: gone before the rest loads
    import app
except Exception as e:
    # before app.main runs (a new version that raises at import): recorded,
    # and a reset; the next boot is counted, and goes back beyond the limit
    import machine
    with open("/data/fault", "w") as f:
        sys.print_exception(e, f)
    machine.reset()
try:
    app.main(b)
except KeyboardInterrupt:
    # Ctrl-C on the serial console (a developer, or mpremote copying files):
    # the REPL takes over.  The watchdog, once started, cannot be stopped, so
    # a timer feeds it from now on (reset the board to run the program again).
    import machine
    _wdt = machine.WDT(timeout=8000)
    machine.Timer(0).init(period=2000, callback=lambda t: _wdt.feed())
