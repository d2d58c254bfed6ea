"""After time-up at the desk (issue 47, item 4), as the desk types it: the
competitor's agreement (`act agree`), a change of an agreed time refused
(--force is not enough) unless recorded as the head referee's objection
with a reason, `results --official` refused before every check is done,
every change refused after it until `results --reopen --why`, and the
sheet saying agreed, the objection with its reason, official and the
reopening.  Each refusal writes nothing."""

from __future__ import annotations

import json
import time
from pathlib import Path

from tabletimer.hub.cli import main as cli
from tabletimer.hub.event.log.store import EventStore
from event_log import rows

M = 60_000


def event(path: Path) -> Path:
    assert cli.main(["init", str(path), "--format", "czjpa-individuals", "--title", "Cup"]) == 0
    (path / "entrants.csv").write_text("id,name,eligible\n1,Anna,yes\n2,Ben,yes\n")
    (path / "stations.csv").write_text("board,button,table,entrant\nB1,1,Table 1,1\nB1,2,Table 1,2\n")
    return path


def board_event(ev: Path, typ: str, button: int, seq: int, at: int, call: int | None = None) -> None:
    store = EventStore(ev / "events.sqlite")
    try:
        p = {"type": typ, "station": button, "at": at, "boot": 1, "seq": seq}
        if call is not None:
            p.update(call=[1, call], missing=0)
        store.append_board_event("B1", p, at)
    finally:
        store.close()


def refused(capsys, argv: list[str], ev: Path, *expected: str) -> str:
    before = rows(ev)
    capsys.readouterr()
    assert cli.main(argv) == 2, argv
    err = capsys.readouterr().err
    for text in expected:
        assert text in err, err
    assert rows(ev) == before, "a refused action wrote to the log"
    return err


def test_agreement_objection_official_reopen_at_the_desk(tmp_path, capsys):
    ev = event(tmp_path / "cup")
    start = int(time.time() * 1000) - 125 * M              # time was up 5 minutes ago
    assert cli.main(["act", str(ev), "round_start", f"at={start}"]) == 0
    board_event(ev, "press", 1, 1, start + 50 * M)          # Anna's finish
    board_event(ev, "press", 2, 2, start + 60 * M)          # Ben's, confirmed on the board: shown
    board_event(ev, "confirm", 2, 3, start + 61 * M, call=2)
    assert cli.main(["act", str(ev), "confirm", "press_id=B1-1", "--who", "Eva"]) == 0
    assert cli.main(["act", str(ev), "agree", "press_id=B1-1", "--who", "Eva"]) == 0
    assert rows(ev)[-1]["type"] == "agree"
    assert cli.main(["act", str(ev), "agree", "press_id=B1-2", "--who", "Eva"]) == 0       # Ben agrees too

    plain = ["act", str(ev), "void", "press_id=B1-1", "--why", "wrong"]
    refused(capsys, plain, ev, "the competitor agreed to this time (Eva", "--objection", "--force is not enough")
    refused(capsys, plain + ["--force"], ev, "the competitor agreed to this time")
    refused(capsys, plain + ["--objection", " ", "--who", "Head"], ev, "an objection needs its reason")
    refused(capsys, plain + ["--objection", "seen on video"], ev, "an objection is the head referee's decision")
    assert cli.main(["act", str(ev), "correct", "press_id=B1-1", f"at={start + 49 * M}", "--force",
                     "--who", "Head", "--objection", "the call was at 49:00 (video)"]) == 0
    assert rows(ev)[-1]["payload"]["objection"] == "the call was at 49:00 (video)"
    assert cli.main(["act", str(ev), "confirm", "press_id=B1-2", "missing_found=1", "--force", "--who", "Head",
                     "--objection", "one piece missing after all"]) == 0

    # official: every check is done (the corrected call keeps its confirmation)
    assert cli.main(["results", str(ev), "--official", "--who", "Head"]) == 0
    assert rows(ev)[-1]["type"] == "official"
    for argv in (["act", str(ev), "dq", "entrant=2", "reason=help", "--force"],
                 ["act", str(ev), "count", "entrant=1", "placed=3", "--force"],
                 ["results", str(ev), "--official"]):
        refused(capsys, argv, ev, "the results are official (made official by Head",
                "reopen first, saying why: tabletimer results DIR --round R --reopen")
    refused(capsys, ["results", str(ev), "--reopen", "--who", "Head"], ev, "say why the results are reopened")
    assert cli.main(["results", str(ev), "--reopen", "--who", "Head", "--why", "Ben objects at the desk"]) == 0
    assert cli.main(["act", str(ev), "confirm", "press_id=B1-2", "missing_found=0", "--force", "--who", "Head",
                     "--objection", "the piece was found: none missing"]) == 0
    sheet = tmp_path / "sheet.html"
    capsys.readouterr()
    assert cli.main(["results", str(ev), "--official", "--who", "Head", "--html", str(sheet),
                     "--json", str(tmp_path / "r.json")]) == 0
    html = sheet.read_text()
    assert "Official results: made official by Head" in html
    assert html.count('<span class="badge agreed">agreed</span>') >= 3        # Anna, Ben, the legend
    assert "Objection: Anna, puzzle 1: the call was at 49:00 (video) (correct by Head" in html
    assert "Objection: Ben, puzzle 1: the piece was found: none missing" in html
    assert "reopened by Head" in html and "Ben objects at the desk" in html
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["official"].startswith("made official by Head") and len(doc["objections"]) == 3
    assert {r["entrant"]: r["agreed"] for r in doc["rows"]} == {"1": True, "2": True}
    assert [r["net_time_ms"] for r in doc["rows"]] == [49 * M, 60 * M]


def test_official_refused_before_the_checks_and_before_time_up(tmp_path, capsys):
    ev = event(tmp_path / "cup")
    now = int(time.time() * 1000)
    assert cli.main(["act", str(ev), "round_start", f"at={now - 10 * M}"]) == 0
    refused(capsys, ["results", str(ev), "--official"], ev, "the round's time is not up")
    ev2 = event(tmp_path / "cup2")
    assert cli.main(["act", str(ev2), "round_start", f"at={now - 125 * M}"]) == 0
    board_event(ev2, "press", 1, 1, now - 100 * M)
    refused(capsys, ["results", str(ev2), "--official"], ev2, "1 call(s) waiting for a referee",
            "provisional result(s)")
