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

from tabletimer.hub.boards.private_file import write_private

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


def deploy_commands(device: str, files: list[Path], config: Path) -> list[str]:
    """One chained mpremote invocation: copy every file, the config as
    /config.json, make /data (journal, boot counter), then reset."""
    cmd = [mpremote(), "connect", device]
    for f in files:
        cmd += ["fs", "cp", str(f), ":" + f.name, "+"]
    cmd += ["fs", "cp", str(config), ":config.json", "+",
            "exec", "import os\ntry:\n os.mkdir('/data')\nexcept OSError:\n pass", "+", "reset"]
    return cmd


def deploy(device: str, cfg: dict, dry_run: bool = False) -> list[str]:
    with tempfile.TemporaryDirectory() as tmp:
        files = firmware_build.build(Path(tmp) / "board")
        conf = Path(tmp) / "config.json"
        write_private(conf, json.dumps(cfg))      # the board's key and WiFi password
        cmd = deploy_commands(device, files, conf)
        if not dry_run:
            subprocess.run(cmd, check=True)
    return cmd
