"""What kind of row a stored log row is: every (source, type) the log holds
as one member of `RowKind`, read from a row by `kind_of` -- the one place that
reads a row's source and type strings; every other module branches on the kind.

A row of a kind this version does not know (a type a later version writes, a
garbled source) is not refused: it is `BOARD_UNKNOWN`, `OPERATOR_UNKNOWN`,
`HUB_UNKNOWN` or `UNREADABLE`, which the fold flags (row_checks.py) and the
event goes on -- an event log must always load, old logs and new.

The rows stay the store's dicts (id, received_ms, source, type, board,
install, boot, seq, payload: log_rows.COLUMNS), as they travel to the remote
console, the standby's copy and the pages; their kind is this module's.
Board event types are the wire protocol's (shared/protocol.py,
hub/protocol/hub_protocol.py): a message on the wire is not a row and is
read there."""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum
from typing import Literal

Source = Literal["board", "operator", "hub"]
SOURCES: tuple[Source, ...] = ("board", "operator", "hub")


class RowKind(Enum):
    # board events (as stored from the board's message)
    BOARD_PRESS = ("board", "press")
    BOARD_CONFIRM = ("board", "confirm")
    BOARD_VOID = ("board", "void")
    BOARD_STRAY = ("board", "stray")
    BOARD_STATUS = ("board", "status")
    BOARD_CONFIG = ("board", "config")          # a board's answer to a settings command
    BOARD_FW = ("board", "fw")                  # a firmware update's progress, from the board
    BOARD_UNKNOWN = ("board", None)
    # operator actions (action_rows.FIELDS: each action's fields)
    OP_ROUND_START = ("operator", "round_start")
    OP_PRESS = ("operator", "press")
    OP_CONFIRM = ("operator", "confirm")
    OP_VOID = ("operator", "void")
    OP_CORRECT = ("operator", "correct")
    OP_COUNT = ("operator", "count")
    OP_START_OFFSET = ("operator", "start_offset")
    OP_SWAP = ("operator", "swap")
    OP_DNS = ("operator", "dns")
    OP_DQ = ("operator", "dq")
    OP_REINSTATE = ("operator", "reinstate")
    OP_REPLACE = ("operator", "replace")
    OP_CHECK_IN = ("operator", "check_in")      # an entrant at the door, or that undone (fold/check_in.py)
    OP_IDENTIFY = ("operator", "identify")
    OP_RESET_BOARD = ("operator", "reset_board")
    OP_RESOLVE = ("operator", "resolve")
    OP_HALL_CHECK = ("operator", "hall_check")
    OP_SETTINGS = ("operator", "settings")
    OP_FIRMWARE = ("operator", "firmware")
    OP_DRAW = ("operator", "draw")              # the team draw before the start (cli/draw.py): no fact
    OP_SEAT = ("operator", "seat")              # the seating before the start (cli/draw.py): no fact
    OP_AGREE = ("operator", "agree")            # the competitor saw and agreed to a time or count (official.py)
    OP_OFFICIAL = ("operator", "official")      # the round's results made official
    OP_REOPEN = ("operator", "reopen")          # ... and reopened, saying why
    OP_ADVANCE = ("operator", "advance")        # a round's entrants from earlier rounds (cli/advance.py)
    OPERATOR_UNKNOWN = ("operator", None)
    # the hub's own rows
    HUB_CONFLICT = ("hub", "conflict")          # a board event's identity sent again, other content (store.py)
    HUB_INTENT_CONFLICT = ("hub", "intent_conflict")    # an intent made on a stale state (conflict_book.py)
    HUB_CLOCK = ("hub", "clock")                # the hub's time base (time_base.py)
    HUB_FW = ("hub", "fw")                      # a firmware update the hub gave up (fleet/firmware_update.py)
    HUB_TAKEOVER = ("hub", "takeover")          # a standby took over (cli/takeover.py)
    HUB_STANDBY_LOST = ("hub", "standby_lost")  # the split-brain book (core/split_brain.py)
    HUB_STANDBY_BACK = ("hub", "standby_back")
    HUB_SPLIT = ("hub", "split")
    HUB_REDONE = ("hub", "redone")
    HUB_FENCED = ("hub", "fenced")
    HUB_UNKNOWN = ("hub", None)
    # no source of the three (a garbled row): never folded
    UNREADABLE = (None, None)

    def __init__(self, source: Source | None, type_: str | None) -> None:
        # plain attributes, read in the fold's every step (an enum property is slower)
        self.source: Source | None = source
        self.type: str | None = type_           # the type string stored (None: an unknown kind)
        self.known = type_ is not None
        self.from_board = source == "board"
        self.from_operator = source == "operator"
        self.from_hub = source == "hub"


_BY_PAIR: dict[tuple[str, str], RowKind] = {k.value: k for k in RowKind if k.known}
_UNKNOWN: dict[str, RowKind] = {"board": RowKind.BOARD_UNKNOWN, "operator": RowKind.OPERATOR_UNKNOWN,
                                "hub": RowKind.HUB_UNKNOWN}

# board events with a station (the wire's event types: press, confirm, void, stray)
BOARD_EVENTS = frozenset({RowKind.BOARD_PRESS, RowKind.BOARD_CONFIRM, RowKind.BOARD_VOID, RowKind.BOARD_STRAY})
# a board's decision on a call
BOARD_DECISIONS = frozenset({RowKind.BOARD_CONFIRM, RowKind.BOARD_VOID})
# the firmware update's rows, the board's and the hub's
FW_ROWS = frozenset({RowKind.BOARD_FW, RowKind.HUB_FW})


def kind_of(row: Mapping) -> RowKind:
    """The kind of a stored row (any mapping with source and type; never
    raises: a row this version cannot place is one of the unknown kinds)."""
    try:
        return _BY_PAIR[row["source"], row["type"]]       # (a stored row of a known kind)
    except (KeyError, TypeError):
        pass
    source, type_ = row.get("source"), row.get("type")
    if not isinstance(source, str) or source not in _UNKNOWN:
        return RowKind.UNREADABLE
    if not isinstance(type_, str):
        return _UNKNOWN[source]
    return _BY_PAIR.get((source, type_), _UNKNOWN[source])


def operator_kind(action: str) -> RowKind:
    """The kind of the row an operator action is stored as
    (OPERATOR_UNKNOWN: no such action)."""
    return _BY_PAIR.get(("operator", action), RowKind.OPERATOR_UNKNOWN)
