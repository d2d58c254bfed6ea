"""The chaos rehearsal (issue #7): a whole round of the team-relay preset,
sped up, played by simulated boards (the real firmware in real micropython
processes) while boards lose power, lose WiFi, the broker restarts and the
hub is SIGKILLed and restarted, at random moments from a seeded plan.

What must hold afterwards:
- every true finish call (the instant the simulated contact closed) is in
  the hub's log exactly once, at its true instant (within the clock-sync
  error), under the (board, boot, seq) the board gave it;
- the standings `tabletimer replay DIR --json` rebuilds from that log are
  the ones the ranking engine computes directly from the true instants.

The hall: one board per team, one button per relay station (4 buttons).
Buttons 1-3 are the relay stations 1-3; button 4 is relay station 4 and,
after the relay, the team's "next puzzle" button (stations.csv gives it no
puzzle: its n-th finish call is puzzle 4, 5, 6, 7, 8 - hub/event/fold/competition.py).
Every finish call is checked by a referee on the button: sometimes a few
short presses (missing pieces), then a hold (confirm).  Some teams run out
of time.

Before the round the boards are powered on in batches and synced (a real
hall's boards are on long before the start); the hall's clock is the
scenario's: presses and faults are paced by sleeping until their planned
instant, everything else waits for what the boards, the proxy or the hub
report, with deadlines.  A board is only pressed between its power losses,
and a power loss only comes once the board has journaled its last gesture.

The seed: TT_CHAOS_SEED (default below); it is printed and named in every
assertion message, so a failing run can be repeated with the same plan
(the plan is reproducible; the exact interleaving with the operating
system's scheduling is not).  Every run leaves chaos-record.json in its
tmp_path (plan, each table's log, every board record but the buzzer's, the
faults, the hubs' output) for a post-mortem; the failure message names it.

`test_chaos_short` runs in the default suite (6 boards, 24 stations, a
24 s round); `test_chaos_hall` is the full rehearsal (75 boards, 300
stations, a 100 s round), marked slow.
"""

from __future__ import annotations

import dataclasses
import json
import os
import random
import re
import threading
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from hall import Hub, act, replay_json, stored_presses
from standings_check import compare_standings
from tabletimer.hub.event.folder import event_folder
from tabletimer.hub.rules.formats import load_format, preset_names
from tabletimer.hub.protocol.keys import BoardKeys
from tabletimer.hub.rules.standings import Confirm, Press, RoundStart, rank
from tabletimer.hub.event.log.store import EventStore
from tabletimer.tools.testing.netimpair import NetImpair
from tabletimer.hub.fleet.simulator import SimBoard

DEFAULT_SEED = 7007
TOL_MS = 15                  # recorded vs true instant: the clock-sync error allowed (or the
                             # board's stated one, when larger)
BUTTONS = 4
# the referee's gestures, shortened like the round (the firmware's defaults are 2 s and 6 s)
CONFIRM_MS, VOID_MS = 300, 3000
TIMINGS = {"confirm_ms": CONFIRM_MS, "void_ms": VOID_MS, "quiet_ms": 200}
HOLD_MS = 700                # a confirm: held well past CONFIRM_MS, far from VOID_MS
COUNT_MS = 60                # a short press: one missing piece (once the hub has the call: count_missing)
END_MARGIN_MS = 1500         # no finish call this close to time-up (the board may see it either side)
WAIT_S = 30                  # deadline for a board to show the effect of one press
BOOT_BATCH = 8               # boards powered on together before the round


def _relay_preset() -> str:
    names = [n for n in preset_names() if load_format(n).relay is not None]
    assert names, "no preset with a relay part"
    return names[0]


@dataclass(frozen=True)
class Scale:
    teams: int
    limit_s: int             # the round's time limit (sped up)
    rotation_s: int          # the relay's rotation interval (sped up)
    reboots: int             # board power losses
    outages: int             # WiFi outages (a board's link cut, reconnects refused)
    hub_kills: int
    broker_restarts: int


