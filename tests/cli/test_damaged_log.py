"""A damaged event log (issue 33, item 4).  A row whose JSON is valid but that
the fold cannot use is not damage: it is flagged and alerted, and the event
goes on."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

from tabletimer.hub.boards.keys import BoardKeys
from tabletimer.hub.cli import main as cli
from tabletimer.hub.cli.common import service_for
from tabletimer.hub.event import event_folder
from tabletimer.hub.event.store import EventStore
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


def test_a_row_that_breaks_the_fold_is_flagged_not_fatal(tmp_path, capsys):
    """Valid JSON the fold cannot use (another program's row, an older
    version's): the hub starts, replays and ranks, and alerts each such
    row."""
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
