"""A plain live view of the hub for the terminal (Rich): round clock,
standings, boards and recent activity.  The full organizer console is a
later piece of work; this is what `tabletimer run` shows meanwhile."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text

from .service import HubService


def fmt_duration(ms: int | None) -> str:
    if ms is None:
        return "-"
    sign = "-" if ms < 0 else ""
    ms = abs(ms)
    h, rest = divmod(ms, 3_600_000)
    m, rest = divmod(rest, 60_000)
    s, milli = divmod(rest, 1000)
    return f"{sign}{h}:{m:02d}:{s:02d}.{milli:03d}"


def render(service: HubService, title: str) -> Group:
    now = service.clock.now_ms()
    start = service.state.start_ms
    reg = service.registry.boards
    online = sum(1 for b in reg.values() if b.online)
    head = Text.assemble(
        (f"{title}  ", "bold"),
        f"round clock {fmt_duration(now - start) if start is not None else 'not started'}  ",
        f"boards online {online}/{len(reg)}  ",
        f"duplicates {service.duplicates}  rejected {sum(service.rejected.values())}")

    standings = Table(title="Standings", expand=True)
    for col in ("place", "entrant", "status", "time", "referee"):
        standings.add_column(col)
    for s in service.standings():
        ref = ("confirmed" if s.confirmed else "provisional") if s.status == "finished" else ""
        standings.add_row(str(s.place), s.entrant, s.status, fmt_duration(s.time_ms), ref,
                          style="green" if s.confirmed else ("yellow" if s.status == "finished" else None))

    boards = Table(title="Boards", expand=True)
    for col in ("board", "state", "fw", "boot", "stations", "sync ±ms", "last seen"):
        boards.add_column(col)
    for b in sorted(reg.values(), key=lambda b: b.board):
        boards.add_row(b.board, "online" if b.online else "OFFLINE", b.fw or "-", str(b.boot or "-"),
                       str(b.stations), str(b.sync_err_ms if b.sync_err_ms is not None else "-"),
                       fmt_duration(now - b.last_seen_ms) + " ago" if b.last_seen_ms else "-",
                       style=None if b.online else "red")
    activity = Text("\n".join(list(service.activity)[-8:]), style="dim")
    return Group(head, standings, boards, Text("Recent activity", style="bold"), activity)
