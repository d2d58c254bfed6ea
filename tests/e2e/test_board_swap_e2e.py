"""Issue 14, items 2 and 3, end to end: real firmware in real micropython
processes (simulated hardware), real brokers, the real hub on a real event
folder and log.

- The spare-board procedure of docs/operations.md ("Board dead"), step by
  step as written: a board presses and dies; the referee records a finish
  by hand; the spare, flashed with the same id (its key from the keys file,
  a new install id from the flash), takes over; every finish of the three
  is stored and ranked.  (Was: the spare's messages rejected as replayed,
  then its (board, boot, seq) keys colliding with the dead board's: its
  finishes acked and never stored.)
- A board reused from an earlier event -- its last schedule (a high id) and
  its stations' states in flash -- takes the new event's schedule (a low
  id, another event id) and its presses are finishes.  (Was: every
  schedule refused, every press a stray.)
"""

from __future__ import annotations

import json

import pytest

from rig import Rig, ready
from tabletimer.hub.cli import main as cli
from tabletimer.hub.event.folder import event_folder
from tabletimer.hub.event.fold.competition import Competition
from tabletimer.hub.protocol.keys import BoardKeys
from tabletimer.hub.event.log.store import EventStore
from tabletimer.hub.fleet import deploy
from tabletimer import firmware_dir
from tabletimer.hub.fleet.simulator import new_install
from waiting import until

FAST = {"debounce_ms": 30, "confirm_ms": 600, "void_ms": 1500}


def hall(path, boards: dict[str, int]) -> event_folder.EventFolder:
    """An event folder: one entrant per button of each board."""
    event_folder.init(path, "cz-championship-individuals")
    entrants, stations = ["id,name"], ["board,button,table,entrant"]
    for board, buttons in boards.items():
        for b in range(1, buttons + 1):
            entrants.append(f"{board}-{b},Entrant {board} {b}")
            stations.append(f"{board},{b},Table {board},{board}-{b}")
    (path / "entrants.csv").write_text("\n".join(entrants) + "\n")
    (path / "stations.csv").write_text("\n".join(stations) + "\n")
    return event_folder.load(path)


def event_rig(tmp, broker, folder: event_folder.EventFolder) -> Rig:
    """A rig whose hub runs the event folder (its keys file, its log)."""
    rig = Rig(tmp, broker)
    rig.keys, rig.db = BoardKeys(folder.keys_file), folder.db
    return rig


def act(folder, *args: str) -> None:
    """`tabletimer act DIR ...`, as the referee's desk types it."""
    assert cli.main(["act", str(folder.path), *args]) == 0


def test_the_spare_board_procedure_as_documented(tmp_path, broker, capsys):
    folder = hall(tmp_path / "hall", {"T07": 3})
    rig = event_rig(tmp_path, broker, folder)
    try:
        hub = rig.start_hub(competition=Competition(folder.format, folder.entrants, folder.stations))
        dead = rig.board("T07", workdir=tmp_path / "board-a", stations=3, timings=FAST)
        act(folder, "round_start", "--who", "desk")
        assert hub.catch_up() == 1                       # the running hub's tick: schedules go out
        ready(dead)
        dead.press(1)
        dead.wait_for(lambda r: r.get("acked") == [1, 1])
        # "Board dead": it loses power for good
        dead.kill()
        until(lambda: not hub.registry.boards["T07"].online, "the dead board's last will", timeout=30)
        assert "board T07 is OFFLINE during the round" in hub.alerts()
        # "the referee records finishes by hand (act ... press)"
        at = hub.clock.now_ms()
        act(folder, "press", "entrant=T07-2", "puzzle=1", f"at={at}", "--who", "referee",
            "--why", "board T07 dead")
        assert hub.catch_up() == 1
        # "swap the board and flash the spare with the same id (the key stays in the keys file)":
        # what `tabletimer board flash ... --id T07 --keys hall/board-keys.json` writes
        cfg = deploy.make_config(firmware_dir() / "config.example.json", key=rig.keys.ensure("T07"),
                                 board="T07", wifi_ssid="hall", broker_host=broker.host,
                                 broker_port=broker.port, buttons=[4, 5, 18])
        assert cfg["key"] == dead.config["key"] and cfg["install"] != dead.install
        spare = dead.spare(tmp_path / "board-b", install=cfg["install"]).start()
        rig.boards.append(spare)
        ready(spare)
        spare.press(3)
        spare.wait_for(lambda r: r.get("acked") == [1, 1])   # boot 1, seq 1: the dead board's first key too
        capsys.readouterr()
        # every finish of both boards (and the one by hand) is stored and ranked
        presses = [e for e in hub.store.events() if e["type"] == "press"]
        assert sorted((e["source"], e["board"], e["payload"].get("in")) for e in presses) == sorted(
            [("board", "T07", dead.install), ("operator", None, None), ("board", "T07", spare.install)])
        st = {s.entrant: s for s in hub.standings(final=True)}
        assert all(st[e].status == "finished" for e in ("T07-1", "T07-2", "T07-3")), st
        assert abs(st["T07-2"].time_ms - (at - hub.competition.start_ms)) < 1000
        assert hub.registry.boards["T07"].online and hub.registry.boards["T07"].install == spare.install
        assert not [a for a in hub.alerts() if "OFFLINE" in a or "CONFLICT" in a], hub.alerts()
        assert hub.counts.rejected == {}
    finally:
        rig.close()
    assert cli.main(["replay", str(folder.path), "--json"]) == 0     # the log, replayed offline
    replayed = {r["entrant"]: r["status"] for r in json.loads(capsys.readouterr().out)["standings"]}
    assert replayed == {"T07-1": "finished", "T07-2": "finished", "T07-3": "finished"}


