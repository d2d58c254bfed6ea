"""A board's events in the log: which board and install made one (`maker`),
the order it made them in (`event_key`, `board_order`) and their press ids.

A press id is "board/boot/seq" for the events of the first install of a
board id in the log (the install id made when a board is flashed), and
"board.N/boot/seq" for those of its N-th (a spare flashed with the same id:
its boot count starts at 1 again); operator presses are "op/<row id>".

What an operator reads aloud and types is the short form, "board-N": the
board's N-th press in this event's log (every install of the board id, in
the log's order, so a number never changes once given).  Both forms name
the same press wherever a press id is taken.
Pure."""

from __future__ import annotations

from .rows import RowKind, kind_of


def press_id(board: str, boot: int, seq: int) -> str:
    return f"{board}/{boot}/{seq}"


def short_press_id(board: str, n: int) -> str:
    """The short form of the board's n-th press in the log: "T07-5"."""
    return f"{board}-{n}"


def install_press_id(installs: dict[str, list[str]], board: str, install: str, boot: int, seq: int) -> str:
    """The press id of an install's (boot, seq): the board's first
    install in the log gets plain "board/boot/seq", its N-th
    "board.N/boot/seq" (installs are numbered as their events first
    appear in the log: `installs`, board -> its installs in that order,
    is kept up to date)."""
    order = installs.setdefault(board, [])
    if install not in order:
        order.append(install)
    n = order.index(install)
    return press_id(board if n == 0 else f"{board}.{n + 1}", boot, seq)


def event_key(row: dict) -> tuple[int, int] | None:
    """(boot, seq) of a board event, the order the board (the install
    of it: maker) made them in."""
    kind = kind_of(row)
    if not kind.from_board or kind in (RowKind.BOARD_STATUS, RowKind.BOARD_CONFIG, RowKind.BOARD_FW):
        return None
    p = row["payload"]
    return (p["boot"], p["seq"])


def maker(row: dict) -> tuple[str, str]:
    """(board, install) that made a board event."""
    return (row["board"], row["payload"].get("in") or "")


def board_order(rows: list[dict]) -> list[dict]:
    """The log with each board's events in the order the board made them
    (by boot and sequence number, per install), each in one of its own
    events' slots: what the log would be had no event waited for a
    retransmission.  Operator actions and status messages keep their
    places."""
    slots: dict[tuple[str, str], list[int]] = {}
    for i, row in enumerate(rows):
        if event_key(row) is not None:
            slots.setdefault(maker(row), []).append(i)
    out = list(rows)
    for idx in slots.values():
        for i, row in zip(idx, sorted((rows[i] for i in idx), key=event_key)):  # type: ignore[arg-type, return-value]
            out[i] = row
    return out
