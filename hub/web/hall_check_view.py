"""What the referees' calls page shows of a hall check while it runs
(fleet/hall_check.py), for the person walking the tables with a phone: the
hall's progress, then per table and board what is still missing -- the
buttons not pressed yet, by table name and button as the table card
names them (with the entrant seated there), and what is wrong with the
board itself (offline, its clock, its WiFi) in the check's own words.

Pure: a HallCheck (None: no check runs, and the page shows no section),
the round's stations and its entrants in, a JSON-able dict out.  Tables in
stations.csv order (the order the hall is laid out and walked); a board
that is ready, or a table whose boards all are, is not listed."""

from __future__ import annotations

from typing import Iterable

from ..fleet.hall_check import HallCheck


def hall_check_view(check: HallCheck | None, stations: Iterable, entrants: Iterable = ()) -> dict | None:
    """stations: the round's (board, button, table, entrant); entrants:
    (id, name), for the names beside the buttons."""
    if check is None or check.began_ms is None:
        return None
    names = {e.id: e.name or e.id for e in entrants}
    by_board = {b.board: b for b in check.boards}
    places: dict[tuple[str, str], dict[int, str]] = {}       # (table, board) -> button -> entrant
    for s in stations:
        places.setdefault((s.table, s.board), {}).setdefault(s.button, s.entrant)
    todo = []
    for (table, board), buttons in places.items():
        b = by_board.get(board)
        if b is None or b.ready:
            continue
        missing = [{"button": n, "entrant": buttons[n], "name": names.get(buttons[n], buttons[n])}
                   for n in sorted(buttons) if n in b.missing]
        problems = b.board_reasons
        if missing or problems:
            todo.append({"table": table, "board": board, "online": b.online, "buttons": missing,
                         "problems": problems})
    pressed, total = check.stations
    return {"began": check.began_ms, "ready": check.ready, "boards": len(check.boards),
            "boards_ready": check.boards_ready, "pressed": pressed, "buttons": total, "todo": todo}
