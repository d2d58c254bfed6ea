"""A sleeping laptop and a stepped clock change no result (issue 44, items 1
and 2).  The hub runs as organizers run it (`tabletimer run DIR`, its own
process) with the real firmware on simulated boards; the laptop's clock
faults a CI machine cannot make are modelled in the hub's processes
(tools/testing/clock_faults: the awake clocks left behind by a suspend, the
wall clock stepped, the boot clock of a reboot), the hub above them is the
real one.  Every stored finish must be its true instant (the boards' own
record of the press) within the error the board states, and the hub must
say what happened."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

from hall import TT, Hub, acked_all, stored_presses
from rig import synced, within_stated_error
from tabletimer.hub.protocol.keys import BoardKeys
from tabletimer.hub.event.folder import event_folder
from tabletimer.hub.event.log.store import EventStore
from tabletimer.hub.fleet.simulator import SimBoard
from tabletimer.tools.testing.host_clock_faults import ClockFaults
from waiting import until

BOARDS = ("B1", "B2")
MIN = 60_000


def make_event(tmp: Path) -> Path:
    ev = event_folder.init(tmp / "event", "czjpa-individuals")
    fmt = (ev / "format.toml").read_text().replace('resolution = "1s"', 'resolution = "1ms"')
    (ev / "format.toml").write_text(fmt)
    (ev / "entrants.csv").write_text("id,name,eligible\n" + "".join(
        f"{b}{s},Puzzler {b}{s},yes\n" for b in BOARDS for s in (1, 2, 3)))
    (ev / "stations.csv").write_text("board,button,table,entrant\n" + "".join(
        f"{b},{s},Table {b},{b}{s}\n" for b in BOARDS for s in (1, 2, 3)))
    keys = BoardKeys(ev / "board-keys.json")
    for b in BOARDS:
        keys.ensure(b)
    return ev


def boards(ev: Path, tmp: Path, port: int) -> list[SimBoard]:
    keys = BoardKeys(ev / "board-keys.json")
    sims = [SimBoard(b, "127.0.0.1", port, tmp, key=keys.key(b), stations=3).start() for b in BOARDS]
    for sim in sims:
        sim.wait_for(lambda r: "sched" in r, timeout=30)
        synced(sim, 6)
    return sims


def round_under_way(tmp: Path, port: int) -> tuple[Path, ClockFaults, Hub, list[SimBoard]]:
    """A round started, its hub (the laptop's clocks under the test's
    faults) and its boards synced."""
    ev = make_event(tmp)
    faults = ClockFaults(tmp / "faults.json")
    t0 = int(time.time() * 1000)
    subprocess.run([TT, "act", str(ev), "round_start", f"at={t0}"], check=True, capture_output=True)
    hub = Hub(ev, port, env=faults.env())
    return ev, faults, hub, boards(ev, tmp, port)


def true_instants(sims: list[SimBoard]) -> dict[tuple[str, int], int]:
    return {(s.board_id, r["station"]): r["true"] for s in sims for r in s.records if r.get("sim") == "press"}


def clock_rows(ev: Path) -> list[dict]:
    store = EventStore(ev / "events.sqlite")
    try:
        return [r["payload"] for r in store.events() if (r["source"], r["type"]) == ("hub", "clock")]
    finally:
        store.close()


def finishes(ev: Path) -> dict[str, dict]:
    out = subprocess.run([TT, "replay", str(ev), "--json"], capture_output=True, text=True, check=True)
    return {r["entrant"]: r for r in json.loads(out.stdout)["standings"]}


def check_every_press(ev: Path, sims: list[SimBoard], n: int) -> None:
    true = true_instants(sims)
    presses = stored_presses(ev)
    assert len(presses) == n == len(true)
    for e in presses:
        within_stated_error(e, true[(e["board"], e["payload"]["station"])])


def test_a_laptop_that_sleeps_mid_round_shortens_no_finish(tmp_path, embedded_broker):
    """The hub's processes stopped for 6 s and their awake clocks left 6 s
    behind, as a suspend leaves them (hub time used to be wall anchor +
    monotonic: every later finish came out 6.000 s short).  A press before,
    one during (journaled on the board) and one after: each at its true
    instant; a clock row says the laptop slept, for how long; the console's
    alerts say it."""
    ev, faults, hub, sims = round_under_way(tmp_path, embedded_broker.port)
    try:
        b1, b2 = sims
        b1.press(1)
        acked_all(b1, 1)
        slept = []

        def press_while_asleep() -> None:
            time.sleep(1)
            b1.press(2)
        import threading
        t = threading.Thread(target=press_while_asleep)
        t.start()
        slept.append(faults.suspend(hub.pid, 6))
        t.join()
        acked_all(b1, 2)
        b2.press(1)
        acked_all(b2, 1)
        # a board restarted after the laptop woke: its clock is the hub's as it is now
        b2.stop()
        b2.start(flash=False)
        synced(b2, 6)
        b2.press(2)
        until(lambda: len(stored_presses(ev)) == 4, "the restarted board's press stored")
    finally:
        out = hub.stop()
        for sim in sims:
            sim.stop()
    check_every_press(ev, sims, 4)
    rows = clock_rows(ev)
    assert [p["why"] for p in rows] == ["started", "slept"], rows
    assert abs(rows[1]["slept_ms"] - slept[0]) < 1000, (rows, slept)
    assert "CLOCK: this laptop slept for 0:00:0" in out, out[-3000:]
    assert all(r["status"] == "finished" for e, r in finishes(ev).items() if e in ("B11", "B12", "B21", "B22"))


def test_act_from_a_process_whose_clock_is_an_hour_ahead_records_the_hubs_time(tmp_path, embedded_broker):
    ev = make_event(tmp_path)
    hub = Hub(ev, embedded_broker.port)
    ahead = ClockFaults(tmp_path / "ahead.json")
    ahead.set(wall_ms=3_600_000)
    try:
        until(lambda: clock_rows(ev), "the hub's time base in its log")
        before = int(time.time() * 1000)
        r = subprocess.run([TT, "act", str(ev), "round_start"], capture_output=True, text=True, env=ahead.env())
        after = int(time.time() * 1000)
        assert r.returncode == 0, r.stderr
    finally:
        hub.stop()
    store = EventStore(ev / "events.sqlite")
    try:
        start = [e for e in store.events() if e["type"] == "round_start"][0]
    finally:
        store.close()
    assert before - 50 <= start["payload"]["at"] <= after + 50, (start["payload"]["at"] - before)
    assert "1:00:00 ahead of the round's time" in r.stderr, r.stderr


@pytest.mark.parametrize("reboot", [False, True], ids=["same boot", "rebooted"])
def test_a_hub_restarted_with_its_clock_set_back_keeps_the_rounds_time(tmp_path, embedded_broker, reboot):
    """The hub stopped, the laptop's clock set back 15 min, the hub started
    again (on the same boot: from its log; after a reboot: from the boards,
    which kept the round's time): the later finishes are neither refused as
    'more than 10 min ahead' nor moved; the hub says what it found."""
    ev, faults, hub, sims = round_under_way(tmp_path, embedded_broker.port)
    try:
        sims[0].press(1)
        acked_all(sims[0], 1)
        hub.stop()
        faults.set(wall_ms=-15 * MIN, **({"boot_ms": 10_000_000} if reboot else {}))
        hub = Hub(ev, embedded_broker.port, env=faults.env())
        if reboot:
            until(lambda: any(p["why"] == "boards" for p in clock_rows(ev)), "the hub to take the boards' time",
                  timeout=60, seen=lambda: hub.lines[-10:])
        for sim in sims:
            synced(sim, 3)
        sims[0].press(2)
        sims[1].press(1)
        acked_all(sims[0], 2)
        acked_all(sims[1], 1)
    finally:
        out = hub.stop()
        for sim in sims:
            sim.stop()
    check_every_press(ev, sims, 3)
    done = finishes(ev)
    assert [done[e]["status"] for e in ("B11", "B12", "B21")] == ["finished"] * 3, done
    rows = clock_rows(ev)
    if reboot:
        moved = [p for p in rows if p["why"] == "boards"]
        assert len(moved) == 1 and abs(moved[0]["shift_ms"] - 15 * MIN) < 1000, rows
        assert "behind the event log's last entry" in out and "the hub took theirs" in out, out[-3000:]
    else:
        assert [p["source"] for p in rows] == ["wall", "log"], rows
        assert "0:15:00 behind the round's time" in out, out[-3000:]
