"""Check the files that go on a board before flashing: they compile with
MicroPython's own compiler, and the code that runs on the ESP32 type-checks
against the MicroPython ESP32 stubs.  Offline, a few seconds.

    tabletimer board check [-v]          (or: python -m tabletimer.hub.fleet.board_check)

1. Compile: every file of ``firmware_build.board_sources(include_host_only=True)``
   goes through mpy-cross (``firmware_build.compile_file``, -march=xtensawin).
   This catches syntax MicroPython lacks even where CPython accepts it (a
   ``match`` statement, for one).

2. Type check: the files that run on the ESP32 (``board_sources()``: firmware/*.py
   without the simulator's hardware_sim.py and sim_main.py, plus
   shared/protocol.py and shared/clocksync.py) are copied side by side into one
   folder, as they sit on the board, so ``import protocol`` resolves as it does
   there.  mypy checks them against the stubs, not against CPython:

   - A custom typeshed is assembled in a temporary folder and passed as
     ``custom_typeshed_dir``: micropython-stdlib-stubs' ``stdlib/`` (typeshed
     layout: a MicroPython-trimmed builtins/os/json/sys/... and asyncio with
     ThreadSafeFlag, sleep_ms, wait_for_ms) plus every module of
     micropython-esp32-stubs (machine, network, time with the opaque
     ``ticks_ms()`` type, socket, gc, esp32, ...) and their ``_mpy_shed``
     helpers, with VERSIONS extended for the added modules.  Simply putting the
     stub packages on the path does not work: mypy always takes stdlib modules
     (time, socket, asyncio, os, ...) from its typeshed and refuses to let a
     path entry shadow them, so CPython's ``time.monotonic`` or ``os.path``
     would pass.  With the custom typeshed, a module MicroPython does not have
     (functools, dataclasses, rp2) is "Cannot find ... module".
   - ``no_site_packages`` and a private config file (``--config-file``, MYPYPATH
     and MYPY_CACHE_DIR cleared): nothing from the CPython venv or the
     repository's own mypy settings leaks in.
   - ``python_version = 3.10``, the oldest mypy accepts: the stdlib stubs gate
     CPython-only names such as ``asyncio.timeout`` and ``asyncio.Runner`` on
     3.11+, and MicroPython has none of them.
   - ``check_untyped_defs``: the firmware has no annotations; without it mypy
     would not look inside a single function.  ``strict_equality`` (a tick
     value compared with an int), ``enable_error_code = deprecated`` (APIs
     the stubs mark deprecated, e.g. ``machine.sleep``), ``ignore-without-code``
     and ``warn_unused_ignores`` (an ignore must name its error code and still
     be needed).

   Deliberate exceptions, kept narrow:
   - ``disable_error_code = var-annotated``: "Need type annotation for x" only
     asks unannotated code for annotations; it finds no mistakes.
   - Lines inside an ``except ImportError:`` handler are not reported.  Such a
     handler is the CPython (or old-MicroPython) fallback of a shared module
     (e.g. ``const`` outside MicroPython); it never runs on an ESP32 that has
     the module, and mypy, which checks both
     branches of a try, would report redefinitions and CPython-only names
     there.  The ``try:`` body (the MicroPython path) is checked as usual.

   Known limitations of the stubs (1.28.0.post4), so not caught: the asyncio
   stubs still carry some CPython-only names (``asyncio.Queue``,
   ``asyncio.to_thread``), ``os.makedirs`` is present, and ``import typing``
   passes although a board has no typing module unless installed with mip;
   a few names marked for other ports (``micropython.asm_thumb``) pass;
   ``const`` must be imported from ``micropython`` (mypy does not read the
   stubs' ``__builtins__.pyi``), which is MicroPython's advice anyway.  The
   stubs describe MicroPython 1.28: an older firmware on a board may lack
   newer APIs.
"""

from __future__ import annotations

import argparse
import ast
import importlib.metadata
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from tabletimer import repo_root

from . import firmware_build

ESP32_STUBS = "micropython-esp32-stubs"
STDLIB_STUBS = "micropython-stdlib-stubs"
PYTHON_VERSION = "3.10"

