"""A damaged event log (issue 33, item 4): each kind of damage seen on a real
log -- the last row's payload cut short, the file cut short, a page of
garbage -- is refused by every command with one message naming the file, its
first damaged row and what to do (no traceback), `tabletimer log check` says
what is damaged, and `tabletimer log recover` copies every readable row into
a new log under the same ids, the damaged file kept beside it as it was.  A
row whose JSON is valid but that the fold cannot use is not damage: it is
flagged and alerted, and the event goes on."""

from __future__ import annotations

import json
import random
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tabletimer.hub.protocol.keys import BoardKeys
from tabletimer.hub.cli import main as cli
from tabletimer.hub.cli.common import service_for
from tabletimer.hub.event.folder import event_folder
from tabletimer.hub.event.log.store import EventStore
from tabletimer.shared import protocol as P

ROWS = 300          # board events after the round start: enough pages for a page to be damaged


def _event(tmp_path: Path, capsys, counters_last: bool = False) -> Path:
    """An event folder whose log holds a round start, ROWS board events (each
    marked, to find its page), a finish, a conflict naming an earlier row,
    an operator action and the hub's command counters (reserved first, or
    last: then their index is the file's last page)."""
    ev = tmp_path / "event"
    assert cli.main(["init", str(ev), "--format", "czjpa-individuals"]) == 0
    (ev / "entrants.csv").write_text("id,name,eligible\n1,Anna,yes\n2,Ben,yes\n3,Cecilie,yes\n")
    (ev / "stations.csv").write_text("board,button,table,entrant\nT01,1,Table 1,1\nT01,2,Table 1,2\n"
                                     "T02,1,Table 2,3\n")
    t0 = int(time.time() * 1000) - 3 * 3_600_000
    assert cli.main(["act", str(ev), "round_start", f"at={t0}", "--who", "desk"]) == 0
    store = EventStore(ev / "events.sqlite")
    try:
        if not counters_last:
            store.reserve("hub_ctr", 64, floor=t0)
        with store.transaction():
            store.append("board", "status", dict(P.status_online(1, "1.0", 2), bt=1, ctr=1), t0, board="T01")
            for i in range(1, ROWS + 1):
                msg = dict(P.event("stray", 1, i, 1, t0 + 1000 * i, state="idle", mark=f"row{i:04d}"),
                           bt=1, ctr=i + 1)
                store.append_board_event("T01", msg, t0 + 1000 * i + 5)
            press = dict(P.event("press", 1, ROWS + 1, 2, t0 + 3_000_000), bt=1, ctr=ROWS + 2)
            store.append_board_event("T01", press, t0 + 3_000_010)
            status, _ = store.append_board_event("T01", dict(press, at=t0 + 3_000_500), t0 + 3_000_600)
            assert status == "conflict"
        if counters_last:
            store.reserve("hub_ctr", 64, floor=t0)
    finally:
        store.close()
    assert cli.main(["act", str(ev), "dns", "entrant=3"]) == 0
    capsys.readouterr()
    return ev


def _rows(log: Path) -> list[dict]:
    store = EventStore(log)
    try:
        return store.events()
    finally:
        store.close()


def _meta(log: Path) -> tuple[str, list[tuple], int]:
    """The event id, the counters and the id sequence, read with sqlite3."""
    db = sqlite3.connect(log)
    try:
        (event_id,) = db.execute("SELECT value FROM meta WHERE key = 'event_id'").fetchone()
        counters = db.execute("SELECT name, reserved FROM counters ORDER BY name").fetchall()
        (seq,) = db.execute("SELECT seq FROM sqlite_sequence WHERE name = 'events'").fetchone()
    finally:
        db.close()
    return event_id, counters, seq


def _files(log: Path) -> dict[str, bytes]:
    """The log's own file and its -wal, if any (an empty one holds nothing; the -shm is
    SQLite's index of it)."""
    return {p.name: p.read_bytes() for p in (log, Path(f"{log}-wal")) if p.exists() and p.stat().st_size}


def _cut_last_payload(log: Path) -> None:
    """The last row's payload cut to 25 characters, as a hub killed meanwhile
    leaves it: in the -wal file, not yet in the log's own file."""
    code = ("import os, sqlite3, sys\n"
            "db = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
            "db.execute('PRAGMA wal_autocheckpoint = 0')\n"
            "db.execute('UPDATE events SET payload = substr(payload, 1, 25) WHERE id = (SELECT max(id) FROM events)')\n"
            "os._exit(0)\n")                          # killed: no checkpoint, the -wal stays
    subprocess.run([sys.executable, "-c", code, str(log)], check=True)
    assert Path(f"{log}-wal").stat().st_size > 0


