# Board configuration: one JSON file on the board's filesystem.

import json

import auth
import protocol

class ConfigError(ValueError):
    pass


def load(path):
    try:
        with open(path) as f:
            cfg = json.loads(f.read())
    except OSError:
        raise ConfigError("no configuration file at " + path)
    except ValueError:
        raise ConfigError(path + " is not valid JSON")
    return check(cfg, path)


def check(cfg, path="config"):
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
    if not isinstance(b, dict) or not isinstance(b.get("host"), str) or not b["host"]:
        raise ConfigError(path + ": 'broker' must be an object with a 'host'")
    port = b.get("port", 1883)
    if not isinstance(port, int) or not 0 < port < 65536:
        raise ConfigError(path + ": 'broker.port' must be 1..65535")
    buttons = cfg.get("buttons")
    if not isinstance(buttons, list) or not 1 <= len(buttons) <= 64:
        raise ConfigError(path + ": 'buttons' must list 1..64 pins, one per station")
    for p in buttons:
        if not isinstance(p, int) or p < 0:
            raise ConfigError(path + ": 'buttons' entries must be pin numbers")
    try:
        auth.parse_key(cfg.get("key"))
    except auth.AuthError as e:
        raise ConfigError("%s: 'key': %s" % (path, e))
    bz = cfg.get("buzzer")
    if bz is not None:
        if not isinstance(bz, dict) or not isinstance(bz.get("pin"), int):
            raise ConfigError(path + ": 'buzzer' must be an object with a 'pin'")
        if bz.get("kind", "passive") not in ("passive", "active"):
            raise ConfigError(path + ": 'buzzer.kind' must be 'passive' (PWM) or 'active'")
    if cfg.get("led") is not None and not isinstance(cfg["led"], int):
        raise ConfigError(path + ": 'led' must be a pin number or null")
    t = cfg.get("timings") or {}
    for k in t:
        if k not in ("debounce_ms", "confirm_ms", "void_ms"):
            raise ConfigError(path + ": unknown 'timings' key " + k
                              + " (known: debounce_ms, confirm_ms, void_ms)")
        if not isinstance(t[k], int) or t[k] <= 0:
            raise ConfigError(path + ": 'timings." + k + "' must be a positive number of ms")
    if t.get("confirm_ms", 2000) >= t.get("void_ms", 6000):
        raise ConfigError(path + ": 'timings.confirm_ms' must be shorter than 'timings.void_ms'")
    return cfg


async def fail(hardware, e, pattern):
    # No usable configuration: say so forever, serve nothing (here, not in
    # app.py: this module is unloaded once the configuration is good, and
    # with it this code's RAM).
    hw = hardware.Hardware.fallback()
    hw.log("configuration error: %s" % e)
    hw.emit({"config_error": str(e)})
    while True:
        await pattern(hw, "config_error")
