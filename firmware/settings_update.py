# Settings over the air: the hub's settings command checked, applied at once
# or staged for a boot trial (docs/firmware.md, "Settings over the air";
# docs/protocol.md, "config").  Loaded only when the command comes
# (App.on_message), unloaded when it is answered: nothing of it is in RAM
# otherwise, nor are its names (each one a qstr,
# tests/firmware/test_firmware_heap.py).  The trial of staged settings, at
# the boots after: boot_trial.py.  Runs on CPython too: the hub checks a
# change with merge() and config.check before it is stored
# (hub/fleet/board_settings.py).

import json
import os
import sys

from journal import write_atomic

# what the hub may set, as "part.key" (or "key") of the configuration
KEYS = ("wifi.ssid", "wifi.password", "broker.host", "broker.port", "broker.failover",
        "broker.keepalive", "broker.user", "broker.password", "buzzer.pin", "buzzer.kind",
        "buzzer.volume", "led")
# what is safe to apply at once, with no restart and no trial (it cannot cut
# the board off its hub): written, applied, answered "committed"
AT_ONCE = ("buzzer.volume",)
_LIMIT_S = 120        # a trial's time within a boot, unless the command says (10..3600 s)


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


def busy(app):
    # why nothing may change now (None: it may): a trial (settings or a
    # firmware) is on only while boot_trial.py is loaded (through the entry
    # scripts' door, update.py; unloaded once committed): its busy() then;
    # else only a round running on a station
    u = sys.modules.get("boot_trial")
    if u:
        return u.busy(app)
    if app.running():
        return "a round runs on this board: after the round"


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
                # the trial's files (boot_trial.py: no trial is on, so it
                # is loaded here for their names only, and unloaded below)
                import boot_trial
                p, t = boot_trial.names(path)
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
        sys.modules.pop("boot_trial", None)
    import asyncio
    asyncio.create_task(answer(app, msg.get("id"), why, now))


async def answer(app, rid, why, applied=False):
    """The answer to a settings command: refused (why), committed (applied
    at once: AT_ONCE), or staged, and then a restart on it.  (A firmware
    update's: firmware_update.end, the same steps, so that an update loads
    firmware_update.py alone.)"""
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
    sys.modules.pop("settings_update", None)
    if why or applied:
        return
    app.journal.forget(app.gone, 1 << 30)   # no station runs: the acknowledged entries go now
    app.hw.log("settings staged: restarting")
    await asyncio.sleep_ms(100)
    app.hw.reset()
