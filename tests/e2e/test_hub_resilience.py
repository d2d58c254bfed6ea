"""The hub as organizers run it (`tabletimer run DIR`, its own process)
against a real broker and real board processes: killing the hub with
SIGKILL, or restarting the broker, in the middle of a burst of presses loses
nothing, and the standings are those the true press instants demand."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from hall import TT, Hub, acked_all, replay_json, stored_presses
from rig import TICK_MS, synced, within_stated_error
from tabletimer.hub.event.folder import event_folder
from tabletimer.hub.protocol.keys import BoardKeys
from tabletimer.hub.rules.standings import Press, RoundStart, rank
from tabletimer.hub.fleet.simulator import SimBoard

BOARDS, STATIONS = 4, 4


def make_event(tmp: Path) -> Path:
    ev = event_folder.init(tmp / "event", "czjpa-individuals")
    fmt = (ev / "format.toml").read_text().replace('resolution = "1s"', 'resolution = "1ms"')
    (ev / "format.toml").write_text(fmt)
    ids = [f"{b}{s}" for b in range(1, BOARDS + 1) for s in range(1, STATIONS + 1)]
    (ev / "entrants.csv").write_text("id,name,eligible\n" + "".join(f"{i},Puzzler {i},yes\n" for i in ids))
    (ev / "stations.csv").write_text("board,button,table,entrant\n" + "".join(
        f"B{b},{s},Table {b},{b}{s}\n" for b in range(1, BOARDS + 1) for s in range(1, STATIONS + 1)))
    keys = BoardKeys(ev / "board-keys.json")
    for b in range(1, BOARDS + 1):
        keys.ensure(f"B{b}")
    return ev


@pytest.mark.parametrize("fault", ["hub SIGKILL", "broker restart"])
def test_burst_survives_a_fault(tmp_path, embedded_broker, fault):
    ev = make_event(tmp_path)
    t0 = int(time.time() * 1000)
    subprocess.run([TT, "act", str(ev), "round_start", f"at={t0}"], check=True, capture_output=True)
    hub = Hub(ev, embedded_broker.port)
    keys = BoardKeys(ev / "board-keys.json")
    sims = [SimBoard(f"B{b}", "127.0.0.1", embedded_broker.port, tmp_path, key=keys.key(f"B{b}"),
                     stations=STATIONS).start() for b in range(1, BOARDS + 1)]
    try:
        for sim in sims:
            sim.wait_for(lambda r: "sched" in r)
            synced(sim, 6)
        # the burst: 16 presses, 30 ms apart; the fault strikes in the middle
        order = [(sim, st) for st in range(STATIONS, 0, -1) for sim in sims]
        for i, (sim, st) in enumerate(order):
            if i == len(order) // 2:
                if fault == "hub SIGKILL":
                    hub.kill()
                else:
                    embedded_broker.stop()
            sim.press(st)
            time.sleep(0.03)   # pacing the burst (not synchronisation): 30 ms between presses
        if fault == "hub SIGKILL":
            hub = Hub(ev, embedded_broker.port)
        else:
            embedded_broker.start()
        for sim in sims:
            acked_all(sim, STATIONS)
    finally:
        out = hub.stop()
        for sim in sims:
            sim.stop()
    # every press exactly once, at its true instant
    true = {}
    for sim in sims:
        for r in sim.records:
            if r.get("sim") == "press":
                true[f"{sim.board_id[1:]}{r['station']}"] = r["true"]
    assert len(true) == BOARDS * STATIONS
    presses = stored_presses(ev)
    assert len(presses) == BOARDS * STATIONS
    assert len({(e["board"], e["payload"]["boot"], e["payload"]["seq"]) for e in presses}) == len(presses)
    stored = {f"{e['board'][1:]}{e['payload']['station']}": e for e in presses}
    assert set(stored) == set(true)
    for e, row in stored.items():                 # each at its true instant, within its board's error
        assert within_stated_error(row, true[e]), e
    # the standings are those of the true instants: the replay ranks as the engine does from
    # them, but for two presses closer than their boards' errors, which may come either way
    rows = replay_json(ev)
    loaded = event_folder.load(ev)
    expected = rank(loaded.format, loaded.entrants,
                    [RoundStart(at_ms=t0)] + [Press(entrant=e, puzzle=1, at_ms=at, press_id=e)
                                             for e, at in true.items()])
    assert sorted(r["entrant"] for r in rows) == sorted(r.entrant for r in expected), out
    place = {r["entrant"]: i for i, r in enumerate(rows)}
    margin = {e: stored[e]["payload"]["err"] + TICK_MS for e in true}
    for a in true:
        for b in true:
            if true[a] + margin[a] + margin[b] < true[b]:
                assert place[a] < place[b], (a, b, true[a], true[b], out)
    for r in rows:
        assert r["status"] == "finished" and abs(r["time_ms"] - (true[r["entrant"]] - t0)) <= margin[r["entrant"]]
