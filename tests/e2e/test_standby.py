"""Issue 28, item 1: a standby laptop follows the primary live.  The primary
is `tabletimer run` with a simulated board (the real firmware) through its
broker; the standby is `tabletimer standby COPY --primary URL` on a copy of
the event folder, with a broker of its own, idle.  Its log becomes the
primary's row for row (ids, times, payloads, the event id) as the round
goes; it records nothing of its own (`act` on its folder is refused); a
folder that is not a copy, or a log of another event, is refused before
anything is written; when the primary dies, the standby says so."""

from __future__ import annotations

import shutil
import subprocess
import sqlite3

from brokers import free_port
from hall import TT, Hub, act, primary_and_standby_copy
from rig import synced
from tabletimer.hub.protocol.hub_secret import ensure_secret
from tabletimer.hub.protocol.keys import mqtt_password
from tabletimer.hub.event.folder import event_folder
from tabletimer.hub.event.log.store import EventStore
from tabletimer.hub.fleet.simulator import SimBoard
from waiting import Output, until


def rows_of(log) -> list[tuple]:
    db = sqlite3.connect(f"file:{log}?mode=ro", uri=True)
    try:
        return db.execute("SELECT id, received_ms, source, type, board, install, boot, seq, payload "
                          "FROM events ORDER BY id").fetchall()
    finally:
        db.close()


def event_id(log) -> int:
    store = EventStore(log)
    try:
        return store.event_id
    finally:
        store.close()


