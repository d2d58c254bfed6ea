# The boot trial of a change, settings or a firmware (docs/firmware.md,
# "Settings over the air", "Firmware over the air"): a board that booted on
# something new commits it once it hears its hub, and goes back to what it
# had otherwise.  Loaded only for a trial's boot, through update.py (the
# entry scripts' door to this module: see there), and by a settings command
# for the files' names (settings_update.py); nothing of it is in RAM
# otherwise, nor are its names (each one a qstr,
# tests/firmware/test_firmware_heap.py).
#
# The settings' files, beside the configuration file P ("/config.json"):
#   P                       the configuration the board boots
#   <P>-previous.json       the one before it, while the new one is on trial
#   <P>-trial.json          [boots tried, limit in s, the request's id]
# Staged by settings_update.check (each file written to a temporary name
# and renamed): 1. remove a stale trial file  2. the previous configuration
# kept  3. the new one as P  4. the trial file.  Then the board restarts.
# At boot (boot(), which the entry scripts call instead of config.boot when
# the previous configuration is kept):
#   - no trial file: power was lost while staging (P is the old or the new
#     one, whole): the previous one back, the reason said at the next birth;
#   - a trial file: a boot of the trial (after _BOOTS, the previous one
#     back); the new configuration checked and the hardware built, else the
#     previous one back at once.
# A firmware's trial: the pointer fw/boot.json (firmware_update.py; the
# entry scripts count its boots and go back after 3 before any module of
# the new version loads).
# Committed (run()) once the board has taken a signed, numbered message of
# its hub this boot (the link and the hub proven): the previous
# configuration removed, then the trial file (or the pointer's trial set to
# null).  Not within the limit: the previous one back (one rename over P, or
# the pointer rewritten), then the reason in the fault file, and a restart.

import json
import os
import sys

from journal import write_atomic

try:
    from micropython import const
except ImportError:   # CPython
    def const(v):
        return v

_HUB_CTR = const(0)   # App.hub_ctr's index of the highest hub counter taken (hub_order.py)
_BOOTS = 3            # boots of a trial before the previous configuration comes back

_trial: list = []     # this boot's settings trial: [P, [boots, limit s, id]]; empty: none
# this boot's firmware trial: the pointer fw/boot.json (docs/firmware.md,
# "Firmware over the air") when it says one, [the new version's folder, the
# previous one's, [boots, limit s, the request's id, version]]; empty: none.
# Read as this module loads: the entry scripts import it at a trial's boot.
_fw: list = []
try:
    with open("fw/boot.json") as f:
        _fw[:] = json.load(f)
    if not _fw[2]:
        _fw.clear()
except (OSError, ValueError, TypeError, IndexError):
    _fw.clear()


def names(path):
    # (the entry scripts look for the first: P's name ends in .json)
    return path[:-5] + "-previous.json", path[:-5] + "-trial.json"


def back(path):
    """The previous configuration back (one rename over P), the trial file gone."""
    p, t = names(path)
    os.rename(p, path)
    try:
        os.remove(t)
    except OSError:
        pass


def boot(hardware, path):
    """config.boot() on a boot that finds the previous configuration kept."""
    import config
    p, t = names(path)
    why = None
    try:
        with open(t) as f:
            n = json.load(f)
        n[0] += 1
    except (OSError, ValueError, TypeError, IndexError):
        n = None
        why = "power lost while they were written"
    if n is not None and n[0] > _BOOTS:
        why = "%d boots without hearing the hub" % _BOOTS
    elif n is not None:
        write_atomic(t, n)
        try:
            cfg = config.load(path, hardware.Hardware.kind)
            hw = hardware.Hardware(cfg)
        except Exception as e:       # a ConfigError, a pin the chip refuses
            why = str(e)
    if why is None:
        _trial[:] = [path, n]
        hw.config = path
        hw.log("settings on trial (boot %d of %d, %d s)" % (n[0], _BOOTS, n[1]))
        return [hw, cfg, config.fault(hw)]
    back(path)
    sys.modules.pop("boot_trial", None)       # out of RAM, and the entry scripts' door to it
    sys.modules.pop("update", None)
    b = config.boot(hardware, path)           # the previous configuration
    why = ("settings rolled back: " + why)[:160]
    if b[2] is None:
        b[2] = why
        b[0].emit({"fault": why})
    return b


def busy(app):
    """Why nothing may change now (None: it may): a station runs, or a
    change (settings, a firmware) is on trial.  (settings_update.busy and
    firmware_update.busy ask this one while this module is loaded: it is,
    all through a trial's boot.)"""
    if app.running():
        return "a round runs on this board: after the round"
    if _trial:
        return "the previous settings are still on trial: again in a few seconds"
    if _fw:
        return "the new firmware is still on trial: again in a few seconds"


async def run(app):
    """This boot's trial (new settings, or a new firmware: the entry
    scripts): committed once the hub's signed, numbered message is taken
    (App.on_message: hub_ctr[_HUB_CTR] set), else back to the previous
    configuration (or version) within the limit, and a restart."""
    import asyncio
    import protocol
    hw = app.hw
    if _trial:
        path, n = _trial
        what = "settings"
    else:
        n = _fw[2]
        what = "firmware " + n[3]
    while not app.hub_ctr[_HUB_CTR]:
        if app.clock.now() > n[1] * 1000:
            if not hw.network_ok():
                why = "WiFi not joined"
            elif not app.mqtt.connected:
                why = "no broker answered"
            else:
                why = "no word from the hub"
            why = "%s rolled back: %s within %d s (boot %d)" % (what, why, n[1], n[0])
            if _trial:
                back(path)
            else:
                write_atomic("fw/boot.json", [_fw[1], _fw[0], None])
            with open(hw.root + "/fault", "w") as f:
                f.write(why)
            hw.log(why)
            hw.reset()
        await asyncio.sleep_ms(500)
    if _trial:
        p, t = names(path)
        os.remove(p)
        try:
            os.remove(t)
        except OSError:
            pass
        m = {"v": protocol.VERSION, "type": "config", "id": n[2], "state": "committed"}
    else:
        write_atomic("fw/boot.json", [_fw[0], _fw[1], None])
        m = {"v": protocol.VERSION, "type": "fw", "id": n[2], "state": "committed", "fw": n[3]}
    _trial.clear()
    _fw.clear()
    hw.log(what + " committed")
    while not await app.send(app.topic + protocol.STATUS, m, qos=1):
        await asyncio.sleep_ms(1000)
    sys.modules.pop("boot_trial", None)       # out of RAM, and the entry scripts' door to it
    sys.modules.pop("update", None)
