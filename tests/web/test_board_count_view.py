"""What a table's page says of the short presses at a call (issue 45, item
3): the competitor's repeat calls (never a missing piece) and the referee's
count at the board, which the board's confirm will record, shown before it
is recorded; a press before the call (an earlier puzzle's) is not this
call's."""

from __future__ import annotations

from tabletimer.hub.event.fold.competition import Competition
from tabletimer.hub.event.folder.event_folder import Station
from tabletimer.hub.rules.formats import load_format
from tabletimer.hub.rules.standings import Entrant
from tabletimer.hub.web.table_view import table_view

S = 1_800_000_000_000


def test_the_page_shows_repeat_calls_and_the_boards_count():
    comp = Competition(load_format("czjpa-individuals"), [Entrant("1", "Anna")],
                       [Station("B1", 1, "Table 1", "1", 1)])
    rows = [{"source": "operator", "type": "round_start", "payload": {"at": S, "warnings": [], "who": "desk"}}]

    def board(type_: str, at: int, **more) -> None:
        seq = len(rows)
        rows.append({"source": "board", "type": type_, "board": "B1",
                     "payload": dict({"type": type_, "station": 1, "at": at, "boot": 1, "seq": seq}, **more)})

    board("stray", S - 60_000, state="idle")                  # before the round: no part of the call
    board("press", S + 600_000)
    board("stray", S + 602_000, state="called")                # the competitor, nervous
    board("stray", S + 640_000, state="called", missing=1)     # the referee's count
    board("stray", S + 641_000, state="called", missing=2)
    for i, row in enumerate(rows, 1):
        comp.apply(dict(row, id=i, received_ms=S))
    (st,) = table_view(comp, "Table 1", S + 650_000)["stations"]
    assert st["state"] == "called" and st["at_board"] == {"repeats": 1, "missing": 2}
