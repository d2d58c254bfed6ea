"""What the hub prints for each row it stores (`tabletimer run`'s log lines
on a terminal): a board's call with the place it gives, a repeat call or
a missing piece counted at a call, the hall check's presses, a board's
settings and firmware, the hub's clock."""

from __future__ import annotations

import json

from ..core.service import HubService
from ..event.log.rows import FW_ROWS, RowKind, kind_of
from ..event.time.time_base import clock_alert
from ..rules.formats import fmt_duration
from ..rules.standings import StandingRow
from ..rules.timetext import fmt_clock


def describe(service: HubService, ev: dict, ranked: dict[str, StandingRow] | None = None) -> str:
    """One log line for a stored event; ranked: the standings by entrant
    (default: the standings now)."""
    p, kind = ev["payload"], kind_of(ev)
    if kind in (RowKind.BOARD_PRESS, RowKind.BOARD_CONFIRM, RowKind.BOARD_VOID):
        st = service.competition.station_at(ev["board"], p["station"])
        who = st.entrant if st else f"{ev['board']}/{p['station']} (no station)"
        rank = ""
        if ranked is None:
            ranked = {r.entrant: r for r in service.standings()}
        row = ranked.get(st.entrant) if st else None
        if row:
            res = service.competition.format.resolution_ms
            state = "provisional" if row.provisional else "confirmed"
            place = f"place {row.place}" if row.place is not None else "no place yet"
            rank = f" -> {place}, {row.status} {state}, {fmt_duration(row.net_time_ms, res)}"
        extra = f", {p['missing']} missing" if kind is RowKind.BOARD_CONFIRM else ""
        return f"{ev['type']} {who} (boot {p['boot']} seq {p['seq']}{extra}){rank}"
    if kind is RowKind.BOARD_STRAY:
        if service.competition.in_hall_check(ev):
            return f"hall check: {ev['board']} button {p['station']} pressed"
        if p["state"] == "called":           # a short press at a call (firmware/board.py)
            if p.get("missing"):
                return (f"missing piece counted at {ev['board']}/{p['station']}: {p['missing']} so far "
                        f"(the board's confirm records them)")
            return f"repeat call at {ev['board']}/{p['station']} (a second press at the call: no missing piece)"
        return f"stray press {ev['board']}/{p['station']} while {p['state']}"
    if kind is RowKind.BOARD_STATUS:
        # a roll-back of new settings, or what reset it (its birth's fault)
        return f"board {ev['board']} {p['state']}" + (f": {p['fault']}" if p.get("fault") else "")
    if kind is RowKind.BOARD_CONFIG:
        return (f"board {ev['board']}: settings (log row #{p.get('id')}) {p.get('state')}"
                + (f": {p['why']}" if p.get("why") else ""))
    if kind in FW_ROWS:
        got = f" {100 * p['got'] // p['of']}%" if p.get("of") and isinstance(p.get("got"), int) else ""
        return (f"board {ev['board']}: firmware (log row #{p.get('id')}) {p.get('state')}{got}"
                + (f" {p['fw']}" if p.get("fw") else "") + (f": {p['why']}" if p.get("why") else ""))
    if kind is RowKind.HUB_CLOCK:
        where = "its log" if p.get("source") == "log" else "this laptop's clock"
        return clock_alert(p, fmt_clock) or f"clock: the hub's time base, from {where} ({fmt_clock(p['hub_ms'])})"
    if kind is RowKind.OP_SETTINGS and isinstance(p.get("set"), dict):
        from ..fleet.board_settings import shown

        return f"{ev['source']} settings for board {p.get('board')}: {shown(p['set'])}"   # no password shown
    return f"{ev['source']} {ev['type']} {json.dumps(p)}"