MYPY_CONFIG = """\
[mypy]
custom_typeshed_dir = {typeshed}
no_site_packages = True
python_version = {python_version}
cache_dir = {cache_dir}
check_untyped_defs = True
strict_equality = True
warn_unused_ignores = True
enable_error_code = deprecated, ignore-without-code
disable_error_code = var-annotated
show_error_codes = True
pretty = False
color_output = False
error_summary = False
"""

_MYPY_LINE = re.compile(r"^(?P<path>.+?):(?P<line>\d+): (?P<severity>error|note|warning): (?P<msg>.*)$")


def _shown(path: Path) -> str:
    """A path as problems show it: relative to the repository when inside it."""
    try:
        return path.resolve().relative_to(repo_root()).as_posix()
    except ValueError:
        return str(path)


# ------------------------------------------------------------------ compile

def compile_check(files: Iterable[Path]) -> list[str]:
    """Compile each file with mpy-cross; one problem per file that fails."""
    problems = []
    with tempfile.TemporaryDirectory(prefix="tt-board-check-") as tmp:
        for src in files:
            try:
                firmware_build.compile_file(src, Path(tmp))
            except RuntimeError as e:
                problems.append(_compile_problem(src, str(e)))
            except OSError as e:
                problems.append(f"{_shown(src)}: mpy-cross could not run: {e}")
    return problems


def _compile_problem(src: Path, message: str) -> str:
    # compile_file's message: "mpy-cross failed on <src>:\n<compiler output>",
    # the compiler output ends like a traceback: File "...", line N / SyntaxError: ...
    lines = [ln.strip() for ln in message.splitlines()[1:] if ln.strip()]
    m = re.search(r'", line (\d+)', message)
    where = f"{_shown(src)}:{m.group(1)}" if m else _shown(src)
    return f"{where}: mpy-cross: {lines[-1] if lines else message.strip()}"


# --------------------------------------------------------------- type check

def board_files() -> list[Path]:
    """The files that run on the ESP32 (what firmware_build puts on a board)."""
    return firmware_build.board_sources(include_host_only=False)


def _dist_files(name: str) -> tuple[Path, list[PurePosixPath]]:
    dist = importlib.metadata.distribution(name)
    root = Path(str(dist.locate_file("")))
    return root, [PurePosixPath(str(f)) for f in (dist.files or ())]


def build_typeshed(dest: Path) -> Path:
    """Assemble the MicroPython ESP32 typeshed in dest (see the module doc).
    Raises LookupError if a stub package is not installed."""
    stdlib = dest / "stdlib"
    try:
        std_root, std_files = _dist_files(STDLIB_STUBS)
        esp_root, esp_files = _dist_files(ESP32_STUBS)
    except importlib.metadata.PackageNotFoundError as e:
        raise LookupError(f"{e.name} is not installed (pip install -e '.[dev]')") from None
    for f in std_files:
        if f.suffix != ".pyi" and f.name != "VERSIONS":
            continue
        if f.parts[0] in ("stdlib", "stubs"):
            target = dest / f
        elif f.parts[0] == "_mpy_shed":       # helpers the ESP32 stubs import
            target = stdlib / f
        else:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(std_root / f, target)
    versions = stdlib / "VERSIONS"
    if not versions.exists():
        raise LookupError(f"{STDLIB_STUBS} has no stdlib/VERSIONS: not the expected layout")
    added = {"_mpy_shed"}
    for f in esp_files:
        # __builtins__.pyi is a pyright-only device (builtin const); mypy ignores it
        if f.suffix != ".pyi" or str(f) == "__builtins__.pyi":
            continue
        target = stdlib / f
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(esp_root / f, target)
        added.add(f.parts[0].removesuffix(".pyi"))
    if "machine" not in added:
        raise LookupError(f"{ESP32_STUBS} has no machine.pyi: not the expected layout")
    listed = {ln.split(":")[0].strip() for ln in versions.read_text().splitlines()
              if ln.strip() and not ln.startswith("#")}
    with versions.open("a") as v:
        v.write("".join(f"\n{m}: 3.0-" for m in sorted(added - listed)) + "\n")
    return dest


