"""Replacing an absent entrant (issue 31, item 3; rule set 001: "The
organizer may assign a spot to another participant if a competitor doesn't
arrive within 10 minutes after the round starts"): the `replace` action
gives the absent entrant's station to another participant, a listed one or
a new entry; the new entrant's time runs from the round's start; the
absent one is DNS; a press on the station before the replacement stays the
absent entrant's and is never ranked for the new one; the desk is asked
first while the absent entrant's time to arrive is not up; what cannot be
is refused before it is stored, and a stored row that cannot apply is
flagged, never raised (hub/event/fold/replacements.py)."""

from __future__ import annotations

import pytest

from tabletimer.hub.protocol.keys import BoardKeys
from tabletimer.hub.core.service import HubService
from tabletimer.hub.event.folder import event_folder
from tabletimer.hub.event.fold.competition import Competition
from tabletimer.hub.event.actions.action_checks import check_action
from tabletimer.hub.event.actions.consequences import consequences
from tabletimer.hub.event.folder.event_folder import Station
from tabletimer.hub.event.fold.station_state import station_states
from tabletimer.hub.event.log.store import EventStore
from tabletimer.hub.rules.formats import load_format
from tabletimer.hub.rules.standings import Entrant
from clocks import FixedClock

M = 60_000
S = 1_800_000_000_000             # the round's start (hub ms)


class Log:
    """A log built row by row, as the hub stores it."""

    def __init__(self) -> None:
        self.rows: list[dict] = []
        self.seq: dict[str, int] = {}

    def _row(self, source: str, type_: str, payload: dict, stored: int, board: str | None = None) -> dict:
        row = {"id": len(self.rows) + 1, "received_ms": stored, "source": source, "type": type_, "board": board,
               "payload": payload}
        self.rows.append(row)
        return row

    def act(self, type_: str, stored: int, **payload) -> dict:
        """An operator row stored at hub time `stored`."""
        return self._row("operator", type_, dict(payload, who="desk", why=""), stored)

    def press(self, board: str, button: int, at: int) -> str:
        self.seq[board] = self.seq.get(board, 0) + 1
        self._row("board", "press", {"type": "press", "station": button, "at": at, "boot": 1,
                                     "seq": self.seq[board]}, at, board)
        return f"{board}/1/{self.seq[board]}"


def individuals(preset: str = "czjpa-individuals") -> Competition:
    entrants = [Entrant("1", "Anna"), Entrant("2", "Ben"), Entrant("R", "Reserve")]   # R: no station
    stations = [Station("B1", 1, "Table 1", "1", 1), Station("B1", 2, "Table 1", "2", 1)]
    return Competition(load_format(preset), entrants, stations)


def folded(rows: list[dict], preset: str = "czjpa-individuals") -> Competition:
    comp = individuals(preset)
    for row in rows:
        comp.apply(row)
    return comp


def table(comp: Competition) -> list[tuple]:
    return [(r.entrant, r.status, r.place, r.time_ms, r.reason) for r in comp.standings(None)]


JANA = {"absent": "1", "entrant": "N1", "name": "Jana", "eligible": "yes"}


def test_the_new_entrant_takes_the_station_from_the_rounds_start_and_the_absents_press_is_not_theirs():
    log = Log()
    log.act("round_start", S, at=S, warnings=[])
    stray = log.press("B1", 1, S + 2 * M)             # on the absent entrant's station, before anyone sat there
    log.act("replace", S + 12 * M, **JANA)
    comp = folded(log.rows)
    assert comp.press_entrant(stray) == "1"             # the absent entrant's, who is DNS
    assert comp.replacements()[0].stations == (("B1", 1),)
    [st] = [s for s in station_states(comp, S + 13 * M) if s.button == 1]
    assert (st.entrant, st.state, st.call, st.start_ms) == ("N1", "running", None, S)
    # before the new entrant's own finish the stray press finishes nobody (R, a reserve without a
    # station, is not in the round: issue 45, item 2)
    assert table(comp) == [("2", "unfinished", 1, None, ""), ("N1", "unfinished", 1, None, ""),
                           ("1", "dns", None, None, "absent: the station went to Jana (N1)")]
    mine = log.press("B1", 1, S + 50 * M)
    log.press("B1", 2, S + 60 * M)
    comp.apply(log.rows[-2])
    comp.apply(log.rows[-1])
    assert comp.press_entrant(mine) == "N1"
    # the time runs from the round's start (50 min), not from the replacement (38 min)
    assert table(comp)[:2] == [("N1", "finished", 1, 50 * M, ""), ("2", "finished", 2, 60 * M, "")]
    assert [e.id for e in comp.entrants] == ["1", "2", "R", "N1"]
    # a replay from scratch, and the rows arriving in any order, fold the same
    for order in (log.rows, log.rows[::-1], log.rows[3:] + log.rows[:3]):
        again = folded(order)
        assert table(again) == table(comp) and again.press_entrant(stray) == "1"
        assert [s.entrant for s in again.stations] == ["N1", "2"]


