"""A round's live advancement marks from the event folder
(outputs/advancement_outlook.py): the round it feeds found by the later
round's [advancement], the other source read from its log, this round's
live standings (a real log folded) with their floors; no marks where a
source's entrants or countries cannot be known; and the time one view's
marks take at 240 entrants a group (the hall view's worker thread)."""

from __future__ import annotations

import random
import time
from pathlib import Path

from tabletimer.hub.cli import main as cli
from tabletimer.hub.event.folder import event_folder
from tabletimer.hub.event.log.store import EventStore
from tabletimer.hub.outputs.advancement_outlook import AdvanceOutlook
from tabletimer.hub.outputs.results import folded_log
from tabletimer.hub.rules.advancement_marks import CERTAIN, IN, OUT

MIN = 60_000
COUNTRIES = [f"C{i:02}" for i in range(30)]


def group(hall: Path, name: str, n: int, start: int, finishes: dict[str, int], country: bool = True) -> None:
    """A group of n entrants (name[0] + k) on n/4 boards of 4 buttons, its log: the start, the finishes
    (entrant -> minutes) recorded and confirmed."""
    assert cli.main(["round", "add", str(hall), name, "--format", "czjpa-individuals"]) == 0
    d = hall / "rounds" / name
    rnd = random.Random(name)
    head = "id,name,eligible" + (",country" if country else "")
    (d / "entrants.csv").write_text(head + "\n" + "".join(
        f"{name[-1]}{k},P {name[-1]}{k},yes" + (f",{rnd.choice(COUNTRIES)}" if country else "") + "\n"
        for k in range(1, n + 1)))
    (d / "stations.csv").write_text("board,button,table,entrant\n" + "".join(
        f"T{(k - 1) // 4 + 1:03},{(k - 1) % 4 + 1},Table {(k - 1) // 4 + 1},{name[-1]}{k}\n" for k in range(1, n + 1)))
    store = EventStore(d / "events.sqlite")
    try:
        store.append("operator", "round_start", {"at": start, "who": "desk"}, start)
        for e, minutes in finishes.items():
            store.append("operator", "press", {"entrant": e, "puzzle": 1, "at": start + minutes * MIN, "who": "desk"},
                         start)
            store.append("operator", "confirm", {"entrant": e, "puzzle": 1, "who": "desk"}, start)
    finally:
        store.close()


def final(hall: Path, rule: str) -> None:
    assert cli.main(["round", "add", str(hall), "final", "--format", "czjpa-individuals"]) == 0
    with open(hall / "rounds" / "final" / "format.toml", "a", encoding="utf-8") as f:
        f.write("\n[advancement]\n" + rule)


def live(hall: Path, name: str, now: int) -> tuple[list, int | None]:
    comp = folded_log(event_folder.load(hall, name))
    return comp.standings(now), comp.start_ms


def test_the_marks_of_a_group_that_runs_for_the_final(tmp_path):
    # group-a ran (a1 40 min, a2 45, a3 50, a4 55, time up); group-b runs, 46 min in: b1 finished in
    # 30, b2-b4 solving (their floor: 46 min).  The final: the best of each, then the next best by
    # result up to 3.  b1 is group-b's best whatever happens (certain); a1 is group-a's (certain);
    # the third place: a2's 45 min before anybody of group-b still solving (46 at least): certain;
    # a3 and a4 out (three places certain ahead of them).  group-b's solving: no mark.
    hall = tmp_path / "wjpc"
    now = int(time.time() * 1000)
    group(hall, "group-a", 4, now - 180 * MIN, {"a1": 40, "a2": 45, "a3": 50, "a4": 55}, country=False)
    group(hall, "group-b", 4, now - 46 * MIN, {"b1": 30}, country=False)
    final(hall, 'from = ["group-a", "group-b"]\nper_source = 1\ntotal = 3\nacross = "result"\n')
    rows, start = live(hall, "group-b", now)
    got = AdvanceOutlook(hall, "group-b").outlook(rows, "time", start, now, {})
    assert got is not None and got.to == "final" and got.marks == {"b1": CERTAIN}
    # group-a's page: its own marks, group-b's solving at the floor they had when its log was read
    rows, start = live(hall, "group-a", now)
    outlook = AdvanceOutlook(hall, "group-a")
    got = outlook.outlook(rows, "time", start, now, {})
    assert got is not None and got.marks == {"a1": CERTAIN, "a2": CERTAIN, "a3": OUT, "a4": OUT}
    # group-b's log read 2 min earlier (44 min in): b2-b4 could still finish before a2's 45: a2 only
    # in the places (a3 still out: a1, b1 and a2 are ahead of it even if b2-b4 never finish)
    got = AdvanceOutlook(hall, "group-a").outlook(rows, "time", start, now - 2 * MIN, {})
    assert got is not None and got.marks == {"a1": CERTAIN, "a2": IN, "a3": OUT, "a4": OUT}
    # without a floor (a pieces-ranked round: those solving may still get any result), b2-b4 could
    # still beat b1: in the places only
    rows, start = live(hall, "group-b", now)
    got = AdvanceOutlook(hall, "group-b").outlook(rows, "pieces", start, now, {})
    assert got is not None and got.marks == {"b1": IN}
    # start offsets: b2-b4 started 20 min late, have solved for 26 min only and could all still finish
    # before b1's 30: one of them group-b's best, another the next best (26 before a1's 40), then
    # only one place: b1 is only in the places.  (One of them late only: b1's 30 is still the next
    # best after a1 and that one: certain.)
    got = AdvanceOutlook(hall, "group-b").outlook(rows, "time", start, now, {"b2": 20 * MIN})
    assert got is not None and got.marks == {"b1": CERTAIN}
    got = AdvanceOutlook(hall, "group-b").outlook(rows, "time", start, now, {f"b{k}": 20 * MIN for k in (2, 3, 4)})
    assert got is not None and got.marks == {"b1": IN}
    # a round no later round names has no outlook
    assert AdvanceOutlook(hall, "final").outlook([], "time", None, now, {}) is None


