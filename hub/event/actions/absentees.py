"""The entrants who did not come, decided in one step (issue 47, item 3):
after the round's start and the format's `entrants.no_show_after` (rule set
001: "may assign a spot to another participant if a competitor doesn't
arrive within 10 minutes after the round starts"), each entrant at a station
who is not checked in (fold/check_in.py) is made DNS, or its station is
given to another participant (the `replace` action, fold/replacements.py).
Pure: the plan of rows and its checks; `tabletimer absent` records them.

`plan` checks the whole step before anything is recorded: every row by the
action's own checks (action_checks.py) on the log as it is, and what one
row would do to the next (one participant given two stations, an entrant
both DNS and replaced); refused means nothing written.  A format without
`no_show_after` gives no station away; its absent entrants may be made DNS
from the start on."""

from __future__ import annotations

from dataclasses import dataclass

from ...rules.durations import fmt_duration
from ...rules.timetext import fmt_clock
from ..fold.competition import Competition
from .action_checks import check_action


@dataclass(frozen=True)
class Absent:
    entrant: str
    name: str
    table: str                # the table(s) of its station(s)


def absent_entrants(comp: Competition) -> list[Absent]:
    """The entrants at a station, not out, not checked in (in the list's order)."""
    s = comp.check_in_summary()
    names = {e.id: e.name for e in comp.entrants}
    tables: dict[str, list[str]] = {}
    for st in comp.stations:
        if st.table not in tables.setdefault(st.entrant, []):
            tables[st.entrant].append(st.table)
    return [Absent(e, names.get(e) or e, ", ".join(tables.get(e, []))) for e in s.absent]


def window_end(comp: Competition) -> int | None:
    """When the absent entrants' time to arrive is up (hub ms): the start
    plus the format's no_show_after (the start itself without one; None:
    no start yet)."""
    start = comp.start_ms
    if start is None:
        return None
    return start + (comp.format.no_show_after_ms or 0)


def plan(comp: Competition, now_ms: int, dns_all: bool, give: dict[str, str],
         force: bool = False) -> list[tuple[str, dict]]:
    """The rows that decide the absent entrants: a `replace` for each one
    in give (absent id -> a listed participant's id who takes the station),
    a `dns` for every other when dns_all.  ValueError, in an operator's
    words, unless every one of them may be recorded now (force: before the
    window is up)."""
    if not dns_all and not give:
        raise ValueError("absent: say what to do with them: --dns-all (each is DNS), --give ABSENT=ENTRANT "
                         "(the station goes to a listed participant), or both (--give first, DNS the rest)")
    start = comp.start_ms
    if start is None:
        raise ValueError("absent: the round has not started: an entrant is absent only after the start "
                         "(and the format's window); before it, check them in or change stations.csv")
    if not comp.check_in_summary().in_use:
        raise ValueError("absent: nobody is checked in in this round, so nobody is known to be absent: "
                         "check the entrants in first (the check-in page, the console's `k`, or "
                         "`tabletimer act DIR check_in entrant=ID`)")
    end = window_end(comp)
    window = comp.format.no_show_after_ms
    if end is not None and now_ms < end and not force:
        raise ValueError(f"absent: their time to arrive is not up yet: {fmt_duration(window or 0)} after the "
                         f"start, at {fmt_clock(end)} (the format's entrants.no_show_after); run it again "
                         "then, or add --force to decide now")
    absent = {a.entrant for a in absent_entrants(comp)}
    book = comp.call_book()
    rows: list[tuple[str, dict]] = []
    taken: dict[str, str] = {}
    for who, to in give.items():
        if who not in absent:
            raise ValueError(f"absent: {who!r} is not one of the absent entrants (checked in, out, or not at a "
                             "station): nothing was recorded; `tabletimer absent DIR` lists them")
        if to in taken:
            raise ValueError(f"absent: {to} cannot take both {taken[to]}'s and {who}'s stations: give each "
                             "to another participant")
        taken[to] = who
        rows.append(("replace", {"absent": who, "entrant": to}))
    if dns_all:
        rows += [("dns", {"entrant": a}) for a in sorted(absent - set(give), key=_order(comp))]
    for action, p in rows:
        eid = p.get("absent") or p["entrant"]
        calls = [comp.short_press_id(f.press_id) for f in book.presses() if f.entrant == eid]
        if calls:
            raise ValueError(f"absent: {eid} is not checked in but has finish calls ({', '.join(calls)}): "
                             f"{eid} is here after all; check {eid} in, then run it again")
        try:
            check_action(comp, action, p, now_ms)
        except ValueError as e:
            raise ValueError(f"absent: {eid}: {e}; nothing was recorded") from None
    return rows


def _order(comp: Competition):
    pos = {e.id: i for i, e in enumerate(comp.entrants)}
    return lambda eid: pos.get(eid, len(pos))