def test_a_standby_copies_the_primarys_log_row_for_row_and_records_nothing_of_its_own(tmp_path):
    ev, copy, key = primary_and_standby_copy(tmp_path, "Standby cup", "S1", "Table 1")
    web, port = free_port(), free_port()
    hub = Hub(ev, None, "--broker-kind", "embedded", "--port", str(port), web_port=web)
    sim = standby = None
    try:
        until(lambda: any("tabletimer console http" in ln for ln in hub.lines), "the primary's web server")
        url = f"http://127.0.0.1:{web}"
        wrong = copy.parent / "wrong"
        shutil.copytree(copy, wrong)
        (wrong / "entrants.csv").write_text("id,name,eligible\n1,Anna,yes\n2,Benedikt,yes\n")
        refused = subprocess.run([TT, "standby", str(wrong), "--primary", url, "--token-file",
                                  str(ev / "console-token"), "--broker-kind", "embedded", "--port",
                                  str(free_port())], capture_output=True, text=True, timeout=60)
        assert refused.returncode == 2 and "entrants.csv differ from the primary's" in refused.stderr
        assert not (wrong / "events.sqlite").exists()          # refused before anything was written
        act(ev, "round_start")
        standby = subprocess.Popen([TT, "standby", str(copy), "--primary", url, "--token-file",
                                    str(ev / "console-token"), "--broker-kind", "embedded", "--port",
                                    str(free_port()), "--silent-after", "2"],
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        out = Output(standby.stdout)
        out.wait_for(lambda ln: ln.startswith("standby of http://127.0.0.1:"), "the standby's first copy")
        out.wait_for(lambda ln: "(idle: the boards are the primary's)" in ln, "its idle broker")
        sim = SimBoard("S1", "127.0.0.1", port, tmp_path / "boards", key=key, stations=2, broker_user="S1",
                       broker_password=mqtt_password(key)).start()
        synced(sim)
        sim.press(1)
        sim.wait_for(lambda r: "acked" in r, timeout=30)
        act(ev, "confirm", press_id="S1-1", missing_found=0)
        primary_log, copy_log = ev / "events.sqlite", copy / "events.sqlite"
        until(lambda: (lambda p: len(p) >= 4 and rows_of(copy_log) == p)(rows_of(primary_log)),
              "the standby's log the primary's, row for row", timeout=20,
              seen=lambda: (len(rows_of(primary_log)), len(rows_of(copy_log))))
        assert event_id(copy_log) == event_id(primary_log)
        # how long after the primary wrote it each row was copied: measured, and said
        line = out.wait_for(lambda ln: ln.startswith(f"copied up to row #{rows_of(primary_log)[-1][0]},"),
                            "the copy's lag said")
        assert float(line.split(", ")[1].split(" s after")[0]) >= 0, line
        # nothing of its own: an action on the standby's folder is refused, the copy unchanged
        before = rows_of(copy_log)
        mine = subprocess.run([TT, "act", str(copy), "dns", "entrant=2"], capture_output=True, text=True,
                              timeout=60)
        assert mine.returncode == 2 and "this laptop is a standby: it records nothing" in mine.stderr, mine.stderr
        assert "about to record" not in mine.stdout          # refused before it says what it would record
        assert rows_of(copy_log)[:len(before)] == before and len(rows_of(copy_log)) >= len(before)
        standings = subprocess.run([TT, "replay", str(copy), "--json"], capture_output=True, text=True,
                                   check=True).stdout
        assert '"entrant": "1"' in standings and '"status": "finished"' in standings
        takeover = [TT, "takeover", str(copy), "--primary", url, "--broker-kind", "embedded", "--port",
                    str(free_port()), "--web-listen", "off", "--duration", "2"]
        alive = subprocess.run(takeover, capture_output=True, text=True, timeout=60)
        assert alive.returncode == 2 and "answers" in alive.stderr and "Stop it first" in alive.stderr
        hub.kill()                                     # the primary's laptop dies
        out.wait_for(lambda ln: ln.startswith("PRIMARY SILENT for") and f"tabletimer takeover {copy}" in ln,
                     "the standby's alert, naming the takeover", timeout=20)
        # a second standby on the same copy: refused (one per log)
        again = subprocess.run([TT, "standby", str(copy), "--primary", url, "--token-file",
                                str(ev / "console-token")], capture_output=True, text=True, timeout=60)
        assert again.returncode == 2
        standby.terminate()
        standby.wait(30)
        copied = rows_of(copy_log)
        took = subprocess.run(takeover, capture_output=True, text=True, timeout=90)
        assert took.returncode == 0, took.stdout + took.stderr
        assert f"on its copy up to row #{copied[-1][0]}" in took.stdout, took.stdout
        assert "the last desk action copied: #" in took.stdout and " confirm " in took.stdout, took.stdout
        after = rows_of(copy_log)
        assert after[:len(copied)] == copied and after[len(copied)][3] == "takeover"   # the copy kept, then the takeover
    finally:
        if sim is not None:
            sim.stop()
        if standby is not None and standby.poll() is None:
            standby.terminate()
            standby.wait(30)
        hub.stop()
    assert "STANDBY STOPPED COPYING" not in out.wait_closed()


def test_a_standby_refuses_a_log_of_another_event(tmp_path):
    ev = event_folder.init(tmp_path / "primary", "czjpa-individuals")
    ensure_secret(ev)
    copy = tmp_path / "standby"
    shutil.copytree(ev, copy)
    other = EventStore(copy / "events.sqlite")        # a log of its own: another event id
    other.append("operator", "round_start", {"at": 1}, 1)
    other.close()
    web = free_port()
    hub = Hub(ev, None, "--broker-kind", "embedded", "--port", str(free_port()), web_port=web)
    try:
        until(lambda: any("tabletimer console http" in ln for ln in hub.lines), "the primary's web server")
        act(ev, "round_start")
        r = subprocess.run([TT, "standby", str(copy), "--primary", f"http://127.0.0.1:{web}", "--token-file",
                            str(ev / "console-token"), "--broker-kind", "embedded", "--port", str(free_port())],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 2 and "this log holds rows of another event" in r.stderr, r.stderr
        assert len(rows_of(copy / "events.sqlite")) == 1          # nothing copied
    finally:
        hub.stop()


def test_a_standby_started_again_goes_on_from_its_copy(tmp_path):
    """The standby laptop restarted (or the standby stopped a while): it
    checks that its copy's last row is the primary's and copies the rest,
    row for row, nothing twice."""
    ev = event_folder.init(tmp_path / "primary", "czjpa-individuals")
    ensure_secret(ev)
    copy = tmp_path / "standby"
    shutil.copytree(ev, copy)
    web = free_port()
    hub = Hub(ev, None, "--broker-kind", "embedded", "--port", str(free_port()), web_port=web)
    args = [TT, "standby", str(copy), "--primary", f"http://127.0.0.1:{web}", "--token-file",
            str(ev / "console-token"), "--broker-kind", "embedded", "--port", str(free_port())]
    primary_log, copy_log = ev / "events.sqlite", copy / "events.sqlite"
    try:
        until(lambda: any("tabletimer console http" in ln for ln in hub.lines), "the primary's web server")
        act(ev, "round_start")
        first = subprocess.run(args + ["--duration", "1"], capture_output=True, text=True, timeout=60)
        copied = rows_of(copy_log)
        assert first.returncode == 0 and copied == rows_of(primary_log)[:len(copied)], first.stdout + first.stderr
        assert "round_start" in [r[3] for r in copied]
        # (the primary notes when its standby goes, and comes back: rows of its own, copied as the rest)
        act(ev, "dns", entrant="2")                       # while the standby is away
        act(ev, "reinstate", entrant="2")
        again = subprocess.run(args + ["--duration", "1"], capture_output=True, text=True, timeout=60)
        assert again.returncode == 0, again.stdout + again.stderr
        more = rows_of(copy_log)
        assert more[:len(copied)] == copied and more == rows_of(primary_log)[:len(more)]     # the rest, once
        assert [r[3] for r in more[len(copied):] if r[2] == "operator"] == ["dns", "reinstate"], more
    finally:
        hub.stop()
