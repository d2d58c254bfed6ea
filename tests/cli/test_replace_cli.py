"""`tabletimer act DIR replace` (issue 31, item 3): an absent entrant's
station given to another participant, as the desk types it: asked first
(refused without --force, nothing stored) while the absent entrant's time
to arrive is not up, recorded after it; the new entrant ranked from the
round's start, the absent one DNS, the absent entrant's earlier press never
the new one's; the results say so; a format without the rule refuses it."""

from __future__ import annotations

import csv
import io
import json
import time
from pathlib import Path

from tabletimer.hub.cli import main as cli
from tabletimer.hub.event.log.store import EventStore
from event_log import rows

M = 60_000


def event(path: Path, preset: str = "czjpa-individuals") -> Path:
    assert cli.main(["init", str(path), "--format", preset, "--title", "Cup"]) == 0
    (path / "entrants.csv").write_text("id,name,eligible\n1,Anna,yes\n2,Ben,yes\nR,Reserve,yes\n")
    (path / "stations.csv").write_text("board,button,table,entrant\nB1,1,Table 1,1\nB1,2,Table 1,2\n")
    return path


def board_press(ev: Path, button: int, seq: int, at: int) -> None:
    """A press of board B1 stored as the hub stores one."""
    store = EventStore(ev / "events.sqlite")
    try:
        store.append_board_event("B1", {"type": "press", "station": button, "at": at, "boot": 1, "seq": seq}, at)
    finally:
        store.close()


def now_ms() -> int:
    return int(time.time() * 1000)


def test_replace_inside_the_window_needs_force_after_it_not_and_the_absents_press_stays_theirs(tmp_path, capsys):
    ev = event(tmp_path / "cup")
    start = now_ms() - 5 * M                  # the round started 5 min ago: Anna has 5 more to arrive
    assert cli.main(["act", str(ev), "round_start", f"at={start}"]) == 0
    board_press(ev, 1, 1, start + 2 * M)      # on Anna's station, before anyone sat there
    capsys.readouterr()
    before = rows(ev)
    new = ["act", str(ev), "replace", "absent=1", "entrant=N1", "name=Jana Nová", "eligible=yes",
           "--who", "desk", "--why", "Anna not here"]
    assert cli.main(new) == 2                  # inside the window: asked, no terminal, not recorded
    err = capsys.readouterr().err
    assert "gives 1's station away before 1's time to arrive is up (0:10:00 after the start" in err, err
    assert "marks 1, who has recorded finish calls (B1-1), as not started: none of them is ranked for N1" in err
    assert "not recorded; add --force" in err
    assert rows(ev) == before

    assert cli.main(new + ["--force"]) == 0
    out = capsys.readouterr().out
    stored = rows(ev)[-1]
    assert (stored["type"], stored["payload"]["absent"], stored["payload"]["entrant"]) == ("replace", "1", "N1")
    assert (stored["payload"]["who"], stored["payload"]["why"]) == ("desk", "Anna not here")
    assert f"recorded #{stored['id']}: replace" in out and "may still come" in out
    finish = stored["received_ms"] + 1000
    board_press(ev, 1, 2, finish)              # Jana's call
    assert cli.main(["act", str(ev), "confirm", "press_id=B1-2"]) == 0
    assert cli.main(["act", str(ev), "replace", "absent=2", "entrant=N1", "--force"]) == 2
    assert "N1 is at a station already" in capsys.readouterr().err

    assert cli.main(["replay", str(ev), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    got = {r["entrant"]: r for r in doc["standings"]}
    # Jana's time from the round's start, not from the replacement; Anna's press finishes nobody
    assert (got["N1"]["status"], got["N1"]["time_ms"], got["N1"]["name"]) == (
        "finished", (finish - start) // 1000 * 1000, "Jana Nová")
    assert (got["1"]["status"], got["1"]["reason"]) == ("dns", "absent: the station went to Jana Nová (N1)")
    assert [(s["board"], s["button"], s["entrant"], s["state"]) for s in doc["stations"]] == [
        ("B1", 1, "N1", "done"), ("B1", 2, "2", "running")]

    assert cli.main(["results", str(ev), "--csv", "-"]) == 0
    table = {r["entrant"]: r for r in csv.DictReader(io.StringIO(capsys.readouterr().out))}
    assert table["N1"]["name"] == "Jana Nová" and table["N1"]["status"] == "finished"
    assert table["1"]["status"] == "dns" and table["1"]["reason"] == "absent: the station went to Jana Nová (N1)"
    html = tmp_path / "results.html"
    assert cli.main(["results", str(ev), "--html", str(html)]) == 0
    assert "DNS: absent: the station went to Jana Nová (N1)" in html.read_text(encoding="utf-8")


def test_replace_after_the_window_is_recorded_without_asking(tmp_path, capsys):
    ev = event(tmp_path / "cup")
    start = now_ms() - 15 * M                 # Anna's 10 minutes are up
    assert cli.main(["act", str(ev), "round_start", f"at={start}"]) == 0
    capsys.readouterr()
    assert cli.main(["act", str(ev), "replace", "absent=1", "entrant=R", "--why", "not here at 0:10"]) == 0
    captured = capsys.readouterr()
    assert "warning: this" not in captured.err and "  this " not in captured.out, captured
    assert cli.main(["replay", str(ev), "--json"]) == 0
    got = {r["entrant"]: r for r in json.loads(capsys.readouterr().out)["standings"]}
    assert (got["1"]["status"], got["1"]["reason"]) == ("dns", "absent: the station went to Reserve (R)")
    assert got["R"]["status"] == "unfinished"          # ranked: counted at time-up like everyone


def test_replace_is_refused_where_the_format_has_no_rule_for_it(tmp_path, capsys):
    ev = event(tmp_path / "mcr", "cz-championship-individuals")   # rule set 000: nothing about it
    assert cli.main(["act", str(ev), "round_start", f"at={now_ms() - 15 * M}"]) == 0
    capsys.readouterr()
    before = rows(ev)
    assert cli.main(["act", str(ev), "replace", "absent=1", "entrant=R", "--force"]) == 2
    err = capsys.readouterr().err
    assert "gives no absent entrant's station to another (entrants.no_show_after is not set" in err, err
    assert rows(ev) == before
