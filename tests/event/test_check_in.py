"""Check-in at the door (issue 47, item 3; rule set 001: "The organizer may
assign a spot to another participant if a competitor doesn't arrive within
10 minutes after the round starts"): `check_in` rows (present 1, or 0 to
undo) folded into who is here (hub/event/fold/check_in.py), "N of M checked
in"; a check-in that cannot be is refused with what to do and nothing is
stored; the round's start names who is not here; after the format's window
the absent entrants are made DNS or their stations given away in one step
(hub/event/actions/absentees.py)."""

from __future__ import annotations

import pytest

from tabletimer.hub.core.service import HubService
from tabletimer.hub.event.actions.absentees import absent_entrants, plan
from tabletimer.hub.event.actions.action_checks import check_action
from tabletimer.hub.event.actions.consequences import consequences
from tabletimer.hub.event.fold.competition import Competition
from tabletimer.hub.event.folder import event_folder
from tabletimer.hub.event.folder.event_folder import Station
from tabletimer.hub.event.log.store import EventStore
from tabletimer.hub.protocol.keys import BoardKeys
from tabletimer.hub.rules.formats import load_format
from tabletimer.hub.rules.standings import Entrant
from clocks import FixedClock

M = 60_000
S = 1_800_000_000_000             # the round's start (hub ms)


class Log:
    def __init__(self) -> None:
        self.rows: list[dict] = []

    def act(self, type_: str, stored: int, **payload) -> dict:
        row = {"id": len(self.rows) + 1, "received_ms": stored, "source": "operator", "type": type_,
               "board": None, "payload": dict(payload, who="door", why="")}
        self.rows.append(row)
        return row


def hall(preset: str = "czjpa-individuals") -> Competition:
    """Four entrants at a station, a reserve (R) without one."""
    entrants = [Entrant("1", "Anna"), Entrant("2", "Ben"), Entrant("3", "Cyril"), Entrant("4", "Dana"),
                Entrant("R", "Reserve")]
    stations = [Station("B1", n, "Table 1" if n < 3 else "Table 2", str(n), 1) for n in range(1, 5)]
    return Competition(load_format(preset), entrants, stations)


def folded(rows: list[dict], preset: str = "czjpa-individuals") -> Competition:
    comp = hall(preset)
    for row in rows:
        comp.apply(row)
    return comp


def test_checked_in_undone_and_counted_of_the_entrants_at_a_station():
    log = Log()
    log.act("check_in", S - 30 * M, entrant="1")
    log.act("check_in", S - 29 * M, entrant="2", present=1)
    log.act("check_in", S - 28 * M, entrant="3")
    log.act("check_in", S - 27 * M, entrant="3", present=0)        # a mistake, undone
    log.act("check_in", S - 26 * M, entrant="R")                   # a reserve at the door
    comp = folded(log.rows)
    s = comp.check_in_summary()
    assert s.text() == "2 of 4 checked in"
    assert (s.present, s.absent, s.reserves, s.in_use) == (("1", "2"), ("3", "4"), ("R",), True)
    last = comp.check_in_of("3")
    assert last is not None and (last.present, last.row, last.who) == (False, 4, "door")
    assert not comp.flagged
    assert comp.facts() == []                      # a check-in ranks nothing
    # folded from scratch, in another order, the same
    again = hall()
    for row in reversed(log.rows):
        again.apply(row)
    assert again.check_in_summary() == s


def test_an_entrant_marked_dns_is_not_waited_for_and_nobody_is_until_someone_is_checked_in():
    assert hall().check_in_summary().in_use is False
    assert hall().check_in_summary().text() == "0 of 4 checked in"
    log = Log()
    log.act("dns", S - 10 * M, entrant="4")
    log.act("check_in", S - 9 * M, entrant="1")
    s = folded(log.rows).check_in_summary()
    assert s.text() == "1 of 3 checked in" and s.absent == ("2", "3")


