"""An operator action is sent to the boards it changes, not to every board
(the phones benchmark: 300 schedules after each referee's confirmation held
the boards' acks back by seconds): a confirmation or a count goes to its
entrant's boards (all of a relay team's), the round's start to every board."""

from __future__ import annotations

from pathlib import Path

from tabletimer.hub.protocol.keys import BoardKeys
from tabletimer.hub.core.changes import ToBoards
from tabletimer.hub.core.service import HubService
from tabletimer.hub.event.folder import event_folder
from tabletimer.hub.event.fold.competition import Competition
from tabletimer.hub.event.log.store import EventStore
from tabletimer.shared import protocol as P
from clocks import FixedClock

T0 = 1_800_000_000_000


class Clock(FixedClock):
    t = T0


def hub(path: Path, preset: str, entrants: str, stations: str) -> tuple[HubService, list]:
    event_folder.init(path, preset)
    (path / "entrants.csv").write_text(entrants)
    (path / "stations.csv").write_text(stations)
    keys = BoardKeys(path / "board-keys.json")
    for b in {line.split(",")[0] for line in stations.splitlines()[1:]}:
        keys.ensure(b)
    ev = event_folder.load(path)
    svc = HubService(EventStore(ev.db), BoardKeys(ev.keys_file), Competition(ev.format, ev.entrants, ev.stations),
                     Clock())
    sent: list = []
    svc.changes.subscribe(ToBoards, lambda n: sent.extend(n.messages))
    return svc, sent


def boards(sent: list) -> set[str]:
    return {o.topic.split("/")[3] for o in sent if o.topic.startswith(P.PREFIX + "/b/")}


def test_an_action_on_an_entrant_goes_to_its_boards_only(tmp_path):
    svc, sent = hub(tmp_path / "ev", "czjpa-individuals", "id,name,eligible\n1,A,yes\n2,B,yes\n3,C,yes\n",
                    "board,button,table,entrant\nB1,1,T1,1\nB2,1,T2,2\nB3,1,T3,3\n")
    svc.act("round_start", {"at": T0})
    assert boards(sent) == {"B1", "B2", "B3"}
    svc.clock.t = T0 + 600_000
    sent.clear()
    svc.act("press", {"entrant": "2", "puzzle": 1, "at": T0 + 500_000})
    assert boards(sent) == {"B2"}
    pid = svc.competition.open_calls()[0][1]
    sent.clear()
    svc.act("confirm", {"press_id": pid, "missing_found": 1})        # by press id, a press by hand
    assert boards(sent) == {"B2"}
    sent.clear()
    svc.act("dns", {"entrant": "3"})
    assert boards(sent) == {"B3"}


def test_a_relay_teams_finish_goes_to_every_board_of_the_team(tmp_path):
    svc, sent = hub(tmp_path / "ev", "cz-championship-teams",
                    "id,name,members,eligible\nT1,Edges,A|B|C|D,yes|yes|yes|yes\nT2,Corners,E|F|G|H,yes|yes|yes|yes\n",
                    "board,button,table,entrant,puzzle\n" + "".join(
                        f"R{k},1,Table {k},{'T1' if k <= 4 else 'T2'},{(k - 1) % 4 + 1}\n" for k in range(1, 9)))
    svc.act("round_start", {"at": T0})
    svc.clock.t = T0 + 600_000
    sent.clear()
    svc.act("dq", {"entrant": "T1", "reason": "test"})
    assert boards(sent) == {"R1", "R2", "R3", "R4"}
