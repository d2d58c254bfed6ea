"""The `tabletimer` command as a user runs it."""

from __future__ import annotations

import json
import re
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tabletimer import firmware_dir
from tabletimer.hub.cli import main as cli
from waiting import Output, until

TT = str(Path(sys.executable).parent / "tabletimer")


FLASH = ["board", "flash", "/dev/ttyUSB0", "--id", "T07", "--wifi-ssid", "hall",
         "--wifi-password", "pw", "--broker-host", "192.168.1.10", "--buttons", "4,5,18"]


def test_board_flash_dry_run_generates_config_and_lists_files(tmp_path, capsys):
    keys = tmp_path / "keys.json"
    assert cli.main(FLASH + ["--keys", str(keys), "--dry-run"]) == 0
    out = capsys.readouterr().out
    cfg = json.loads(out[:out.rindex("}") + 1])
    assert cfg["board"] == "T07" and cfg["buttons"] == [4, 5, 18] and cfg["key"] == "<secret>"
    assert cfg["broker"]["host"] == "192.168.1.10" and cfg["wifi"]["ssid"] == "hall"
    assert "connect /dev/ttyUSB0" in out
    for name in (":main.py", ":app.mpy", ":protocol.mpy", ":auth.mpy", ":mqtt_client.mpy", ":config.json"):
        assert name in out
    assert "sim_main" not in out and "hardware_sim" not in out
    assert not keys.exists()                     # a dry run stores no key


def test_board_flash_stores_the_key_for_the_hub_before_flashing(tmp_path, capsys):
    keys = tmp_path / "keys.json"
    rc = cli.main(FLASH[:2] + [str(tmp_path / "no-such-port")] + FLASH[3:] + ["--keys", str(keys)])
    assert rc == 1                                # mpremote finds no board there
    assert "mpremote failed" in capsys.readouterr().err
    stored = json.loads(keys.read_text())
    assert list(stored) == ["T07"] and len(stored["T07"]) == 64
    assert oct(keys.stat().st_mode & 0o777) == "0o600"


def test_every_flash_writes_a_new_install_id_and_keeps_the_key(tmp_path, capsys):
    """A spare flashed with a dead board's id gets that board's key from the
    keys file and an install id of its own (docs/protocol.md, "Board
    identity"); an install id in the template is not copied."""
    keys = tmp_path / "keys.json"
    template = tmp_path / "template.json"
    example = json.loads((firmware_dir() / "config.example.json").read_text())
    template.write_text(json.dumps(dict(example, install="00000000")))
    installs = []
    for _ in range(2):
        assert cli.main(FLASH + ["--keys", str(keys), "--template", str(template), "--dry-run"]) == 0
        out = capsys.readouterr().out
        installs.append(json.loads(out[:out.rindex("}") + 1])["install"])
    assert installs[0] != installs[1] and "00000000" not in installs
    assert all(len(i) == 6 and set(i) <= set("0123456789abcdef") for i in installs)
    stored = []
    for _ in range(2):                                 # flashed for real (no board here: mpremote fails)
        assert cli.main(FLASH[:2] + [str(tmp_path / "no-such-port")] + FLASH[3:] + ["--keys", str(keys)]) == 1
        capsys.readouterr()
        stored.append(json.loads(keys.read_text())["T07"])
    assert stored[0] == stored[1]                      # the key stays in the keys file


def test_board_flash_prints_no_secret(tmp_path, capfd):
    """Neither the WiFi password nor the board's key or broker login is
    printed (the mpremote command names a temporary file)."""
    from tabletimer.hub.protocol.keys import mqtt_password

    keys = tmp_path / "keys.json"
    wifi = "hall-wifi-s3cret"
    flash = [wifi if a == "pw" else a for a in FLASH] + ["--keys", str(keys)]
    assert cli.main(flash + ["--dry-run"]) == 0
    out, err = capfd.readouterr()
    cfg = json.loads(out[:out.rindex("}") + 1])
    assert cfg["wifi"] == {"ssid": "hall", "password": "<secret>"}
    assert "mpremote" in out and wifi not in out + err
    # flashed for real (no board here: mpremote fails), with a key this time
    assert cli.main(flash[:2] + [str(tmp_path / "no-such-port")] + flash[3:]) == 1
    out, err = capfd.readouterr()
    key = json.loads(keys.read_text())["T07"]
    for secret in (wifi, key, mqtt_password(key)):
        assert secret not in out + err


