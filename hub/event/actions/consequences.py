"""What an operator action would replace or discard among the recorded
results, in words for the operator who must confirm it first."""

from __future__ import annotations

from ...rules.durations import fmt_duration
from ...rules.timetext import fmt_clock
from ...rules.facts import Press
from ..fold.call_book import CallBook
from ..fold.competition import Competition


_DONE = {"confirm": "confirmation", "void": "void", "correct": "correction"}


def _decided(comp: Competition, pid: str) -> str:
    """Who recorded a call's decision and when, for the desk to see before
    it replaces it: ", Anna's confirmation recorded at 10:42:03 (log row #25)"."""
    d = comp.decision(pid)
    if d is None:
        return ""
    when = f" at {fmt_clock(d.at_ms)}" if d.at_ms is not None else ""
    return f", {d.who}'s {_DONE.get(d.kind, d.kind)} recorded{when} (log row #{d.row})"


def consequences(comp: Competition, action: str, payload: dict, now: int,
                 last_count: dict | None = None) -> list[str]:
    """What recorded results an action (already checked) would replace or
    discard at hub time now; empty when it changes no recorded decision.
    A replaced decision is named with who recorded it and when (last_count:
    the operator row of the count recorded last on the action's puzzle)."""
    out: list[str] = []
    book = comp.call_book()
    presses = book.presses()
    start = comp.start_ms
    if action == "round_start" and start is not None:
        state = "running since" if now >= start else "armed for"
        early = sum(1 for f in presses if f.at_ms < payload["at"])
        out.append(f"replaces the round start ({state} {fmt_clock(start)}); {len(presses)} finish "
                   f"call(s) recorded so far" + (f", {early} of them before the new start, which "
                                                  "would no longer count" if early else ""))
    if action == "round_start":
        out += not_checked_in(comp)
    elif action in ("void", "correct"):
        pid = payload["press_id"]
        what = "a confirmed finish" if book.named_by_confirmation(pid) else "a recorded finish call"
        out.append(f"{'voids' if action == 'void' else 'changes the time of'} {what} ({pid}{_decided(comp, pid)})")
    elif action == "confirm" and book.named_by_confirmation(payload.get("press_id") or ""):
        pid = payload["press_id"]
        out.append(f"replaces the confirmation already recorded for {pid}{_decided(comp, pid)}")
    elif action == "count":
        puzzle = payload.get("puzzle") or 1
        if book.recorded_count(payload["entrant"], puzzle) is not None:
            by = ""
            if last_count is not None:
                lp = last_count["payload"]
                by = (f" (by {lp.get('who') or 'operator'} at {fmt_clock(last_count['received_ms'])}, "
                      f"log row #{last_count['id']})")
            out.append(f"replaces the piece count recorded for {payload['entrant']} puzzle {puzzle}{by}")
    elif action == "dq":
        out.append(f"disqualifies {payload['entrant']}")
    elif action == "dns" and any(f.entrant == payload["entrant"] for f in presses):
        out.append(f"marks {payload['entrant']}, who has recorded finish calls, as not started")
    elif action == "replace":
        out += _replacing(comp, payload, now, presses)
    elif action == "swap":
        out += _swapping(comp, payload, book)
    return out


def not_checked_in(comp: Competition, most: int = 12) -> list[str]:
    """A round start's line naming the entrants at a station who are not
    checked in (fold/check_in.py), once the round uses check-in at all;
    empty when everyone is here or nobody was checked in."""
    s = comp.check_in_summary()
    if not s.in_use or not s.absent:
        return []
    names = {e.id: e.name for e in comp.entrants}
    shown = [f"{names.get(e) or e} ({e})" if names.get(e) and names[e] != e else e for e in s.absent[:most]]
    more = f" and {len(s.absent) - most} more" if len(s.absent) > most else ""
    window = comp.format.no_show_after_ms
    after = (f"; after {fmt_duration(window)} the desk may give their stations away or mark them DNS "
             "(`tabletimer absent`)" if window is not None else "; the desk marks those who do not come DNS "
             "(`tabletimer absent --dns-all`)")
    return [f"starts with {len(s.absent)} of {len(s.expected)} entrants not checked in ({s.text()}): "
            f"{', '.join(shown)}{more}{after}"]


def _swapping(comp: Competition, p: dict, book: CallBook) -> list[str]:
    """A swap recorded after calls the entrant's 'next puzzle' station made
    since its time: those calls are for the puzzle on the table then, which
    the swap changes (event/fold/on_table.py)."""
    moved = []
    for f in book.presses():
        station = comp.station_of(f.press_id)
        st = comp.station_at(*station) if station else None
        if f.entrant == p["entrant"] and f.at_ms >= p["at"] and not book.is_voided(f.press_id) and \
                st is not None and st.puzzle is None:
            moved.append(f"{comp.short_press_id(f.press_id)} at {fmt_clock(f.at_ms)} (now puzzle {f.puzzle})")
    if not moved:
        return []
    return [f"changes which puzzle {len(moved)} finish call(s) made since the swap's time are for (the "
            f"puzzle on the table then): {', '.join(moved)}"]


def _replacing(comp: Competition, p: dict, now: int, presses: list[Press]) -> list[str]:
    """What giving an absent entrant's station to another would change: the
    absent entrant's time to come not up yet; the calls made on the station
    before it (they stay the absent entrant's, who becomes DNS) and after
    its time (a replacement recorded late: they become the new entrant's)."""
    out = []
    absent, entrant, window, start = p["absent"], p["entrant"], comp.format.no_show_after_ms, comp.start_ms
    at = p["at"] if p.get("at") is not None else now
    if window is not None and start is not None and at < start + window:
        out.append(f"gives {absent}'s station away before {absent}'s time to arrive is up ({fmt_duration(window)} "
                   f"after the start, at {fmt_clock(start + window)}: the format's entrants.no_show_after): "
                   f"{absent} may still come")
    stations = {(s.board, s.button) for s in comp.stations if s.entrant == absent}
    theirs = [f for f in presses if f.entrant == absent]
    moved = [f for f in theirs if f.at_ms >= at and comp.station_of(f.press_id) in stations]
    stay = [f for f in theirs if f not in moved]
    def ids(fs: list[Press]) -> str:
        return ", ".join(comp.short_press_id(f.press_id) for f in fs)
    if stay:
        out.append(f"marks {absent}, who has recorded finish calls ({ids(stay)}), as not started: none "
                   f"of them is ranked for {entrant}")
    if moved:
        out.append(f"gives {entrant} the finish calls made on the station since {fmt_clock(at)} ({ids(moved)})")
    return out
