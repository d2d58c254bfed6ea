"""The USB side of `tabletimer boards provision`: which serial ports have a
board on them (pyserial's list, the one `mpremote connect list` prints),
what a board's /config.json says (mpremote), and the MicroPython image
written with esptool.  Each a small function the provisioning loop calls
(hub/cli/provision.py); every failure a UsbError saying what failed."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from .deploy import mpremote

READ_TIMEOUT_S = 30          # mpremote gives up entering the raw REPL after 10 s itself
IMAGE_TIMEOUT_S = 300        # erase (~10 s) or write (~40 s at 115200 baud) of a 4 MB flash


class UsbError(RuntimeError):
    """What failed on the board's port, as the volunteer reads it."""


@dataclass(frozen=True, order=True)
class Port:
    device: str                    # /dev/ttyUSB0, COM3
    serial: str | None = None      # the USB-serial chip's serial number, if it has one


def list_ports() -> list[Port]:
    """The USB serial ports present now: those with a USB vendor and product
    id, as `mpremote connect auto` takes (not the machine's own ttyS*)."""
    from serial.tools import list_ports as lp

    return sorted(Port(p.device, p.serial_number) for p in lp.comports()
                  if p.vid is not None and p.pid is not None)


def run(cmd: list[str], what: str, timeout: float) -> str:
    """Run cmd with its output captured; its output, or UsbError naming
    what failed and the output's last line."""
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise UsbError(f"{what}: no answer within {timeout:.0f} s") from None
    except OSError as e:
        raise UsbError(f"{what}: cannot run {cmd[0]} ({e.strerror or e})") from None
    if r.returncode != 0:
        lines = [ln.strip() for ln in (r.stderr + "\n" + r.stdout).splitlines() if ln.strip()]
        raise UsbError(f"{what} failed (exit {r.returncode})" + (f": {lines[-1]}" if lines else ""))
    return r.stdout


def read_config_command(device: str) -> list[str]:
    return [mpremote(), "connect", device, "fs", "cat", ":config.json"]


def read_config(device: str) -> dict | None:
    """The board's /config.json (its secrets stay in this process: never
    printed), or None when MicroPython answered and there is none (or it is
    not a JSON object); UsbError when mpremote could not talk to it."""
    try:
        out = run(read_config_command(device), "mpremote (reading /config.json)", READ_TIMEOUT_S)
    except UsbError as e:
        if "ENOENT" in str(e) or "No such file" in str(e):
            return None
        raise
    try:
        cfg = json.loads(out)
    except ValueError:
        return None
    return cfg if isinstance(cfg, dict) else None


ESPTOOL_MISSING = ("esptool is not installed. It writes the MicroPython image and is needed only "
                   "with --image (boards that already run MicroPython need no --image). Install it "
                   "while online: .venv/bin/pip install esptool")


def esptool() -> list[str] | None:
    """How to run esptool: this Python's module, else an esptool or
    esptool.py on PATH; None if there is none."""
    if importlib.util.find_spec("esptool") is not None:
        return [sys.executable, "-m", "esptool"]
    for name in ("esptool", "esptool.py"):
        cand = Path(sys.executable).parent / name
        found = str(cand) if cand.exists() else shutil.which(name)
        if found:
            return [found]
    return None


def image_commands(tool: list[str], device: str, image: Path) -> list[list[str]]:
    """Erase the flash, then write the MicroPython image at 0x1000 (the
    classic ESP32's offset: docs/hardware.md)."""
    base = [*tool, "--chip", "esp32", "--port", device]
    return [base + ["erase_flash"], base + ["write_flash", "0x1000", str(image)]]


MIN_IMAGE_BYTES = 256 * 1024        # MicroPython's ESP32_GENERIC images are about 1.7 MB


def image_problem(image: Path) -> str | None:
    """What is wrong with the image file, or None: it must be there, begin
    as an ESP32 image does (the byte 0xE9) and not be cut short."""
    try:
        with open(image, "rb") as f:
            head = f.read(1)
            size = f.seek(0, 2)
    except OSError as e:
        return f"--image {image}: {e.strerror or e}"
    if head == b"\xe9" and size < MIN_IMAGE_BYTES:
        return (f"--image {image}: {size} bytes, too small for a MicroPython image (about 1.7 MB): "
                f"was its download cut short? Download it again")
    if head != b"\xe9":
        return (f"--image {image}: not an ESP32 image (it does not begin with 0xE9): give the .bin of "
                f"the ESP32_GENERIC port from micropython.org/download/ESP32_GENERIC/")
    return None


def write_image(tool: list[str], device: str, image: Path) -> None:
    erase, write = image_commands(tool, device, image)
    run(erase, "esptool erase_flash", IMAGE_TIMEOUT_S)
    run(write, "esptool write_flash", IMAGE_TIMEOUT_S)