@pytest.mark.parametrize("args,message", [
    (["--id", "bad id"], "board"),
    (["--buttons", "4,x"], "invalid literal"),
    (["--buzzer-pin", "25", "--template", "/nonexistent.json"], "nonexistent"),
])
def test_board_flash_refuses_bad_input(tmp_path, capsys, args, message):
    assert cli.main(FLASH + args + ["--keys", str(tmp_path / "k.json"), "--dry-run"]) == 2
    assert message in capsys.readouterr().err


def test_board_check_command_passes(capsys):
    assert cli.main(["board", "check"]) == 0


def test_demo_shows_simulated_presses_ranked_and_stops_cleanly(tmp_path):
    """The README's main job, shortened: its broker (Mosquitto where
    installed, else the embedded one), hub, simulated boards; every
    simulated station finishes and is ranked; then a clean stop leaves no
    process behind."""
    _demo_until_every_station_is_confirmed(tmp_path)


def test_the_demo_run_twice_on_one_folder_ranks_every_finish_of_the_second_run(tmp_path):
    """Issue 31: the second run on the same data folder reused the first
    run's log: the boards kept their stations "done", every finish call of
    the second run was a stray, and nobody finished.  Each run is an event
    of its own now (the earlier log kept in data/earlier-runs/)."""
    _demo_until_every_station_is_confirmed(tmp_path)
    rest = _demo_until_every_station_is_confirmed(tmp_path)
    assert "demo: the previous run's log is kept as " in rest
    assert len(list((tmp_path / "data" / "earlier-runs").glob("events-*.sqlite"))) == 1
    assert "stray" not in rest, rest


