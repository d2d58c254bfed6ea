"""The consoles' event-log lines of the rows applied: a subscriber of
RowApplied (changes.py), made by the state before any other, so the lines of
a row are written before anyone else hears of it.  What the state keeps of a
row is hub_state.py's; what the consoles read of it is here."""

from __future__ import annotations

from collections import deque

from ..event.fold.competition import Competition
from ..event.fold.row_checks import row_problem
from ..event.log.action_rows import META
from ..event.log.rows import FW_ROWS, RowKind, kind_of
from ..event.time.time_base import clock_alert
from ..rules.durations import fmt_duration
from ..rules.timetext import fmt_clock
from .changes import RowApplied


def shown_time(at: object, start: int | None) -> str:
    """A hub instant as the consoles' event log shows it: the local clock
    time, and the time since the round start when it has one (never raw
    hub ms)."""
    if type(at) is not int:
        return str(at)
    try:
        clock = fmt_clock(at)
    except (ValueError, OverflowError, OSError):    # a press stamped in the year 287396: refused, shown as it is
        return f"{at} (hub ms)"
    return clock + (f" (+{fmt_duration(at - start)})" if start is not None and at >= start else "")


def round_start_line(p: dict) -> str:
    """The event log's line for a round start: who, when, its limit and its
    warnings (what the boards will sound), why.  A malformed field (a bad
    row, which the competition flags) is shown as it is."""
    def dur(v: object) -> str:
        return fmt_duration(v) if type(v) is int else str(v)
    line = f"{p.get('who', 'operator')}: round start at {shown_time(p.get('at'), None)}"
    if p.get("duration"):
        line += f", limit {dur(p['duration'])}"
    warnings = p.get("warnings")
    if isinstance(warnings, list):
        line += (", warnings " + " ".join(map(dur, warnings)) + " before the end" if warnings else ", no warnings")
    elif warnings is not None:
        line += f", warnings {warnings}"
    return line + (f" ({p['why']})" if p.get("why") else "")


def row_lines(ev: dict, competition: Competition) -> list[str]:
    """The lines of a row folded into competition (its start, for a press's
    time since it: no row but a round's start moves it)."""
    p, kind = ev["payload"], kind_of(ev)
    lines = []
    if row_problem(ev) is not None:
        pass                     # the fold flags it (below): nothing of it is read here
    elif kind is RowKind.HUB_TAKEOVER:
        pass                     # (its unproven term is the state's own line: hub_state.py)
    elif kind is RowKind.HUB_CLOCK:
        said = clock_alert(p, fmt_clock)
        if said:
            lines.append(said)
    elif kind is RowKind.BOARD_STATUS:
        lines.append(f"board {ev['board']} {p['state']}")
        if p.get("fault", "").startswith("settings rolled back") or " rolled back: " in p.get("fault", ""):
            lines.append(f"board {ev['board']}: {p['fault']}")
        elif p.get("fault"):
            lines.append(f"board {ev['board']} RESET after a fault (boot {p['boot'] - 1}): {p['fault']}")
    elif kind in FW_ROWS:
        lines.append(f"board {ev['board']}: firmware (log row #{p.get('id')}) {p['state']}"
                     + (f" {p['fw']}" if p.get("fw") else "") + (f": {p['why']}" if p.get("why") else ""))
    elif kind is RowKind.BOARD_CONFIG:
        lines.append(f"board {ev['board']}: settings (log row #{p.get('id')}) {p['state']}"
                     + (f": {p['why']}" if p.get("why") else ""))
    elif kind.from_board:
        lines.append(f"{ev['type']} {ev['board']}/{p['station']} at {shown_time(p['at'], competition.start_ms)}")
    elif kind is RowKind.HUB_CONFLICT:
        m = p.get("msg") or {}
        lines.append(f"CONFLICT {ev['board']} boot {m.get('boot')} seq {m.get('seq')}: sent again "
                     f"with other content than row #{p.get('of')}; stored as row #{ev['id']}")
    elif kind is RowKind.OP_ROUND_START:
        lines.append(round_start_line(p))
    elif kind.from_operator:
        lines.append(f"{p.get('who', 'operator')}: {ev['type']} "
                     + " ".join(f"{k}={shown_time(v, competition.start_ms) if k == 'at' else v}"
                                for k, v in p.items() if k not in META and v is not None)
                     + (f" ({p['why']})" if p.get("why") else ""))
    if ev["id"] in competition.flagged:
        lines.append(f"row #{ev['id']} cannot apply: {competition.flagged[ev['id']]}")
    return lines


class ConsoleLines:
    """Writes each applied row's lines into activity (the consoles' event log)."""

    def __init__(self, competition: Competition, activity: deque[str]) -> None:
        self.competition, self.activity = competition, activity

    def __call__(self, note: RowApplied) -> None:
        self.activity.extend(row_lines(note.row, self.competition))
