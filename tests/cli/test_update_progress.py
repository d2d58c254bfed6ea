"""`boards update`'s view of the hall (hub/cli/board_firmware.py): its
progress as a whole from the boards' states, drawn as a Rich bar on a
terminal with the boards' lines above it, and as a text bar line per tenth
off one."""

from __future__ import annotations

import io

from rich.console import Console

from tabletimer.hub.cli.board_firmware import BoardUpdate, ProgressShown, hall_progress, text_bar


def _states(**kw: tuple[str, int]) -> dict[str, BoardUpdate]:
    return {b: BoardUpdate(b, n, "1.1", state=st, pct=pct) for n, (b, (st, pct)) in enumerate(kw.items())}


def test_the_halls_progress_counts_what_each_board_received_and_every_final_board_whole() -> None:
    assert hall_progress(_states(A=("sent", 0), B=("sent", 0))) == (0, "0/2 done: 2 sent")
    pct, counts = hall_progress(_states(A=("receiving", 40), B=("staged", 0), C=("failed", 0), D=("sent", 0)))
    assert pct == (36 + 90 + 100 + 0) // 4           # the transfer 90 % of a board's share
    assert counts == "1/4 done: 1 staged, 1 receiving, 1 sent, 1 failed"
    assert hall_progress(_states(A=("committed", 0), B=("rolled back", 0)))[0] == 100
    assert hall_progress(_states(A=("on trial", 0)))[0] == 95
    assert text_bar(0, 10) == "[..........]" and text_bar(55, 10) == "[#####.....]" and text_bar(100, 4) == "[####]"


def test_off_a_terminal_a_bar_line_is_printed_at_each_tenth_and_where_it_ended(capsys) -> None:
    shown = ProgressShown()                      # pytest's stdout is no terminal
    for pct in (0, 3, 9, 10, 14, 55, 100):
        shown.show(pct, f"at {pct}")
    shown.show(100, "all done")                  # the same tenth: not at once...
    assert capsys.readouterr().out.splitlines()[-1] == "hall [" + "#" * 30 + "] 100 %  at 100"
    shown.close()                                # ...but where it ended, at the end
    assert capsys.readouterr().out.splitlines() == ["hall [" + "#" * 30 + "] 100 %  all done"]
    again = ProgressShown()
    again.show(20, "x")
    again.close()                                # said already: not twice
    assert capsys.readouterr().out.splitlines() == ["hall [######........................]  20 %  x"]


def test_on_a_terminal_the_bar_stays_under_the_boards_lines() -> None:
    out = io.StringIO()
    shown = ProgressShown(Console(file=out, force_terminal=True, width=100))
    shown.show(40, "1/3 done: 1 committed, 2 receiving")
    shown.line("B2: committed")
    shown.show(70, "2/3 done: 2 committed, 1 receiving")
    shown.close()
    text = out.getvalue()
    assert "B2: committed" in text and "70 %" in text and "2/3 done: 2 committed" in text
    assert text.rindex("70 %") > text.index("B2: committed")       # drawn again below the line
