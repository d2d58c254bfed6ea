"""Press ids an operator reads aloud and types (event/fold/press_numbers.py):
"T07-5", the board's 5th press in the event's log, per board across its
installs, in the log's order (never renumbered); the long form ("T07/3/5")
stays the record and is still taken everywhere."""

from __future__ import annotations

from pathlib import Path

import pytest

from tabletimer.hub.protocol import hub_protocol
from tabletimer.hub.protocol.keys import BoardKeys
from tabletimer.hub.core.service import HubService
from tabletimer.hub.event.fold.competition import Competition
from tabletimer.hub.event.actions.action_checks import check_action
from tabletimer.hub.event.folder.event_folder import Station
from tabletimer.hub.event.log.store import EventStore
from tabletimer.hub.rules.formats import load_format
from tabletimer.hub.rules.standings import Entrant
from tabletimer.shared import protocol as P
from tabletimer.shared.auth import Signer
from clocks import FixedClock

T0 = 1_796_000_000_000
KEYS = {"T07": "11" * 32, "T08": "22" * 32}


def press_row(rid: int, board: str, seq: int, at: int, boot: int = 1, install: str | None = None,
              station: int = 1) -> dict:
    p = {"type": "press", "station": station, "at": at, "boot": boot, "seq": seq}
    if install:
        p["in"] = install
    return {"id": rid, "received_ms": at, "source": "board", "type": "press", "board": board, "payload": p}


def start_row(rid: int = 1) -> dict:
    return {"id": rid, "received_ms": T0, "source": "operator", "type": "round_start", "board": None,
            "payload": {"at": T0, "duration": None, "warnings": [], "who": "t", "why": ""}}


def competition(rows: list[dict] = ()) -> Competition:
    fmt = load_format("czjpa-individuals")
    return Competition(fmt, [Entrant("a", "Ann"), Entrant("b", "Bo"), Entrant("c", "Cy")],
                       [Station("T07", 1, "Table 7", "a", 1), Station("T07", 2, "Table 7", "b", 1),
                        Station("T08", 1, "Table 8", "c", 1)], rows=list(rows))


def test_each_boards_presses_are_numbered_in_the_logs_order():
    comp = competition([start_row(), press_row(2, "T07", 1, T0 + 60_000), press_row(3, "T08", 1, T0 + 61_000),
                        press_row(4, "T07", 2, T0 + 62_000, station=2)])
    assert [comp.short_press_id(p) for p in ("T07/1/1", "T08/1/1", "T07/1/2")] == ["T07-1", "T08-1", "T07-2"]
    assert comp.canonical_press_id("T07-2") == "T07/1/2"
    assert comp.canonical_press_id("t07-2") == "T07/1/2"          # typed in lower case
    assert comp.canonical_press_id("T07/1/2") == "T07/1/2"        # the long form as it is
    assert comp.canonical_press_id("T07-9") == "T07-9"            # no such press: the checks say so
    with pytest.raises(ValueError, match="no press 'T07-9'"):
        check_action(comp, "void", {"press_id": "T07-9", "who": "t", "why": ""})
    assert comp.short_press_id("op/7") == "op/7"                  # the desk's presses are short already


def test_a_number_never_changes_once_given():
    """A press that waited for a retransmission reaches the log after a
    later one of its board: the fold puts it first (board order), its number
    is still the log's: the later press keeps the number it was shown with."""
    rows = [start_row(), press_row(2, "T07", 2, T0 + 62_000, station=2)]
    comp = competition(rows)
    assert comp.short_press_id("T07/1/2") == "T07-1"
    comp.apply(press_row(3, "T07", 1, T0 + 60_000))
    assert (comp.short_press_id("T07/1/2"), comp.short_press_id("T07/1/1")) == ("T07-1", "T07-2")
    again = competition(comp.rows)                                 # a replay of the log
    assert (again.short_press_id("T07/1/2"), again.short_press_id("T07/1/1")) == ("T07-1", "T07-2")


