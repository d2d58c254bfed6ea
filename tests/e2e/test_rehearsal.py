"""A rehearsal without hardware (issue #16: "Rehearsal of a real event
without hardware"): `tabletimer rehearse DIR` runs a copy of the folder
(DIR/rehearsal, a log and keys of its own) with a simulated board (the real
firmware in micropython) for each board of its stations.csv; `tabletimer
press` from another terminal presses their buttons: a finish call, missing
pieces, a confirmation -- the whole flow of a table, stored and ranked as at
the event, and nothing of it in the event's own log."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from brokers import free_port
from waiting import Output
from tabletimer.hub.event.folder import event_folder
from tabletimer.hub.event.log.store import EventStore

TT = str(Path(sys.executable).parent / "tabletimer")


def press(ev: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([TT, "press", str(ev), *args], capture_output=True, text=True, timeout=30)


def test_a_rehearsal_plays_a_table_from_the_command_line(tmp_path):
    ev = event_folder.init(tmp_path / "event", "rogaland-individuals")
    (ev / "entrants.csv").write_text("id,name,eligible\n1,Åse,yes\n2,Bjørn,no\n")
    (ev / "stations.csv").write_text("board,button,table,entrant\nT01,1,Bord 1,1\nT01,2,Bord 1,2\n")
    refused = press(ev, "T01", "1")
    assert refused.returncode == 2 and "no rehearsal runs on" in refused.stderr
    hub = subprocess.Popen([TT, "rehearse", str(ev), "--port", str(free_port()), "--console-listen", "off"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out = Output(hub.stdout)
    try:
        out.wait_for(lambda ln: ln.startswith("rehearsal: 1 simulated board(s) (T01)"), "the rehearsal's help")
        out.wait_for(lambda ln: ln.startswith("board T01 online"), "the simulated board online")
        rehearsal = ev / "rehearsal"
        # a second rehearsal, of edited entrants, is refused and changes nothing of this one (issue #32)
        kept = {n: ((rehearsal / n).read_bytes(), (rehearsal / n).stat().st_mtime_ns)
                for n in ("format.toml", "entrants.csv", "stations.csv", "board-keys.json")}
        log = (rehearsal / "events.sqlite").stat().st_ino
        (ev / "entrants.csv").write_text("id,name,eligible\n1,Åse EDITED,yes\n2,Bjørn,no\n")
        again = subprocess.run([TT, "rehearse", str(ev), "--fresh", "--port", str(free_port()), "--console-listen",
                                "off"], capture_output=True, text=True, timeout=60)
        assert {n: ((rehearsal / n).read_bytes(), (rehearsal / n).stat().st_mtime_ns) for n in kept} == kept
        assert (rehearsal / "events.sqlite").stat().st_ino == log          # --fresh did not remove it
        assert again.returncode == 2 and f"another hub is already running on {rehearsal}" in again.stderr
        assert f"(pid {hub.pid} " in again.stderr and "Nothing in" in again.stderr, again.stderr
        subprocess.run([TT, "act", str(rehearsal), "round_start"], check=True, capture_output=True)
        out.wait_for(lambda ln: "round_start" in ln, "the round started")
        assert press(ev, "T01", "2").returncode == 0
        out.wait_for(lambda ln: ln.startswith("press 2 (boot 1 seq 1)"), "the finish call stored")
        # the board counts missing pieces once the hub has the call and its button was quiet for 5 s
        # (earlier a short press is the competitor's repeat call: issue 45, item 3)
        time.sleep(5.5)
        assert press(ev, "T01", "2", "--missing", "2").returncode == 0
        assert press(ev, "T01", "2", "--confirm").returncode == 0
        out.wait_for(lambda ln: ln.startswith("missing piece counted at T01/2: 2 so far"), "the board's count")
        out.wait_for(lambda ln: ln.startswith("confirm 2 (boot 1 seq 4, 2 missing)"), "the confirmation stored")
        wrong = press(ev, "T09", "1")
        assert wrong.returncode == 2 and "no board 'T09'" in wrong.stderr
        wrong = press(ev, "T01", "3")
        assert wrong.returncode == 2 and "buttons 1..2" in wrong.stderr
        wrong = press(ev, "T01", "1", "--missing", "0")
        assert wrong.returncode == 2 and "--missing takes 1..99" in wrong.stderr
    finally:
        hub.terminate()
        hub.wait(30)
    assert press(ev, "T01", "1").returncode == 2          # the rehearsal is over
    rows = json.loads(subprocess.run([TT, "replay", str(rehearsal), "--json"], capture_output=True, text=True,
                                     check=True).stdout)["standings"]
    by = {r["entrant"]: r for r in rows}
    assert by["2"]["status"] == "finished" and not by["2"]["provisional"]      # confirmed at the table
    assert by["2"]["penalty_ms"] > 0 and by["1"]["status"] == "unfinished"
    assert json.loads((rehearsal / "board-keys.json").read_text()).keys() == {"T01"}
    # the event itself: no log, no keys, nothing of the rehearsal
    assert not (ev / "events.sqlite").exists() and not (ev / "board-keys.json").exists()


def two_rounds(tmp_path: Path) -> Path:
    """An event of two rounds, indiv then pairs, each one entrant at board T01's button 1."""
    day = tmp_path / "day"
    for name, preset, entrant in (("indiv", "czjpa-individuals", "1,Anna,yes"),
                                  ("pairs", "czjpa-pairs", "P1,The Edges,yes")):
        d = event_folder.add_round(day, name, preset)
        (d / "entrants.csv").write_text("id,name,eligible\n" + entrant + "\n")
        (d / "stations.csv").write_text(f"board,button,table,entrant\nT01,1,Table 1,{entrant.split(',')[0]}\n")
    return day