@pytest.mark.parametrize("payload, message", [
    ({"entrant": "99"}, r"check_in: no entrant '99' in this round: nothing was recorded. Search again by name"),
    ({"entrant": "1", "present": 2}, r"check_in: present = 2 is outside 0..1"),
    ({"entrant": "1", "present": True}, r"check_in: present must be a whole number"),
    ({}, r"check_in: entrant is needed"),
    ({"entrant": "2", "present": 0}, r"check_in: 2 is not checked in: there is nothing to undo"),
    ({"entrant": "1"}, r"check_in: 1 was checked in already \(by door at \d\d:\d\d:\d\d, log row #1\)"),
])
def test_a_check_in_that_cannot_be_is_refused_with_what_to_do(payload, message):
    log = Log()
    log.act("check_in", S - 30 * M, entrant="1")
    with pytest.raises(ValueError, match=message):
        check_action(folded(log.rows), "check_in", payload, S)


def test_an_entrant_whose_station_went_to_another_is_refused_and_told_how_to_seat_them_again():
    log = Log()
    log.act("check_in", S - 30 * M, entrant="2")
    log.act("round_start", S, at=S, warnings=[])
    log.act("replace", S + 11 * M, absent="1", entrant="R")
    comp = folded(log.rows)
    with pytest.raises(ValueError, match=r"1's station went to R already.*`replace absent=R entrant=1`"):
        check_action(comp, "check_in", {"entrant": "1"}, S + 12 * M)
    s = comp.check_in_summary()          # the reserve took the station in person: here
    assert s.text() == "2 of 4 checked in" and s.absent == ("3", "4")


def test_a_stored_check_in_of_a_wrong_shape_is_flagged_and_the_event_goes_on():
    log = Log()
    log.act("check_in", S, entrant="1", present="yes")
    log.act("check_in", S, entrant="2")
    comp = folded(log.rows)
    assert set(comp.flagged) == {1}
    assert comp.check_in_summary().present == ("2",)


def test_the_start_names_who_is_not_checked_in_once_check_in_is_used():
    comp = hall()
    assert consequences(comp, "round_start", {"at": S}, S) == []       # nobody checked in: check-in not used
    log = Log()
    log.act("check_in", S - 5 * M, entrant="1")
    log.act("check_in", S - 4 * M, entrant="3")
    said = consequences(folded(log.rows), "round_start", {"at": S}, S)
    assert said == ["starts with 2 of 4 entrants not checked in (2 of 4 checked in): Ben (2), Dana (4); "
                    "after 0:10:00 the desk may give their stations away or mark them DNS (`tabletimer absent`)"]
    for e in ("2", "4"):
        log.act("check_in", S - 3 * M, entrant=e)
    assert consequences(folded(log.rows), "round_start", {"at": S}, S) == []


def _started(*here: str, preset: str = "czjpa-individuals") -> Competition:
    log = Log()
    for e in here:
        log.act("check_in", S - 5 * M, entrant=e)
    log.act("round_start", S, at=S, warnings=[])
    return folded(log.rows, preset)


def test_the_absent_are_decided_after_the_window_each_dns_or_their_station_given():
    comp = _started("1", "3")
    assert [(a.entrant, a.name, a.table) for a in absent_entrants(comp)] == [("2", "Ben", "Table 1"),
                                                                           ("4", "Dana", "Table 2")]
    with pytest.raises(ValueError, match=r"not up yet: 0:10:00 after the start, at \d\d:\d\d:\d\d .*--force"):
        plan(comp, S + 9 * M, True, {})
    assert plan(comp, S + 10 * M, True, {}) == [("dns", {"entrant": "2"}), ("dns", {"entrant": "4"})]
    assert plan(comp, S + 10 * M, True, {"4": "R"}) == [("replace", {"absent": "4", "entrant": "R"}),
                                                        ("dns", {"entrant": "2"})]
    assert plan(comp, S + 10 * M, False, {"4": "R"}) == [("replace", {"absent": "4", "entrant": "R"})]
    assert plan(comp, S + 5 * M, True, {}, force=True) == [("dns", {"entrant": "2"}), ("dns", {"entrant": "4"})]


