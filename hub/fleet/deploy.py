"""Put the firmware and a generated configuration on an ESP32 that already
runs MicroPython, with mpremote over USB serial.

The configuration is the template (firmware/config.example.json, or your own
copy) with the options given on the command line applied, the board's
secret key: generated on first flash and stored in the hub's board keys
file, so the hub can verify the board's messages, and a new install id:
random, made at every flash, part of the identity of every event the board
makes (docs/protocol.md, "Board identity") -- a spare flashed with a dead
board's id (and so its key) is still another board to the hub.
"""

from __future__ import annotations

import json
import secrets
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from tabletimer.hub.event.folder.private_file import write_private

from . import firmware_build


class DeployError(ValueError):
    pass


def mpremote() -> str:
    cand = Path(sys.executable).parent / "mpremote"
    return str(cand) if cand.exists() else (shutil.which("mpremote") or "mpremote")


def _firmware_config_module():
    """firmware/config.py (pure, runs on CPython too), loaded under its own
    name so the hub's modules are not shadowed."""
    import importlib.util

    fw, shared = firmware_build.firmware_dir(), firmware_build.repo_root() / "shared"
    saved = sys.path[:]
    sys.path[:0] = [str(fw), str(shared)]
    try:
        spec = importlib.util.spec_from_file_location("tabletimer_fw_config", fw / "config.py")
        assert spec and spec.loader
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod
    finally:
        sys.path[:] = saved


def new_install() -> str:
    """A random install id: 6 lowercase hex digits.  It only has to tell
    apart the flashes of one board id within an event (a dead board and its
    spare collide once in 16.7 million); every byte of it is in every board
    message, on the board's tight heap (tests/firmware/test_firmware_heap.py)."""
    return secrets.token_hex(3)


def make_config(template: Path, key: str, board: str | None = None, wifi_ssid: str | None = None,
                wifi_password: str | None = None, broker_host: str | list[str] | None = None,
                broker_port: int | None = None, buttons: list[int] | None = None,
                buzzer_pin: int | None = None, buzzer_kind: str | None = None,
                led: int | None = None, install: str | None = None,
                broker_ca: str | None = None, failover: int | None = None) -> dict:
    """The template with the given fields replaced and an install id (a new
    random one unless given), validated by the firmware's own checker
    (DeployError names the problem)."""
    try:
        cfg = json.loads(template.read_text())
    except (OSError, ValueError) as e:
        raise DeployError(f"{template}: {e}") from e
    if board is not None:
        cfg["board"] = board
    cfg["key"] = key
    cfg["install"] = install if install is not None else new_install()
    if wifi_ssid is not None:
        cfg.setdefault("wifi", {})["ssid"] = wifi_ssid
    if wifi_password is not None:
        cfg.setdefault("wifi", {})["password"] = wifi_password
    if broker_host is not None:
        cfg.setdefault("broker", {})["host"] = broker_host
    if broker_port is not None:
        cfg.setdefault("broker", {})["port"] = broker_port
    if failover is not None:                 # s without its broker before the next host (the standby's)
        cfg.setdefault("broker", {})["failover"] = failover
    if broker_ca is not None:                # TLS: the CA the broker's certificate must be signed by
        cfg.setdefault("broker", {})["ca"] = broker_ca
    if buttons is not None:
        cfg["buttons"] = buttons
    if buzzer_pin is not None:
        cfg.setdefault("buzzer", {})["pin"] = buzzer_pin
    if buzzer_kind is not None:
        cfg.setdefault("buzzer", {})["kind"] = buzzer_kind
    if led is not None:
        cfg["led"] = led
    fw_config = _firmware_config_module()
    try:
        fw_config.check(cfg, str(template))
    except fw_config.ConfigError as e:
        raise DeployError(str(e)) from e
    if "wifi" not in cfg or not cfg["wifi"].get("ssid"):
        raise DeployError("the board needs WiFi: give --wifi-ssid (and --wifi-password)")
    return cfg


def deploy_commands(device: str, files: list[Path], config: Path, then: list[str] | None = None) -> list[str]:
    """One chained mpremote invocation: copy every file, the config as
    /config.json, make /data (journal, boot counter), run `then` (mpremote
    commands, each ending with "+"), then reset."""
    cmd = [mpremote(), "connect", device]
    for f in files:
        cmd += ["fs", "cp", str(f), ":" + f.name, "+"]
    cmd += ["fs", "cp", str(config), ":config.json", "+",
            "exec", "import os\ntry:\n os.mkdir('/data')\nexcept OSError:\n pass", "+", *(then or []), "reset"]
    return cmd


# The board plays its identify pattern (firmware/signals.py, what the hub's
# identify and `check-hall --buzz` play) on the buzzer and LED of the
# configuration just written: the board's own signals module, so a firmware
# that does not import on this MicroPython fails here, not at the table.
PLAY_IDENTIFY = """import json, time, machine, signals
c = json.load(open('/config.json'))
z = c.get('buzzer') or {}
L = machine.Pin(c['led'], machine.Pin.OUT) if c.get('led') is not None else None
P = machine.Pin(z['pin'], machine.Pin.OUT, value=0) if 'pin' in z else None
W = machine.PWM(P, freq=2000, duty_u16=0) if P and z.get('kind', 'passive') == 'passive' else None
for f, ms in signals.steps('identify'):
    if W:
        if f:
            W.freq(f)
        W.duty_u16(32768 if f else 0)
    elif P:
        P.value(1 if f else 0)
    if L:
        L.value(1 if f else 0)
    time.sleep_ms(ms)
"""


def deploy(device: str, cfg: dict, dry_run: bool = False, files: list[Path] | None = None,
           then: list[str] | None = None, run=None) -> list[str]:
    """Copy the firmware (files: built already, else built now) and cfg to
    the board on device with run(cmd) (default: subprocess.run, its output
    on the terminal; CalledProcessError if mpremote fails)."""
    with tempfile.TemporaryDirectory() as tmp:
        files = files if files is not None else firmware_build.build(Path(tmp) / "board")
        conf = Path(tmp) / "config.json"
        write_private(conf, json.dumps(cfg))      # the board's key and WiFi password
        cmd = deploy_commands(device, files, conf, then)
        if not dry_run:
            (run or (lambda c: subprocess.run(c, check=True)))(cmd)
    return cmd