SHORT = Scale(teams=6, limit_s=24, rotation_s=3, reboots=4, outages=6, hub_kills=1, broker_restarts=1)
HALL = Scale(teams=75, limit_s=100, rotation_s=10, reboots=45, outages=60, hub_kills=3, broker_restarts=2)


# ----------------------------------------------------------------------------- the plan

@dataclass(frozen=True)
class Step:
    at_ms: int               # planned, since the round start (execution may be later, never earlier)
    kind: str                # "call" | "confirm" | "reboot" | "outage"
    station: int = 0
    missing: int = 0         # confirm: short presses first (missing pieces)
    seconds: float = 0.0     # reboot: time without power; outage: its length


@dataclass(frozen=True)
class Fault:
    at_ms: int
    kind: str                # "hub" (SIGKILL, restart) | "broker" (stop, start)
    down_s: float


def team_plan(rng: random.Random, limit_ms: int, speed: float) -> list[Step]:
    """One team's finish calls and the referee's confirmations.  Relay: four stations worked at once, finished in any order (the
    relay model keeps a member at every unfinished station, so any order is
    possible); then the pairs' two puzzles, the team's 500 and the 1000, each
    on button 4 after the previous call there has been confirmed.  speed:
    how long the team takes (1: typical; above ~1.3 it runs out of time)."""
    steps: list[Step] = []

    def call(at: float, station: int) -> float:
        """A finish call and its confirmation; when the referee is done."""
        missing = rng.choices([0, 1, 2], [0.8, 0.15, 0.05])[0]
        check = at + rng.uniform(300, 1200)
        steps.append(Step(int(at), "call", station))
        steps.append(Step(int(check), "confirm", station, missing=missing))
        return check + missing * 200 + HOLD_MS + 300

    relay = {s: rng.uniform(0.08, 0.33) * limit_ms * speed for s in range(1, BUTTONS + 1)}
    free4 = 0.0
    for s, at in relay.items():
        done = call(at, s)
        if s == BUTTONS:
            free4 = done
    t = max(relay.values())                  # part 1 complete
    pairs = sorted(t + rng.uniform(0.06, 0.18) * limit_ms * speed for _ in range(2))
    for at in pairs:                         # part 2: two pairs, both call on button 4
        free4 = call(max(at, free4 + 200), BUTTONS)
    t = pairs[1]
    for lo, hi in ((0.05, 0.14), (0.06, 0.18)):     # part 3, the final 1000
        t = max(t + rng.uniform(lo, hi) * limit_ms * speed, free4 + 200)
        free4 = call(t, BUTTONS)
    return steps


def make_plan(seed: int, scale: Scale) -> tuple[dict[int, list[Step]], list[Fault], dict[int, dict]]:
    """Steps per team (1..teams), the hall-wide faults, and each board's
    clock and link (offset, drift, delay, jitter)."""
    rng = random.Random(seed)
    limit = scale.limit_s * 1000
    slow = rng.randint(1, scale.teams)       # at least one team runs out of time
    plans = {n: team_plan(rng, limit, 2.0 if n == slow else rng.uniform(0.8, 1.5))
             for n in range(1, scale.teams + 1)}
    for _ in range(scale.reboots):
        n = rng.randint(1, scale.teams)
        plans[n].append(Step(int(rng.uniform(0.05, 0.9) * limit), "reboot", seconds=rng.uniform(0.2, 2.0)))
    for _ in range(scale.outages):
        n = rng.randint(1, scale.teams)
        plans[n].append(Step(int(rng.uniform(0.05, 0.9) * limit), "outage",
                             seconds=rng.uniform(1.0, min(6.0, scale.limit_s / 6))))
    for steps in plans.values():
        steps.sort(key=lambda s: s.at_ms)    # stable: a call stays before its confirmation
    # hall-wide faults one at a time, each in its own slot of the round
    kinds = ["hub"] * scale.hub_kills + ["broker"] * scale.broker_restarts
    rng.shuffle(kinds)
    slot = 0.8 * limit / max(1, len(kinds))
    faults = [Fault(int(0.08 * limit + i * slot + rng.uniform(0, slot / 2)), k, rng.uniform(0.5, 2.5))
              for i, k in enumerate(kinds)]
    links = {n: {"clock_offset_ms": rng.randint(-3 * 3_600_000, 3 * 3_600_000),
                 "drift_ppm": rng.randint(-50, 50),
                 "delay_ms": rng.uniform(1, 15), "jitter_ms": rng.uniform(0, 3)}
             for n in range(1, scale.teams + 1)}
    return plans, faults, links