def test_a_spare_board_continues_its_board_ids_count():
    """A spare flashed with the board's id (its second install: long ids
    T07.2/boot/seq, its boot count from 1 again) goes on from the number the
    dead board reached."""
    comp = competition([start_row(), press_row(2, "T07", 1, T0 + 60_000, install="dead0001"),
                        press_row(3, "T07", 1, T0 + 61_000, install="spare002", station=2)])
    assert comp.short_press_id("T07/1/1") == "T07-1"
    assert comp.short_press_id("T07.2/1/1") == "T07-2"
    assert comp.canonical_press_id("T07-2") == "T07.2/1/1"


def test_an_action_takes_either_form_and_the_log_holds_the_long_one(tmp_path: Path):
    store = EventStore(tmp_path / "events.sqlite")

    class Clock(FixedClock):
        t = T0 + 600_000

    svc = HubService(store, BoardKeys(keys=KEYS), competition(), Clock())
    try:
        svc.act("round_start", {"at": T0})
        topic = P.board_topic("T07", P.STATUS)
        svc.handle(topic, Signer(KEYS["T07"]).sign(topic, P.encode(P.stamp(P.status_online(1, "1.0", 2), 1, 1))),
                   Clock.t)
        for ctr, (seq, station) in enumerate(((1, 1), (2, 2)), start=2):
            msg = P.stamp(hub_protocol.press(1, seq, station, T0 + 60_000 * seq), ctr, 1)
            topic = P.board_topic("T07", P.EVENT)
            svc.handle(topic, Signer(KEYS["T07"]).sign(topic, P.encode(msg)), Clock.t)
        assert svc.snapshot().short_ids == {"T07/1/1": "T07-1", "T07/1/2": "T07-2"}
        assert svc.consequences("void", {"press_id": "T07-1"}) == \
            svc.consequences("void", {"press_id": "T07/1/1"})
        row = svc.act("confirm", {"press_id": "T07-2", "missing_found": 1}, who="desk", request="k1")
        assert row["payload"]["press_id"] == "T07/1/2"
        again = svc.act("confirm", {"press_id": "T07/1/2", "missing_found": 1}, who="desk", request="k1")
        assert again["duplicate"] and again["id"] == row["id"]     # the same request in the other form
        with pytest.raises(ValueError, match="no press 'T07-3'"):
            svc.act("void", {"press_id": "T07-3"})
        stored = [e for e in store.events() if e["type"] == "confirm"]
        assert [e["payload"]["press_id"] for e in stored] == ["T07/1/2"]
    finally:
        store.close()


def test_act_on_the_command_line_takes_the_short_form(tmp_path: Path, capsys):
    import time

    from tabletimer.hub.cli import main as cli
    from tabletimer.hub.event.folder import event_folder

    ev = tmp_path / "event"
    event_folder.init(ev, "czjpa-individuals")
    (ev / "entrants.csv").write_text("id,name,eligible\na,Ann,yes\nb,Bo,yes\n")
    (ev / "stations.csv").write_text("board,button,table,entrant\nT07,1,Table 7,a\nT07,2,Table 7,b\n")
    now = int(time.time() * 1000)
    store = EventStore(event_folder.load(ev).db)
    store.append("operator", "round_start", {"at": now - 600_000, "duration": None, "warnings": [],
                                             "who": "desk", "why": ""}, now - 600_000)
    for seq, station in ((1, 1), (2, 2)):
        store.append_board_event("T07", P.stamp(hub_protocol.press(1, seq, station, now - 300_000 + seq), seq, 1),
                                 now)
    store.close()
    capsys.readouterr()
    assert cli.main(["act", str(ev), "confirm", "press_id=T07-2", "missing_found=1"]) == 0
    assert 'confirm {"press_id": "T07/1/2", "missing_found": 1' in capsys.readouterr().out
    assert cli.main(["act", str(ev), "void", "press_id=T07-7", "--force"]) == 2
    assert "no press 'T07-7'" in capsys.readouterr().err
