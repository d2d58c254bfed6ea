"""An entrant with no station is not in the round (issue 45, item 2): a
reserve listed in entrants.csv without a station (the documented way to
prepare a replacement; `init`'s template has one) is not running, not
ranked, takes no place and no award place, and keeps no round provisional.
Once a replacement gives it a station it is an entrant of the round like any
other (test_replacement.py).

Hand-worked, czjpa-individuals (120 min, prizes 1-3 for Czech participants):
Anna (1) finishes at 50:00, confirmed without missing pieces; Ben (2) has 300
pieces at time-up; the reserve Rita (R) sits nowhere.  Final: Anna place 1
(award 1), Ben place 2 (award 2), nothing provisional, no Rita."""

from __future__ import annotations

from tabletimer.hub.protocol.keys import BoardKeys
from tabletimer.hub.core.service import HubService
from tabletimer.hub.event.folder import event_folder
from tabletimer.hub.event.fold.competition import Competition
from tabletimer.hub.event.log.store import EventStore
from clocks import FixedClock

from test_replacement import Log, folded

M = 60_000
S = 1_800_000_000_000


def rows(comp: Competition, now: int | None) -> list[tuple]:
    return [(r.entrant, r.status, r.place, r.award_place, r.provisional) for r in comp.standings(now)]


def test_a_reserve_without_a_station_is_not_in_the_round():
    log = Log()
    log.act("round_start", S, at=S, warnings=[])
    comp = folded(log.rows)
    assert rows(comp, S + 30 * M) == [("1", "running", None, None, True), ("2", "running", None, None, True)]
    anna = log.press("B1", 1, S + 50 * M)
    for row in (log.rows[-1],
                log.act("confirm", S + 51 * M, press_id=anna, missing_found=0, missing_lost=0,
                        missing_adjacent=0),
                log.act("count", S + 121 * M, entrant="2", puzzle=1, placed=300)):
        comp.apply(row)
    final = [("1", "finished", 1, 1, False), ("2", "unfinished", 2, 2, False)]
    assert rows(comp, None) == final
    assert rows(folded(log.rows), None) == final            # a replay: the same


def test_a_reserve_the_desk_recorded_something_of_is_shown_and_one_given_a_station_is_ranked():
    log = Log()
    log.act("round_start", S, at=S, warnings=[])
    comp = folded(log.rows)
    comp.standings(S + M)                                       # the live standings, then R in the log
    comp.apply(log.act("dns", S + 2 * M, entrant="R"))          # the desk's act: shown as it said
    assert [(r.entrant, r.status) for r in comp.standings(S + 3 * M)] == \
        [("1", "running"), ("2", "running"), ("R", "dns")]
    comp.apply(log.act("replace", S + 15 * M, absent="1", entrant="R"))
    assert [(r.entrant, r.status) for r in comp.standings(S + 16 * M)] == \
        [("2", "running"), ("R", "running"), ("1", "dns")]


def test_the_consoles_and_the_results_leave_out_inits_reserve(tmp_path):
    """`init`'s template: Anna at T01 button 1, Ben in entrants.csv without a
    station.  The console's standings (the snapshot's own fold) and the
    final results have Anna only."""
    ev = tmp_path / "event"
    event_folder.init(ev, "czjpa-individuals")
    loaded = event_folder.load(ev)
    assert [e.id for e in loaded.entrants] == ["1", "2"] and [s.entrant for s in loaded.stations] == ["1"]
    BoardKeys(ev / "board-keys.json").ensure("T01")

    class Clock(FixedClock):
        t = S

    svc = HubService(EventStore(loaded.db), BoardKeys(loaded.keys_file),
                     Competition(loaded.format, loaded.entrants, loaded.stations), Clock())
    try:
        svc.start_round(at_ms=S)
        Clock.t = S + 10 * M
        assert [(r.entrant, r.status) for r in svc.snapshot().standings] == [("1", "running")]
        svc.act("count", {"entrant": "1", "puzzle": 1, "placed": 420}, who="desk")
        Clock.t = S + 121 * M
        final = svc.standings(final=True)
        assert [(r.entrant, r.status, r.place, r.award_place, r.provisional) for r in final] == \
            [("1", "unfinished", 1, 1, False)]
        assert [(r.entrant, r.place) for r in svc.snapshot().standings] == [("1", 1)]
    finally:
        svc.store.close()
