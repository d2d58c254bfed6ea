"""One truth for every station, as a seeded property (issue 13): random
interleavings of board gestures (calls, missing-piece counts, confirmations,
voids), desk actions (the console's path: HubService.act), board reboots
and broker outages, with real micropython boards, a real broker and the real
hub.  After things settle:
- every board's station states (its saved stations.json) equal the hub's;
- no recorded decision was replaced by a board: every board confirmation or
  void of a call already decided (in log order) is a listed conflict, and
  the standings come from the first decision of each call.

The seed is printed; a failure names it.  A short run is in the default
suite; a longer one is marked slow (CI), three with TT_SOAK=1."""

from __future__ import annotations

import json
import os
import random

import pytest

from rig import FAST_GESTURES, Rig, ready, synced
from tabletimer.hub.event.log.board_events import board_order
from tabletimer.hub.event.fold.competition import Competition
from tabletimer.hub.event.folder.event_folder import Station
from tabletimer.hub.rules.formats import load_format
from tabletimer.hub.rules.standings import Entrant
from waiting import until

FAST = FAST_GESTURES
BOARDS, BUTTONS = ("P1", "P2"), 2
HOLD = {"tap": 80, "confirm": 900, "void": 1800}


def start(rig: Rig):
    fmt = load_format("czjpa-individuals")
    entrants = [Entrant(f"{b}-{n}", f"Puzzler {b}.{n}") for b in BOARDS for n in range(1, BUTTONS + 1)]
    stations = [Station(b, n, f"Table {b}", f"{b}-{n}", 1) for b in BOARDS for n in range(1, BUTTONS + 1)]
    rig.competition = lambda preset=None: Competition(fmt, entrants, stations)   # type: ignore[method-assign]
    hub = rig.start_hub()
    sims = {b: rig.board(b, stations=BUTTONS, timings=FAST) for b in BOARDS}
    hub.start_round()
    for s in sims.values():
        ready(s)
    return hub, sims


def gesture(sim, station: int, hold: int) -> None:
    """A press held `hold` ms, once the board has seen its release."""
    k = len(sim.records)
    sim.press(station, hold)
    sim.wait_for(lambda r: r.get("input") == [station, 0], start=k, timeout=15)


def board_view(sim) -> list[tuple]:
    """The board's stations as it saved them: (state, call, confirmed)."""
    try:
        saved = json.loads((sim.dir / "stations.json").read_text())
    except (OSError, ValueError):
        return []
    out = []
    for call, _missing, done, confirmed, *_ in saved["st"]:
        out.append(("called", call, confirmed) if call is not None else
                   ("done" if done else "running", None, confirmed))
    return out


def hub_view(hub, board: str) -> list[tuple]:
    out = []
    for s in sorted((s for s in hub.station_states() if s.board == board), key=lambda s: s.button):
        call = None
        if s.state == "called":
            _b, boot, seq = s.call.split("/")
            call = [int(boot), int(seq)]
        out.append((s.state, call, s.confirmed))
    return out


def final_decisions(hub) -> tuple[dict, dict]:
    """(each call's decision as the rules say: the first one, unless the
    desk decided again (an explicit correction); as the hub's facts have
    it): (kind, missing) by press id."""
    comp = hub.competition
    want: dict[str, tuple] = {}
    for row in board_order(hub.store.events()):
        if row["type"] not in ("confirm", "void"):
            continue
        p = row["payload"]
        if row["source"] == "operator":
            want[p["press_id"]] = (row["type"], p.get("missing_found") if row["type"] == "confirm" else None)
        elif row["source"] == "board":
            pid = comp.call_press_id(row["board"], p)
            if pid not in want:
                want[pid] = (row["type"], p.get("missing") if row["type"] == "confirm" else None)
    got: dict[str, tuple] = {}
    for f in comp.facts():
        if f.kind == "confirm":
            got[f.press_id] = ("confirm", f.missing_found + f.missing_lost + f.missing_adjacent)
        elif f.kind == "void":
            got[f.press_id] = ("void", None)
    return want, got


def replaced_decisions(hub) -> tuple[set[int], set[int]]:
    """(board decision rows on calls already decided; the conflicts the hub
    listed): the two must be the same.  "Already" in the order things
    happened: the log with each board's events in the order the board made
    them (a void made during an outage, before the desk's, came first)."""
    comp = hub.competition
    decided: set[str] = set()
    late: set[int] = set()
    for row in board_order(hub.store.events()):
        if row["type"] not in ("confirm", "void"):
            continue
        if row["source"] == "operator":
            decided.add(row["payload"]["press_id"])
        elif row["source"] == "board":
            pid = comp.call_press_id(row["board"], row["payload"])
            if pid in decided:
                late.add(row["id"])
            decided.add(pid)
    return late, {c.row for c in comp.conflicts}


def play(rig: Rig, seed: int, steps: int) -> None:
    print(f"station truth property: seed {seed}, {steps} steps")
    rng = random.Random(seed)
    hub, sims = start(rig)
    log: list[str] = []
    for _ in range(steps):
        op = rng.choices(("tap", "confirm", "void", "desk", "reboot", "outage"), (5, 3, 1, 3, 1, 1))[0]
        b = rng.choice(BOARDS)
        n = rng.randint(1, BUTTONS)
        if op in HOLD:
            gesture(sims[b], n, HOLD[op])
            log.append(f"{op} {b}#{n}")
        elif op == "desk":
            calls = [pid for _at, pid, *_ in hub.competition.open_calls() if not pid.startswith("op/")]
            if not calls:
                continue
            pid = rng.choice(calls)
            if rng.random() < 0.6:
                hub.act("confirm", {"press_id": pid, "missing_found": rng.randint(0, 2)}, who="desk")
                log.append(f"desk confirm {pid}")
            else:
                hub.act("void", {"press_id": pid}, who="desk", why="test")
                log.append(f"desk void {pid}")
        elif op == "reboot":
            sims[b].kill()
            rig.boards.remove(sims[b])
            sims[b] = rig.board(b, stations=BUTTONS, timings=FAST)
            synced(sims[b])                             # its schedule is in its flash
            log.append(f"reboot {b}")
        else:                                           # the hall's WiFi drops for a moment
            rig.broker.stop()
            for _ in range(2):
                k = rng.choice(BOARDS)
                gesture(sims[k], rng.randint(1, BUTTONS), HOLD[rng.choice(("tap", "confirm"))])
            rig.broker.start()
            log.append("outage")
    what = f"seed {seed}: {'; '.join(log)}"
    for b in BOARDS:
        until(lambda: board_view(sims[b]) == hub_view(hub, b), f"board {b} to hold the hub's states ({what})",
              timeout=45, seen=lambda: (board_view(sims[b]), hub_view(hub, b)))
    late, conflicts = replaced_decisions(hub)
    print(f"{what}\n-> {len(conflicts)} conflict(s), states {[hub_view(hub, b) for b in BOARDS]}")
    assert late == conflicts, what
    want, got = final_decisions(hub)
    assert want == got, what
    assert any(s.state in ("called", "done") for s in hub.station_states()) or not log, what


def test_boards_and_hub_agree_short(rig):
    play(rig, 1301, 12)


# the whole suite plays one long seed (each is about 25 s of a worker: three were a sixth of the
# suite's 5 minutes); TT_SOAK=1 plays all of them
LONG_SEEDS = [1302, 1303, 1304] if os.environ.get("TT_SOAK") == "1" else [1304]


@pytest.mark.slow
@pytest.mark.parametrize("seed", LONG_SEEDS)
def test_boards_and_hub_agree_long(rig, seed):
    play(rig, seed, 40)
