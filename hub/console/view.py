"""What the main screen of the console shows: a Snapshot (core/snapshot.py)
drawn into its header, tables, alerts and event log, redrawing only what
changed since the last draw."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.screen import Screen
from textual.widgets import Input, Log, Static

from .table import LiveTable
from ..core.snapshot import Snapshot
from ..rules.formats import fmt_duration
from ..rules.standings import StandingRow
from ..rules.timetext import fmt_clock

CALL_LATE_MS = 60_000        # a call waiting longer than this is highlighted
LOG_LINES = 200             # event log lines the console shows


def round_clock(s: Snapshot) -> str:
    if s.start is None:
        return "round not started"
    if s.now < s.start:
        return f"starts in {fmt_duration(s.start - s.now)}"
    assert s.end is not None
    if s.now >= s.end:
        return f"TIME UP - elapsed {fmt_duration(s.now - s.start)} (limit {fmt_duration(s.end - s.start)})"
    return (f"elapsed {fmt_duration(s.now - s.start)}  remaining {fmt_duration(s.end - s.now)}"
            f"  (limit {fmt_duration(s.end - s.start)})")


def status_text(r: StandingRow, s: Snapshot) -> str:
    """An entrant's state in the standings: the engine's status (with a dq's
    reason), and before an armed start when it comes ("starts in 0:04:32",
    not "running")."""
    if r.status == "waiting" and s.start is not None and s.now < s.start:
        return f"starts in {fmt_duration(s.start - s.now)}"
    return r.status + (f" ({r.reason})" if r.reason else "")


def appended(old: list[str], new: list[str]) -> list[str] | None:
    """The lines a bounded log (oldest lines drop off the front) gained from
    old to new; None when new does not continue old."""
    for dropped in range(len(old)):
        kept = old[dropped:]
        if new[:len(kept)] == kept:
            return new[len(kept):]
    return None         # nothing in common: more lines came than the log keeps


class MainView:
    """The main screen's drawing and what it last showed."""

    def __init__(self) -> None:
        self.shown: dict[str, Any] = {}        # header and alerts as last shown
        self.log_shown: tuple[str, list[str]] = ("", [])     # (filter, lines) in the event log

    def draw(self, main: Screen, s: Snapshot, title: str, who: str, res: int) -> None:
        """Draw snapshot s on the main screen (screens.py's MainScreen; res:
        the format's resolution)."""
        header = Text.assemble((title, "bold"), "   ", (round_clock(s), "bold reverse" if (
            s.end is not None and s.now >= s.end) else "bold"), no_wrap=True, overflow="ellipsis")
        header.append("\n")
        if s.next_signal is not None:
            at, kind = s.next_signal
            header.append(f"next signal: {kind.replace('_', ' ')} in {fmt_duration(at - s.now)}   ")
        else:
            header.append("next signal: none   ")
        if s.blind:
            header.append(f"boards online ?/{s.boards_total} (not known: {s.blind})   ", "bold red")
        else:
            header.append(f"boards online {s.online}/{s.boards_total}   ",
                          "red" if s.online < s.boards_total else "")
        header.append(f"rejected {s.rejected}", "bold red" if s.rejected else "")
        header.append(f"   duplicates {s.duplicates}   calls waiting {len(s.calls)}")
        header.append(f"\noperator: {who}", "dim")
        if s.official is not None:          # the results are official (f made them so; u reopens them)
            header.append(f"   OFFICIAL RESULTS: {s.official}", "bold green")
        for line in s.status:                  # the public site's publishing (runtime/site_start.py), at all times
            header.append("   ")
            header.append(line.text, "" if line.ok else "bold red")
        if header != self.shown.get("header"):
            # fixed height: no layout of the screen for a new header
            main.query_one("#header", Static).update(header, layout=False)
            self.shown["header"] = header

        calls = []
        for at, pid, entrant, puzzle, table in s.calls:
            wait = s.now - at
            style = "bold red" if wait > CALL_LATE_MS else ""
            pressed = fmt_duration(at - s.start) if s.start is not None else fmt_clock(at)
            # "call": the short press id, what the operator reads aloud and types
            calls.append((pid, [Text(fmt_duration(max(0, wait)), style), pressed, table,
                                Text(s.names.get(entrant, entrant), style), str(puzzle),
                                Text(s.short_ids.get(pid, ""), "bold"), pid]))
        main.query_one("#calls", LiveTable).set_rows(calls)

        rows = []
        for r in s.standings:
            ref = ("provisional" if r.provisional else "confirmed") if r.status == "finished" else ""
            style = ("green" if r.status == "finished" and not r.provisional
                     else "yellow" if r.status == "finished" else "")
            rows.append((r.entrant, [
                str(r.place) if r.place is not None else "-",
                str(r.award_place) if r.award_place is not None else ("unofficial" if not r.official else ""),
                Text(r.name or r.entrant, style), status_text(r, s),
                # time, penalty and net as the results and replay show them (time: the raw one)
                fmt_duration(r.time_ms, res),
                fmt_duration(r.penalty_ms, res) if r.penalty_ms else "",
                fmt_duration(r.net_time_ms, res) if r.net_time_ms is not None else "",
                str(r.pieces) if r.pieces else "", Text(ref, style)]))
        main.query_one("#standings", LiveTable).set_rows(rows)

        hall = []
        for h in s.hall:
            style = ("bold red" if "offline" in h.state or "not seen" in h.state or "poor" in h.state
                     else "bold yellow" if "called" in h.state else
                     "green" if "confirmed" in h.state else "")
            key = f"{h.board}#{h.button}" if h.button is not None else h.board
            hall.append((key, [h.board, str(h.button) if h.button is not None else "-", h.table, h.name,
                               Text(h.state, style), h.sync]))
        main.query_one("#hall", LiveTable).set_rows(hall)

        if s.alerts != self.shown.get("alerts"):
            main.query_one("#alerts", Static).update(
                Text("\n".join(s.alerts), style="red") if s.alerts else Text("none", style="dim"))
            self.shown["alerts"] = s.alerts

        needle = main.query_one("#filter", Input).value.strip().lower()
        lines = [ln for ln in s.activity if needle in ln.lower()] if needle else s.activity
        lines = lines[-LOG_LINES:]
        last_needle, last_lines = self.log_shown
        if (needle, lines) != (last_needle, last_lines):
            # append what is new (a log widget draws only what it shows; a
            # 200-line text redrawn on every event costs a full layout)
            log = main.query_one("#log", Log)
            added = appended(last_lines, lines) if needle == last_needle and last_lines else None
            if added is None:
                log.clear()
                log.write_lines(lines or ["(nothing matches)" if needle else "(nothing yet)"])
            else:
                log.write_lines(added)
            self.log_shown = (needle, lines)
