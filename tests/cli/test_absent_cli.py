"""Check-in from the command line (issue 47, item 3): `act check_in`,
the round start asking first while entrants are not checked in (naming
them), and `tabletimer absent`: the list, then after the format's window
each absent entrant DNS or its station given to another, in one step;
refused whole (nothing stored) when any of it cannot be."""

from __future__ import annotations

import json
import time
from pathlib import Path

from tabletimer.hub.cli import main as cli
from event_log import rows

M = 60_000


def event(path: Path) -> Path:
    assert cli.main(["init", str(path), "--format", "czjpa-individuals", "--title", "Cup"]) == 0
    (path / "entrants.csv").write_text("id,name,eligible\n1,Anna,yes\n2,Ben,yes\n3,Cyril,yes\n4,Dana,yes\n"
                                       "R,Reserve,yes\n")
    (path / "stations.csv").write_text("board,button,table,entrant\nB1,1,Table 1,1\nB1,2,Table 1,2\n"
                                       "B2,1,Table 2,3\nB2,2,Table 2,4\n")
    return path


def test_the_start_names_who_is_not_checked_in_and_asks_first(tmp_path, capsys):
    ev = event(tmp_path / "cup")
    for e in ("1", "2"):
        assert cli.main(["act", str(ev), "check_in", f"entrant={e}", "--who", "Petra"]) == 0
    assert cli.main(["act", str(ev), "check_in", "entrant=2", "present=0", "--why", "not Ben"]) == 0
    capsys.readouterr()
    before = rows(ev)
    assert cli.main(["act", str(ev), "round_start"]) == 2          # no terminal: not asked, not recorded
    err = capsys.readouterr().err
    assert ("warning: this starts with 3 of 4 entrants not checked in (1 of 4 checked in): Ben (2), "
            "Cyril (3), Dana (4); after 0:10:00 the desk may give their stations away") in err, err
    assert rows(ev) == before
    assert cli.main(["act", str(ev), "round_start", "--force"]) == 0
    assert "this starts with 3 of 4 entrants not checked in" in capsys.readouterr().out


def test_a_check_in_of_someone_not_in_the_round_is_refused_and_nothing_is_stored(tmp_path, capsys):
    ev = event(tmp_path / "cup")
    assert cli.main(["act", str(ev), "check_in", "entrant=1"]) == 0
    capsys.readouterr()
    before = rows(ev)
    assert cli.main(["act", str(ev), "check_in", "entrant=Anna"]) == 2
    err = capsys.readouterr().err
    assert "check_in: no entrant 'Anna' in this round: nothing was recorded. Search again by name" in err, err
    assert cli.main(["act", str(ev), "check_in", "entrant=1"]) == 2
    assert "check_in: 1 was checked in already (by operator at" in capsys.readouterr().err
    assert rows(ev) == before


def test_absent_lists_then_after_the_window_decides_each_in_one_step(tmp_path, capsys):
    ev = event(tmp_path / "cup")
    for e in ("1", "R"):
        assert cli.main(["act", str(ev), "check_in", f"entrant={e}"]) == 0
    start = int(time.time() * 1000) - 5 * M
    assert cli.main(["act", str(ev), "round_start", f"at={start}", "--force"]) == 0
    capsys.readouterr()
    assert cli.main(["absent", str(ev)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("1 of 4 checked in; not checked in: 3\n  2  Ben  (Table 1)\n  3  Cyril  (Table 2)\n"
                          "  4  Dana  (Table 2)\ntheir time to arrive is up at "), out
    before = rows(ev)
    assert cli.main(["absent", str(ev), "--dns-all"]) == 2          # 5 minutes in: not yet
    assert "their time to arrive is not up yet: 0:10:00 after the start" in capsys.readouterr().err
    assert cli.main(["absent", str(ev), "--give", "2=R", "--give", "3=R", "--dns-all", "--force"]) == 2
    assert "R cannot take both 2's and 3's stations" in capsys.readouterr().err
    assert rows(ev) == before                                       # refused whole: nothing

    assert cli.main(["absent", str(ev), "--give", "3=R", "--dns-all", "--force", "--who", "desk"]) == 0
    out = capsys.readouterr().out
    made = rows(ev)[len(before):]
    assert [(r["type"], r["payload"].get("absent"), r["payload"]["entrant"], r["payload"]["who"]) for r in made] == [
        ("replace", "3", "R", "desk"), ("dns", None, "2", "desk"), ("dns", None, "4", "desk")]
    assert made[1]["payload"]["why"] == "absent: not checked in within 0:10:00 of the start"
    assert "3's station goes to R" in out and "2 is DNS" in out and "4 is DNS" in out
    assert cli.main(["replay", str(ev), "--json"]) == 0
    got = {r["entrant"]: (r["status"], r["reason"]) for r in json.loads(capsys.readouterr().out)["standings"]}
    assert got["2"][0] == got["4"][0] == "dns" and got["3"] == ("dns", "absent: the station went to Reserve (R)")
    assert cli.main(["absent", str(ev)]) == 0
    assert capsys.readouterr().out.startswith("2 of 2 checked in; not checked in: 0\n")


def test_the_check_in_list_has_every_entrant_by_name_with_a_code_for_the_check_in_page(tmp_path, capsys):
    ev = event(tmp_path / "cup")
    out = tmp_path / "door.html"
    assert cli.main(["check-in-list", str(ev), "--html", str(out)]) == 0
    assert "note: the list has no QR codes: give --public-url" in capsys.readouterr().err
    assert "<svg" not in out.read_text()
    assert cli.main(["check-in-list", str(ev), "--html", str(out), "--public-url", "http://10.0.0.2:8765"]) == 0
    assert "QR codes opening http://10.0.0.2:8765/checkin?entrant=..." in capsys.readouterr().err
    page = out.read_text()
    order = [page.index(f'data-entrant="{e}"') for e in ("1", "2", "3", "4", "R")]   # Anna, Ben, Cyril, Dana, Reserve
    assert order == sorted(order)
    for e in ("1", "R"):
        assert f"<title>http://10.0.0.2:8765/checkin?entrant={e}</title>" in page     # the QR code's content
    assert "no station (reserve)" in page
