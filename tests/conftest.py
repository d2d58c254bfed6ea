"""Shared fixtures: real brokers on free 127.0.0.1 ports; slow tests run
in the whole suite's run (tools/dev.py test sets TT_SLOW=1), in CI (CI=true)
or with -m slow, not in a plain pytest; what a parallel run
(pytest-xdist, as `tools/dev.py test` runs the suite) must know of the
tests; the quick set of `tools/dev.py test --quick`."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from brokers import MosquittoBroker
from tabletimer.hub.broker.broker import EmbeddedBroker


# hubs the tests start (also as child processes) serve their web server (remote consoles) on a
# free port, never on the fixed default one
os.environ["TABLETIMER_WEB_LISTEN"] = "127.0.0.1:0"


# The hall-scale run (300 stations of real firmware for a round of 100 s): the whole suite's run
# (tools/dev.py test) runs it in a pytest of its own beside the rest, the rest at idle priority
# (tools/dev.py says why).
HALL = ("e2e/test_chaos.py::test_chaos_hall",)
# The other tests, folders that wait longest first (whole halls, hubs as processes, browsers),
# the pure unit tests last: they fill the workers' gaps at the end of a parallel run.
ORDER = ("e2e", "web", "cli", "console", "firmware", "runtime", "link", "broker", "core", "fleet", "protocol",
         "outputs", "tools", "event", "i18n", "rules")
# `tools/dev.py test --quick`, the edit loop's answer in seconds: the unit tests of the rules,
# the event's fold and actions, the protocol and the hub's core, the firmware's logic (the
# portable modules under both interpreters) and the layout's arrows.
# The tests that mostly wait (whole halls, boards of the real firmware: a fifth of a core
# each when run one at a time, 2026-12-06): `tools/dev.py test` runs them in a pool of their own
# beside those that compute, so they do not hold the computing tests' workers.
WAITS = ("e2e/", "firmware/")          # (broker/ waits too, but is short: the computing pool has room)
QUICK = ("rules/", "event/", "i18n/", "test_import_arrows.py", "protocol/test_hub_protocol.py",
         "core/test_hub_core.py", "core/test_fold_changes.py", "link/test_self_probe.py",
         "core/test_board_identity.py",
         "firmware/test_portable.py", "web/test_table_view.py", "web/test_hall_view.py",
         "console/test_console_table.py")
TESTS = Path(__file__).parent
# Seconds each long test took in a measured whole-suite run (tools/testing/durations.py writes it
# from pytest's --durations=0): these go first, the longest first, so a pool's workers end
# together instead of one starting a minute-long test when the others are done (longest
# processing time first; xdist's loadgroup hands out one unit at a time).
DURATIONS = TESTS / "durations.json"


def _where(item) -> str:
    """The test's id from the tests/ folder: e2e/test_chaos.py::test_chaos_hall."""
    return Path(item.fspath).relative_to(TESTS).as_posix() + "::" + item.name


