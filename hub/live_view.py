"""A plain live view of the hub for the terminal (Rich): round clock,
standings, boards and recent activity.  The full organizer console is a
later piece of work; this is what `tabletimer run` and `demo` show meanwhile."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text

from .formats import fmt_duration
from .service import HubService


def render(service: HubService, title: str) -> Group:
    now = service.clock.now_ms()
    comp = service.competition
    fmt = comp.format
    start = comp.start_ms
    reg = service.registry.boards
    online = sum(1 for b in reg.values() if b.online)
    if start is None:
        clock = "round not started"
    elif now < start:                      # armed: the boards will sound the start
        clock = f"starts in {fmt_duration(start - now)}"
    else:
        clock = (f"elapsed {fmt_duration(max(0, now - start))}  "
                 f"left {fmt_duration(max(0, start + fmt.time_limit_ms - now))}")
    rejected = sum(service.rejected.values())
    head = Text.assemble((f"{title}  ", "bold"), f"{clock}  boards online {online}/{len(reg)}  ",
                         (f"rejected {rejected}" if rejected else "rejected 0",
                          "red" if rejected else ""),
                         f"  duplicates {service.duplicates}")

    res = fmt.resolution_ms
    standings = Table(title="Standings", expand=True)
    for col in ("place", "award", "name", "status", "time", "penalty", "pieces", "referee"):
        standings.add_column(col)
    for r in service.standings():
        ref = ("provisional" if r.provisional else "confirmed") if r.status == "finished" else ""
        standings.add_row(
            str(r.place) if r.place is not None else "-",
            str(r.award_place) if r.award_place is not None else ("unofficial" if not r.official else ""),
            r.name or r.entrant, r.status + (f" ({r.reason})" if r.reason else ""),
            fmt_duration(r.net_time_ms if r.net_time_ms is not None else r.time_ms, res),
            fmt_duration(r.penalty_ms, res) if r.penalty_ms else "",
            str(r.pieces) if r.pieces else "", ref,
            style="green" if r.status == "finished" and not r.provisional
            else ("yellow" if r.status == "finished" else None))

    boards = Table(title="Boards", expand=True)
    for col in ("board", "state", "fw", "boot", "stations", "sync ±ms", "free mem", "WiFi dBm", "last seen"):
        boards.add_column(col)
    for b in sorted(reg.values(), key=lambda b: b.board):
        boards.add_row(b.board, "online" if b.online else "OFFLINE", b.fw or "-", str(b.boot or "-"),
                       str(b.stations), str(b.sync_err_ms if b.sync_err_ms is not None else "-"),
                       str(b.mem_free) if b.mem_free is not None else "-",
                       str(b.rssi) if b.rssi is not None else "-",
                       fmt_duration(now - b.last_seen_ms, 1) + " ago" if b.last_seen_ms else "-",
                       style=None if b.online else "red")
    calls = Table(title="Calls waiting for a referee (oldest first)", expand=True)
    for col in ("waiting", "table", "entrant", "puzzle", "press"):
        calls.add_column(col)
    for at, pid, entrant, puzzle, table in comp.open_calls()[:15]:
        wait = now - at
        calls.add_row(fmt_duration(wait), table, entrant, str(puzzle), pid,
                      style="bold red" if wait > 60_000 else None)
    alerts = service.alerts()
    alert_text = Text("\n".join(alerts) if alerts else "none", style="red" if alerts else "dim")
    activity = Text("\n".join(list(service.activity)[-8:]), style="dim")
    return Group(head, calls, standings, boards, Text("Alerts", style="bold"), alert_text,
                 Text("Recent activity", style="bold"), activity)
