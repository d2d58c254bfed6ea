"""tools/dev.py runs the hall-scale rehearsal beside the rest of the
suite (TT_HALL_BESIDE=0: alone first), the rest at SCHED_IDLE (so the hall gets the CPU the instant it wants it),
and puts the waiting tests back to the normal policy once the hall is done
(the computing ones stay idle); not where a container's CPU quota would
stop the hall with the rest."""

import functools
import json
import os
import subprocess
import sys

import pytest

from tabletimer.tools import dev


# a process that starts a child and a thread, each sleeping, and says their ids
FAMILY = """
import subprocess, sys, threading, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
threading.Thread(target=time.sleep, args=(60,), daemon=True).start()
print(child.pid, flush=True)
time.sleep(60)
"""


def policies(pid: int) -> set[int]:
    return {os.sched_getscheduler(int(t)) for t in os.listdir(f"/proc/{pid}/task")}


@pytest.mark.skipif(not hasattr(os, "SCHED_IDLE"), reason="SCHED_IDLE is Linux's")
def test_the_rest_runs_idle_with_all_it_starts_and_comes_back_when_the_hall_is_done():
    p = subprocess.Popen([sys.executable, "-c", FAMILY], stdout=subprocess.PIPE, text=True,
                         preexec_fn=dev.idle_priority)
    child = None
    try:
        child = int(p.stdout.readline())
        assert policies(p.pid) == {os.SCHED_IDLE} and policies(child) == {os.SCHED_IDLE}
        back = dev.normal_priority_again(p.pid)
        if os.geteuid() == 0:
            assert back
        if back:
            assert policies(p.pid) == {os.SCHED_OTHER} and policies(child) == {os.SCHED_OTHER}
        else:       # leaving SCHED_IDLE needs root or RLIMIT_NICE: said, and nothing half done
            assert policies(p.pid) == {os.SCHED_IDLE}
    finally:
        if child is not None:
            os.kill(child, 9)
        p.kill()
        p.wait()


@pytest.mark.parametrize("args, whole", [([], True), (["-x", "-q"], True), (["-m", "not slow"], False),
                                         (["tests/rules"], False), (["-k", "relay"], False),
                                         (["-n", "2"], False), (["-p", "no:xdist"], False)])
def test_the_whole_suite_is_what_no_test_chosen_means(args, whole, monkeypatch):
    monkeypatch.delenv("TT_TEST_WORKERS", raising=False)
    assert dev.whole_suite(args) is whole


@pytest.mark.parametrize("cgroup, files, quota", [
    ("0::/ci\n", {"ci/cpu.max": "max 100000\n"}, None),
    ("0::/ci\n", {"ci/cpu.max": "150000 100000\n"}, 1.5),
    ("4:memory:/x\n1:cpu,cpuacct:/job\n", {"cpu,cpuacct/job/cpu.cfs_quota_us": "-1\n",
                                           "cpu,cpuacct/job/cpu.cfs_period_us": "100000\n"}, None),
    ("4:memory:/x\n1:cpu,cpuacct:/job\n", {"cpu,cpuacct/job/cpu.cfs_quota_us": "200000\n",
                                           "cpu,cpuacct/job/cpu.cfs_period_us": "100000\n"}, 2.0),
    ("0::/gone\n", {}, None),
])
def test_a_containers_cpu_quota_is_read_from_its_cgroup(tmp_path, cgroup, files, quota):
    (tmp_path / "cgroup").write_text(cgroup)
    for name, text in files.items():
        (tmp_path / "fs" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "fs" / name).write_text(text)
    assert dev.cpu_quota(tmp_path / "cgroup", tmp_path / "fs") == quota


def test_the_hall_runs_beside_the_rest_unless_asked_alone(monkeypatch):
    """The hall runs beside the rest where that is safe; TT_HALL_BESIDE=0
    runs it alone first, saying so."""
    monkeypatch.delenv("TT_HALL_BESIDE", raising=False)
    beside = dev.why_not_beside()
    assert beside is None or "TT_HALL_BESIDE" not in beside
    monkeypatch.setenv("TT_HALL_BESIDE", "0")
    assert dev.why_not_beside() == "TT_HALL_BESIDE=0"