# ----------------------------------------------------------------------------- the hall

def board_id(n: int) -> str:
    return f"T{n:02d}"


def team_id(n: int) -> str:
    return f"team{n:02d}"


def make_event(tmp: Path, scale: Scale) -> Path:
    """The relay preset, sped up (time limit, rotation interval) with 1 ms
    resolution; one board per team, buttons 1-3 the relay stations 1-3,
    button 4 relay station 4 and then the team's next puzzles."""
    preset = _relay_preset()
    ev = event_folder.init(tmp / "event", preset)
    text = (ev / "format.toml").read_text()
    for key, value in (("time_limit", f'"{scale.limit_s}s"'), ("resolution", '"1ms"'),
                       ("rotation_interval", f'"{scale.rotation_s}s"'),
                       ("capacity", str(max(scale.teams, 20)))):     # a hall bigger than the rules'
        text, n = re.subn(rf'^{key} = ("[^"]*"|\d+)', f"{key} = {value}", text, flags=re.M)
        assert n == 1, f"{preset}: expected one {key} in format.toml, found {n}"
    (ev / "format.toml").write_text(text)
    fmt = load_format(ev / "format.toml")
    assert fmt.time_limit_ms == scale.limit_s * 1000 and fmt.resolution_ms == 1
    assert fmt.capacity is not None and fmt.capacity >= scale.teams
    assert fmt.relay is not None and fmt.relay.rotation_interval_ms == scale.rotation_s * 1000
    assert list(fmt.relay.numbers) == [1, 2, 3, 4] and len(fmt.puzzles) == 8, fmt.puzzles_text()
    members = "|".join(f"Member {k}" for k in range(1, 5))
    (ev / "entrants.csv").write_text("id,name,kind,members\n" + "".join(
        f"{team_id(n)},Team {n},team,{members}\n" for n in range(1, scale.teams + 1)))
    (ev / "stations.csv").write_text("board,button,table,entrant,puzzle\n" + "".join(
        f"{board_id(n)},{b},Table {n},{team_id(n)},{b if b < BUTTONS else ''}\n"
        for n in range(1, scale.teams + 1) for b in range(1, BUTTONS + 1)))
    keys = BoardKeys(ev / "board-keys.json")
    for n in range(1, scale.teams + 1):
        keys.ensure(board_id(n))
    loaded = event_folder.load(ev)
    assert not loaded.warnings, loaded.warnings
    return ev


@dataclass
class Call:
    """One finish call as it really happened."""
    station: int
    puzzle: int
    true_ms: int             # the instant the contact closed (host clock = hub clock)
    key: tuple[int, int]     # (boot, seq) the board journaled it under
    missing: int | None = None   # set once a referee confirmed it


@dataclass
class Team:
    n: int
    port: int
    key: str
    link: dict
    workdir: Path
    steps: list[Step]
    sims: list[SimBoard] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    log: list[str] = field(default_factory=list)
    skipped: list[Step] = field(default_factory=list)
    reboots: int = 0
    outages: int = 0

    @property
    def board(self) -> str:
        return board_id(self.n)

    @property
    def entrant(self) -> str:
        return team_id(self.n)

    @property
    def sim(self) -> SimBoard:
        return self.sims[-1]

    def boot(self) -> SimBoard:
        """Power on (again): the same id, key, configuration and flash folder."""
        sim = SimBoard(self.board, "127.0.0.1", self.port, self.workdir, key=self.key, stations=BUTTONS,
                       clock_offset_ms=self.link["clock_offset_ms"], drift_ppm=self.link["drift_ppm"],
                       timings=TIMINGS)
        self.sims.append(sim)
        return sim.start()

    def records(self, what: str) -> set[tuple[int, int]]:
        return {tuple(r[what]) for s in self.sims for r in s.records if what in r}


