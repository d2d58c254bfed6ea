"""Each board's signal schedule from the fold of the log (competition.py):
the round's start, warnings and time-up, a relay team's next rotation, and
the puzzles a 'next puzzle' button calls one after the other.  Pure."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .competition import Competition


def board_schedule(comp: Competition, board: str, now_ms: int) -> tuple | None:
    """(start, end, signals, rot, calls) for one board: start, warnings
    and time-up; for the board of a relay team, rot = [next rotation,
    interval, end] while its relay part is not complete, else None;
    calls: per button, the puzzles it calls one after the other (None:
    one each).  A station's own end (an entrant's new start time) is in
    the stations' state the hub sends (station_state.py), not here."""
    row = comp.round_start_row()
    if row is None:
        return None
    p = row["payload"]
    start = p["at"]
    duration = p.get("duration") or comp.format.time_limit_ms
    end = start + duration
    signals = [[start, "start"]]
    signals += [[end - w, "warn"] for w in p.get("warnings", ()) if 0 < w < duration]
    signals.append([end, "time_up"])
    rot = None
    relay = comp.format.relay
    if relay is not None:
        teams = {s.entrant for s in comp.stations if s.board == board}
        if teams:
            from ...rules.relay import relay_states
            states = relay_states(comp.format, [e for e in comp.entrants if e.id in teams],
                                  comp.facts(), now_ms)
            interval = relay.rotation_interval_ms
            assert interval
            for team in sorted(teams)[:1]:      # one relay team per board
                rs = states.get(team)
                if rs is None:
                    if relay.first == 1:        # the relay is the first part: starts with the round
                        rot = [start + interval, interval, end]
                elif not rs.complete:
                    # from the part's start, not from now: the schedule only
                    # changes when the relay does (boards skip past signals)
                    rot = [rs.start_ms + interval, interval, end]
            if rot is not None and rot[0] > end:
                rot = None                      # a relay part begun too late for a rotation before the end
    buttons = {s.button: s for s in comp.stations if s.board == board}
    calls = None
    if any(s.puzzle is None for s in buttons.values()):
        calls = [comp.calls_of(buttons[n]) if n in buttons else 1 for n in range(1, max(buttons) + 1)]
    return (start, end, sorted(signals), rot, calls)
