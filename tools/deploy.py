"""Put the firmware and a board's configuration on an ESP32 that already
runs MicroPython, with mpremote over USB serial."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from . import firmware_build


def mpremote() -> str:
    cand = Path(sys.executable).parent / "mpremote"
    return str(cand) if cand.exists() else (shutil.which("mpremote") or "mpremote")


def check_config(config: Path) -> dict:
    """Validate a board configuration with the firmware's own checker."""
    sys.path.insert(0, str(firmware_build.firmware_dir()))
    sys.path.insert(0, str(firmware_build.repo_root() / "shared"))
    try:
        import config as fw_config   # firmware/config.py, runs on CPython too
        return fw_config.load(str(config))
    finally:
        del sys.path[:2]


def deploy_commands(device: str, files: list[Path], config: Path) -> list[str]:
    """One chained mpremote invocation: copy every file, the config as
    /config.json, make /data (journal, boot counter), then reset."""
    cmd = [mpremote(), "connect", device]
    for f in files:
        cmd += ["fs", "cp", str(f), ":" + f.name, "+"]
    cmd += ["fs", "cp", str(config), ":config.json", "+",
            "exec", "import os\ntry:\n os.mkdir('/data')\nexcept OSError:\n pass", "+", "reset"]
    return cmd


def deploy(device: str, config: Path, dry_run: bool = False) -> list[str]:
    check_config(config)
    with tempfile.TemporaryDirectory() as tmp:
        files = firmware_build.build(Path(tmp))
        cmd = deploy_commands(device, files, config)
        if not dry_run:
            subprocess.run(cmd, check=True)
    return cmd


if __name__ == "__main__":
    import argparse

    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("device", help="serial port, e.g. /dev/ttyUSB0 (mpremote's 'connect' argument)")
    p.add_argument("config", type=Path, help="the board's JSON configuration")
    p.add_argument("--dry-run", action="store_true", help="print the mpremote command only")
    a = p.parse_args()
    print(json.dumps(deploy(a.device, a.config, a.dry_run)))