# one collection of the whole suite (a pytest of its own): each test's id, in the order a run takes
# them, and which of the marks hall and waits it has
COLLECT = """
import sys, pytest
class Marks:
    def pytest_collection_finish(self, session):
        for item in session.items:
            print("item", item.nodeid, *(m for m in ("hall", "waits") if item.get_closest_marker(m)), sep="\\t")
sys.exit(pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", sys.argv[1]], plugins=[Marks()]))
"""


@functools.cache
def whole_suite() -> tuple[tuple[str, frozenset[str]], ...]:
    """(test id, its marks of hall and waits) for every test of the whole
    suite, in its order (once per process: it is the suite's longest
    collection, 2 s of CPU, and was taken five times)."""
    out = subprocess.run([sys.executable, "-c", COLLECT, str(dev.ROOT / "tests")], capture_output=True, text=True,
                         cwd=dev.ROOT, env={**os.environ, "TT_SLOW": "1"}, timeout=120)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    lines = [ln.split("\t") for ln in out.stdout.splitlines() if ln.startswith("item\t")]
    return tuple((w[1], frozenset(w[2:])) for w in lines)


def collected(marks: str) -> list[str]:
    """The test ids the whole suite's run collects under -m marks (an
    expression of hall and waits, as tools/dev.py gives pytest), in its order."""
    return [t for t, have in whole_suite() if eval(marks, {}, {m: m in have for m in ("hall", "waits")})]


def test_the_three_runs_of_the_whole_suite_hold_every_test_once():
    """The hall, the tests that wait and those that compute: no test in two
    of them, none left out (what -m selects is what the three commands of
    hall_beside_the_rest run)."""
    everything = [t for t, _ in whole_suite()]
    hall, waiting, rest = (set(collected(m)) for m in ("hall", dev.WAITING_MARKS, dev.COMPUTING_MARKS))
    assert len(everything) == len(set(everything)) > 1200
    assert hall == {dev.HALL_TEST} and len(waiting) > 200 and len(rest) > 1000
    assert not (hall & waiting or hall & rest or waiting & rest)
    assert hall | waiting | rest == set(everything)
    # the waiting run collects only WAITING_FOLDERS, the computing run all but them: nothing falls between
    folders = tuple(f + "/" for f in dev.WAITING_FOLDERS)
    assert all(t.startswith(folders) for t in waiting)
    assert all(t in waiting or t in hall for t in everything if t.startswith(folders))


def test_the_waiting_tests_start_with_the_longest_measured():
    """tests/durations.json's tests go first, the longest first (the waiting
    pool has no module sharing a browser: each test is its own unit)."""
    took = json.loads((dev.ROOT / "tests" / "durations.json").read_text(encoding="utf-8"))
    order = [t.removeprefix("tests/") for t in collected(dev.WAITING_MARKS)]
    measured = [t for t in order if t in took]
    assert len(measured) > 50 and order[:len(measured)] == measured
    assert [took[t] for t in measured] == sorted((took[t] for t in measured), reverse=True)


def test_durations_adds_a_tests_phases_and_leaves_out_the_short_ones():
    from tabletimer.tools.testing.durations import durations
    lines = ["============ slowest durations ============",
             "1.50s call     tests/e2e/test_a.py::test_one",
             "0.60s setup    tests/e2e/test_a.py::test_one",
             "0.90s call     tests/web/test_b.py::test_short",
             "3.00s teardown tests/core/test_c.py::test_two[x-1]",
             "(12 durations < 0.005s hidden.)"]
    got = durations(lines)
    assert got == {"core/test_c.py::test_two[x-1]": 3.0, "e2e/test_a.py::test_one": 2.1}
    assert list(got) == ["core/test_c.py::test_two[x-1]", "e2e/test_a.py::test_one"]