def test_a_replacement_recorded_late_gives_the_new_entrant_the_calls_since_its_time():
    log = Log()
    log.act("round_start", S, at=S, warnings=[])
    early = log.press("B1", 1, S + 3 * M)
    late = log.press("B1", 1, S + 30 * M)            # Jana sat down at 0:11, the desk records it at 0:40
    comp = folded(log.rows)
    p = dict(JANA, at=S + 11 * M)
    check_action(comp, "replace", p, S + 40 * M)
    assert consequences(comp, "replace", p, S + 40 * M) == [
        "marks 1, who has recorded finish calls (B1-1), as not started: none of them is ranked for N1",
        "gives N1 the finish calls made on the station since " + _clock(S + 11 * M) + " (B1-2)"]
    log.act("replace", S + 40 * M, **p)
    comp.apply(log.rows[-1])
    assert (comp.press_entrant(early), comp.press_entrant(late)) == ("1", "N1")
    assert table(comp)[0] == ("N1", "finished", 1, 30 * M, "")


def _clock(ms: int) -> str:
    from tabletimer.hub.rules.timetext import fmt_clock
    return fmt_clock(ms)


def test_inside_the_absent_entrants_time_to_arrive_the_desk_is_asked_first_after_it_not():
    log = Log()
    log.act("round_start", S, at=S, warnings=[])
    comp = folded(log.rows)
    inside = consequences(comp, "replace", JANA, S + 9 * M)
    assert inside == [f"gives 1's station away before 1's time to arrive is up (0:10:00 after the start, at "
                      f"{_clock(S + 10 * M)}: the format's entrants.no_show_after): 1 may still come"]
    assert consequences(comp, "replace", JANA, S + 10 * M) == []
    check_action(comp, "replace", JANA, S + 9 * M)       # not refused: asked (act --force, the console's question)
    check_action(comp, "replace", JANA, S + 10 * M)


def test_a_listed_reserve_marked_dns_starts_when_given_the_station():
    log = Log()
    log.act("round_start", S, at=S, warnings=[])
    log.act("dns", S + M, entrant="R")
    log.act("replace", S + 15 * M, absent="1", entrant="R")
    log.press("B1", 1, S + 70 * M)
    comp = folded(log.rows)
    assert table(comp) == [("R", "finished", 1, 70 * M, ""), ("2", "unfinished", 2, None, ""),
                           ("1", "dns", None, None, "absent: the station went to Reserve (R)")]


def test_a_next_puzzle_station_counts_the_new_entrants_calls_from_their_first():
    """A one-at-a-time round (czjpa-teams, chosen order: one station counts
    through the puzzles): the absent team's call does not use up the new
    team's first puzzle."""
    fmt = load_format("czjpa-teams")
    comp = Competition(fmt, [Entrant("T1", "One"), Entrant("T2", "Two")], [Station("B1", 1, "Table 1", "T1", None)])
    log = Log()
    log.act("round_start", S, at=S, warnings=[])
    log.press("B1", 1, S + M)
    log.act("replace", S + 20 * M, absent="T1", entrant="T3", name="Three", members="A|B|C", eligible="yes")
    first = log.press("B1", 1, S + 60 * M)
    second = log.press("B1", 1, S + 100 * M)
    for row in log.rows:
        comp.apply(row)
    assert [(f.entrant, f.puzzle) for f in comp.facts() if f.kind == "press"] == [("T1", 1), ("T3", 1), ("T3", 2)]
    assert comp.press_entrant(first) == comp.press_entrant(second) == "T3"
    row = next(r for r in comp.standings(None) if r.entrant == "T3")
    assert (row.status, row.time_ms) == ("finished", 100 * M)
    assert [m.name for m in comp.entrants[-1].members] == ["A", "B", "C"]


