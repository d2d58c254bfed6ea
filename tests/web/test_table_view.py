"""What the referees' pages show and what a referee's action may do, on a
real event folder, store and HubService: the format's own missing-piece
categories and count form, the penalty shown before a confirmation, one
table's stations, the hall's calls; an intent made on a state that changed
is a conflict (nothing stored) unless the referee replaces; an action sent
again under its idempotency key is stored once, also after a restart."""

from __future__ import annotations

from pathlib import Path

import pytest

from tabletimer.hub.protocol.keys import BoardKeys
from tabletimer.hub.core.service import HubService, RequestConflict
from tabletimer.hub.event.folder import event_folder
from tabletimer.hub.event.fold.competition import Competition
from tabletimer.hub.event.log.store import EventStore
from tabletimer.hub.web import intents
from tabletimer.hub.web.table_view import calls_view, missing_categories, preview, table_view
from clocks import FixedClock

T0 = 1_800_000_000_000


class FakeClock(FixedClock):
    """Hub time held at t."""


def make_event(path: Path, preset: str) -> Path:
    event_folder.init(path, preset)
    (path / "entrants.csv").write_text("id,name,eligible\n1,Alice,yes\n2,Bob,yes\n3,Carol,yes\n")
    (path / "stations.csv").write_text("board,button,table,entrant\nB1,1,Table 1,1\nB1,2,Table 1,2\n"
                                       "B1,3,Table 1,3\n")
    BoardKeys(path / "board-keys.json").ensure("B1")
    return path


def service(path: Path, clock: FakeClock) -> HubService:
    ev = event_folder.load(path)
    return HubService(EventStore(ev.db), BoardKeys(ev.keys_file),
                      Competition(ev.format, ev.entrants, ev.stations), clock)


def started(path: Path, preset: str = "czjpa-individuals") -> tuple[HubService, FakeClock]:
    make_event(path, preset)
    clock = FakeClock(T0)
    svc = service(path, clock)
    svc.act("round_start", {"at": T0})
    clock.t = T0 + 600_000
    return svc, clock


def view(svc: HubService, table: str = "Table 1") -> dict:
    return svc.read(lambda comp, now: table_view(comp, table, now))


def station(v: dict, entrant: str) -> dict:
    return next(s for s in v["stations"] if s["entrant"] == entrant)


@pytest.mark.parametrize("preset, fields, penalised", [
    ("czjpa-individuals", ["missing_found"], [True]),
    ("rogaland-individuals", ["missing_found", "missing_lost"], [True, False]),
    ("dk-team-championship", ["missing_found", "missing_adjacent"], [True, False]),
])
def test_the_missing_pieces_are_asked_in_the_formats_categories(tmp_path, preset, fields, penalised):
    svc, _ = started(tmp_path / "ev", preset)
    cats = missing_categories(svc.competition.format)
    assert [c["field"] for c in cats] == fields
    assert [c["penalised"] for c in cats] == penalised


def test_the_penalty_shown_before_confirming_is_the_rankings(tmp_path):
    svc, clock = started(tmp_path / "ev")                 # czjpa: +10 s a missing piece
    fmt = svc.competition.format
    assert preview(fmt, 3_000_000, {"missing_found": 2}) == {"penalty_ms": 20_000, "net_ms": 3_020_000,
                                                             "deducted": 0}
    svc.act("press", {"entrant": "1", "puzzle": 1, "at": T0 + 3_000_000})
    clock.t = T0 + 3_100_000
    pid = station(view(svc), "1")["call"]
    svc.act("confirm", {"press_id": pid, "missing_found": 2})
    row = next(r for r in svc.competition.standings(clock.t) if r.entrant == "1")
    assert (row.penalty_ms, row.net_time_ms) == (20_000, 3_020_000)


def test_rogaland_lost_pieces_and_danish_adjacent_ones_cost_nothing(tmp_path):
    svc, _ = started(tmp_path / "no", "rogaland-individuals")
    assert preview(svc.competition.format, 1000, {"missing_found": 1, "missing_lost": 3})["penalty_ms"] == 5_000
    dk, _ = started(tmp_path / "dk", "dk-team-championship")
    assert preview(dk.competition.format, 1000, {"missing_found": 2, "missing_adjacent": 4}) == \
        {"penalty_ms": 0, "net_ms": 1000, "deducted": 2}