def wait_index(sim: SimBoard, pred, start: int, timeout: float = WAIT_S) -> tuple[int, dict]:
    """The first record from index start on that matches pred, and its index."""
    i = start - 1

    def count(rec: dict) -> bool:
        nonlocal i
        i += 1
        return pred(rec)
    rec = sim.wait_for(count, timeout=timeout, start=start)
    return i, rec


def wait_synced(sim: SimBoard, samples: int, timeout: float) -> None:
    """Until this board (this life) has had `samples` clock-sync replies."""
    n = 0

    def count(rec: dict) -> bool:
        nonlocal n
        n += "sync" in rec
        return n >= samples
    sim.wait_for(count, timeout=timeout)


def sync_delays(sim: SimBoard) -> list[int]:
    """Round trips of the board's sync samples (this life), oldest first."""
    return [r["sync"][1] for r in list(sim.records) if "sync" in r]


def gesture(sim: SimBoard, station: int, hold_ms: int, makes: str | None) -> tuple[dict, tuple[int, int] | None]:
    """Press a station's button for hold_ms and wait until the board has
    done all it does with it: the true press record, and for a gesture that
    makes an event (makes = its type) the (boot, seq) it was journaled
    under.  Returns once the button is released and the board is past
    writing its journal entry and its stations' state (app.inputs journals,
    then saves the state, before anything else runs: the first record after
    the journal entry that is not one comes after both), so power may go at
    any moment after this, and the next press is a new one."""
    start = len(sim.records)
    sim.press(station, hold_ms)
    try:
        _, true = wait_index(sim, lambda r: r.get("sim") == "press" and r["station"] == station, start)
        wait_index(sim, lambda r: r.get("input") == [station, 0], start)
        if makes is None:
            return true, None
        j, rec = wait_index(sim, lambda r: "journaled" in r, start)
        assert rec["type"] == makes, f"{sim.board_id}: expected a {makes} event, the board made {rec}"
        wait_index(sim, lambda r: "journaled" not in r, j + 1)
    except (TimeoutError, AssertionError) as e:
        seen = [r for r in sim.records[start:] if r.get("sim") != "buzz" and "heap" not in r][:30]
        raise AssertionError(f"{sim.board_id}: press {station} for {hold_ms} ms ({makes or 'no event'}): "
                             f"{e}; the board's records since: {seen}") from None
    return true, (rec["journaled"][0], rec["journaled"][1])


def count_missing(sim: SimBoard, station: int) -> None:
    """One missing piece counted at a call, as a referee counts it: a short
    press, which the board counts (its stray event says "missing", and it
    answers with the count's blip, 1800 Hz) once the hub has the call and
    the station was quiet for quiet_ms; before that (an outage, a reboot:
    the hub's ack not there yet) the press is a repeat call, answered with
    the call's beep, counted as nothing: again, a little later (issue 45,
    item 3).  Whether it counted is read from the event the board journaled,
    not from the blip: a board that has just rebooted is still playing the
    answers to its journal's events, and a fifth sound waiting is dropped
    (app.play), so a counted press once went unheard, was pressed again and
    counted twice (2026-12-06, T36 after a power loss)."""
    deadline = time.monotonic() + 2 * WAIT_S
    while True:
        start = len(sim.records)
        _, key = gesture(sim, station, COUNT_MS, "stray")     # every short press at a call is reported
        made = next(r for r in sim.records[start:] if r.get("journaled") == [key[0], key[1]])
        if made.get("missing") is not None:
            return
        assert time.monotonic() < deadline, f"{sim.board_id}: station {station} never counted a missing piece"
        time.sleep(0.5)