def measured_durations() -> dict[str, float]:
    """test id from tests/ -> seconds, from DURATIONS (none if it is missing or unreadable: the
    order is then by folder alone)."""
    try:
        got = json.loads(DURATIONS.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {k: float(v) for k, v in got.items() if isinstance(v, (int, float))} if isinstance(got, dict) else {}


def run_order(items):
    """The sort key of a parallel run's order (the same in every worker: they must agree): the
    hall first (a parallel run starts it before anything else), then the units xdist hands out
    (a test, or a module sharing a browser) that took a second or more, the longest first, then
    the others by folder, each unit's tests together."""
    took = measured_durations()
    rank = {folder: i for i, folder in enumerate(ORDER)}

    def unit(item) -> str:
        mark = item.get_closest_marker("xdist_group")
        return ("group:" + str(mark.args[0])) if mark and mark.args else _where(item)
    weight: dict[str, float] = {}
    for item in items:
        u = unit(item)
        weight[u] = weight.get(u, 0.0) + took.get(_where(item), 0.0)

    def key(item) -> tuple:
        where, u = _where(item), unit(item)
        if where.startswith(HALL):
            return (-1, 0.0, 0, "")
        if weight[u] >= 1.0:
            return (0, -weight[u], 0, u)
        return (1, 0.0, rank.get(where.split("/")[0], len(ORDER)), u)
    return key


def pytest_collection_modifyitems(config, items) -> None:
    """Slow tests (the chaos rehearsal at hall scale) are part of the whole
    suite's run (tools/dev.py test, CI=true) but not of a plain pytest,
    unless asked for.  Every test
    is marked `quick` or not, `hall` or not and `waits` or not
    (tools/dev.py's three runs), and the order set for a parallel run (the same in every worker:
    they must agree).  A module whose tests share a browser (web_rig's
    module-scoped `browser`) runs on one worker: spread over eight, it
    started Chromium eight times (about 3 s of CPU each: 2026-12-04, the
    referees' pages' module took 60 s of CPU on 8 workers, 25 s on one)."""
    for item in items:
        where = _where(item)
        if where.startswith(QUICK):
            item.add_marker(pytest.mark.quick)
        if where.startswith(HALL):
            item.add_marker(pytest.mark.hall)
        if where.startswith(WAITS):
            item.add_marker(pytest.mark.waits)
        if "browser" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.xdist_group("browser:" + where.split("::")[0]))
    items.sort(key=run_order(items))
    wanted = (os.environ.get("CI", "").lower() == "true" or os.environ.get("TT_SLOW") == "1"
              or "slow" in (config.getoption("markexpr") or ""))
    if wanted:
        return
    keep, skipped = [], []
    for item in items:
        (skipped if item.get_closest_marker("slow") else keep).append(item)
    if skipped:
        config.hook.pytest_deselected(items=skipped)
        items[:] = keep


class BrokerHandle:
    """A running broker of either kind, which a test may stop and start
    again on the same port (an outage)."""

    def __init__(self, kind: str, workdir: Path) -> None:
        self.kind = kind
        self.host = "127.0.0.1"
        if kind == "embedded":
            self._b = EmbeddedBroker(workdir / "broker").start()
            self.port = self._b.port
        else:
            self._b = MosquittoBroker()
            self._b.start()
            self.port = self._b.port

    def stop(self) -> None:
        self._b.stop()

    def start(self) -> None:
        if self.kind == "embedded":
            self._b.start()
        else:
            self._b.start(self.port)

    def close(self) -> None:
        self.resume()
        self._b.stop()
        if self.kind == "mosquitto":
            self._b.close()

    def pause(self) -> None:
        """The broker hangs (SIGSTOP): connections stay open, nothing moves."""
        import signal
        self._b.proc.send_signal(signal.SIGSTOP)
        self.paused = True

    def resume(self) -> None:
        import signal
        if getattr(self, "paused", False) and self._b.proc is not None:
            self._b.proc.send_signal(signal.SIGCONT)
        self.paused = False


@pytest.fixture(params=["embedded", "mosquitto"])
def broker(request, tmp_path: Path):
    """A running broker: the embedded amqtt one, then Mosquitto.  Mosquitto
    skips only outside CI when it is not installed."""
    b = BrokerHandle(request.param, tmp_path)
    try:
        yield b
    finally:
        b.close()


@pytest.fixture
def embedded_broker(tmp_path: Path):
    b = BrokerHandle("embedded", tmp_path)
    try:
        yield b
    finally:
        b.close()


@pytest.fixture
def rig(tmp_path: Path, embedded_broker):
    """A test rig (tests/rig.py) on the embedded broker; a module that
    runs its tests on both brokers defines its own."""
    from rig import Rig
    r = Rig(tmp_path, embedded_broker)
    try:
        yield r
    finally:
        r.close()
