"""Issue 44, item 7: every value a round start is made of has a limit,
checked before anything is stored, and one already stored past it is
flagged, never raised.  `time_limit = "16666666666:00:00"` passed every
check; at `round_start` the row was stored and the hub died building the
boards' schedule ('end' out of range), at every restart again.  A real
event folder, real SQLite logs and `tabletimer act` as an operator types
it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tabletimer.hub.protocol.keys import BoardKeys
from tabletimer.hub.core.service import HubService
from tabletimer.hub.cli import main as cli
from tabletimer.hub.event.folder import event_folder
from tabletimer.hub.event.log.action_rows import MAX_MS
from tabletimer.hub.event.fold.competition import Competition
from tabletimer.hub.event.log.store import EventStore
from tabletimer.hub.rules.format_model import MAX_ROTATIONS, MAX_ROUND_MS
from tabletimer.hub.rules.formats import format_text
from tabletimer.shared import protocol

HOUR = 3_600_000


def make_event(path: Path, preset: str, format_toml: str | None = None) -> Path:
    """An event folder as `init` writes it (board T01), the board's key made,
    its format.toml replaced if given."""
    event_folder.init(path, preset)
    if format_toml is not None:
        (path / "format.toml").write_text(format_toml)
    BoardKeys(path / "board-keys.json").ensure("T01")
    return path


def service(path: Path) -> HubService:
    ev = event_folder.load(path)
    return HubService(EventStore(ev.db), BoardKeys(ev.keys_file), Competition(ev.format, ev.entrants, ev.stations))


def rows(path: Path) -> list[dict]:
    if not (path / "events.sqlite").exists():
        return []
    store = EventStore(path / "events.sqlite")
    try:
        return store.events()
    finally:
        store.close()


def sent(outgoing: list) -> list[dict]:
    """The messages as a board receives them: each valid (protocol.validate)."""
    return [protocol.validate(json.loads(o.payload.rsplit(b"\n", 1)[0])) for o in outgoing]


def test_the_issues_format_is_refused_when_the_event_loads_and_nothing_is_stored(tmp_path, capsys):
    huge = format_text("czjpa-individuals").replace('time_limit = "2:00:00"', 'time_limit = "16666666666:00:00"')
    ev = make_event(tmp_path / "event", "czjpa-individuals", huge)
    assert cli.main(["act", str(ev), "round_start"]) == 2
    err = capsys.readouterr().err
    assert re.search(r'^error: .*format\.toml: round\.time_limit: expected a duration up to "72:00:00", '
                     r"got '16666666666:00:00'$", err, re.M), err
    assert rows(ev) == []                               # refused: nothing written
    assert cli.main(["replay", str(ev)]) == 2           # the hub's start says the same, no traceback
    assert "round.time_limit" in capsys.readouterr().err


@pytest.mark.parametrize("preset, fields, message", [
    # a relay rotates every 8 min: the boards' schedule carries at most 200 rotations, after the start
    ("cz-championship-teams", ["duration=72:00:00"], r"more than 200 relay rotations .*at most 26:40:00"),
    ("cz-championship-teams", ["duration=5:00"], r"the relay rotates every 0:08:00: a limit of 0:05:00 is not longer"),
    ("czjpa-individuals", ["duration=72:00:01"], r"duration = 259201000 is outside 1\.\.259200000"),
    ("czjpa-individuals", ["warnings=[259200001]"], r"outside 1\.\.259200000"),
    # what an operator types that float() and the system's clock overflowed on: a traceback
    ("czjpa-individuals", ["duration=0:1e309"], r"duration: expected seconds or h:mm:ss, not '0:1e309'"),
    ("czjpa-individuals", ["warnings=1:1e400"], r"warnings: expected seconds or h:mm:ss"),
    ("czjpa-individuals", ["at=10:30:99999999999999"], r"at: a clock time HH:MM\[:SS\] or hub ms"),
    ("czjpa-individuals", ["at=" + "9" * 30], r"at = 9{30} is outside 0\.\.9007199254740991"),
    ("czjpa-individuals", ["at=9:" + "9" * 50], r"at: a clock time .*'9:9+'\.\.\. \(52 characters\)"),
    ("czjpa-individuals", ["duration=" + "[" * 5000 + "]" * 5000], r"duration must be a whole number"),
], ids=lambda v: v if isinstance(v, str) else (v[0] if len(v[0]) < 30 else v[0][:20]))
def test_a_round_start_past_a_limit_is_refused_before_it_is_stored(tmp_path, capsys, preset, fields, message):
    ev = make_event(tmp_path / "event", preset)
    before = rows(ev)
    assert cli.main(["act", str(ev), "round_start", *fields]) == 2
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if not ln.startswith("warning: ")]
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert re.search(message, lines[0]), err
    assert rows(ev) == before                           # refused: nothing written


def test_a_round_start_past_the_boards_limits_already_in_a_log_is_flagged_and_the_hub_goes_on(tmp_path):
    """Rows an older version stored: a start whose end no board's clock
    carries, a relay's start with more rotations than a schedule holds.
    A restarted hub flags and alerts each, keeps the start before them,
    and schedules every board (the old one died there, at each restart)."""
    for preset, bad in (("czjpa-individuals", {"at": MAX_MS - HOUR}),
                        ("cz-championship-teams", {"duration": MAX_ROUND_MS})):
        ev = make_event(tmp_path / preset, preset)
        svc = service(ev)
        good = svc.start_round()
        stored = svc.store.append("operator", "round_start", dict({"at": good["payload"]["at"], "who": "old",
                                                                   "why": ""}, **bad), 0)
        svc.store.close()
        again = service(ev)                                 # a restarted hub
        try:
            comp = again.competition
            assert list(comp.flagged) == [stored["id"]], comp.flagged
            assert comp.start_ms == good["payload"]["at"] and comp.round_limit_ms() == comp.format.time_limit_ms
            assert any(a.startswith(f"log row #{stored['id']} cannot apply (round_start: ")
                       for a in again.alerts()), again.alerts()
            (sched,) = sent(again.schedules(force=True))    # the boards get the start that stands
            assert sched["start"] == good["payload"]["at"]
            assert sched["end"] == good["payload"]["at"] + comp.format.time_limit_ms
        finally:
            again.store.close()
        assert cli.main(["replay", str(ev)]) == 0


def test_a_relay_part_begun_too_late_for_a_rotation_schedules_none(tmp_path):
    """A relay that is the round's second part begins at the first part's
    last finish: one within the last rotation interval left no rotation
    before the end, and the schedule's 'rot' [first, interval, until]
    with until before first killed the hub."""
    text = ('[format]\ntitle = "pairs, then a relay"\nsummary = "s"\n[entrants]\nkind = "pair"\n'
            '[round]\ntime_limit = "10:00"\n'
            '[[round.parts]]\nwork = "single"\npuzzles = [500]\n'
            '[[round.parts]]\nwork = "relay"\npuzzles = [500, 500]\nrotation_interval = "3:00"\n')
    ev = make_event(tmp_path / "event", "czjpa-pairs", text)
    (ev / "stations.csv").write_text("board,button,table,entrant,puzzle\nT01,1,Table 1,P1,1\n"
                                     "T01,2,Table 1,P1,2\nT01,3,Table 1,P1,3\n")
    svc = service(ev)
    try:
        assert svc.competition.format.relay.first == 2
        start = svc.clock.now_ms() - 9 * 60_000 - 30_000
        svc.start_round(at_ms=start)
        (before,) = sent(svc.schedules(force=True))
        assert "rot" not in before                          # the relay has not begun
        svc.act("press", {"entrant": "P1", "puzzle": 1, "at": start + 9 * 60_000}, who="desk")
        svc.act("confirm", {"entrant": "P1", "puzzle": 1}, who="desk")
        (after,) = sent(svc.schedules(force=True))          # begun at 9:00 of 10:00: no rotation left
        assert "rot" not in after and after["end"] == start + 10 * 60_000
    finally:
        svc.store.close()


def test_every_value_at_its_limit_makes_a_schedule_a_board_takes(tmp_path):
    """The limits themselves (rules/format_model.py) are within what the
    protocol carries: the longest round, a start offset of a day that
    extends it, a relay with the most rotations."""
    text = format_text("cz-championship-teams").replace('time_limit = "5:00:00"', 'time_limit = "72:00:00"') \
        .replace('rotation_interval = "8:00"', 'rotation_interval = "21:36"') \
        .replace("start_offsets = false", "start_offsets = true")
    ev = make_event(tmp_path / "event", "cz-championship-teams", text)
    svc = service(ev)
    try:
        fmt = svc.competition.format
        assert fmt.time_limit_ms == MAX_ROUND_MS == fmt.relay.rotation_interval_ms * MAX_ROTATIONS
        svc.start_round(at_ms=svc.clock.now_ms() + 7 * 24 * HOUR - 60_000)   # armed as far ahead as may be
        svc.act("start_offset", {"entrant": "T1", "offset_ms": 24 * HOUR}, who="desk")
        (sched,) = sent(svc.schedules(force=True))
        first, interval, until = sched["rot"]
        assert (until - first) // interval == MAX_ROTATIONS - 1
        (stations,) = sent(svc.station_messages(force=True))
        assert stations["st"][0][2] == sched["end"] + 24 * HOUR       # the entrant's own end
    finally:
        svc.store.close()