class Scenario:
    """The round, played: one thread per table follows its steps on the
    scenario's clock; one thread strikes the hall-wide faults."""

    def __init__(self, ev: Path, scale: Scale, seed: int, broker, net: NetImpair, tmp: Path) -> None:
        self.ev, self.scale, self.seed, self.broker, self.net = ev, scale, seed, broker, net
        self.ctx = f"[chaos seed {seed}: rerun with TT_CHAOS_SEED={seed}]"
        plans, self.faults, links = make_plan(seed, scale)
        keys = BoardKeys(ev / "board-keys.json")
        self.teams = [Team(n, net.port_for(board_id(n)), keys.key(board_id(n)), links[n], tmp / "boards",
                           plans[n]) for n in range(1, scale.teams + 1)]
        for t in self.teams:
            net.set(t.board, up_ms=t.link["delay_ms"], down_ms=t.link["delay_ms"],
                    jitter_ms=t.link["jitter_ms"], jitter="normal")
        self.hub: Hub | None = None
        self.t0 = 0
        self.errors: list[str] = []
        self.fault_log: list[str] = []
        self.hub_output: list[str] = []      # each hub's, the killed ones' too
        self.slow_sync_at_start: list[str] = []

    # ------------------------------------------------------------ helpers
    def wait_until(self, at_ms: float) -> None:
        """The scenario's clock: pacing the round, not synchronisation."""
        delay = (self.t0 + at_ms) / 1000 - time.time()
        if delay > 0:
            time.sleep(delay)

    def now_ms(self) -> int:
        return int(time.time() * 1000) - self.t0

    # ------------------------------------------------------------ a table
    def play_table(self, team: Team) -> None:
        try:
            on_button = 0                         # finish calls made on the next-puzzle button
            open_calls: dict[int, Call] = {}      # station -> call waiting for the referee
            last_call = self.scale.limit_s * 1000 - END_MARGIN_MS
            for step in team.steps:
                if step.kind == "call" and step.at_ms > last_call:
                    team.skipped.append(step)             # out of time: this puzzle stays unfinished
                    continue
                if step.kind == "confirm" and step.station not in open_calls:
                    continue                              # its call was not made
                self.wait_until(step.at_ms)
                sim = team.sim
                if step.kind == "call":
                    if self.now_ms() > last_call:         # delayed past the end (a reboot, a referee)
                        team.skipped.append(step)
                        continue
                    rec, key = gesture(sim, step.station, 80, "press")
                    assert key
                    if step.station < BUTTONS:
                        puzzle = step.station
                    else:
                        on_button += 1
                        puzzle = BUTTONS - 1 + on_button      # 4, 5, 6, 7, 8
                    c = Call(step.station, puzzle, rec["true"], key)
                    team.calls.append(c)
                    open_calls[step.station] = c
                    team.log.append(f"{self.now_ms()} call st{step.station} puzzle {puzzle} {key}")
                elif step.kind == "confirm":
                    c = open_calls.pop(step.station)
                    for _ in range(step.missing):         # one short press per missing piece
                        count_missing(sim, step.station)
                    _, key = gesture(sim, step.station, HOLD_MS, "confirm")
                    c.missing = step.missing
                    team.log.append(f"{self.now_ms()} confirm st{step.station} missing {step.missing} {key}")
                elif step.kind == "outage":
                    self.net.outage(team.board, step.seconds)
                    team.outages += 1
                    team.log.append(f"{self.now_ms()} wifi out {step.seconds:.1f} s")
                elif step.kind == "reboot":
                    # power loss, only between gestures (a board that is off is not pressed)
                    sim.kill()
                    team.log.append(f"{self.now_ms()} power off {step.seconds:.1f} s")
                    time.sleep(step.seconds)              # the scenario: the board stays off this long
                    sim = team.boot()
                    team.reboots += 1
                    sim.wait_for(lambda r: "booted" in r, timeout=WAIT_S)
                    # it finds the schedule in its flash, but until it has the hub's
                    # time again a press would be reported as a stray (firmware/board.py,
                    # Board.state): the table waits until the board has synced, well
                    # if that comes within 30 s (the hall may be busy with faults)
                    wait_synced(sim, 1, timeout=90)
                    good = self.wait_good_sync(team, timeout=30)
                    team.log.append(f"{self.now_ms()} booted again, synced "
                                    f"(best round trip {min(sync_delays(sim))} ms{'' if good else ': slow'})")
        except Exception as e:   # noqa: BLE001 - reported with the table's log by the test
            self.errors.append(f"table {team.board}: {e!r}\n{traceback.format_exc()}\n"
                               f"log: {team.log[-12:]}")

    # ------------------------------------------------------------ the hall
    def strike(self) -> None:
        try:
            for f in self.faults:
                self.wait_until(f.at_ms)
                if f.kind == "hub":
                    assert self.hub
                    self.hub.kill()
                    self.hub_output.append("".join(self.hub.lines))
                    self.fault_log.append(f"{self.now_ms()} hub SIGKILL")
                    time.sleep(f.down_s)                  # the scenario: the hub stays down this long
                    self.hub = Hub(self.ev, self.broker.port)
                    self.fault_log.append(f"{self.now_ms()} hub restarted")
                else:
                    self.broker.stop()
                    self.fault_log.append(f"{self.now_ms()} broker stopped")
                    time.sleep(f.down_s)                  # the scenario: the broker stays down this long
                    self.broker.start()
                    self.fault_log.append(f"{self.now_ms()} broker started")
        except Exception as e:   # noqa: BLE001
            self.errors.append(f"faults: {e!r}\n{traceback.format_exc()}")

    @staticmethod
    def wait_good_sync(team: Team, timeout: float) -> bool:
        """Until the board (this life) has had a sync exchange whose round trip
        is close to its link's (both ways, plus a little for the broker and
        the hub): its clock is then as good as the link allows.  The
        firmware keeps asking every 2 s until it has one.  False if none
        came in time (the press will carry a larger error, which the checks
        then report)."""
        limit = 2 * team.link["delay_ms"] + 25
        try:
            team.sim.wait_for(lambda r: "sync" in r and r["sync"][1] <= limit, timeout=timeout)
            return True
        except TimeoutError:
            return False

    def power_on(self) -> None:
        """Boards come on in batches, each with a good sync exchange before
        the next batch (a real hall's boards are on for many minutes before
        the round; 75 boards starting at once on one machine would start the
        round with second-long round trips)."""
        for i in range(0, len(self.teams), BOOT_BATCH):
            batch = self.teams[i:i + BOOT_BATCH]
            for team in batch:
                team.boot()
            for team in batch:
                team.sim.wait_for(lambda r: "booted" in r, timeout=60)
                if not self.wait_good_sync(team, timeout=30):
                    self.slow_sync_at_start.append(team.board)

    def run(self) -> dict:
        timing: dict[str, float] = {}
        t = time.monotonic()
        self.hub = Hub(self.ev, self.broker.port)
        self.power_on()
        timing["boot"] = time.monotonic() - t
        # the round starts in 2 s (every board has its schedule before then)
        self.t0 = int(time.time() * 1000) + 2000
        act(self.ev, "round_start", at=self.t0, warnings=[self.scale.limit_s * 100])
        for team in self.teams:
            team.sim.wait_for(lambda r: "sched" in r, timeout=30)
        t = time.monotonic()
        threads = [threading.Thread(target=self.play_table, args=(team,), daemon=True) for team in self.teams]
        threads.append(threading.Thread(target=self.strike, daemon=True))
        for th in threads:
            th.start()
        for th in threads:
            th.join(self.scale.limit_s * 3 + 120)
            assert not th.is_alive(), f"{self.ctx} a table or the fault thread is stuck"
        timing["round"] = time.monotonic() - t
        assert not self.errors, f"{self.ctx}\n" + "\n".join(self.errors)
        # every event of every board (all its lives) acknowledged
        t = time.monotonic()
        for team in self.teams:
            pending = team.records("journaled") - team.records("acked")

            def all_acked(rec: dict, pending: set = pending) -> bool:
                if "acked" in rec:
                    pending.discard(tuple(rec["acked"]))
                return not pending
            if pending:
                try:
                    team.sim.wait_for(all_acked, timeout=120)
                except TimeoutError as e:
                    raise AssertionError(f"{self.ctx} {team.board}: never acknowledged {sorted(pending)}: "
                                         f"{e}\nlog: {team.log}\nfaults: {self.fault_log}") from None
        timing["drain"] = time.monotonic() - t
        return timing

    def dump(self, path: Path) -> None:
        """What happened, for a post-mortem: the plan, each table's log and
        its boards' records (but the buzzer's), the faults, the hubs' output."""
        data = {"seed": self.seed, "scale": dataclasses.asdict(self.scale), "t0": self.t0,
                "faults": self.fault_log, "hub_output": self.hub_output,
                "teams": {t.board: {"log": t.log, "steps": [dataclasses.asdict(s) for s in t.steps],
                                    "calls": [dataclasses.asdict(c) for c in t.calls],
                                    "boards": [[r for r in sim.records if r.get("sim") != "buzz"]
                                               for sim in t.sims]}
                          for t in self.teams}}
        path.write_text(json.dumps(data))
        self.ctx += f" [record: {path}]"

    def close(self) -> str:
        out = self.hub.stop() if self.hub else ""
        self.hub_output.append(out)
        for team in self.teams:
            for sim in team.sims:
                sim.kill()
            self.net.down(team.board)     # returns once the board's connections are gone
        return out