@pytest.mark.parametrize("preset,payload,now,message", [
    ("cz-championship-individuals", JANA, S + 20 * M,
     "the format cz-championship-individuals gives no absent entrant's station to another "
     r"\(entrants.no_show_after is not set"),
    ("czjpa-individuals", dict(JANA, absent="9"), S + 20 * M, "no entrant '9'"),
    ("czjpa-individuals", dict(JANA, absent="R"), S + 20 * M, "R holds no station"),
    ("czjpa-individuals", {"absent": "1", "entrant": "2"}, S + 20 * M, r"2 is at a station already \(Table 1: B1 button 2\)"),
    ("czjpa-individuals", {"absent": "1", "entrant": "1"}, S + 20 * M, "the same entrant"),
    ("czjpa-individuals", {"absent": "1", "entrant": "N1"}, S + 20 * M, "give the new entrant's name"),
    ("czjpa-individuals", {"absent": "1", "entrant": "N1", "name": "Jana"}, S + 20 * M,
     r"eligible=yes or no is needed: the format gives prizes only to eligible entrants"),
    ("czjpa-individuals", dict(JANA, eligible="maybe"), S + 20 * M, "eligible must be yes or no"),
    ("czjpa-individuals", {"absent": "1", "entrant": "R", "name": "Rita"}, S + 20 * M,
     "R is in the entrants list already: leave out name"),
    ("czjpa-individuals", dict(JANA, members="A|B"), S + 20 * M, "an individual has no members"),
    ("czjpa-individuals", dict(JANA, at=S + 21 * M), S + 20 * M, "is after the hub's time now"),
    ("czjpa-individuals", dict(JANA, at=S - M), S + 20 * M, "is before the round's start"),
    ("czjpa-individuals", JANA, S + 120 * M, "1's time was up at"),
    ("czjpa-individuals", {"absent": "1", "entrant": "R", "colour": "red"}, S + 20 * M, "unknown field"),
    ("czjpa-individuals", {"absent": "1", "entrant": 7}, S + 20 * M, "entrant must be text"),
])
def test_what_cannot_be_replaced_is_refused_before_it_is_stored(preset, payload, now, message):
    log = Log()
    log.act("round_start", S, at=S, warnings=[])
    comp = folded(log.rows, preset)
    with pytest.raises(ValueError, match=message):
        check_action(comp, "replace", payload, now)


def test_refused_by_what_the_log_holds():
    comp = individuals()
    with pytest.raises(ValueError, match="the round has not started"):
        check_action(comp, "replace", JANA, S)
    log = Log()
    log.act("round_start", S, at=S, warnings=[])
    log.act("dq", S + M, entrant="R", reason="phone")
    log.act("replace", S + 12 * M, **JANA)
    comp = folded(log.rows)
    for action, payload, message in [
            ("replace", dict(JANA, entrant="N2"), r"1's station went to N1 already \(log row #3\)"),
            ("replace", {"absent": "2", "entrant": "R"}, "R is disqualified"),
            ("replace", {"absent": "2", "entrant": "N1"}, "N1 is at a station already"),
            ("reinstate", {"entrant": "1"}, r"1's station went to N1 \(log row #3\): to seat 1 there again, "
                                            "`replace absent=N1 entrant=1`")]:
        with pytest.raises(ValueError, match=message):
            check_action(comp, action, payload, S + 13 * M)
    # the way back: the station given back, the absent entrant reinstated
    log.act("replace", S + 14 * M, absent="N1", entrant="1")
    comp = folded(log.rows)
    assert [s.entrant for s in comp.stations] == ["1", "2"]
    assert {r.entrant: r.status for r in comp.standings(None)}["1"] == "unfinished"
    log.act("dq", S + 15 * M, entrant="2", reason="phone")
    comp = folded(log.rows)
    with pytest.raises(ValueError, match="2 is disqualified: the station is not an absent entrant's"):
        check_action(comp, "replace", {"absent": "2", "entrant": "N2", "name": "Nora", "eligible": "no"}, S + 16 * M)


def test_a_stored_replacement_that_cannot_apply_is_flagged_and_the_event_goes_on():
    """Rows another program or an older version stored without the checks."""
    log = Log()
    log.act("round_start", S, at=S, warnings=[])
    bad = [log.act("replace", S + 11 * M, absent="R", entrant="N1", name="Jana", eligible="yes"),  # no station
           log.act("replace", S + 11 * M, absent="1", entrant="2"),            # 2 holds a station
           log.act("replace", S + 11 * M, absent="1", entrant="N1"),           # a new entry without a name
           log.act("replace", S + 11 * M, absent=1, entrant="N1")]             # not its shape
    good = log.act("replace", S + 12 * M, **JANA)
    twice = log.act("replace", S + 13 * M, absent="1", entrant="N2", name="Nora", eligible="no")
    log.press("B1", 1, S + 40 * M)
    comp = folded(log.rows)
    assert sorted(comp.flagged) == [r["id"] for r in bad + [twice]]
    assert "R holds no station" in comp.flagged[bad[0]["id"]]
    assert "2 is at a station already" in comp.flagged[bad[1]["id"]]
    assert "give the new entrant's name" in comp.flagged[bad[2]["id"]]
    assert "absent must be text" in comp.flagged[bad[3]["id"]]
    assert "1's station went to N1 already" in comp.flagged[twice["id"]]
    assert [r.row for r in comp.replacements()] == [good["id"]]
    assert table(comp)[0] == ("N1", "finished", 1, 40 * M, "")
    assert "N2" not in {e.id for e in comp.entrants}