def _truncate(log: Path) -> None:
    """The file cut 2,500 bytes short (a copy or a disk that stopped)."""
    with open(log, "rb+") as f:
        f.truncate(log.stat().st_size - 2500)


def _garbage_page(log: Path) -> None:
    """The page holding the 150th board event overwritten with garbage."""
    data = log.read_bytes()
    at = data.index(b'"mark": "row0150"')
    page = 4096
    assert at >= page                                     # not the file's header
    with open(log, "rb+") as f:
        f.seek(at // page * page)
        f.write(random.Random(33).randbytes(page))


def _what_each_command_says(ev: Path, capsys) -> list[str]:
    """replay, act, results and run on the damaged log: exit code 3 and one
    message each, on standard error."""
    said = []
    for argv in (["replay", str(ev)], ["act", str(ev), "dns", "entrant=1"],
                 ["results", str(ev), "--csv", str(ev / "results.csv")],
                 ["run", str(ev), "--broker", "mqtt://127.0.0.1:1", "--web-listen", "off",
                  "--hall-pages", "off"]):
        assert cli.main(argv) == 3, argv
        err = capsys.readouterr().err
        assert "Traceback" not in err
        said.append(err)
    assert "The hub did not start" in said[-1] and "Nothing was recorded" in said[1]
    return said


DAMAGE = {"cut payload": _cut_last_payload, "truncated file": _truncate, "garbage page": _garbage_page}


@pytest.mark.parametrize("kind", list(DAMAGE))
def test_a_damaged_log_is_refused_with_advice_checked_and_recovered(tmp_path, capsys, kind):
    ev = _event(tmp_path, capsys)
    log = ev / "events.sqlite"
    before = _rows(log)
    event_id, counters, _ = _meta(log)
    DAMAGE[kind](log)
    damaged = _files(log)

    # every command (on a copy of the folder): the file, its first damaged row, what to do
    copy = tmp_path / "copy"
    shutil.copytree(ev, copy)
    for err in _what_each_command_says(copy, capsys):
        assert f"the event log {copy / 'events.sqlite'} is damaged: " in err
        assert "row #" in err or "a row after #" in err
        assert f"`tabletimer log check {copy}`" in err and f"`tabletimer log recover {copy}`" in err
    assert not (copy / "results.csv").exists()

    # check: what reads and what does not; nothing changed (the -wal left as it is)
    assert cli.main(["log", "check", str(ev)]) == 3
    out = capsys.readouterr().out
    assert "DAMAGED:" in out and "the log is damaged" in out
    assert _files(log) == damaged

    # recover: every readable row, under its own id; the damaged file kept as it was
    assert cli.main(["log", "recover", str(ev)]) == 0
    out = capsys.readouterr().out
    kept = sorted(ev.glob("events.sqlite.damaged-*"))
    assert [p.name for p in kept] == [f"{kept[0].name}{s}" for s in ("", "-wal")[:len(damaged)]]
    assert {p.name.replace(kept[0].name, "events.sqlite"): p.read_bytes() for p in kept} == damaged
    assert f"the damaged log is kept as it was: {kept[0]}" in out
    assert not Path(f"{log}-wal").exists() or not Path(f"{log}-wal").read_bytes()   # no stale -wal beside it
    after = _rows(log)
    by_id = {r["id"]: r for r in before}
    assert after and all(r == by_id[r["id"]] for r in after)            # same ids, same content
    lost = sorted(set(by_id) - {r["id"] for r in after})
    assert lost and f"LOST: {len(lost)} row" in out
    for i in lost:                           # each lost row named (alone or in a range)
        assert f"#{i}" in out or any(f"#{a}-#{b}" in out and a <= i <= b
                                     for a in lost for b in lost if a < b)
    assert lost[0] > 1 and lost[0] - 1 in {r["id"] for r in after}      # the rows before the damage read
    if kind == "cut payload":
        assert lost == [before[-1]["id"]] and "its payload is cut" in out
    if kind == "garbage page":
        marked = next(r["id"] for r in before if r["payload"].get("mark") == "row0150")
        assert marked in lost and lost[-1] < before[-1]["id"]              # rows after the page read too
    assert _meta(log)[:2] == (event_id, counters)                          # the event id, the counters
    assert _meta(log)[2] >= before[-1]["id"]                               # no lost row's id given again
    store = EventStore(log)
    try:
        assert store.append("operator", "note", {}, 0)["id"] > before[-1]["id"]
    finally:
        store.close()

    # the new log is sound and the hub's commands read it
    assert cli.main(["log", "check", str(ev)]) == 0
    assert "the log is sound" in capsys.readouterr().out
    assert cli.main(["replay", str(ev), "--json"]) == 0
    json.loads(capsys.readouterr().out)


def test_a_damaged_file_whose_rows_all_read_is_refused_and_rebuilt_whole(tmp_path, capsys):
    """The file cut short where only an index lies (the counters' here): every
    row reads, SQLite's own check does not pass; the log is refused (its
    next writes would go through the damaged page) and recovered with no
    row lost."""
    ev = _event(tmp_path, capsys, counters_last=True)
    log = ev / "events.sqlite"
    before = _rows(log)
    event_id, counters, _ = _meta(log)
    _truncate(log)
    err = _what_each_command_says(ev, capsys)[0]
    assert f"the event log {log} is damaged: its file is damaged (PRAGMA quick_check: " in err
    assert cli.main(["log", "check", str(ev)]) == 3
    out = capsys.readouterr().out
    assert f"rows read whole: {len(before)} (#1-#{before[-1]['id']})" in out and "DAMAGED:" not in out
    assert cli.main(["log", "recover", str(ev)]) == 0
    assert "LOST" not in capsys.readouterr().out
    assert _rows(log) == before and _meta(log)[:2] == (event_id, counters)
    assert cli.main(["log", "check", str(ev)]) == 0


def test_a_log_with_nothing_readable_is_left_as_it_is(tmp_path, capsys):
    ev = _event(tmp_path, capsys)
    log = ev / "events.sqlite"
    with open(log, "rb+") as f:
        f.write(b"\x00" * 100)                            # the file's header gone: not a database
    damaged = log.read_bytes()
    err = _what_each_command_says(ev, capsys)[0]
    assert f"the event log {log} is damaged" in err and f"`tabletimer log recover {ev}`" in err
    assert cli.main(["log", "recover", str(ev)]) == 3
    assert "nothing was changed" in capsys.readouterr().err
    assert log.read_bytes() == damaged and not list(ev.glob("events.sqlite.damaged-*"))


def test_recover_waits_for_the_hub_to_stop(tmp_path, capsys):
    from tabletimer.hub.event.folder.folder_lock import HubLock

    ev = _event(tmp_path, capsys)
    _cut_last_payload(ev / "events.sqlite")
    lock = HubLock(ev / "events.sqlite").acquire()        # a hub runs on it
    try:
        assert cli.main(["log", "recover", str(ev)]) == 2
        assert "stop the hub" in capsys.readouterr().err
        assert not list(ev.glob("events.sqlite.damaged-*"))
    finally:
        lock.release()


def test_a_row_that_breaks_the_fold_is_flagged_not_fatal(tmp_path, capsys):
    """Valid JSON the fold cannot use (another program's row, an older
    version's): the hub starts, replays and ranks, and alerts each such
    row; `log check` calls the log sound and lists them."""
    ev = _event(tmp_path, capsys)
    log = ev / "events.sqlite"
    assert cli.main(["replay", str(ev), "--json"]) == 0
    standings = json.loads(capsys.readouterr().out)["standings"]
    db = sqlite3.connect(log)
    bad = []
    for source, type_, board, payload in [
            ("board", "status", "T01", {}),                               # no state, no boot
            ("board", "press", "T01", [1, 2]),                            # not an object
            ("board", "status", "T01", {"type": "status", "state": "offline", "boot": "x", "bt": 1}),
            ("hub", "conflict", "T01", {"of": 3, "msg": {"bt": "x", "ctr": 1}}),   # what it keeps is no message
            ("operator", "confirm", None, "text")]:
        cur = db.execute("INSERT INTO events (received_ms, source, type, board, payload) VALUES (?, ?, ?, ?, ?)",
                         (1, source, type_, board, json.dumps(payload)))
        bad.append(cur.lastrowid)
    db.commit()
    db.close()

    assert cli.main(["replay", str(ev), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["standings"] == standings
    folder = event_folder.load(ev)
    store = EventStore(log)
    try:
        service = service_for(folder, BoardKeys(folder.keys_file), store)
        assert sorted(service.competition.flagged) == bad
        alerts = service.alerts()
        assert all(any(f"log row #{i} cannot apply" in a for a in alerts) for i in bad)
    finally:
        store.close()
    assert cli.main(["log", "check", str(ev)]) == 0
    out = capsys.readouterr().out
    assert "the log is sound" in out and f"rows the fold cannot use: {len(bad)}" in out
    assert all(f"row #{i}: " in out for i in bad)