@pytest.mark.parametrize("reflash", [False, True], ids=["rebooted", "re-flashed"])
def test_a_board_from_an_earlier_event_takes_the_new_events_schedule(tmp_path, embedded_broker, reflash):
    """Last month's event: a long log (schedule ids in the 30s), the board's
    station 1 confirmed.  This event's log is new (schedule id 2 or so).
    The same board -- rebooted with the same configuration, or re-flashed
    (a new key and install id; its flash keeps the schedule, the stations
    and the boot count) -- takes this event's schedule, and both its
    stations call finishes."""
    before = hall(tmp_path / "last-month", {"r1": 2})
    store = EventStore(before.db)
    for _ in range(30):                         # a busy earlier event: many rows, high schedule ids
        store.append("operator", "identify", {"board": "r1", "who": "desk", "why": ""}, 0)
    store.close()
    rig = event_rig(tmp_path / "last-month", embedded_broker, before)
    rig.keys.ensure("r1")
    flash = tmp_path / "board-r1"               # the board's own flash, kept from event to event
    try:
        hub = rig.start_hub(competition=Competition(before.format, before.entrants, before.stations))
        hub.start_round()
        old = rig.board("r1", workdir=flash, stations=2, timings=FAST)
        old_sched = old.wait_for(lambda r: "sched" in r)["sched"]
        ready(old)
        old.press(1)
        old.wait_for(lambda r: r.get("acked") == [1, 1])
        old.wait_for(lambda r: r.get("input") == [1, 0])    # released
        old.press(1, 900)                       # the referee confirms: station 1 done
        old.wait_for(lambda r: r.get("acked") == [1, 2])
        assert {s.entrant: s.status for s in hub.standings(final=True)}["r1-1"] == "finished"
        old.stop()
    finally:
        rig.close()
    assert old_sched > 30

    now = hall(tmp_path / "this-month", {"r1": 2})
    if not reflash:                             # the same keys file, copied to the new event
        now.keys_file.write_text(before.keys_file.read_text())
    rig = event_rig(tmp_path / "this-month", embedded_broker, now)
    try:
        hub = rig.start_hub(competition=Competition(now.format, now.entrants, now.stations))
        hub.start_round()
        sim = rig.board("r1", workdir=flash, stations=2, timings=FAST,
                        install=new_install() if reflash else None)   # None: the flash's own
        assert (sim.install == old.install) is not reflash
        assert (sim.config["key"] == old.config["key"]) is not reflash
        sched = sim.wait_for(lambda r: "sched" in r, timeout=15)["sched"]
        assert sched < old_sched                # a lower id, taken: another event
        ready(sim)
        for station in (1, 2):
            sim.press(station)
        sim.wait_for(lambda r: r.get("acked") == [2, 2])
        rows = hub.store.events()
        assert not [r for r in rows if r["type"] == "stray"], rows
        st = {s.entrant: s.status for s in hub.standings(final=True)}
        assert st == {"r1-1": "finished", "r1-2": "finished"}
        assert [r["payload"]["in"] for r in rows if r["type"] == "press"] == [sim.install] * 2
        last_month = EventStore(before.db)
        assert hub.store.event_id != last_month.event_id
        last_month.close()
    finally:
        rig.close()