def _fallback_lines(src: str) -> set[int]:
    """Lines inside `except ImportError:` handlers (CPython fallbacks)."""
    try:
        tree = ast.parse(src)
    except SyntaxError:
        return set()
    lines: set[int] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.ExceptHandler) or node.type is None:
            continue
        types = node.type.elts if isinstance(node.type, ast.Tuple) else [node.type]
        names = {t.id for t in types if isinstance(t, ast.Name)}
        if names & {"ImportError", "ModuleNotFoundError"}:
            lines.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return lines


def type_check(files: Iterable[Path], verbose: bool = False) -> list[str]:
    """Type-check files together, flat as on the board, against the ESP32
    stubs; one problem per mypy error, as 'path:line: mypy: message  [code]'."""
    files = list(files)
    if importlib.util.find_spec("mypy") is None:
        return ["mypy is not installed: pip install -e '.[dev]'"]
    by_name: dict[str, Path] = {}
    problems = []
    for f in files:
        if f.name in by_name:
            problems.append(f"{_shown(f)}: same name on the board as {_shown(by_name[f.name])}")
        by_name[f.name] = f
    if problems:
        return problems
    with tempfile.TemporaryDirectory(prefix="tt-board-check-") as tmp:
        root = Path(tmp)
        try:
            typeshed = build_typeshed(root / "typeshed")
        except LookupError as e:
            return [f"stubs: {e}"]
        board = root / "board"
        board.mkdir()
        skip: dict[str, set[int]] = {}
        for name, f in by_name.items():
            text = f.read_text(encoding="utf-8")
            (board / name).write_text(text, encoding="utf-8")
            skip[name] = _fallback_lines(text)
        config = root / "mypy.ini"
        config.write_text(MYPY_CONFIG.format(typeshed=typeshed, python_version=PYTHON_VERSION,
                                             cache_dir=os.devnull))
        env = {k: v for k, v in os.environ.items() if k not in ("MYPYPATH", "MYPY_CACHE_DIR")}
        cmd = [sys.executable, "-m", "mypy", "--config-file", str(config), *sorted(by_name)]
        if verbose:
            print("type check:", " ".join(cmd), f"(in {board})")
        r = subprocess.run(cmd, cwd=board, env=env, capture_output=True, text=True)
    if verbose and r.stdout.strip():
        print(r.stdout.rstrip())
    found, errors = [], 0
    for line in r.stdout.splitlines():
        m = _MYPY_LINE.match(line)
        if not m or m["severity"] == "note":
            continue
        errors += 1
        name, lineno = m["path"], int(m["line"])
        if lineno in skip.get(name, ()):
            continue
        where = _shown(by_name[name]) if name in by_name else name
        found.append(f"{where}:{lineno}: mypy: {m['msg']}")
    if r.returncode not in (0, 1) or (r.returncode == 1 and not errors):
        found.append(f"mypy failed (exit {r.returncode}): {(r.stderr or r.stdout).strip()}")
    return found


# ------------------------------------------------------------------- entry

def check(verbose: bool = False) -> list[str]:
    """Compile every board file, type-check the ESP32 ones; the problems
    found, empty when the firmware is fit to flash."""
    t0 = time.monotonic()
    compiled = firmware_build.board_sources(include_host_only=True)
    problems = compile_check(compiled)
    if verbose:
        print(f"mpy-cross: {len(compiled)} files, {len(problems)} failed "
              f"({time.monotonic() - t0:.1f} s)")
    t1 = time.monotonic()
    typed = board_files()
    type_problems = type_check(typed, verbose)
    if verbose:
        print(f"mypy: {len(typed)} files against {ESP32_STUBS} "
              f"{_version(ESP32_STUBS)}, {len(type_problems)} problems "
              f"({time.monotonic() - t1:.1f} s)")
    return problems + type_problems


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "(not installed)"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="tabletimer board check",
        description="Compile the board files with mpy-cross and type-check the ESP32 "
                    "firmware against the MicroPython ESP32 stubs (offline).")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="show the steps, the mypy command and its full output")
    a = p.parse_args(argv)
    problems = check(verbose=a.verbose)
    for prob in problems:
        print(prob)
    if problems:
        print(f"board check: {len(problems)} problem(s)")
        return 1
    print("board check: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