# ----------------------------------------------------------------------------- checks

def expected_standings(ev: Path, t0: int, teams: list[Team]):
    """The ranking engine, directly, on the truth: the round start and every
    finish call at its true instant, with the referee's confirmations."""
    loaded = event_folder.load(ev)
    facts: list = [RoundStart(at_ms=t0)]
    for team in teams:
        for c in team.calls:
            pid = f"{team.board}/{c.key[0]}/{c.key[1]}"
            facts.append(Press(entrant=team.entrant, puzzle=c.puzzle, at_ms=c.true_ms, press_id=pid))
            if c.missing is not None:
                facts.append(Confirm(press_id=pid, missing_found=c.missing))
    return rank(loaded.format, loaded.entrants, facts)


def check_log(ev: Path, teams: list[Team]) -> tuple[list[str], list[int], dict[str, int]]:
    """Every true finish call in the log exactly once, under the (board,
    boot, seq) it was journaled with, at its true instant (within TOL_MS, or
    the clock error its board stated); nothing pressed outside the round.
    Returns the problems, every press's time error (ms, sorted), and per
    entrant the largest error its board stated for a press (+2 ms of
    rounding), the tolerance its standings' times are held to."""
    problems: list[str] = []
    presses = stored_presses(ev)
    keys = [(e["board"], e["payload"]["boot"], e["payload"]["seq"]) for e in presses]
    if len(set(keys)) != len(keys):
        problems.append(f"presses stored twice: {sorted(k for k in set(keys) if keys.count(k) > 1)[:10]}")
    true = {(t.board, *c.key): c for t in teams for c in t.calls}
    if set(keys) != set(true):
        problems.append(f"stored presses differ from the true ones: missing {sorted(set(true) - set(keys))[:10]}, "
                        f"extra {sorted(set(keys) - set(true))[:10]}")
    errors: list[int] = []
    late: list[tuple[int, str]] = []
    entrant = {t.board: t.entrant for t in teams}
    stated: dict[str, int] = {}
    for e, k in zip(presses, keys):
        c = true.get(k)
        if c is None:
            continue
        p = e["payload"]
        who = entrant[e["board"]]
        stated[who] = max(stated.get(who, 0), (p.get("err") or 0) + 2)
        if p["station"] != c.station:
            problems.append(f"{k}: station {p['station']}, pressed {c.station}")
        err = abs(p["at"] - c.true_ms)
        errors.append(err)
        # a loaded machine lengthens the sync round trips: the board's own
        # stated bound then is the one to hold it to
        if err > max(TOL_MS, (p.get("err") or 0) + 2):
            late.append((err, f"{k} recorded {p['at'] - c.true_ms:+d} ms off (the board's sync error "
                              f"bound {p.get('err')} ms; received {e['received_ms'] - c.true_ms} ms after the press)"))
    if late:
        late.sort(reverse=True)
        problems.append(f"{len(late)} of {len(presses)} presses recorded more than {TOL_MS} ms (or their "
                        "board's stated error) from the true instant, e.g.:\n  " + "\n  ".join(m for _, m in late[:10]))
    store = EventStore(ev / "events.sqlite")
    try:
        # (a short press at a call is reported as a stray at the call: the referee's count, or a
        # repeat call; any other stray is a press lost to a wrong state)
        strays = [e for e in store.events() if e["type"] == "stray" and e["payload"]["state"] != "called"]
    finally:
        store.close()
    if strays:
        problems.append(f"presses reported as strays: {strays[:5]}")
    return problems, sorted(errors), stated


