"""The type checker (mypy, pinned in pyproject's dev extras) on hub/ and
shared/ as the installed package sees them: tabletimer.hub, tabletimer.shared.

The repository's folders are installed under one package name
(pyproject's package-dir: hub/ is tabletimer.hub), which an editable
install maps with an import hook that mypy does not follow.  So the check
runs on a package tree of links made in a temporary folder
(tabletimer/{hub,shared,tools} -> the repository's folders), with
pyproject's [tool.mypy] settings:

    .venv/bin/python tools/testing/typecheck.py [mypy options]

Prints mypy's report (paths as the repository's: hub/..., shared/...) and
exits with its status (0: no error)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PARTS = ("hub", "shared", "tools")


def _package_tree(into: Path) -> Path:
    """tabletimer/ with the repository's parts in it (links; copies where
    a link cannot be made)."""
    pkg = into / "tabletimer"
    pkg.mkdir()
    shutil.copy(ROOT / "tabletimer" / "__init__.py", pkg / "__init__.py")
    for part in PARTS:
        try:
            (pkg / part).symlink_to(ROOT / part, target_is_directory=True)
        except OSError:                  # (Windows without the right to make links)
            shutil.copytree(ROOT / part, pkg / part, ignore=shutil.ignore_patterns("__pycache__"))
    return pkg


def run(args: list[str] | None = None) -> subprocess.CompletedProcess:
    """mypy on tabletimer.hub and tabletimer.shared; its output with the
    repository's paths."""
    with tempfile.TemporaryDirectory(prefix="tt-typecheck-") as tmp:
        _package_tree(Path(tmp))
        env = dict(os.environ, MYPYPATH=tmp)
        cmd = [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
               "--cache-dir", str(ROOT / ".mypy_cache"), "-p", "tabletimer.hub", "-p", "tabletimer.shared",
               *(args or [])]
        done = subprocess.run(cmd, cwd=tmp, env=env, capture_output=True, text=True)
    out = done.stdout.replace("tabletimer/hub/", "hub/").replace("tabletimer/shared/", "shared/") \
        .replace("tabletimer/tools/", "tools/")
    return subprocess.CompletedProcess(cmd, done.returncode, out, done.stderr)


def main() -> int:
    done = run(sys.argv[1:])
    sys.stdout.write(done.stdout)
    sys.stderr.write(done.stderr)
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