def _demo_until_every_station_is_confirmed(tmp_path) -> str:
    """The demo on tmp_path/data until its 4 stations are confirmed, then
    Ctrl-C: the checks of a clean run; what it printed."""
    from brokers import free_port

    proc = subprocess.Popen(
        [TT, "demo", "--data", "data", "--port", str(free_port()), "--boards", "2",
         "--stations", "2", "--press-window", "4", "--duration", "30", "--seed", "1"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
        cwd=tmp_path)   # a relative data folder, as in the README's default
    finished: set[str] = set()
    out = Output(proc.stdout)

    def four_finished(line: str) -> bool:     # the live view, as it happens
        if line.startswith("confirm") and "finished confirmed" in line:
            finished.update(w for w in line.split() if w.startswith("sim0"))
        return len(finished) == 4
    try:
        out.wait_for(four_finished, "all 4 simulated stations confirmed", timeout=60)
    finally:
        os.killpg(proc.pid, signal.SIGINT)    # Ctrl-C, to the whole group as a terminal does
        proc.wait(timeout=30)
    rest = out.wait_closed()
    assert proc.returncode == 0, rest
    assert "stopped; standings:" in rest
    final = rest.split("stopped; standings:")[1].split("\n")
    assert sum(" finished " in l and "provisional" not in l for l in final) == 4
    # nothing left running: no broker, no board process of this run
    left = subprocess.run(["pgrep", "-f", str(tmp_path)], capture_output=True, text=True).stdout
    assert left.strip() == "", left
    return rest


def _pids_mentioning(text: str) -> list[str]:
    out = subprocess.run(["pgrep", "-f", text], capture_output=True, text=True).stdout
    return out.split()


@pytest.mark.parametrize("kind", ["auto", "embedded"])
def test_killed_hub_leaves_no_broker_or_boards_behind(tmp_path, kind):
    """SIGKILL gives the hub no chance to clean up: its broker (Mosquitto's
    watchdog, or the embedded one) and simulated boards notice the closed
    pipe to it and exit by themselves."""
    from brokers import free_port

    proc = subprocess.Popen(
        [TT, "demo", "--data", str(tmp_path / "data"), "--port", str(free_port()), "--boards", "2",
         "--press-window", "60", "--duration", "120", "--broker-kind", kind],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out = Output(proc.stdout)
    online = [0]

    def both_online(line: str) -> bool:
        online[0] += line.startswith("board sim") and line.rstrip().endswith("online")
        return online[0] == 2
    try:
        out.wait_for(both_online, "both simulated boards online")
        assert len(_pids_mentioning(str(tmp_path))) >= 3       # broker (Mosquitto: and its watchdog) + 2 boards
    finally:
        proc.kill()
        proc.wait()
    # polling other processes' exit: nothing to await
    until(lambda: not _pids_mentioning(str(tmp_path)), "the broker and the boards to exit", timeout=15,
          seen=lambda: _pids_mentioning(str(tmp_path)), poll=0.1)


def test_ctrl_c_stops_a_hub_started_with_sigint_ignored(tmp_path):
    """A hub started as a script's background job inherits SIGINT ignored
    (so does everything a non-interactive shell starts with &): Ctrl-C, or a
    SIGINT to its process group, still stops it cleanly, its broker too."""
    from brokers import free_port
    from tabletimer.hub.runtime.signals import SERVING
    from tabletimer.hub.web.hall_process import READY_S

    folder = tmp_path / "event"
    assert cli.main(["init", str(folder), "--format", "czjpa-individuals"]) == 0
    proc = subprocess.Popen([TT, "run", str(folder), "--port", str(free_port()), "--duration", "120"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    out = Output(proc.stdout)
    try:
        # the hub's own last line at start (issue 45, item 16): "hall pages" was not -- the
        # projector's line and the start's end came after it, and the SIGINT sent at it reached
        # the hub still starting, as a KeyboardInterrupt in whatever it ran. Its deadline: the
        # start's own bounds (the broker's, the hall's pages' READY_S), not a guess
        out.wait_for(lambda line: line.strip() == SERVING, "the hub serving", timeout=READY_S + 30)
    finally:
        os.killpg(proc.pid, signal.SIGINT)
    try:
        rest = out.wait_closed(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.wait(timeout=5) == 0, rest
    # a stop request, as SIGTERM's (issue 45, item 16): the serving hub's loop ends at its next
    # tick and it stops in order; a KeyboardInterrupt raised into whatever its main thread ran
    # left that half done (a failure once in two full runs, passed alone)
    assert "stopping: SIGINT" in rest, rest
    assert "stopped; standings:" in rest
    until(lambda: not _pids_mentioning(str(folder)), "the broker to stop with the hub", timeout=15,
          seen=lambda: _pids_mentioning(str(folder)), poll=0.1)


def test_init_act_and_replay_an_event_folder(tmp_path, capsys):
    ev = tmp_path / "event"
    assert cli.main(["init", str(ev), "--format", "czjpa-individuals"]) == 0
    assert (ev / "hub-secret").stat().st_mode & 0o777 == 0o600      # the hub laptops' own (issue 44)
    (ev / "entrants.csv").write_text("id,name,eligible\n1,Anna,yes\n2,Ben,yes\n3,Cecilie,yes\n")
    (ev / "stations.csv").write_text("board,button,table,entrant\nT01,1,Table 1,1\nT01,2,Table 1,2\n"
                                     "T02,1,Table 2,3\n")
    capsys.readouterr()
    t0 = int(time.time() * 1000) - 3 * 3_600_000    # a round three hours ago (times near the hub's clock)
    assert cli.main(["act", str(ev), "round_start", f"at={t0}", "--who", "desk"]) == 0
    assert cli.main(["act", str(ev), "press", "entrant=2", "puzzle=1", f"at={t0 + 3_600_000}",
                     "--why", "button broken, referee's watch"]) == 0
    assert cli.main(["act", str(ev), "confirm", "press_id=op/2", "missing_found=1"]) == 0
    assert cli.main(["act", str(ev), "count", "entrant=1", "puzzle=1", "placed=420"]) == 0
    assert cli.main(["act", str(ev), "dns", "entrant=3"]) == 0
    assert cli.main(["act", str(ev), "count", "entrant=1", "colour=red"]) == 2
    assert "unknown field(s) colour" in capsys.readouterr().err
    assert cli.main(["replay", str(ev), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    rows = doc["standings"]
    # every station's state at now: Anna counted (time up), Ben done, Cecilie DNS
    assert [(s["board"], s["button"], s["entrant"], s["state"], s["reason"]) for s in doc["stations"]] == [
        ("T01", 1, "1", "stopped", "time up"), ("T01", 2, "2", "done", ""), ("T02", 1, "3", "stopped", "dns")]
    assert [(r["entrant"], r["status"], r["place"]) for r in rows] == [
        ("2", "finished", 1), ("1", "unfinished", 2), ("3", "dns", None)]
    assert rows[0]["net_time_ms"] == 3_610_000 and rows[1]["pieces"] == 420


def test_run_refuses_a_broken_event_folder(tmp_path, capsys):
    assert cli.main(["run", str(tmp_path / "nothing")]) == 2
    assert "no format.toml" in capsys.readouterr().err
    ev = tmp_path / "ev"
    cli.main(["init", str(ev), "--format", "czjpa-pairs"])
    (ev / "stations.csv").write_text("board,button,entrant\nT01,1,nobody\n")
    assert cli.main(["run", str(ev)]) == 2
    assert "stations.csv:2: no entrant 'nobody'" in capsys.readouterr().err


def test_console_needs_a_running_event_and_demo_speed_is_checked(tmp_path, capsys):
    ev = tmp_path / "ev"
    cli.main(["init", str(ev), "--format", "czjpa-individuals"])
    capsys.readouterr()
    assert cli.main(["console", str(ev)]) == 2
    assert "does not exist yet" in capsys.readouterr().err
    assert cli.main(["demo", "--data", str(tmp_path / "d"), "--preset", "cz-championship-teams",
                     "--speed", "1000"]) == 2
    assert "rotate more than once a second" in capsys.readouterr().err


@pytest.mark.parametrize("option", [["--speed", "nan"], ["--speed", "0.0001"], ["--limit", "inf"],
                                    ["--warn", "10", "1e300"]], ids=lambda o: " ".join(o))
def test_demo_times_past_a_rounds_limits_are_refused_before_anything_starts(tmp_path, capsys, option):
    """Issue 44, item 7: the demo's round start from the command line is held
    to the formats' limits (a round of at most 72 h) before the folder, the
    broker or a board is made: `--speed 0.0001` made a 15000-hour round and
    `--limit inf` an OverflowError once everything ran."""
    data = tmp_path / "d"
    assert cli.main(["demo", "--data", str(data), *option]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {option[0]} ") and err.count("\n") == 1, err
    assert not data.exists()


def test_demo_format_is_sped_up():
    from tabletimer.hub.event.folder.demo import demo_event

    fmt, entrants, stations = demo_event("cz-championship-teams", 2, 2, speed=60)
    assert fmt.time_limit_ms == 5 * 3_600_000 // 60 and fmt.relay.rotation_interval_ms == 8_000
    assert [s.puzzle for s in stations if s.board == "sim01"] == list(range(1, 9))
    assert len(entrants) == 2


def _files(folder: Path) -> dict[str, tuple[bytes, int, int]]:
    """Every file under folder: its bytes, mtime and inode (a file replaced is a file changed)."""
    return {p.relative_to(folder).as_posix(): (p.read_bytes(), p.stat().st_mtime_ns, p.stat().st_ino)
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_refused_rehearsal_changes_nothing_of_the_running_one(tmp_path, capsys):
    """Issue #32, 3: a second `rehearse` while one runs (its lock held, as
    the running hub holds it) is refused before it writes: the running
    rehearsal keeps the entrants it started with (no "EDITED" names that
    its pages do not show), its keys, and its log (even with --fresh)."""
    import shutil

    from brokers import free_port
    from tabletimer.hub.protocol.keys import BoardKeys
    from tabletimer.hub.event.folder.folder_lock import HubLock

    ev = tmp_path / "event"
    assert cli.main(["init", str(ev), "--format", "czjpa-individuals"]) == 0
    (ev / "entrants.csv").write_text("id,name,eligible\n1,Anna,yes\n2,Ben,yes\n")
    (ev / "stations.csv").write_text("board,button,table,entrant\nT01,1,Table 1,1\nT01,2,Table 1,2\n")
    rehearsal = ev / "rehearsal"          # as the running rehearsal made it
    rehearsal.mkdir()
    for name in ("format.toml", "entrants.csv", "stations.csv"):
        shutil.copyfile(ev / name, rehearsal / name)
    BoardKeys(rehearsal / "board-keys.json").ensure("T01")
    (rehearsal / "events.sqlite").write_bytes(b"the running rehearsal's log")
    running = HubLock(rehearsal / "events.sqlite").acquire()
    try:
        (ev / "entrants.csv").write_text("id,name,eligible\n1,Anna EDITED,yes\n2,Ben,yes\n")
        before = _files(rehearsal)
        capsys.readouterr()
        assert cli.main(["rehearse", str(ev), "--fresh", "--port", str(free_port()),
                         "--console-listen", "off", "--duration", "1"]) == 2
        err = capsys.readouterr().err
        after = _files(rehearsal)
        assert [n for n in before if after.get(n) != before[n]] == [] and after.keys() == before.keys()
        assert "another hub is already running on" in err and str(rehearsal) in err
        assert f"pid {os.getpid()}" in err
        assert f"Nothing in {rehearsal} was changed: the running rehearsal goes on" in err
        assert f"stop it, then `tabletimer rehearse {ev}` again" in err          # what to do
    finally:
        running.release()


@pytest.mark.parametrize("kind", ["mosquitto", "embedded"])
def test_run_on_a_port_a_hub_holds_names_that_hub(tmp_path, kind):
    """Issue #32, 4: `run` on the broker port another hub of ours holds (a
    rehearsal's, another event's) names that hub, its pid and folder (not
    Debian's system Mosquitto), and writes nothing in its own folder."""
    from brokers import free_port, require_mosquitto

    if kind == "mosquitto":
        require_mosquitto()
    first, second = tmp_path / "first", tmp_path / "second"
    for ev in (first, second):
        assert cli.main(["init", str(ev), "--format", "czjpa-individuals"]) == 0
    port = str(free_port())
    hub = subprocess.Popen([TT, "run", str(first), "--port", port, "--broker-kind", kind, "--web-listen", "off",
                            "--duration", "120"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out = Output(hub.stdout)
    try:
        out.wait_for(lambda line: line.startswith("event log "), "the first hub's broker listening")
        p = subprocess.run([TT, "run", str(second), "--port", port, "--web-listen", "off", "--duration", "1"],
                           capture_output=True, text=True, timeout=60)
    finally:
        hub.terminate()
        hub.wait(30)
    said = " ".join((p.stdout + p.stderr).split())
    assert p.returncode == 2, said
    assert f"cannot listen on 127.0.0.1:{port}" in said, said
    assert f"another TableTimer hub holds it: pid {hub.pid}, event folder {first}: tabletimer run" in said, said
    assert f"kill {hub.pid}" in said, said          # what to do
    assert "systemctl" not in said, said
    # nothing written but its lock: no log, no broker configuration (its hub secret is init's)
    assert sorted(p.name for p in second.iterdir()) == ["entrants.csv", "events.sqlite.lock", "format.toml",
                                                        "hub-secret", "stations.csv"]


class Terminal:
    """Standard input as a terminal where the organizer types one line."""

    def __init__(self, line: str) -> None:
        self.line = line
        self.asked = 0

    def isatty(self) -> bool:
        return True

    def readline(self) -> str:
        self.asked += 1
        return self.line


def test_init_takes_or_asks_the_events_title_and_every_output_shows_it(tmp_path, capsys, monkeypatch):
    """The event's title (DIR/title) from `init --title`, or asked at a
    terminal (blank: the folder's name); the projector, the cards, the badges
    and the results show it, a rehearsal the event's, marked as such, never
    the folder's name "rehearsal"."""
    from tabletimer.hub.event.folder.event_folder import event_title
    from tabletimer.hub.web.console_api import folder_event

    ev = tmp_path / "hall-2027"
    assert cli.main(["init", str(ev), "--format", "czjpa-individuals", "--title", " Hall  Cup 2027 "]) == 0
    assert "titled 'Hall Cup 2027'" in capsys.readouterr().out
    assert (ev / "title").read_text() == "Hall Cup 2027\n"
    (ev / "entrants.csv").write_text("id,name,eligible\n1,Anna,yes\n")
    (ev / "stations.csv").write_text("board,button,table,entrant\nT01,1,Table 1,1\n")
    t0 = int(time.time() * 1000) - 3 * 3_600_000
    assert cli.main(["act", str(ev), "round_start", f"at={t0}"]) == 0
    capsys.readouterr()
    assert cli.main(["results", str(ev), "--json", "-"]) == 0
    assert json.loads(capsys.readouterr().out)["title"] == "Hall Cup 2027"
    assert cli.main(["results", str(ev), "--html", "-"]) == 0
    assert "<h1>Hall Cup 2027</h1>" in capsys.readouterr().out
    url = "http://192.168.1.10:8765"
    assert cli.main(["cards", str(ev), "--html", "-", "--public-url", url]) == 0
    assert "<title>Hall Cup 2027 - table cards</title>" in capsys.readouterr().out
    assert cli.main(["referees", str(ev), "add", "Ben"]) == 0
    assert "<title>Hall Cup 2027 - referee Ben</title>" in (ev / "badges" / "ben.html").read_text()
    assert folder_event(ev)["title"] == "Hall Cup 2027"             # the projector's (and a remote's)
    # a rehearsal's folder: the event's title, marked
    rehearsal = ev / "rehearsal"
    rehearsal.mkdir()
    for name in ("format.toml", "entrants.csv", "stations.csv"):        # as `rehearse` copies them
        (rehearsal / name).write_bytes((ev / name).read_bytes())
    assert event_title(rehearsal) == folder_event(rehearsal)["title"] == "Hall Cup 2027 (rehearsal)"

    # asked at a terminal; blank or no terminal: the folder's name
    monkeypatch.setattr(sys, "stdin", Terminal("Regional Cup\n"))
    assert cli.main(["init", str(tmp_path / "asked"), "--format", "czjpa-individuals"]) == 0
    assert sys.stdin.asked == 1 and "[asked]" in capsys.readouterr().out
    assert event_title(tmp_path / "asked") == "Regional Cup"
    monkeypatch.setattr(sys, "stdin", Terminal("\n"))
    assert cli.main(["init", str(tmp_path / "blank"), "--format", "czjpa-individuals"]) == 0
    assert not (tmp_path / "blank" / "title").exists() and event_title(tmp_path / "blank") == "blank"
    monkeypatch.setattr(sys, "stdin", Terminal("never read\n"))
    sys.stdin.isatty = lambda: False
    assert cli.main(["init", str(tmp_path / "script"), "--format", "czjpa-individuals"]) == 0
    assert sys.stdin.asked == 0 and event_title(tmp_path / "script") == "script"
    assert cli.main(["init", str(tmp_path / "long"), "--format", "czjpa-individuals", "--title", "x" * 121]) == 2
    assert "at most 120" in capsys.readouterr().err and not (tmp_path / "long").exists()


def test_replay_mid_round_shows_the_standings_as_results_does_and_says_so(tmp_path, capsys):
    """Issue 45 item 8: replay 30 minutes into a two-hour round: those still
    solving are "running" without a place, as `results` shows them, with a
    warning (it ranked them "unfinished", places 2 and 3, 0 pieces, silently);
    --json says the round is in progress."""
    ev = tmp_path / "event"
    assert cli.main(["init", str(ev), "--format", "czjpa-individuals"]) == 0
    (ev / "entrants.csv").write_text("id,name,eligible\n1,Anna,yes\n2,Ben,yes\n3,Cecilie,yes\n")
    (ev / "stations.csv").write_text("board,button,table,entrant\nT01,1,Table 1,1\nT01,2,Table 1,2\n"
                                     "T02,1,Table 2,3\n")
    t0 = int(time.time() * 1000) - 30 * 60_000
    assert cli.main(["act", str(ev), "round_start", f"at={t0}"]) == 0
    assert cli.main(["act", str(ev), "press", "entrant=2", "puzzle=1", f"at={t0 + 20 * 60_000}"]) == 0
    capsys.readouterr()
    assert cli.main(["replay", str(ev)]) == 0
    out = capsys.readouterr()
    lines = {ln.split()[2]: ln.split() for ln in out.out.splitlines()[1:] if ln.strip()}
    assert [lines[e][:2] + [lines[e][4]] for e in ("2", "1", "3")] == [
        ["1", "1", "finished"], ["-", "-", "running"], ["-", "-", "running"]]
    assert re.search(r"warning: round in progress, 1:(29:\d\d|30:00) left: ", out.err) and "provisional" in out.err
    assert cli.main(["results", str(ev)]) == 0
    res = capsys.readouterr()
    assert [ln.split()[4] for ln in res.out.splitlines()[1:] if ln.strip()] == ["finished", "running", "running"]
    assert cli.main(["replay", str(ev), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["in_progress"] is True and 89 * 60_000 < doc["left_ms"] <= 90 * 60_000


def test_a_start_typed_as_a_clock_time_far_off_is_asked_about_first():
    """Issue 45 item 9: at 02:50, "01:02" is 1:48 ago and "23:55" is read as
    today's, 21:05 ahead: both asked about; a few minutes ago, an hour ahead
    or hub ms: plainly meant."""
    from datetime import datetime
    from tabletimer.hub.rules.timetext import parse_clock_time, start_clock_doubt
    now = int(datetime(2026, 12, 5, 2, 50).timestamp() * 1000)

    def doubt(text: str) -> str | None:
        return start_clock_doubt(text, parse_clock_time(text, now), now)
    assert doubt("01:02") == ("at=01:02 is read as today 01:02:00, 1:48:00 ago: the round would have been under "
                              "way since then, every entrant's time counted from it")
    assert doubt("23:55") == ("at=23:55 is read as today 23:55:00, 21:05:00 from now: the boards would wait "
                              "until then (a time of yesterday is given as hub ms)")
    assert [doubt(t) for t in ("02:47", "03:50", str(now - 108 * 60_000))] == [None, None, None]


def test_act_refuses_a_start_typed_far_off_unless_forced_and_records_nothing(tmp_path, capsys):
    """Issue 45 item 9: `act round_start at=HH:MM` 1 h 48 min ago (or, just
    after midnight, that clock time read as today's, 22 h ahead) is not
    recorded without a yes (no terminal: refused, saying how to record it);
    --force records it as read."""
    from datetime import datetime
    ev = tmp_path / "event"
    assert cli.main(["init", str(ev), "--format", "czjpa-individuals"]) == 0
    typed = datetime.fromtimestamp(time.time() - 108 * 60).strftime("%H:%M")
    capsys.readouterr()
    assert cli.main(["act", str(ev), "round_start", f"at={typed}"]) == 2
    err = capsys.readouterr().err
    assert re.search(rf"warning: at={typed} is read as today {typed}:00, (1:4[78]:\d\d ago|2[12]:\d\d:\d\d from now)", err)
    assert "error: not recorded; add --force to record it as read, or give the start exactly as hub ms (at=" in err
    assert not (ev / "events.sqlite").exists() or cli.main(["replay", str(ev), "--json"]) == 0 and \
        json.loads(capsys.readouterr().out)["in_progress"] is False
    assert cli.main(["act", str(ev), "round_start", f"at={typed}", "--force"]) == 0
    assert "recorded #" in capsys.readouterr().out


def test_a_reserve_without_a_station_is_no_warning_of_every_command(tmp_path, capsys):
    """Issue 45 item 13: a reserve listed without a station (the way to
    prepare a replacement) made every command print "no station for R1"."""
    ev = tmp_path / "event"
    assert cli.main(["init", str(ev), "--format", "czjpa-individuals"]) == 0
    (ev / "entrants.csv").write_text("id,name,eligible\n1,Anna,yes\nR1,Rita,nej\n")
    (ev / "stations.csv").write_text("board,button,table,entrant\nT01,1,Table 1,1\n")
    capsys.readouterr()
    assert cli.main(["act", str(ev), "dns", "entrant=1"]) == 0
    assert cli.main(["replay", str(ev)]) == 0
    assert cli.main(["results", str(ev)]) == 0
    err = capsys.readouterr().err
    assert "no station for" not in err and "warning: " + str(ev) not in err
