"""One typed event core (issue 46, item 1): every kind of log row is a
member of RowKind, read once by rows.kind_of (a row this version does not
know is one of the unknown kinds, never an error), and the fold keeps its
finish calls itself (call_book.py): what the stations' states, the
referees' pages and the desk's consequences used to rebuild by walking the
facts again, each with its own if/elif."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from tabletimer.hub.event.fold.competition import Competition
from tabletimer.hub.event.log.action_rows import FIELDS
from tabletimer.hub.event.log.rows import RowKind, kind_of, operator_kind
from tabletimer.hub.protocol import hub_protocol
from tabletimer.hub.rules.facts import (Confirm, Count, DidNotStart, Disqualified, Press, Reinstated,
                                        Void)
from tabletimer.shared import protocol as P

from event.test_competition_live import _random_rows, _setup


def test_every_row_the_log_holds_has_a_kind_of_its_own() -> None:
    for action in FIELDS:
        kind = kind_of({"source": "operator", "type": action})
        assert kind.known and kind.from_operator and kind.type == action and operator_kind(action) is kind
    for typ in (*hub_protocol.EVENT_TYPES, P.T_STATUS, hub_protocol.T_CONFIG, hub_protocol.T_FW):
        kind = kind_of({"source": "board", "type": typ})
        assert kind.known and kind.from_board and kind.type == typ
    for typ in ("conflict", "intent_conflict", "clock", "takeover", "fw", "standby_lost", "standby_back",
                "split", "redone", "fenced"):
        kind = kind_of({"source": "hub", "type": typ})
        assert kind.known and kind.from_hub and kind.type == typ
    assert len({k.value for k in RowKind}) == len(RowKind)


@pytest.mark.parametrize("row,kind", [
    ({"source": "board", "type": "levitate"}, RowKind.BOARD_UNKNOWN),        # a later version's
    ({"source": "operator", "type": "undo_everything"}, RowKind.OPERATOR_UNKNOWN),
    ({"source": "hub", "type": ["clock"]}, RowKind.HUB_UNKNOWN),             # garbled
    ({"source": "hub"}, RowKind.HUB_UNKNOWN),
    ({"source": "elsewhere", "type": "press"}, RowKind.UNREADABLE),
    ({"source": ["board"], "type": "press"}, RowKind.UNREADABLE),            # not hashable: no error
    ({}, RowKind.UNREADABLE),
])
def test_a_row_of_no_known_kind_is_an_unknown_kind_never_an_error(row: dict, kind: RowKind) -> None:
    assert kind_of(row) is kind
    assert not kind.known


def test_a_log_with_rows_of_unknown_kinds_still_loads() -> None:
    fmt, entrants, stations = _setup("czjpa-individuals")
    rows = [{"id": 1, "received_ms": 0, "source": "operator", "type": "round_start", "board": None,
             "payload": {"at": 1000, "duration": None, "warnings": [], "who": "t"}},
            {"id": 2, "received_ms": 5, "source": "operator", "type": "undo_everything", "board": None,
             "payload": {"who": "t"}},
            {"id": 3, "received_ms": 6, "source": "elsewhere", "type": "press", "board": None, "payload": {}},
            {"id": 4, "received_ms": 7, "source": "hub", "type": "weather", "board": None, "payload": {}},
            {"id": 5, "received_ms": 2000, "source": "operator", "type": "press", "board": None,
             "payload": {"entrant": "1", "puzzle": 1, "at": 2000, "who": "t"}}]
    comp = Competition(fmt, list(entrants), list(stations), rows=rows)
    assert 2 in comp.flagged and "undo_everything" in comp.flagged[2]      # flagged, as before
    assert 3 not in comp.flagged and 4 not in comp.flagged                  # passed by: no fact
    assert [f.press_id for f in comp.call_book().open_presses()] == ["op/5"]


def _walked(comp: Competition) -> tuple:
    """What station_state.py, table_view.py and consequences.py computed
    from a walk of comp.facts() before the fold kept it (their code, as it
    was): the current calls, confirmed calls (missing pieces), who is out,
    the counts, the voided and the confirmation-named press ids."""
    current: dict[tuple[str, int], list[str]] = {}
    where: dict[str, tuple[str, int, int]] = {}
    confirmed: dict[str, int] = {}
    out: dict[str, str] = {}
    counts: dict[tuple[str, int], tuple] = {}
    facts = comp.facts()
    for f in facts:
        if isinstance(f, Press):
            current.setdefault((f.entrant, f.puzzle), []).append(f.press_id)
            where[f.press_id] = (f.entrant, f.puzzle, f.at_ms)
        elif isinstance(f, Void):
            w = where.get(f.press_id)
            if w is not None:
                calls = current.get((w[0], w[1]), [])
                if f.press_id in calls:
                    calls.remove(f.press_id)
            confirmed.pop(f.press_id, None)
        elif isinstance(f, Confirm):
            pid = f.press_id
            if not pid:
                calls = current.get((f.entrant, f.puzzle), [])
                pid = calls[-1] if calls else ""
            if pid in where:
                confirmed[pid] = f.missing_found + f.missing_lost + f.missing_adjacent
        elif isinstance(f, (DidNotStart, Disqualified)):
            out[f.entrant] = f.kind
        elif isinstance(f, Reinstated):
            out.pop(f.entrant, None)
        elif isinstance(f, Count):
            counts[(f.entrant, f.puzzle)] = (f.placed, f.remaining)
    presses = [f for f in facts if isinstance(f, Press)]
    voided = {f.press_id for f in facts if isinstance(f, Void)}
    named = {f.press_id for f in facts if isinstance(f, Confirm) and f.press_id}
    return ({k: v[-1] for k, v in current.items() if v}, confirmed, out, counts, presses, voided, named)


def _kept(comp: Competition, keys: set[tuple[str, int]], entrants: set[str]) -> tuple:
    book = comp.call_book()
    presses = book.presses()
    pids = {p.press_id for p in presses} | {getattr(f, "press_id", "") for f in comp.facts()}
    current = {k: book.current_call(*k) for k in keys if book.current_call(*k) is not None}
    confirmed = {pid: book.confirmed_missing(pid) for pid in pids if book.confirmed_missing(pid) is not None}
    out = {e: book.out(e) for e in entrants if book.out(e) is not None}
    counts = {(e, pz): (c.placed, c.remaining) for e in entrants for pz, c in book.recorded_counts(e).items()}
    voided = {pid for pid in pids | {"nothing"} if book.is_voided(pid)}
    named = {pid for pid in pids if book.named_by_confirmation(pid)}
    return current, confirmed, out, counts, presses, voided, named


@pytest.mark.parametrize("preset,seed", [("cz-championship-teams", 21), ("czjpa-individuals", 22),
                                         ("rogaland-individuals", 23), ("czjpa-teams", 19)])
def test_the_fold_keeps_what_the_views_walked_the_facts_for(preset: str, seed: int) -> None:
    """Live (row by row) and replayed, on a random log of presses,
    confirmations, voids, corrections, counts, swaps, DQ and
    reinstatements: the call book answers what the old walks found."""
    fmt, entrants, stations = _setup(preset)
    rows = _random_rows(fmt, stations, random.Random(seed), 160)
    live = Competition(fmt, list(entrants), list(stations))
    ids = {e.id for e in entrants}
    keys = {(e, pz) for e in ids for pz in range(1, len(fmt.puzzles) + 1)}
    for k, row in enumerate(rows):
        live.apply(row)
        if k % 11 == 0 or k == len(rows) - 1:
            walked = _walked(live)
            assert _kept(live, keys, ids) == walked
            replay = Competition(fmt, list(entrants), list(stations), rows=rows[:k + 1])
            assert _kept(replay, keys, ids) == walked
    current, confirmed, out, counts, presses, voided, named = _walked(live)
    assert current and confirmed and counts and voided and named, "the log should exercise each"


# a row read by its source or type string, compared: what rows.kind_of alone does
_ROW_TYPE_READ = re.compile(r"""\b(row|rows?\[\w+\]|ev|r|e|earlier|desk)(\[["'](type|source)["']\]|\.get\(["'](type|source)["'][^)]*\))"""
                            r"""\s*(==|!=|\bin\b|\bnot in\b)""")
# the time room sits below the log (tests/test_import_arrows.py) and reads its own clock rows
_ALLOWED = {"hub/event/log/rows.py", "hub/event/time/clock.py"}


def test_no_module_but_rows_branches_on_a_rows_type_string() -> None:
    root = Path(__file__).resolve().parents[2]
    found = []
    for path in sorted([*root.joinpath("hub").rglob("*.py"), *root.joinpath("shared").rglob("*.py")]):
        where = path.relative_to(root).as_posix()
        if where in _ALLOWED:
            continue
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if _ROW_TYPE_READ.search(line):
                found.append(f"{where}:{n}: {line.strip()}")
    assert not found, "branch on rows.kind_of(row) instead:\n" + "\n".join(found)
