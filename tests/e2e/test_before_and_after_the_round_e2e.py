"""Issue 47 end to end: before the cue and after time-up around seed 000's
team relay (cz-championship-teams), as an organizer and a head referee run
it from the command line around `tabletimer run` and ten boards of the real
firmware (micropython, simulated pins) on the embedded broker:

40 individuals registered (`registrations.csv`, a club column) are drawn
into 10 teams of four kept apart by club (the same number twice: the same
teams; drawn again: other teams; every draw logged); the teams seated at
the hall's 10 tables (`hall.csv`, a board of 8 buttons each) with the find-
your-table list carrying the check-in codes; 7 teams checked in at the door,
so the start's question names the 3 absent and is refused unanswered, then
forced; the absent made DNS in one step.  The 7 teams play the relay's 8
puzzles on their boards, each call confirmed on its button (the referee's
hold), and the standings are what the rules make of the true press instants.
After time-up: a team agrees to its time; a plain change of it is refused,
the head referee's objection with its reason is recorded; the results are
made official; a change is refused; reopened (who, why); changed; official
again.  The sheet says official, and shows the agreement, the objection and
the reopening."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
import time
from pathlib import Path

from rig import made, synced
from tabletimer.hub.event.folder import event_folder
from tabletimer.hub.fleet.simulator import SimBoard
from tabletimer.hub.protocol.keys import BoardKeys
from tabletimer.hub.rules.standings import Confirm, DidNotStart, Press, RoundStart, rank
from hall import Hub
from waiting import until
from event_log import rows

TT = str(Path(sys.executable).parent / "tabletimer")
FAST = {"debounce_ms": 30, "confirm_ms": 600, "void_ms": 1500}     # the referee's hold: 0.6 s
LIMIT_S = 14                  # the round's limit (5 h in the rules): the 7 teams' 8 calls fit, then time-up
CLUBS = [8, 7, 6, 5, 4, 4, 3, 2, 1]       # 40 registered: 40 in clubs of these sizes, none in two


def tt(*args: str, code: int = 0) -> subprocess.CompletedProcess:
    """A command as the desk types it (no terminal: a question is answered no)."""
    r = subprocess.run([TT, *args], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == code, (args, r.returncode, r.stdout, r.stderr)
    return r


def teams_in(ev: Path) -> list[tuple[str, str, str]]:
    with open(ev / "entrants.csv", encoding="utf-8") as f:
        return [(r["id"], r["name"], r["members"]) for r in csv.DictReader(f)]


def standings(ev: Path) -> dict:
    return json.loads(tt("replay", str(ev), "--json").stdout)


def make_event(tmp: Path) -> tuple[Path, dict[str, str]]:
    ev = tmp / "cup"
    tt("init", str(ev), "--format", "cz-championship-teams", "--title", "Team Cup 2027")
    fmt = (ev / "format.toml").read_text()          # short limits, as the other e2e tests of the relay
    (ev / "format.toml").write_text(fmt.replace('rotation_interval = "8:00"', 'rotation_interval = "10s"')
                                    .replace('time_limit = "5:00:00"', f'time_limit = "0:{LIMIT_S:02d}"'))
    club_of, n = {}, 0
    for c, size in enumerate(CLUBS, 1):
        for _ in range(size):
            n += 1
            club_of[f"Puzzler {n:02d}"] = f"Club {c}"
    (ev / "registrations.csv").write_text("id,name,club\n" + "".join(
        f"{i},{name},{club}\n" for i, (name, club) in enumerate(club_of.items(), 1)), encoding="utf-8")
    (ev / "hall.csv").write_text("table,board,buttons\n" + "".join(
        f"Table {i},B{i:02d},8\n" for i in range(1, 11)), encoding="utf-8")
    return ev, club_of



def test_draw_seat_check_in_relay_agreement_objection_official_reopened(tmp_path, embedded_broker):
    began = time.monotonic()
    phases: dict[str, float] = {}

    def phase(name: str) -> None:
        phases[name] = time.monotonic() - began - sum(phases.values())
    ev, club_of = make_event(tmp_path)

    # ---------------------------------------------------------------- the draw
    draw = ["draw", str(ev), "--teams-of", "4", "--apart-by", "club"]
    out = tt(*draw, "--seed", "4711").stdout
    assert "draw number (seed): 4711" in out and "40 registered: 10 teams of 4; club kept apart" in out, out
    first = teams_in(ev)
    assert len(first) == 10
    for _, _, members in first:
        names = members.split("|")
        assert len(names) == 4 and len({club_of[m] for m in names}) == 4, members     # apart by club
    tt(*draw, "--seed", "1", "--why", "drawn again before the public")
    assert teams_in(ev) != first                                   # another number: other teams
    tt(*draw, "--seed", "4711", "--why", "the announced number")
    assert teams_in(ev) == first                                   # the same number: the same teams
    assert [r["payload"]["seed"] for r in rows(ev) if r["type"] == "draw"] == [4711, 1, 4711]

    # ---------------------------------------------------------------- seating
    out = tt("seat", str(ev), "--by", "random", "--seed", "5", "--public-url", "http://127.0.0.1:8765").stdout
    assert "seated 10 by random, seed 5 at 10 tables" in out, out
    loaded = event_folder.load(ev)
    assert len(loaded.stations) == 80 and len({s.table for s in loaded.stations}) == 10
    listed = (ev / "find-your-table.html").read_text()
    assert listed.index("Puzzler 01") < listed.index("Puzzler 40")
    for team, _, _ in first:                                       # each member's line: the team's code
        assert listed.count(f"<title>http://127.0.0.1:8765/checkin?entrant={team}</title>") == 4
    board_of = {s.entrant: s.board for s in loaded.stations}
    names = {e.id: e.name for e in loaded.entrants}
    phase("draw and seating")

    keys = BoardKeys(ev / "board-keys.json")
    port = embedded_broker.port
    sims = {b: SimBoard(b, "127.0.0.1", port, tmp_path / "boards", key=keys.ensure(b), stations=8, timings=FAST)
            for b in sorted({s.board for s in loaded.stations})}
    hub = None
    try:
        hub = Hub(ev, port)
        for s in sims.values():
            s.start()
        for s in sims.values():
            synced(s)
        phase("hub and 10 boards up")

        # ------------------------------------------------------------ the door: 3 absent
        teams = [t for t, _, _ in first]
        here, absent = teams[:7], teams[7:]
        for t in here:
            tt("act", str(ev), "check_in", f"entrant={t}", "--who", "Door 1")
        marks = {b: len(s.records) for b, s in sims.items()}
        def start_args(at: int) -> list[str]:
            return ["act", str(ev), "round_start", f"at={at}", "--who", "Head"]
        asked = tt(*start_args(int(time.time() * 1000) + 4000), code=2)   # the question, not answered yes:
        assert "this starts with 3 of 10 entrants not checked in (7 of 10 checked in): " in asked.stderr, \
            asked.stderr                                                  # not recorded
        for t in absent:
            assert f"{names[t]} ({t})" in asked.stderr
        assert "round_start" not in [r["type"] for r in rows(ev)]
        start = int(time.time() * 1000) + 4000      # the boards told in time on a loaded machine
        tt(*start_args(start), "--force")

        # ------------------------------------------------------------ the relay on the boards
        for b, s in sims.items():
            s.wait_for(lambda r: "sched" in r, timeout=30, start=marks[b])
        lead = start - int(time.time() * 1000)
        # a loaded CI machine once told the boards 496 ms after the start: the calls then move on by whole
        # seconds (up to 2, which LIMIT_S leaves room for), so the first is still ahead of its command and
        # each keeps its place within its second
        late = max(0, -((lead - 300) // 1000)) * 1000
        assert late <= 2000, f"the boards were told {-lead} ms after the start"
        lead += late
        plan: dict[str, list[tuple[int, int]]] = {}                  # board -> (button, ms after the start)
        for k, team in enumerate(here):
            at_puzzle = {s.puzzle: s.button for s in loaded.stations if s.entrant == team}
            # the team's calls in the relay's order: its 500s 200 ms apart from 1.2 s + k (50 ms apart,
            # a board starved on a loaded machine fell behind its burst of presses and holds), its 1000
            # (puzzle 8, its final time) at 3.5 s + k: mid-second (the format times whole seconds), more
            # than the objection's second after its last 500, a second between the teams
            plan[board_of[team]] = [(at_puzzle[n], 1000 + 1000 * k + (200 * n if n < 8 else 2500))
                                    for n in range(1, 9)]
        for b, calls in plan.items():
            for button, at in calls:       # the call, then the referee's confirming hold a second later
                t = lead + at
                # (300 ms later, a board 220 ms late on a loaded machine took the release and the
                # hold's press between for bounce, and made one long press of them: a call, no
                # confirm; 600 ms and 1 s later, in CI-like runs, a board made one long press of a call
                # and its hold all the same, its release and the hold's press never seen: cause not
                # known (the simulated chip's order of changes, fixed since, does not fit its records)
                sims[b].command(f"edges {button} {t}:1 {t + 80}:0 {t + 1100}:1 {t + 1800}:0")
        for b in plan:
            acked: set = set()
            try:
                sims[b].wait_for(lambda r: "acked" in r and (acked.add(r["acked"][1]) or len(acked) >= 16),
                                 timeout=60, start=marks[b])      # a loaded CI machine: 30 s was once short
            except TimeoutError:          # what the board made of the edges it was given (a flake read)
                raise AssertionError(f"board {b}: {len(acked)} of 16 acked; planned {plan[b]} (lead {lead} ms); "
                                     f"inputs, events, acks and logs after the start: {made(sims[b], marks[b], start)}"
                                     ) from None
        truth = []
        for b in plan:
            for r in sims[b].records[marks[b]:]:
                if r.get("sim") == "press":
                    truth.append((b, r["station"], r["true"]))
        assert len(truth) == 7 * 8, truth
        phase("door, start and the relay's 112 calls and holds")
        # the start has passed (the calls were made after it): the absent listed, then decided in one
        # step (000 has no window to arrive: from the start on)
        listed_absent = tt("absent", str(ev)).stdout
        assert all(t in listed_absent for t in absent) and not any(f"({t})" in listed_absent for t in here), \
            listed_absent
        tt("absent", str(ev), "--dns-all", "--who", "Head")
        dns = [r["payload"]["entrant"] for r in rows(ev) if r["type"] == "dns"]
        assert sorted(dns) == sorted(absent)
        stored = [r for r in rows(ev) if r["source"] == "board" and r["type"] in ("press", "confirm")]
        presses = {(r["board"], r["payload"]["station"]): f"{r['board']}/{r['payload']['boot']}/{r['payload']['seq']}"
                   for r in stored if r["type"] == "press"}
        assert len(presses) == 56 and len(stored) == 112, [(r["board"], r["type"]) for r in stored]
        entrant_at = {(s.board, s.button): (s.entrant, s.puzzle) for s in loaded.stations}
        facts: list = [RoundStart(at_ms=start)]
        for b, button, at in truth:
            team, puzzle = entrant_at[b, button]
            pid = presses[b, button]
            facts += [Press(entrant=team, puzzle=puzzle, at_ms=at, press_id=pid), Confirm(press_id=pid)]
        facts += [DidNotStart(entrant=t) for t in absent]
        expected = [(x.entrant, x.status, x.place, x.time_ms) for x in rank(loaded.format, loaded.entrants, facts)]
        got = standings(ev)
        assert [(r["entrant"], r["status"], r["place"], r["time_ms"]) for r in got["standings"]] == expected
        assert [x[0] for x in expected[:7]] == here and [x[1] for x in expected[7:]] == ["dns"] * 3
        assert not any(r["provisional"] for r in got["standings"])

        # ------------------------------------------------------------ after time-up
        winner = here[0]
        final = presses[board_of[winner], next(s.button for s in loaded.stations
                                               if s.entrant == winner and s.puzzle == 8)]
        for button in range(1, 9):      # the winners agree to each of their 8 times as the referee shows it
            tt("act", str(ev), "agree", f"press_id={presses[board_of[winner], button]}", "--who", "Eva")
        n = len(rows(ev))
        moved = next(at for b, button, at in truth if presses[b, button] == final) - 1000
        plain = tt("act", str(ev), "correct", f"press_id={final}", f"at={moved}", "--force", "--who", "Head", code=2)
        assert "the competitor agreed to this time (Eva" in plain.stderr and "--force is not enough" in plain.stderr
        assert len(rows(ev)) == n                                     # refused: nothing written
        tt("act", str(ev), "correct", f"press_id={final}", f"at={moved}", "--force", "--who", "Head",
           "--objection", "the call was a second earlier (video)")
        until(lambda: not standings(ev)["in_progress"], "the round's time up", timeout=LIMIT_S + 15)
        phase("agreement, objection, time-up")
        tt("results", str(ev), "--official", "--who", "Head")
        n = len(rows(ev))
        change = ["act", str(ev), "dq", f"entrant={here[1]}", "reason=a phone at the table", "--force", "--who", "Head"]
        refused = tt(*change, code=2)
        assert "the results are official (made official by Head" in refused.stderr and "reopen first" in refused.stderr
        assert len(rows(ev)) == n
        tt("results", str(ev), "--reopen", "--who", "Head", "--why", "a phone at the table, reported at the desk")
        tt(*change)
        sheet, doc = tmp_path / "sheet.html", tmp_path / "results.json"
        tt("results", str(ev), "--official", "--who", "Head", "--html", str(sheet), "--json", str(doc))
        marks_of = [r["type"] for r in rows(ev) if r["type"] in ("official", "reopen")]
        assert marks_of == ["official", "reopen", "official"]
        tt(*change, code=2)                                           # official again: refused again
    finally:
        out = hub.stop() if hub else ""
        for s in sims.values():
            s.stop()
    html = sheet.read_text()
    assert "Official results: made official by Head" in html, out[-2000:]
    assert '<span class="badge agreed">agreed</span>' in html
    assert f"Objection: {names[winner]}, puzzle 8: the call was a second earlier (video) (correct by Head" in html
    assert "reopened by Head" in html and "a phone at the table, reported at the desk" in html
    result = json.loads(doc.read_text())
    assert result["official"].startswith("made official by Head") and len(result["objections"]) == 1
    by = {r["entrant"]: r for r in result["rows"]}
    assert by[winner]["agreed"] and not by[here[2]]["agreed"] and by[here[1]]["status"] == "dq"
    assert by[winner]["time_ms"] == next(x[3] for x in expected if x[0] == winner) - 1000   # the objection's time
    phase("official, reopened, official again")
    print(f"issue 47 e2e: {time.monotonic() - began:.1f} s (" + ", ".join(f"{k} {v:.1f} s" for k, v in phases.items())
          + ")")
