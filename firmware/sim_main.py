# Entry point of a simulated board on the unix MicroPython port:
#   micropython sim_main.py <config.json>
# As main.py: the configuration first, alone, then the rest of the firmware.
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
                with open("fault") as f:     # what ended the last boot (an import that raised)
                    e += " (last: %s)" % f.read().strip().split("\n")[-1]
            except OSError:
                pass
            with open("fault", "w") as f:
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
    import hardware_sim

    import config
    path = sys.argv[1] if len(sys.argv) > 1 else "config.json"
    try:
        os.stat(path[:-5] + "-previous.json")    # boot_trial.names(): a settings trial
    except OSError:
        b = config.boot(hardware_sim, path)
    else:
        import update                             # loaded only for a trial (boot_trial.boot)
        b = update.boot(hardware_sim, path)

    del config
    sys.modules.pop("config")
    gc.collect()     # its code and the configuration's text: gone before the rest loads
    import app
except Exception as e:
    # before app.main runs (a new version that raises at import): recorded,
    # and a reset (exit status 3: SimBoard boots the board again, if it reboots)
    with open("fault", "w") as f:
        sys.print_exception(e, f)
    sys.print_exception(e)
    print('{"sim": "reset"}')
    sys.exit(3)
app.main(b)