def test_the_hub_records_a_replacement_sends_the_station_and_a_restart_folds_the_same(tmp_path):
    ev = tmp_path / "event"
    event_folder.init(ev, "czjpa-pairs")
    (ev / "entrants.csv").write_text("id,name,members,eligible\nP1,Edges,Anna|Ben,yes|yes\n"
                                     "P2,Corners,Cy|Dan,no|no\n")
    (ev / "stations.csv").write_text("board,button,table,entrant\nB1,1,Table 1,P1\nB1,2,Table 1,P2\n")
    BoardKeys(ev / "board-keys.json").ensure("B1")

    class Clock(FixedClock):
        t = S

    def hub() -> HubService:
        loaded = event_folder.load(ev)
        return HubService(EventStore(loaded.db), BoardKeys(loaded.keys_file),
                          Competition(loaded.format, loaded.entrants, loaded.stations), Clock())

    svc = hub()
    try:
        svc.start_round(at_ms=S)
        Clock.t = S + 11 * M
        with pytest.raises(ValueError, match="a pair has 2 members"):
            svc.act("replace", {"absent": "P2", "entrant": "P9", "name": "Sides", "members": "Eva",
                                "eligible": "yes"}, who="desk")
        row = svc.act("replace", {"absent": "P2", "entrant": "P9", "name": "Sides", "members": "Eva|Fred",
                                  "eligible": "yes|no"}, who="desk", why="P2 not here at 0:10")
        assert row["payload"]["who"] == "desk" and row["payload"]["why"] == "P2 not here at 0:10"
        states = {(s.board, s.button): (s.entrant, s.state) for s in svc.station_states(S + 12 * M)}
        assert states == {("B1", 1): ("P1", "running"), ("B1", 2): ("P9", "running")}
        live = [(r.entrant, r.status, r.reason, r.official) for r in svc.standings(final=True)]
    finally:
        svc.store.close()
    assert live[-1] == ("P2", "dns", "absent: the station went to Sides (P9)", False)
    assert ("P9", "unfinished", "", True) in live      # one of its two members is eligible
    again = hub()                                        # a restarted hub
    try:
        assert [(r.entrant, r.status, r.reason, r.official) for r in again.standings(final=True)] == live
        assert not again.competition.flagged
    finally:
        again.store.close()


def test_random_logs_with_replacements_fold_the_same_live_from_scratch_and_in_any_order():
    """Presses, calls by hand, DNS/DQ/reinstatements and replacements (some
    that cannot apply) in random logs: the live fold row by row, a replay,
    and the rows arriving in another order give the same facts, standings
    and stations, and nothing raises."""
    import random
    rng = random.Random(3103)
    for _ in range(60):
        log = Log()
        log.act("round_start", S, at=S, warnings=[])
        t = S
        for _ in range(rng.randint(5, 40)):
            t += rng.randint(1, 4 * M)
            r = rng.random()
            if r < 0.5:
                log.press("B1", rng.choice((1, 2)), t - rng.choice((0, 0, 5 * M)))
            elif r < 0.7:
                who = rng.choice(["1", "2", "R", "N1", "N2"])
                new = {"name": f"New {who}", "eligible": "yes"} if who.startswith("N") else {}
                log.act("replace", t, absent=rng.choice(["1", "2", "R", "N1", "N2"]), entrant=who,
                        **(dict(new, at=t - rng.choice((0, M))) if rng.random() < 0.5 else new))
            else:
                kind = rng.choice(("dns", "dq", "reinstate"))
                e = rng.choice(["1", "2", "R", "N1"])
                log.act(kind, t, entrant=e, **({"reason": "x"} if kind == "dq" else {}))
        live = individuals()
        for row in log.rows:
            live.apply(row)
            live.standings(t)                 # folded on top, row by row, as the hub does

        def view(c: Competition) -> tuple:
            return (table(c), [(f.kind, getattr(f, "entrant", ""), getattr(f, "press_id", "")) for f in c.facts()],
                    [s.entrant for s in c.stations], sorted(c.flagged), [e.id for e in c.entrants])
        want = view(live)
        assert view(folded(log.rows)) == want
        shuffled = log.rows[:]
        rng.shuffle(shuffled)
        assert view(folded(shuffled)) == want
