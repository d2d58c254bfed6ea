# Settings over the air, and the trial of a new configuration (docs/firmware.md,
# "Settings over the air"; docs/protocol.md, "config").  Loaded only when
# needed: when the hub's settings command comes (App.on_message), and at boot
# when the previous configuration is kept beside the configuration file (a
# trial: config.boot).  Nothing of it is in RAM otherwise, nor are its names
# (each one a qstr, tests/firmware/test_firmware_heap.py).  Runs on CPython
# too: the hub checks a change with merge() and config.check before it is
# stored (hub/fleet/board_settings.py).
#
# The files, beside the configuration file P ("/config.json"):
#   P                       the configuration the board boots
#   <P>-previous.json       the one before it, while the new one is on trial
#   <P>-trial.json          [boots tried, limit in s, the request's id]
# Staging (check()), each file written to a temporary name and renamed:
#   1. remove a stale trial file  2. the previous configuration kept
#   3. the new one as P  4. the trial file.  Then the board restarts.
# At boot (config.boot), a previous configuration kept:
#   - no trial file: power was lost while staging (P is the old or the new
#     one, whole): the previous one back, the reason said at the next birth;
#   - a trial file: a boot of the trial (after _BOOTS, the previous one
#     back); the new configuration checked and the hardware built, else the
#     previous one back at once.
# Committed (run()) once the board has taken a signed, numbered message of
# its hub this boot (the link and the hub proven): the previous one removed,
# then the trial file.  Not within the limit: the previous one back (one
# rename over P), then the reason in the fault file, and a restart.

import json
import os
import sys

from journal import write_atomic

try:
    from micropython import const
except ImportError:   # CPython (a tool reading KEYS)
    def const(v):
        return v

_HUB_CTR = const(0)   # App.hub_ctr's index of the highest hub counter taken (app.py)

# what the hub may set, as "part.key" (or "key") of the configuration
KEYS = ("wifi.ssid", "wifi.password", "broker.host", "broker.port", "broker.failover",
        "broker.keepalive", "broker.user", "broker.password", "buzzer.pin", "buzzer.kind",
        "buzzer.volume", "led")
# what is safe to apply at once, with no restart and no trial (it cannot cut
# the board off its hub): written, applied, answered "committed"
AT_ONCE = ("buzzer.volume",)
_BOOTS = 3            # boots of a trial before the previous configuration comes back
_LIMIT_S = 120        # a trial's time within a boot, unless the command says (10..3600 s)

_trial: list = []     # this boot's trial: [P, [boots, limit s, id]]; empty: none
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
    # (config.boot looks for the first: P's name ends in .json)
    return path[:-5] + "-previous.json", path[:-5] + "-trial.json"


def merge(cfg, changes):
    """A new configuration: cfg with the changes ({"part.key": value}) made
    (cfg itself unchanged); ValueError for a key the hub may not set."""
    if not isinstance(changes, dict) or not changes:
        raise ValueError("no settings to change")
    new = dict(cfg)
    for k in changes:
        if k not in KEYS:
            raise ValueError("'%s' cannot be set over the air (these can: %s)" % (k, ", ".join(KEYS)))
        p = k.split(".")
        if len(p) == 1:
            new[k] = changes[k]
        else:
            part = new.get(p[0])
            part = dict(part) if isinstance(part, dict) else {}
            part[p[1]] = changes[k]
            new[p[0]] = part
    return new


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
    sys.modules.pop("update", None)
    b = config.boot(hardware, path)           # the previous configuration
    why = ("settings rolled back: " + why)[:160]
    if b[2] is None:
        b[2] = why
        b[0].emit({"fault": why})
    return b


def busy(app):
    """Why nothing may change now (None: it may): a station runs, or a
    change (settings, a firmware) is on trial.  (fwupdate.busy asks this
    one while this module is loaded: it is, all through a trial's boot.)"""
    if app.running():
        return "a round runs on this board: after the round"
    if _trial:
        return "the previous settings are still on trial: again in a few seconds"
    if _fw:
        return "the new firmware is still on trial: again in a few seconds"


def check(app, msg):
    """The hub's settings command (signed and numbered: App.on_message):
    checked as the configuration file is at boot, then applied at once
    (AT_ONCE keys only: written, answered committed) or staged, answered,
    and the board restarts on it.  Refused (with the reason) while a station runs,
    or a trial waits for the hub."""
    hw = app.hw
    path = getattr(hw, "config", "/config.json")
    why = busy(app)
    now = False
    if why is None:
        import config
        try:
            with open(path) as f:
                cfg = json.load(f)
            new = merge(cfg, msg.get("set"))
            config.check(new, "settings", hw.kind)
            now = all(k in AT_ONCE for k in msg["set"])
            if now:                       # the old file or the new one, whole: both work
                write_atomic(path, new)
                hw.volume((new.get("buzzer") or {}).get("volume") or 100)
            else:
                p, t = names(path)
                try:
                    os.remove(t)
                except OSError:
                    pass
                write_atomic(p, cfg)          # from here a boot is a trial...
                write_atomic(path, new)
                lim = msg.get("trial") or _LIMIT_S
                write_atomic(t, [0, lim if type(lim) is int and 10 <= lim <= 3600 else _LIMIT_S,
                                 msg.get("id")])   # ...of the new one
        except (OSError, ValueError) as e:   # a ConfigError is a ValueError
            why = str(e)
        sys.modules.pop("config", None)
    import asyncio
    asyncio.create_task(answer(app, msg.get("id"), why, now))


async def answer(app, rid, why, applied=False):
    """The answer to a settings command: refused (why), committed (applied
    at once: AT_ONCE), or staged, and then a restart on it.  (A firmware
    update's: fwupdate.end, the same steps, so that an update loads
    fwupdate.py alone.)"""
    import asyncio
    import protocol
    m = {"v": protocol.VERSION, "type": "config", "id": rid,
         "state": "refused" if why else "committed" if applied else "staged"}
    if why:
        m["why"] = why[:160]
    for _ in range(10):
        if await app.send(app.topic + protocol.STATUS, m, qos=1):
            break
        await asyncio.sleep_ms(500)
    if not _trial and not _fw:        # (a trial boot's module stays: run() uses it)
        sys.modules.pop("update", None)
    if why or applied:
        return
    app.journal.forget(app.gone, 1 << 30)   # no station runs: the acknowledged entries go now
    app.hw.log("settings staged: restarting")
    await asyncio.sleep_ms(100)
    app.hw.reset()


async def run(app):
    """This boot's trial (new settings, or a new firmware: main.py):
    committed once the hub's signed, numbered message is taken
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
    sys.modules.pop("update", None)