def test_no_marks_while_a_source_or_its_countries_cannot_be_known(tmp_path):
    hall = tmp_path / "wjpc"
    now = int(time.time() * 1000)
    group(hall, "group-a", 4, now - 30 * MIN, {"a1": 20}, country=False)
    assert cli.main(["round", "add", str(hall), "group-b", "--format", "czjpa-individuals"]) == 0
    (hall / "rounds" / "group-b" / "entrants.csv").write_text("id,name,eligible\n")     # not filled yet
    final(hall, 'from = ["group-a", "group-b"]\ntotal = 1\n')
    rows, start = live(hall, "group-a", now)
    clock = [0.0]
    outlook = AdvanceOutlook(hall, "group-a", clock=lambda: clock[0])
    got = outlook.outlook(rows, "time", start, now, {})
    assert got is not None and got.marks == {}
    # group-b filled (its entrants not started: open, any result): a1 is in the places, not certain
    (hall / "rounds" / "group-b" / "entrants.csv").write_text("id,name,eligible\nb1,B 1,yes\n")
    assert outlook.outlook(rows, "time", start, now, {}).marks == {}          # not looked at again yet
    clock[0] = 10.0
    assert outlook.outlook(rows, "time", start, now, {}).marks == {"a1": IN}
    # a per_country rule and group-a without a country column: none
    fmt = hall / "rounds" / "final" / "format.toml"
    fmt.write_text(fmt.read_text().replace("total = 1", "total = 1\nper_country = 1"))
    clock[0] = 20.0
    assert outlook.outlook(rows, "time", start, now, {}).marks == {}


def test_a_view_s_marks_at_240_entrants_a_group(tmp_path):
    # three groups of 240 with countries: group-a and group-b over, group-c 60 min in with 120 finished;
    # the final: the best of each of 30 countries, then the next best up to 180
    hall = tmp_path / "wjpc"
    now = int(time.time() * 1000)
    rnd = random.Random(5)
    for g, start in (("a", now - 300 * MIN), ("b", now - 200 * MIN)):
        group(hall, f"group-{g}", 240, start, {f"{g}{k}": rnd.randint(40, 119) for k in range(1, 241)})
    group(hall, "group-c", 240, now - 60 * MIN, {f"c{k}": rnd.randint(30, 59) for k in range(1, 121)})
    final(hall, 'from = ["group-a", "group-b", "group-c"]\nper_country = 1\ntotal = 180\n')
    rows, start = live(hall, "group-c", now)
    outlook = AdvanceOutlook(hall, "group-c")
    t0 = time.perf_counter()
    first = outlook.outlook(rows, "time", start, now, {})
    t1 = time.perf_counter()
    again = outlook.outlook(rows, "time", start, now, {})
    t2 = time.perf_counter()
    print(f"marks at 3 x 240: first view {1000 * (t1 - t0):.0f} ms (the other groups read), "
          f"then {1000 * (t2 - t1):.0f} ms a view")
    assert first is not None and again is not None and first.marks == again.marks
    counts = {m: sum(1 for v in again.marks.values() if v == m) for m in (CERTAIN, IN, OUT)}
    print("marks:", counts)
    assert counts[CERTAIN] > 0 and counts[OUT] > 0 and not set(again.marks) & {f"c{k}" for k in range(121, 241)}
    print(f"marks at 240 entrants a group: first view {t1 - t0:.3f} s, then {t2 - t1:.3f} s")   # a figure, not a bound
