# Board configuration: one JSON file on the board's filesystem, checked
# whole -- every key the hardware layer reads too -- before anything is built
# from it.

import binascii
import json

import auth
import protocol

class ConfigError(ValueError):
    pass


def pin(value, path, name, kind, mode):
    # A GPIO number (not a bool: type() is int); on the ESP32 (kind: a
    # hardware layer's but the simulator's) one the chip has (0..39), not one
    # of its flash chip's (6..11), and for an output (mode) not an input-only
    # one (34..39).  (Parameter names are RAM on the board: existing ones.)
    if type(value) is not int or value < 0 or kind not in (None, "sim") and (
            value > 39 or 6 <= value <= 11 or mode and value >= 34):
        raise ConfigError("%s: '%s': %r is not %s of this board" % (
            path, name, value, "an output pin" if mode else "an input pin"))


def load(path, kind=None):
    try:
        with open(path) as f:
            cfg = json.load(f)          # from the stream: no copy of the text in RAM
    except OSError:
        raise ConfigError("no configuration file at " + path)
    except ValueError:
        raise ConfigError(path + " is not valid JSON")
    return check(cfg, path, kind)


def check(cfg, path="config", kind=None):
    """cfg if it is a valid configuration, ConfigError otherwise; kind: the
    hardware layer's (Hardware.kind), whose own keys are checked too: the
    ESP32's 'wifi', the simulator's 'sim'."""
    if not isinstance(cfg, dict):
        raise ConfigError(path + ": must be a JSON object")
    try:
        protocol.check_board_id(cfg.get("board"))
    except protocol.ProtocolError as e:
        raise ConfigError(path + ": 'board': " + str(e))
    i = cfg.get("install")          # made by `tabletimer board flash`; none: no install id
    if i is not None:
        ok = isinstance(i, str) and 0 < len(i) <= 16
        for c in i.encode() if ok else b"":
            ok = ok and c in b"0123456789abcdef"
        if not ok:
            raise ConfigError(path + ": 'install' must be 1..16 lowercase hex digits")
    b = cfg.get("broker")
    if not isinstance(b, dict):
        b = {}
    h = b.get("host")
    ok = isinstance(h, list) and 0 < len(h) <= 4 or isinstance(h, str)
    for a in (h if isinstance(h, list) else [h]) if ok else ():
        ok = ok and isinstance(a, str) and a != ""
    if not ok:
        raise ConfigError(path + ": 'broker' must be an object with a 'host' (or a list of 1..4: the hub, "
                          "its standby)")
    if type(b.get("failover", 30)) is not int or not 5 <= b.get("failover", 30) <= 3600:
        raise ConfigError(path + ": 'broker.failover' must be 5..3600 s")
    port = b.get("port", 1883)
    if type(port) is not int or not 0 < port < 65536:
        raise ConfigError(path + ": 'broker.port' must be 1..65535")
    if type(b.get("keepalive", 30)) is not int or not 5 <= b.get("keepalive", 30) <= 600:
        raise ConfigError(path + ": 'broker.keepalive' must be 5..600 s")
    for k in ("user", "password"):
        if b.get(k) is not None and not isinstance(b[k], str):
            raise ConfigError("%s: 'broker.%s' must be a string or null" % (path, k))
    ca = b.get("ca")            # TLS: the CA certificate, DER in base64 (board flash --broker-ca)
    ok = ca is None or isinstance(ca, str) and 0 < len(ca) <= 4096
    if ok and ca is not None:
        try:
            binascii.a2b_base64(ca)
        except ValueError:
            ok = False
    if not ok:
        raise ConfigError(path + ": 'broker.ca' must be a CA certificate in base64 (at most 4 KB) or null")
    buttons = cfg.get("buttons")
    if not isinstance(buttons, list) or not 1 <= len(buttons) <= 64:
        raise ConfigError(path + ": 'buttons' must list 1..64 pins, one per station")
    for p in buttons:
        pin(p, path, "buttons", kind, False)
        if buttons.count(p) > 1:
            raise ConfigError(path + ": 'buttons': pin %d listed twice" % p)
    try:
        auth.parse_key(cfg.get("key"))
    except auth.AuthError as e:
        raise ConfigError("%s: 'key': %s" % (path, e))
    bz = cfg.get("buzzer")
    if bz is not None:
        if not isinstance(bz, dict):
            raise ConfigError(path + ": 'buzzer' must be an object with a 'pin'")
        pin(bz.get("pin"), path, "buzzer", kind, True)
        if bz.get("kind", "passive") not in ("passive", "active"):
            raise ConfigError(path + ": 'buzzer.kind' must be 'passive' (PWM) or 'active'")
        v = bz.get("volume")
        if v is not None:
            if type(v) is not int or not 1 <= v <= 100:
                raise ConfigError(path + ": 'buzzer.volume' must be a whole number 1..100 (percent)")
            if bz.get("kind", "passive") != "passive":
                raise ConfigError(path + ": 'buzzer.volume' needs a passive (PWM) buzzer: an active "
                                  "one has a single loudness")
    if cfg.get("led") is not None:
        pin(cfg["led"], path, "led", kind, True)
    t = cfg.get("timings") or {}
    if not isinstance(t, dict):
        raise ConfigError(path + ": 'timings' must be an object")
    for k in t:
        if k not in ("debounce_ms", "confirm_ms", "void_ms", "quiet_ms", "watchdog_ms"):
            raise ConfigError(path + ": unknown 'timings' key " + k
                              + " (known: debounce_ms, confirm_ms, void_ms, quiet_ms, watchdog_ms)")
        if type(t[k]) is not int or t[k] <= 0:
            raise ConfigError(path + ": 'timings." + k + "' must be a positive number of ms")
    if t.get("confirm_ms", 2000) >= t.get("void_ms", 6000):
        raise ConfigError(path + ": 'timings.confirm_ms' must be shorter than 'timings.void_ms'")
    if kind == "sim":
        s = cfg.get("sim") or {}
        if not isinstance(s, dict):
            raise ConfigError(path + ": 'sim' must be an object")
        for k in s:
            # access_point: the hall's WiFi the simulator models (hardware_sim.py)
            if (k not in ("root", "clock_offset_ms", "drift_ppm", "flash_write_ms", "flash_erase_ms",
                          "flash_erase_every", "gc_collect_ms", "access_point")
                    or type(s[k]) is not (str if k == "root" else dict if k == "access_point" else int)):
                raise ConfigError("%s: 'sim.%s': not a known key, or not %s" % (
                    path, k, "a folder name" if k == "root" else "a whole number"))
    w = cfg.get("wifi")
    if w is not None or kind not in (None, "sim"):      # a board needs WiFi (the simulator: if it says)
        if not isinstance(w, dict) or not isinstance(w.get("ssid"), str) or not w["ssid"]:
            raise ConfigError(path + ": 'wifi' must be an object with an 'ssid'")
        if not isinstance(w.get("password", ""), str):
            raise ConfigError(path + ": 'wifi.password' must be a string")
    return cfg


