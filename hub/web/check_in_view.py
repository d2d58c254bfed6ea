"""What the check-in page shows (issue 47, item 3), pure: every entrant of
the round (those at a station, then the reserves of the list), its table,
whether it is checked in (by whom, when) or out (DNS, DQ), and the count
"34 of 41 checked in" (event/fold/check_in.py).

The QR code a badge or a list carries for check-in is the page's address
with the entrant's id: `PUBLIC_URL/checkin?entrant=ID`
(outputs/check_in_list.py's `check_in_path`, which prints them):
a staff phone's camera opens the page with that entrant shown first; the
page's search box takes the same id (a scanner that types), or a name."""

from __future__ import annotations

from ..event.fold.competition import Competition


def check_in_view(comp: Competition, now: int) -> dict:
    s = comp.check_in_summary()
    book = comp.call_book()
    tables: dict[str, list[str]] = {}
    for st in comp.stations:
        if st.table not in tables.setdefault(st.entrant, []):
            tables[st.entrant].append(st.table)
    seated = [e for e in comp.entrants if e.id in tables]
    others = [e for e in comp.entrants if e.id not in tables]
    rows = []
    for e in seated + others:
        c = comp.check_in_of(e.id)
        here = c is not None and c.present
        rows.append({"id": e.id, "name": e.name or e.id, "members": [m.name for m in e.members],
                     "table": ", ".join(tables.get(e.id, [])), "present": here or e.id in s.present,
                     "by": c.who if here and c is not None else None,
                     "at": c.at_ms if here and c is not None else None,
                     "out": book.out(e.id), "reserve": e.id not in tables})
    return {"now": now, "text": s.text(), "present": len(s.present), "expected": len(s.expected),
            "reserves_here": len(s.reserves), "started": comp.start_ms is not None and now >= comp.start_ms,
            "entrants": rows}