@pytest.mark.parametrize("here, now, dns_all, give, message", [
    (("1",), S + 11 * M, False, {}, r"say what to do with them: --dns-all"),
    ((), S + 11 * M, True, {}, r"nobody is checked in in this round"),
    (("1", "3"), S + 11 * M, True, {"1": "R"}, r"'1' is not one of the absent entrants"),
    (("1", "3"), S + 11 * M, True, {"2": "R", "4": "R"}, r"R cannot take both 2's and 4's stations"),
    (("1", "3"), S + 11 * M, True, {"2": "3"}, r"absent: 2: replace: 3 is at a station already"),
    (("1", "3"), S + 11 * M, True, {"2": "X"}, r"absent: 2: replace: 'X' is not in the entrants list"),
])
def test_a_step_that_cannot_be_is_refused_whole(here, now, dns_all, give, message):
    with pytest.raises(ValueError, match=message):
        plan(_started(*here), now, dns_all, give)


def test_before_the_start_and_without_a_window():
    log = Log()
    log.act("check_in", S - 5 * M, entrant="1")
    with pytest.raises(ValueError, match="the round has not started"):
        plan(folded(log.rows), S, True, {})
    comp = _started("1", preset="cz-championship-individuals")        # no no_show_after: DNS from the start on
    assert comp.format.no_show_after_ms is None
    assert [a for _, a in plan(comp, S + 1, True, {})] == [{"entrant": e} for e in ("2", "3", "4")]
    with pytest.raises(ValueError, match="gives no absent entrant's station to another"):
        plan(comp, S + 1, False, {"2": "R"})


def test_an_absent_entrant_with_a_finish_call_is_here_after_all():
    log = Log()
    log.act("check_in", S - 5 * M, entrant="1")
    log.act("round_start", S, at=S, warnings=[])
    log.act("press", S + 20 * M, entrant="2", at=S + 20 * M)
    with pytest.raises(ValueError, match=r"2 is not checked in but has finish calls \(op/3\).*check 2 in"):
        plan(folded(log.rows), S + 21 * M, True, {})


def test_the_hub_stores_nothing_for_a_refused_check_in_and_a_restart_folds_the_same(tmp_path):
    ev = tmp_path / "event"
    event_folder.init(ev, "czjpa-individuals")
    (ev / "entrants.csv").write_text("id,name,eligible\n1,Anna,yes\n2,Ben,yes\n3,Cyril,yes\n")
    (ev / "stations.csv").write_text("board,button,table,entrant\nB1,1,Table 1,1\nB1,2,Table 1,2\n"
                                     "B1,3,Table 1,3\n")
    BoardKeys(ev / "board-keys.json").ensure("B1")

    def hub() -> HubService:
        loaded = event_folder.load(ev)
        return HubService(EventStore(loaded.db), BoardKeys(loaded.keys_file),
                          Competition(loaded.format, loaded.entrants, loaded.stations), FixedClock(S - 10 * M))

    svc = hub()
    try:
        svc.act("check_in", {"entrant": "1"}, who="Petra")
        before = len(svc.store.events())
        for bad in ({"entrant": "9"}, {"entrant": "1"}, {"entrant": "2", "present": 0}):
            with pytest.raises(ValueError, match="nothing was recorded"):
                svc.act("check_in", bad, who="Petra")
        assert len(svc.store.events()) == before
        svc.act("check_in", {"entrant": "2"}, who="Petra")
        svc.act("check_in", {"entrant": "2", "present": 0}, who="Petra", why="wrong Ben")
        summary = svc.competition.check_in_summary()
        assert summary.text() == "1 of 3 checked in"
    finally:
        svc.store.close()
    again = hub()
    try:
        assert again.competition.check_in_summary() == summary
    finally:
        again.store.close()
