"""Settings over the air (issue 29, item 1; docs/protocol.md, "config";
docs/operations.md, "Changing a board's settings over the air"): what an
operator may change on a board (firmware/settings_update.py's KEYS), read from the
command line's KEY=VALUE, checked with the board's own code (settings_update.merge
and config.check, which run on CPython too) before anything is stored; the
secrets among them sealed in the log; a board's state of a request read
back from the log rows (its answers, a roll-back in its birth).

A request is an operator action `settings` (one row per board: {"board",
"set": {"part.key": value}, "trial": s}); the running hub sends it, signed
and numbered, when it applies the row (BoardCommands), and the board's
answers come back as board rows `config` (staged, refused, committed) or a
birth whose fault says "settings rolled back: ..."."""

from __future__ import annotations

import json
import secrets
import sys
from dataclasses import dataclass
from typing import Any, Iterable

from tabletimer import firmware_dir, repo_root

from ..protocol.hub_protocol import ROLLED_BACK
from ..event.log.rows import RowKind, kind_of

SECRET_KEYS = ("wifi.password", "broker.password")
INT_KEYS = ("broker.port", "broker.failover", "broker.keepalive", "buzzer.pin", "buzzer.volume", "led")
TRIAL_S = 120                 # the board's default (settings_update._LIMIT_S)
SEND_WITHIN_MS = 60_000       # a request row older than this when the hub applies it is not sent (a restart)
# a valid configuration the changes are checked against (the board checks
# them again against its own): a board's keys the hub does not know
_TEMPLATE = {"board": "T00", "key": "00" * 32, "wifi": {"ssid": "hall"}, "broker": {"host": "hub"},
             "buttons": [4], "buzzer": {"pin": 25}}


def firmware_module(name: str):
    """firmware/<name>.py, loaded on CPython under its own name (its imports
    -- config, journal, auth, protocol -- are the board's, from firmware/ and
    shared/)."""
    import importlib.util

    key = "tabletimer_fw_" + name
    if key in sys.modules:
        return sys.modules[key]
    saved = sys.path[:]
    sys.path[:0] = [str(firmware_dir()), str(repo_root() / "shared")]
    try:
        spec = importlib.util.spec_from_file_location(key, firmware_dir() / f"{name}.py")
        assert spec and spec.loader
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        sys.modules[key] = mod
        return mod
    finally:
        sys.path[:] = saved


def keys() -> tuple[str, ...]:
    return tuple(firmware_module("settings_update").KEYS)


def parse(pairs: Iterable[str]) -> dict[str, Any]:
    """KEY=VALUE (broker.host: a list, comma-separated; numbers for ports,
    pins and seconds; `null` to remove an optional one) -> the changes;
    ValueError in words for the desk."""
    known = keys()
    out: dict[str, Any] = {}
    for pair in pairs:
        k, eq, v = pair.partition("=")
        k = k.strip()
        if not eq or not k:
            raise ValueError(f"{pair!r}: give KEY=VALUE (keys: {', '.join(known)})")
        if k not in known:
            raise ValueError(f"{k!r} cannot be set over the air (these can: {', '.join(known)})")
        if v == "null":
            out[k] = None
        elif k in INT_KEYS:
            try:
                out[k] = int(v)
            except ValueError:
                raise ValueError(f"{k}={v}: a whole number") from None
        elif k == "broker.host":
            hosts = [h.strip() for h in v.split(",")]
            out[k] = hosts[0] if len(hosts) == 1 else hosts
        else:
            out[k] = v
    check(out)
    return out


def check(changes: dict) -> None:
    """ValueError (the board's own words) unless the changes make a valid
    configuration out of a valid one: firmware/settings_update.py's merge, then
    firmware/config.py's check with the ESP32's rules (the strictest)."""
    settings, config = firmware_module("settings_update"), firmware_module("config")
    try:
        config.check(settings.merge(_TEMPLATE, changes), "settings", "esp32")
    except ValueError as e:           # a ConfigError is one
        raise ValueError(str(e)) from None
    for k in SECRET_KEYS:
        if k in changes and changes[k] is not None and not isinstance(changes[k], str):
            raise ValueError(f"settings: '{k}' must be a string")


