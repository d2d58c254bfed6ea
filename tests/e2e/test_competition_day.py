"""Issue 31's day, end to end: an event of three rounds -- individuals,
pairs, the championship's team relay -- on the same two boards (the real
firmware, 8 buttons each, never restarted), run one after another through
Mosquitto by `tabletimer run --round`.  Each round's standings must be what
its format's rules make of the true press instants of that round (the
oracle: rank() on the presses the boards' hardware made), with no stray
caused by the round before."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

from brokers import require_mosquitto
from rig import synced
from test_rounds_e2e import rotation
from tabletimer.hub.protocol.keys import BoardKeys
from tabletimer.hub.event.folder import event_folder
from tabletimer.hub.event.log.store import EventStore
from tabletimer.hub.rules.standings import Confirm, Count, Press, RoundStart, rank
from tabletimer.hub.fleet.simulator import SimBoard
from tabletimer.tools.testing.local_mosquitto import LocalMosquitto
from waiting import Output, until

from hall import TT


def tt(*args: str) -> str:
    r = subprocess.run([TT, *args], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stdout


class Hub:
    def __init__(self, hall: Path, round: str, port: int) -> None:
        self.proc = subprocess.Popen([TT, "run", str(hall), "--round", round, "--broker",
                                      f"mqtt://127.0.0.1:{port}", "--web-listen", "off"],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.out = Output(self.proc.stdout)
        self.out.wait_for(lambda line: line.startswith("broker:"), f"round {round}'s hub")

    def stop(self) -> str:
        self.proc.terminate()
        self.proc.wait(timeout=30)
        return self.out.wait_closed()


def make_day(tmp: Path) -> Path:
    hall = tmp / "day"
    d = event_folder.add_round(hall, "indiv", "czjpa-individuals", "A day of rounds")
    (d / "entrants.csv").write_text("id,name,eligible\nI1,Anna,yes\nI2,Ben,yes\n")
    (d / "stations.csv").write_text("board,button,table,entrant\nA1,1,Table A,I1\nB1,1,Table B,I2\n")
    d = event_folder.add_round(hall, "pairs", "czjpa-pairs")
    (d / "entrants.csv").write_text("id,name,kind,members,eligible\nP1,Edges,pair,Anna|Ben,yes|yes\n"
                                    "P2,Corners,pair,Cleo|Dan,yes|yes\n")
    (d / "stations.csv").write_text("board,button,table,entrant\nA1,2,Table A,P1\nB1,2,Table B,P2\n")
    d = event_folder.add_round(hall, "relay", "cz-championship-teams")
    fmt = (d / "format.toml").read_text()
    (d / "format.toml").write_text(fmt.replace('rotation_interval = "8:00"', 'rotation_interval = "3s"')
                                   .replace('time_limit = "5:00:00"', 'time_limit = "2:00"'))
    (d / "entrants.csv").write_text("id,name,members\nA,Alfa,a1|a2|a3|a4\nB,Beta,b1|b2|b3|b4\n")
    (d / "stations.csv").write_text("board,button,table,entrant,puzzle\n" + "".join(
        f"{t}1,{n},Table {t},{t},{n}\n" for t in "AB" for n in range(1, 9)))
    return hall


def round_presses(hall: Path, name: str) -> list[dict]:
    store = EventStore(event_folder.load(hall, name).db)
    try:
        return [e for e in store.events() if e["source"] == "board" and e["type"] in ("press", "stray")]
    finally:
        store.close()


def standings(hall: Path, name: str) -> list[tuple]:
    rows = json.loads(tt("replay", str(hall), "--round", name, "--json"))["standings"]
    return [(r["entrant"], r["status"], r["place"], r["time_ms"], r["pieces"]) for r in rows]


def oracle(hall: Path, name: str, start: int, presses: list[tuple[str, str, int, int]],
           counts=()) -> list[tuple]:
    """rank() on (entrant, press id, puzzle, true instant), each confirmed."""
    ev = event_folder.load(hall, name)
    facts = [RoundStart(at_ms=start)]
    for entrant, pid, puzzle, at in presses:
        facts += [Press(entrant=entrant, puzzle=puzzle, at_ms=at, press_id=pid), Confirm(press_id=pid)]
    facts += [Count(entrant=e, puzzle=n, placed=p) for e, n, p in counts]
    return [(x.entrant, x.status, x.place, x.time_ms, x.pieces) for x in rank(ev.format, ev.entrants, facts)]


def test_a_day_of_three_rounds_on_the_same_boards_each_ranked_as_its_rules_say(tmp_path):
    require_mosquitto()
    hall = make_day(tmp_path)
    keys = BoardKeys(hall / "board-keys.json")
    mosq = LocalMosquitto().start()
    a, b = sims = [SimBoard(x, "127.0.0.1", mosq.port, tmp_path / "boards", key=keys.ensure(x), stations=8)
                   for x in ("A1", "B1")]
    hub = None
    try:
        for s in sims:
            s.start()
        ranked = {}
        for name, station in (("indiv", 1), ("pairs", 2)):
            start = int(time.time() * 1000) + 2000
            tt("act", str(hall), "round_start", f"at={start}", "--round", name)
            marks = [len(s.records) for s in sims]
            hub = Hub(hall, name, mosq.port)
            for s, m in zip(sims, marks):
                s.wait_for(lambda r: "sched" in r, timeout=30, start=m)
                synced(s)
            lead = start - int(time.time() * 1000)
            # A's entrant at 3.5 s, B's at 4.5 s: mid-second, as these formats rank whole seconds
            # (an instant on a second's edge falls either side by the clock sync's few ms)
            a.command(f"edges {station} {lead + 3500}:1 {lead + 3580}:0")
            b.command(f"edges {station} {lead + 4500}:1 {lead + 4580}:0")
            for s, m in zip(sims, marks):
                s.wait_for(lambda r: "acked" in r, timeout=30, start=m)
            stored = round_presses(hall, name)
            assert [e["type"] for e in stored] == ["press", "press"], stored     # no stray of the round before
            pids = {e["board"]: f"{e['board']}/{e['payload']['boot']}/{e['payload']['seq']}" for e in stored}
            for pid in pids.values():
                tt("act", str(hall), "confirm", f"press_id={pid}", "missing_found=0", "--round", name)
            truth = []
            for s, m, entrant in zip(sims, marks, (("I1", "I2") if name == "indiv" else ("P1", "P2"))):
                (at,) = [r["true"] for r in s.records[m:] if r.get("sim") == "press" and r["station"] == station]
                truth.append((entrant, pids[s.board_id], 1, at))
            ranked[name] = (standings(hall, name), oracle(hall, name, start, truth))
            hub.stop()
            hub = None
        # the relay, as tests/e2e/test_rounds_e2e.py plays it, after the two rounds on the same boards
        start = int(time.time() * 1000) + 2500
        tt("act", str(hall), "round_start", f"at={start}", "--round", "relay")
        marks = [len(s.records) for s in sims]
        hub = Hub(hall, "relay", mosq.port)
        for s, m in zip(sims, marks):
            s.wait_for(lambda r: "sched" in r, timeout=30, start=m)
            synced(s)
        lead = start - int(time.time() * 1000)
        for station, at in ((1, 4000), (2, 5000), (3, 8000), (4, 9500), (5, 10500), (6, 10800),
                            (7, 11500), (8, 12500)):
            a.command(f"edges {station} {lead + at}:1 {lead + at + 80}:0")
        b.command(f"edges 2 {lead + 2000}:1 {lead + 2080}:0")
        b.wait_for(lambda r: rotation(r) and r["at"] == start + 12000, timeout=30, start=marks[1])
        stored = until(lambda: (lambda got: got if len(got) >= 9 else None)(round_presses(hall, "relay")),
                       "the relay's 9 presses in its log", timeout=20, seen=lambda: round_presses(hall, "relay"))
        assert [e["type"] for e in stored] == ["press"] * 9, stored
        truth = []
        for e in stored:
            pid = f"{e['board']}/{e['payload']['boot']}/{e['payload']['seq']}"
            tt("act", str(hall), "confirm", f"press_id={pid}", "missing_found=0", "--round", "relay")
            sim, mark = (a, marks[0]) if e["board"] == "A1" else (b, marks[1])
            (at,) = [r["true"] for r in sim.records[mark:]
                     if r.get("sim") == "press" and r["station"] == e["payload"]["station"]]
            truth.append(("A" if sim is a else "B", pid, e["payload"]["station"], at))
        counts = [("B", n, p) for n, p in ((1, 300), (3, 250), (4, 120), (5, 0), (6, 0), (7, 0), (8, 0))]
        for _, n, p in counts:
            tt("act", str(hall), "count", "entrant=B", f"puzzle={n}", f"placed={p}", "--round", "relay")
        ranked["relay"] = (standings(hall, "relay"), oracle(hall, "relay", start, truth, counts))
        # the rounds before keep what they had: two presses each, nothing of the relay
        assert [len(round_presses(hall, n)) for n in ("indiv", "pairs")] == [2, 2]
    finally:
        if hub is not None:
            hub.stop()
        for s in sims:
            s.stop()
        mosq.stop()
    for name, (got, want) in ranked.items():
        assert got == want, (name, got, want)
    assert ranked["indiv"][0][0][:2] == ("I1", "finished") and ranked["pairs"][0][0][:2] == ("P1", "finished")
    assert ranked["relay"][0][0][0] == "A" and ranked["relay"][0][1][4] == 500 + 300 + 250 + 120