def test_a_tables_stations_and_the_halls_calls(tmp_path):
    svc, clock = started(tmp_path / "ev")
    svc.act("press", {"entrant": "2", "puzzle": 1, "at": T0 + 500_000})
    v = view(svc)
    assert [s["entrant"] for s in v["stations"]] == ["1", "2", "3"]
    bob = station(v, "2")
    assert (bob["name"], bob["state"], bob["time_ms"], bob["waiting_ms"], bob["pieces"]) == \
        ("Bob", "called", 500_000, 100_000, 500)
    assert station(v, "1")["state"] == "running"
    assert v["format"]["count_entry"] == "placed" and v["row"] == svc.competition.last_row_id()
    assert view(svc, "Table 9") is None
    calls = svc.read(calls_view)
    assert [(c["name"], c["table"], c["waiting_ms"]) for c in calls["calls"]] == [("Bob", "Table 1", 100_000)]
    assert calls["tables"] == ["Table 1"]
    clock.t = T0 + 121 * 60_000                               # after the 120 min limit
    assert station(view(svc), "1")["state"] == "stopped" and station(view(svc), "1")["reason"] == "time up"


def test_an_intent_on_a_call_someone_else_closed_is_a_conflict(tmp_path):
    svc, _ = started(tmp_path / "ev")
    svc.act("press", {"entrant": "1", "puzzle": 1, "at": T0 + 500_000})
    pid = station(view(svc), "1")["call"]
    svc.act("confirm", {"press_id": pid}, who="board desk")         # meanwhile, someone else
    n = len(svc.store.events())

    def mine(replace: bool):
        return svc.act("confirm", {"press_id": pid, "missing_found": 3}, who="Anna",
                       precondition=lambda comp: intents.check(comp, "confirm", {"press_id": pid}, "open", replace))
    with pytest.raises(intents.IntentConflict) as e:
        mine(False)
    assert "confirmed by board desk" in str(e.value) and e.value.now == "confirmed by board desk"
    assert len(svc.store.events()) == n                                # nothing stored
    row = mine(True)
    assert row["payload"]["who"] == "Anna" and len(svc.store.events()) == n + 1


def test_a_count_someone_else_recorded_is_a_conflict(tmp_path):
    svc, clock = started(tmp_path / "ev")
    clock.t = T0 + 121 * 60_000
    svc.act("count", {"entrant": "3", "puzzle": 1, "placed": 120}, who="Bo")
    with pytest.raises(intents.IntentConflict, match="120 placed since your page showed no count"):
        svc.act("count", {"entrant": "3", "puzzle": 1, "placed": 130}, who="Anna",
                precondition=lambda comp: intents.check(comp, "count", {"entrant": "3", "puzzle": 1},
                                                        None, False))
    svc.act("count", {"entrant": "3", "puzzle": 1, "placed": 130}, who="Anna",
            precondition=lambda comp: intents.check(comp, "count", {"entrant": "3", "puzzle": 1},
                                                    {"placed": 120, "remaining": None}, False))
    assert intents.count_state(svc.competition, "3", 1) == {"placed": 130, "remaining": None}


def test_an_action_sent_again_under_its_key_is_stored_once(tmp_path):
    svc, clock = started(tmp_path / "ev")
    first = svc.act("dns", {"entrant": "3"}, who="Anna", request="web-abc")
    again = svc.act("dns", {"entrant": "3"}, who="Anna", request="web-abc")
    assert again["id"] == first["id"] and again["duplicate"] is True and "duplicate" not in first
    assert sum(1 for r in svc.store.events() if r["type"] == "dns") == 1
    with pytest.raises(RequestConflict, match="already stored as row"):
        svc.act("dns", {"entrant": "2"}, who="Anna", request="web-abc")
    # a restarted hub knows the keys of its log
    svc.store.close()
    svc2 = service(tmp_path / "ev", clock)
    assert svc2.act("dns", {"entrant": "3"}, who="Anna", request="web-abc")["duplicate"] is True
    assert sum(1 for r in svc2.store.events() if r["type"] == "dns") == 1
    with pytest.raises(ValueError, match="request must be an idempotency key"):
        svc2.act("dns", {"entrant": "2"}, who="Anna", request="x" * 101)


def test_a_conflict_is_said_in_the_phones_language():
    """The phone's sentence (IntentConflict.said): the state words
    translated, the names as they are; str() stays English (the desk's
    note)."""
    from tabletimer.hub.i18n.catalogue import words
    call = intents.IntentConflict("confirm", "confirmed by board B1", "open")
    assert str(call) == "this call is confirmed by board B1 since your page showed it open"
    assert call.said(words("nb")) == "denne meldingen er bekreftet av board B1, mens siden din viste den som åpen"
    count = intents.IntentConflict("count", {"placed": None, "remaining": 12}, None)
    assert count.said(words("cs")) == "počet u této skládačky je 12 zbývá, zatímco vaše stránka ukazovala žádný počet"
    assert intents.IntentConflict("void", "none", "open").said(words("da")) == "hubben har ikke det opkald"
