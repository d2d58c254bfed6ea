# Board configuration: one JSON file on the board's filesystem.

import json

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


def check(cfg, where="config"):
    if not isinstance(cfg, dict):
        raise ConfigError(where + ": must be a JSON object")
    try:
        protocol.check_board_id(cfg.get("board"))
    except protocol.ProtocolError as e:
        raise ConfigError(where + ": 'board': " + str(e))
    b = cfg.get("broker")
    if not isinstance(b, dict) or not isinstance(b.get("host"), str) or not b["host"]:
        raise ConfigError(where + ": 'broker' must be an object with a 'host'")
    port = b.get("port", 1883)
    if not isinstance(port, int) or not 0 < port < 65536:
        raise ConfigError(where + ": 'broker.port' must be 1..65535")
    buttons = cfg.get("buttons")
    if not isinstance(buttons, list) or not 1 <= len(buttons) <= 64:
        raise ConfigError(where + ": 'buttons' must list 1..64 pins, one per station")
    for p in buttons:
        if not isinstance(p, int) or p < 0:
            raise ConfigError(where + ": 'buttons' entries must be pin numbers")
    return cfg