def test_a_rehearsal_of_a_days_rounds_rehearses_the_round_named_each_with_a_log_of_its_own(tmp_path):
    """Issue 31: `rehearse DIR --round NAME` copies that round's files into
    the rehearsal laid out as the event (DIR/rehearsal/rounds/NAME); each
    round rehearsed has a log of its own (the last round's presses would
    have been this one's strays), and rehearsing one round keeps the other's."""
    day = two_rounds(tmp_path)
    logs = []
    for name in ("indiv", "pairs"):
        hub = subprocess.Popen([TT, "rehearse", str(day), "--round", name, "--port", str(free_port()),
                                "--console-listen", "off"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True)
        out = Output(hub.stdout)
        try:
            out.wait_for(lambda ln: ln.startswith("board T01 online"), f"round {name}'s simulated board online")
        finally:
            hub.terminate()
            hub.wait(30)
        out.wait_closed()
        rehearsed = day / "rehearsal" / "rounds" / name
        store = EventStore(rehearsed / "events.sqlite")
        logs.append(store.event_id)          # each round's rehearsal an event of its own
        store.close()
        assert (rehearsed / "entrants.csv").read_text() == (day / "rounds" / name / "entrants.csv").read_text()
    assert logs[0] != logs[1]
    store = EventStore(day / "rehearsal" / "rounds" / "indiv" / "events.sqlite")   # kept by pairs' rehearsal
    assert store.event_id == logs[0]
    store.close()
    assert not (day / "rehearsal" / "format.toml").exists()      # the event has no round "main": nor has its rehearsal


def test_a_rehearsed_day_runs_its_rounds_in_order_on_the_same_simulated_boards(tmp_path):
    """Issue 31, item 5: `rehearse DIR` on an event of several rounds
    rehearses the day: the first round, then, at `rehearse DIR --next`, the
    next on the same simulated board, never restarted (its boot stays 1):
    it takes the new round's stations by itself, its finish there ranked in
    that round's log, nothing carried over from the round before."""
    day = two_rounds(tmp_path)
    rehearsal = day / "rehearsal"
    nothing = subprocess.run([TT, "rehearse", str(day), "--next"], capture_output=True, text=True, timeout=30)
    assert nothing.returncode == 2 and "no rehearsal runs on" in nothing.stderr
    hub = subprocess.Popen([TT, "rehearse", str(day), "--port", str(free_port()), "--console-listen", "off"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out = Output(hub.stdout)
    try:
        out.wait_for(lambda ln: ln.startswith("a rehearsed day: the rounds indiv, pairs in this order"), "the day")
        out.wait_for(lambda ln: ln.strip() == "rehearsal: round 1 of 2, indiv", "round 1")
        out.wait_for(lambda ln: ln.startswith("board T01 online"), "the simulated board online")
        subprocess.run([TT, "act", str(rehearsal), "round_start"], check=True, capture_output=True)
        out.wait_for(lambda ln: "round_start" in ln, "round 1 started")
        assert press(day, "T01", "1").returncode == 0
        out.wait_for(lambda ln: ln.startswith("press 1 (boot 1 seq 1)"), "Anna's finish call stored in round 1")
        moved = subprocess.run([TT, "rehearse", str(day), "--next"], capture_output=True, text=True, timeout=30)
        assert moved.returncode == 0 and "from round indiv to round pairs" in moved.stdout, moved.stderr
        second = out.lines.index(out.wait_for(lambda ln: ln.strip() == "rehearsal: round 2 of 2, pairs",
                                              "round 2"))
        out.wait_for(lambda ln: ln.startswith("board T01 online"), "the same board online in round 2", start=second)
        subprocess.run([TT, "act", str(rehearsal), "round_start"], check=True, capture_output=True)
        out.wait_for(lambda ln: "round_start" in ln, "round 2 started", start=second)
        assert press(day, "T01", "1").returncode == 0
        # boot 1: the board was not restarted; its station afresh in the new round (not "done")
        out.wait_for(lambda ln: ln.startswith("press P1 (boot 1 seq "), "the pair's finish call stored in round 2",
                     start=second)
        last = subprocess.run([TT, "rehearse", str(day), "--next"], capture_output=True, text=True, timeout=30)
        assert last.returncode == 2 and "round pairs is the day's last" in last.stderr
    finally:
        hub.terminate()
        hub.wait(30)
    text = out.wait_closed()
    assert "stray" not in text, text
    assert text.count("rehearsal: 1 simulated board(s) (T01)") == 1      # started once, for the day
    for name, who in (("indiv", "1"), ("pairs", "P1")):
        rows = json.loads(subprocess.run([TT, "replay", str(rehearsal), "--round", name, "--json"],
                                         capture_output=True, text=True, check=True).stdout)["standings"]
        assert [(r["entrant"], r["status"]) for r in rows] == [(who, "finished")], rows


def test_over_the_air_changes_are_rehearsed_the_simulated_boards_reboot_as_a_board_does(tmp_path):
    """Issue 45, item 5: `boards set ... --all` and `boards update --family
    sim` in a rehearsal: the simulated boards restart on the new settings or
    firmware and come back (they stayed off after their reset: "staged",
    then offline for good)."""
    ev = event_folder.init(tmp_path / "event", "czjpa-individuals")
    (ev / "entrants.csv").write_text("id,name,eligible\n1,Anna,yes\n2,Ben,yes\n")
    (ev / "stations.csv").write_text("board,button,table,entrant\nT01,1,Table 1,1\nT02,1,Table 2,2\n")
    hub = subprocess.Popen([TT, "rehearse", str(ev), "--port", str(free_port()), "--console-listen", "off"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out = Output(hub.stdout)
    rehearsal = ev / "rehearsal"
    try:
        for b in ("T01", "T02"):
            out.wait_for(lambda ln: ln.startswith(f"board {b} online"), f"board {b} online")
        done = subprocess.run([TT, "boards", "set", str(rehearsal), "--all", "wifi.ssid=hall", "--trial", "30"],
                              capture_output=True, text=True, timeout=180)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "T01: committed" in done.stdout and "T02: committed" in done.stdout, done.stdout
        assert "2/2 board(s) on the new settings" in done.stdout, done.stdout
        for b in ("T01", "T02"):
            assert json.loads((rehearsal / "boards" / b / "config.json").read_text())["wifi"]["ssid"] == "hall"
        update = subprocess.run([TT, "boards", "update", str(rehearsal), "--all", "--family", "sim", "--version",
                                 "0.9.0-rehearsed", "--trial", "30"], capture_output=True, text=True, timeout=240)
        assert update.returncode == 0, update.stdout + update.stderr
        assert "-- 2/2 board(s) on firmware 0.9.0-rehearsed" in update.stdout, update.stdout
    finally:
        hub.terminate()
        hub.wait(30)


def test_the_events_referee_badges_sign_in_to_the_rehearsal_and_the_event_keeps_its_referees(tmp_path):
    """Issue 45, item 12: a badge printed for the event was "not valid" in
    the rehearsal.  The rehearsal's referees are the event's (copied at
    `rehearse`) and its Demo referee, who is never added to the event's."""
    ev = event_folder.init(tmp_path / "event", "czjpa-individuals")
    (ev / "entrants.csv").write_text("id,name,eligible\n1,Anna,yes\n")
    (ev / "stations.csv").write_text("board,button,table,entrant\nT01,1,Table 1,1\n")
    added = subprocess.run([TT, "referees", str(ev), "add", "Zdeněk", "--public-url", "http://192.168.1.10:8765"],
                           capture_output=True, text=True)
    assert added.returncode == 0, added.stderr
    event_book = (ev / "referees.json").read_text()
    token = json.loads(event_book)["referees"][0]["token"]
    web = free_port()
    hub = subprocess.Popen([TT, "rehearse", str(ev), "--port", str(free_port()), "--web-listen", f"127.0.0.1:{web}",
                            "--hall-pages", "off"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out = Output(hub.stdout)
    try:
        said = out.wait_for(lambda ln: ln.startswith("referees: "), "what the rehearsal says of its referees")
        assert "the event's badges sign in to the rehearsal's pages too (1 active in" in said, said
        out.wait_for(lambda ln: "sign this browser in as 'Demo referee'" in ln, "the demo sign-in")
        assert signin_status(f"http://127.0.0.1:{web}", token) == 303            # the event's badge, valid here
        assert signin_status(f"http://127.0.0.1:{web}", "no-such-badge") == 401
    finally:
        hub.terminate()
        hub.wait(30)
    assert (ev / "referees.json").read_text() == event_book                # the event's book untouched
    names = [r["name"] for r in json.loads((ev / "rehearsal" / "referees.json").read_text())["referees"]]
    assert names == ["Zdeněk", "Demo referee"], names
    assert (ev / "rehearsal" / "referees.json").stat().st_mode & 0o777 == 0o600


def signin_status(base: str, token: str) -> int:
    """The status of a badge's sign-in at a hub's pages (303: signed in, 401: not valid)."""
    import http.client
    from urllib.parse import quote, urlsplit

    u = urlsplit(base)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
    try:
        conn.request("GET", f"/signin?token={quote(token)}")
        return conn.getresponse().status
    finally:
        conn.close()


def test_a_rehearsal_at_a_speed_reaches_time_up_in_seconds(tmp_path):
    """Issue 45, item 14: `rehearse --speed N` plays the rounds N times
    faster: czjpa-individuals' 2 hours at 600x are 12 s; the default
    warnings (10 and 1 min left) come 1 s and 0.1 s before its end; at
    time-up the entrant who did not call is unfinished, the one who called
    finished; `replay` of the rehearsal reads it at the same speed.  A
    speed that leaves a round under a second is refused before anything."""
    ev = event_folder.init(tmp_path / "event", "czjpa-individuals")
    (ev / "entrants.csv").write_text("id,name,eligible\n1,Anna,yes\n2,Ben,yes\n")
    (ev / "stations.csv").write_text("board,button,table,entrant\nT01,1,Table 1,1\nT01,2,Table 1,2\n")
    too_fast = subprocess.run([TT, "rehearse", str(ev), "--speed", "100000", "--port", str(free_port())],
                              capture_output=True, text=True, timeout=60)
    assert too_fast.returncode == 2 and "makes the round 0:00:00" in too_fast.stderr, too_fast.stderr
    hub = subprocess.Popen([TT, "rehearse", str(ev), "--speed", "600", "--port", str(free_port()),
                            "--console-listen", "off", "--web-listen", "off"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out = Output(hub.stdout)
    rehearsal = ev / "rehearsal"
    try:
        said = out.wait_for(lambda ln: ln.startswith("rehearsed at 600x"), "the rehearsal's speed")
        assert "(main 2:00:00 -> 0:00:12)" in said, said
        out.wait_for(lambda ln: ln.startswith("board T01 online"), "the simulated board online")
        started = subprocess.run([TT, "act", str(rehearsal), "round_start"], capture_output=True, text=True)
        assert started.returncode == 0, started.stderr
        assert '"warnings": [1000, 100]' in started.stdout, started.stdout
        out.wait_for(lambda ln: ln.startswith("operator round_start "), "the start on the rehearsal's hub")
        assert press(ev, "T01", "1").returncode == 0
        out.wait_for(lambda ln: ln.startswith("press 1 (boot 1 seq 1)"), "Anna's call")
        t0 = time.monotonic()
        while True:          # the round's 12 s: replay says time-up (unfinished), not running
            rows = json.loads(subprocess.run([TT, "replay", str(rehearsal), "--json"], capture_output=True,
                                             text=True, check=True).stdout)["standings"]
            by = {r["entrant"]: r for r in rows}
            if by["2"]["status"] != "running":
                break
            assert time.monotonic() - t0 < 40, rows
            time.sleep(0.5)
        assert by["2"]["status"] == "unfinished" and by["1"]["status"] == "finished", rows
    finally:
        hub.terminate()
        hub.wait(30)
    assert (rehearsal / "speed").read_text().strip() == "600"
    # rehearsed again without --speed: real time again
    again = subprocess.Popen([TT, "rehearse", str(ev), "--port", str(free_port()), "--console-listen", "off",
                              "--web-listen", "off"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    said = Output(again.stdout)
    try:
        said.wait_for(lambda ln: ln.startswith("board T01 online"), "the simulated board online")
    finally:
        again.terminate()
        again.wait(30)
    assert not (rehearsal / "speed").exists() and not any(ln.startswith("rehearsed at") for ln in said.lines)


def test_every_command_on_a_rehearsal_takes_its_folder_and_the_event_folder_says_where_it_is(tmp_path):
    """Issue 45, item 15: `press` took the event folder while `act`,
    `check-hall` and `boards set` took EVENT/rehearsal.  Every command on
    the rehearsal takes EVENT/rehearsal (press still takes EVENT too), the
    rehearsal's help prints them so; the event folder means the event, and
    a command given it while a rehearsal runs names the rehearsal's folder."""
    ev = event_folder.init(tmp_path / "event", "czjpa-individuals")
    (ev / "entrants.csv").write_text("id,name,eligible\n1,Anna,yes\n")
    (ev / "stations.csv").write_text("board,button,table,entrant\nT01,1,Table 1,1\n")
    rehearsal = ev / "rehearsal"
    hub = subprocess.Popen([TT, "rehearse", str(ev), "--port", str(free_port()), "--web-listen", "off"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out = Output(hub.stdout)
    try:
        out.wait_for(lambda ln: ln.strip() == f"tabletimer press {rehearsal} T01 1              # a finish call",
                     "the help's press on the rehearsal's folder")
        out.wait_for(lambda ln: ln.startswith("board T01 online"), "the simulated board online")
        subprocess.run([TT, "act", str(rehearsal), "round_start"], check=True, capture_output=True)
        # the hub takes the desk's row from the log, then tells the board: a press before that is a
        # stray while idle (a fresh clone's CI-like run pressed first and waited for a call in vain)
        out.wait_for(lambda ln: ln.startswith("operator round_start "), "the start on the rehearsal's hub")
        assert press(rehearsal, "T01", "1").returncode == 0                 # the rehearsal's folder
        out.wait_for(lambda ln: ln.startswith("press 1 (boot 1 seq 1)"), "the call")
        assert press(ev, "T01", "1", "--confirm").returncode == 0           # the event folder, as before
        out.wait_for(lambda ln: ln.startswith("confirm 1 (boot 1 seq 2"), "the confirmation")
        hint = f"(a rehearsal of {ev} runs: its folder is {rehearsal}, `tabletimer "
        check = subprocess.run([TT, "check-hall", str(ev)], capture_output=True, text=True, timeout=60)
        assert check.returncode == 2 and hint + f"check-hall {rehearsal} ...`)" in check.stderr, check.stderr
        cfg = subprocess.run([TT, "boards", "set", str(ev), "--all", "wifi.ssid=hall"], capture_output=True,
                             text=True, timeout=60)
        assert cfg.returncode == 2 and hint + f"boards set {rehearsal} ...`)" in cfg.stderr, cfg.stderr
        act = subprocess.run([TT, "act", str(ev), "dns", "entrant=1", "--why", "test"], capture_output=True,
                             text=True, timeout=60)
        assert "note: this records into the event's own log" + " " + hint in act.stderr, act.stderr
    finally:
        hub.terminate()
        hub.wait(30)
    nothing = press(rehearsal, "T01", "1")
    assert nothing.returncode == 2 and f"start one with `tabletimer rehearse {ev}`" in nothing.stderr