def rehearse(tmp_path: Path, broker, scale: Scale) -> None:
    seed = int(os.environ.get("TT_CHAOS_SEED", DEFAULT_SEED))
    print(f"chaos rehearsal: seed {seed}, {scale}")
    began = time.monotonic()
    ev = make_event(tmp_path, scale)
    with NetImpair(upstream=(broker.host, broker.port), seed=seed) as net:
        sc = Scenario(ev, scale, seed, broker, net, tmp_path)
        try:
            timing = sc.run()
        finally:
            out = sc.close()
            sc.dump(tmp_path / "chaos-record.json")
    ctx = sc.ctx
    assert "Traceback" not in out, f"{ctx} the hub failed:\n{out[-3000:]}"
    teams = sc.teams
    calls = sum(len(t.calls) for t in teams)
    finished = sum(1 for t in teams if len(t.calls) == 8)
    assert calls >= 4 * scale.teams, f"{ctx} too few finish calls were made ({calls})"
    t = time.monotonic()
    log_problems, errors, stated = check_log(ev, teams)
    # a time in the standings is held to the error the board stated, as its press is above (a
    # loaded machine lengthens the sync round trips: 2026-12-05, a board stated 81 ms and
    # was 55 ms off, and the standings were compared at TOL_MS alone)
    table_problems = compare_standings(replay_json(ev), expected_standings(ev, sc.t0, teams), TOL_MS, stated)
    timing["check"] = time.monotonic() - t
    print(f"chaos rehearsal, seed {seed}: {calls} finish calls, {finished}/{scale.teams} teams finished, "
          f"{sum(t.reboots for t in teams)} reboots, {sum(t.outages for t in teams)} WiFi outages, "
          f"faults {sc.fault_log}; time errors |recorded - true|: median {errors[len(errors) // 2]} ms, "
          f"90% {errors[len(errors) * 9 // 10]} ms, max {errors[-1]} ms; "
          f"boards slow to sync before the round: {sc.slow_sync_at_start or 'none'}; "
          + ", ".join(f"{k} {v:.1f} s" for k, v in timing.items())
          + f"; total {time.monotonic() - began:.1f} s")
    assert not log_problems and not table_problems, (
        f"{ctx}\n" + "".join(f"the log: {m}\n" for m in log_problems)
        + ("the standings differ from the truth's:\n  " + "\n  ".join(table_problems[:40]) if table_problems else ""))


def test_chaos_short(tmp_path, embedded_broker):
    rehearse(tmp_path, embedded_broker, SHORT)


@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_chaos_hall(tmp_path, embedded_broker):
    """Selected by tests/conftest.py: in the whole suite (tools/dev.py test), with CI=true, -m slow or
    TT_SLOW=1; run beside the rest at idle priority (tools/dev.py)."""
    rehearse(tmp_path, embedded_broker, HALL)
