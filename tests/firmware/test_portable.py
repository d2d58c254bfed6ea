"""Firmware and shared logic, tested on the real MicroPython interpreter and
on CPython with the same test modules (tests/portable/pt_*.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tabletimer.hub.fleet.simulator import micropython_binary, micropython_path

HERE = Path(__file__).parent.parent / "portable"
MODULES = sorted(p.stem for p in HERE.glob("pt_*.py"))


def parse(out: str) -> tuple[list[str], list[str]]:
    passed = [l[5:] for l in out.splitlines() if l.startswith("PASS ")]
    failed = [l for l in out.splitlines() if l.startswith("FAIL ")]
    assert any(l.startswith("DONE ") for l in out.splitlines()), out
    return passed, failed


@pytest.mark.parametrize("module", MODULES)
@pytest.mark.parametrize("interpreter", ["micropython", "cpython"])
def test_portable(module: str, interpreter: str, tmp_path: Path) -> None:
    if interpreter == "micropython":
        cmd = [micropython_binary(), str(HERE / "runner.py"), module, str(tmp_path)]
        env = dict(os.environ, MICROPYPATH=micropython_path() + ":" + str(HERE))
    else:
        cmd = [sys.executable, str(HERE / "runner.py"), module, str(tmp_path)]
        root = HERE.parent.parent
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            [str(root / "firmware"), str(root / "shared"), str(HERE)]))
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=60)
    passed, failed = parse(r.stdout)
    assert not failed, r.stdout + r.stderr
    assert passed, f"no tests ran in {module}"
    assert r.returncode == 0, r.stdout + r.stderr