def boot(hardware, path):
    """The hardware layer (of the module `hardware`) built from the
    configuration at path, the configuration, and what ended the last boot
    (a fatal error's last traceback lines, "watchdog reset", or None).  Without a usable configuration -- a ConfigError, or a pin
    the chip refuses -- the board plays the configuration error forever and
    does nothing else.  Runs before the rest of the firmware is loaded: this
    module is unloaded after it (the entry scripts).  With the previous
    configuration kept beside it, the entry scripts call update.boot
    instead: a boot of a settings trial (boot_trial.boot, loaded only then;
    it imports this module, not this module it)."""
    try:
        cfg = load(path, hardware.Hardware.kind)
        hw = hardware.Hardware(cfg)
    except Exception as e:
        import asyncio
        import signals

        hw = hardware.Hardware.fallback()
        hw.log("configuration error: %s" % e)
        hw.emit({"config_error": str(e)})

        async def play():
            while True:
                for freq, ms in signals.steps("config_error"):
                    hw.buzzer(freq)
                    hw.led(freq > 0)
                    await asyncio.sleep_ms(ms)
        asyncio.run(play())
    hw.config = path            # where a settings change goes (settings_update.py)
    return [hw, cfg, fault(hw)]


def fault(hw):
    """What ended the last boot, once: the chip's reset cause (a watchdog
    reset: hardware_esp32 reads it), else the fault file main() wrote (its
    traceback's last line and where it was raised; on the simulator SimBoard
    writes its watchdog's reset cause there, as the chip keeps it)."""
    import os
    r = getattr(hw, "fault", None)
    try:
        with open(hw.root + "/fault") as f:
            lines = f.read().strip().split("\n")
        os.remove(hw.root + "/fault")
        # (%.0s, an empty third: the format over 10 characters is no qstr)
        r = ("%s (%s)%.0s" % (lines[-1], lines[-2].strip(), "") if len(lines) > 1 else lines[-1])[:160]
    except OSError:
        pass
    if r:
        hw.emit({"fault": r})
    return r