# ------------------------------------------------------------ secrets
# A password in the log is sealed with the board's key (its hub has it, and
# so has a standby with the keys file; a copy of the log alone does not
# open it): {"sealed": "<nonce hex>:<ciphertext hex>"}, AES-GCM (the
# cryptography package) under a key derived from the board's (HKDF-SHA256),
# the setting's name as associated data: a sealed value moved to another
# setting, or altered, does not open.

def _aead(key_hex: str):
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

    key = HKDF(algorithm=hashes.SHA256(), length=32, salt=None,
               info=b"tabletimer settings sealed in the log").derive(bytes.fromhex(key_hex))
    return AESGCM(key)


def seal(changes: dict, key_hex: str) -> dict:
    out = dict(changes)
    for k in SECRET_KEYS:
        if isinstance(out.get(k), str):
            nonce = secrets.token_bytes(12)
            ct = _aead(key_hex).encrypt(nonce, out[k].encode(), k.encode())
            out[k] = {"sealed": nonce.hex() + ":" + ct.hex()}
    return out


def unseal(changes: dict, key_hex: str) -> dict:
    """The changes with their secrets opened; ValueError if one is neither
    text nor sealed with this board's key for this setting."""
    from cryptography.exceptions import InvalidTag

    out = dict(changes)
    for k in SECRET_KEYS:
        v = out.get(k)
        if isinstance(v, dict):
            try:
                nonce, ct = (bytes.fromhex(x) for x in v["sealed"].split(":"))
                out[k] = _aead(key_hex).decrypt(nonce, ct, k.encode()).decode()
            except (KeyError, ValueError, AttributeError, InvalidTag, UnicodeDecodeError):
                raise ValueError(f"settings: '{k}' is neither text nor sealed with this board's key") from None
    return out


def shown(changes: dict) -> str:
    """The changes for people: secrets as <secret>."""
    return ", ".join(f"{k}={'<secret>' if k in SECRET_KEYS and v is not None else json.dumps(v)}"
                     for k, v in changes.items())


# ------------------------------------------------------------ the boards' answers
@dataclass
class BoardState:
    board: str
    request: int                # the request's log row
    state: str = "sent"         # sent, staged, refused, committed, rolled back
    why: str = ""

    @property
    def final(self) -> bool:
        return self.state in ("refused", "committed", "rolled back")

    def line(self) -> str:
        return f"{self.board}: {self.state}" + (f": {self.why}" if self.why else "")


def follow(states: dict[str, BoardState], rows: Iterable[dict]) -> None:
    """The boards' states of their requests, from the rows stored after
    them, in order: their answers (board rows `config` naming the request),
    and a roll-back said in a birth after it was staged."""
    for row in rows:
        s = states.get(row.get("board") or "")
        kind = kind_of(row)
        if s is None or not kind.from_board:
            continue
        p = row["payload"]
        if kind is RowKind.BOARD_CONFIG and p.get("id") == s.request:
            s.state, s.why = p["state"], p.get("why") or ""
        elif kind is RowKind.BOARD_STATUS and s.state in ("staged", "on trial") and p.get("state") == "online":
            fault = str(p.get("fault") or "")
            if fault.startswith(ROLLED_BACK):
                s.state, s.why = "rolled back", fault[len(ROLLED_BACK):].lstrip(": ")
            else:
                s.state = "on trial"         # booted on them, not committed yet


def round_on(comp, board: str, now_ms: int) -> str | None:
    """Why a board's settings may not change now (None: they may): a round
    started (or its start set) and not over, or a call of the board waiting
    for the referee.  A settings change restarts the board."""
    from ..event.fold.station_state import station_states
    from ..rules.timetext import fmt_clock

    start, end = comp.start_ms, comp.round_end_ms()
    if start is not None and end is not None and now_ms < end:
        return (f"the round {'runs' if now_ms >= start else 'is set to start at ' + fmt_clock(start)} "
                f"(until {fmt_clock(end)}): nothing was sent; change the settings after the round "
                "(when the results are in), or before the next one starts")
    called = [s.button for s in station_states(comp, now_ms, {board}) if s.state in ("running", "called")]
    if called:
        return (f"button{'s' if len(called) > 1 else ''} {', '.join(map(str, called))} still running or "
                "waiting for the referee: nothing was sent; settle the calls first")
    return None
