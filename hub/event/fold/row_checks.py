"""What the fold of the log (competition.py) checks of a stored row before
it folds it: whether the row can be folded at all (`row_problem`: its frame,
and an operator action's shape; `start_problem`: a round start the boards'
schedule cannot carry), whether a board press's time can be a finish
(`press_problem`), and whether a board row is the hall check's
(`check_end`, `in_check`: between the check's beginning and the round's
start).  Pure.

A board press is a finish only when its time is plausible: within
PRESS_PAST_MS before to PRESS_FUTURE_MS after the hub's clock when it
arrived, and, once the round has a start, within the round (start to end,
give or take ROUND_MARGIN_MS: `round_window`)."""

from __future__ import annotations

from ..log.action_rows import DAY_MS, MAX_MS, shape_problem
from ..log.rows import RowKind, kind_of
from .conflict_book import intent_conflict_problem
from ..time.time_base import clock_row_problem
from ...rules.format_model import MAX_ROTATIONS, MAX_ROUND_MS, Format
from ...rules.formats import fmt_duration

# how far from the hub's clock an operator's time may lie (a start armed for
# tomorrow, a finish recorded by hand after the round: yes; a mistyped year: no)
PLAUSIBLE_MS = 7 * 86_400_000
# a board press's time against the hub's clock when it arrived (it may come
# long after it happened -- a hub or WiFi outage -- never from the future)
PRESS_PAST_MS = PLAUSIBLE_MS
PRESS_FUTURE_MS = 10 * 60_000
ROUND_MARGIN_MS = 3_600_000       # ... and against the round, start to end, give or take this


def row_problem(row: dict) -> str | None:
    """Why a stored row cannot be folded (None: it can).  Operator rows
    are checked against their action's shape (an older version, or
    another program writing the log, may have let a bad one through);
    board rows were checked against the protocol before they were
    stored, so only their frame is checked here."""
    try:
        if not isinstance(row.get("id"), int) or not isinstance(row.get("payload"), dict):
            return "not a row of this log (no id or payload)"
        kind = kind_of(row)
        if kind.from_operator:
            return shape_problem(row.get("type"), row["payload"])
        if kind is RowKind.HUB_INTENT_CONFLICT:
            return intent_conflict_problem(row["payload"])
        if kind is RowKind.HUB_CLOCK:
            return clock_row_problem(row["payload"])
        if kind.from_board:
            return _board_row_problem(kind, row["type"], row["payload"])
        if kind is RowKind.HUB_CONFLICT and "msg" in row["payload"]:
            m = row["payload"]["msg"]        # the message sent again with other content, as sent
            why = (_board_row_problem(kind_of({"source": "board", "type": m["type"]}), m["type"], m)
                   if isinstance(m, dict) and isinstance(m.get("type"), str) else "not a board message")
            return f"conflict: the message it keeps: {why}" if why else None
        return None
    except Exception as e:                   # the fold never raises: say what it was
        return f"unreadable row: {e!r}"


def _whole(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _board_row_problem(kind: RowKind, type_: str, p: dict) -> str | None:
    """A stored board message's frame (of this kind; type_: its type, in
    words), as the hub reads it back at start (the replay guard, the
    registry) and folds it."""
    if kind is RowKind.BOARD_FW:   # an answer to a firmware update (hub_protocol.FW_ANSWERS)
        if p.get("state") not in ("receiving", "at", "staged", "refused", "committed"):
            return "board fw: its state must be receiving, at, staged, refused or committed"
    elif kind is RowKind.BOARD_CONFIG:   # an answer to a settings command (hub_protocol.SETTINGS_ANSWERS)
        if p.get("state") not in ("staged", "refused", "committed"):
            return "board config: its state must be staged, refused or committed"
    elif kind is RowKind.BOARD_STATUS:
        if p.get("state") not in ("online", "offline") or not _whole(p.get("boot")):
            return "board status: its state must be online or offline, its boot a whole number"
        if p["state"] == "online" and not ("fw" in p and _whole(p.get("stations"))):
            return "board status online: its firmware and number of stations are missing"
    else:
        if not all(_whole(p.get(k)) for k in ("boot", "seq", "station")):
            return f"board {type_}: boot, seq and station must be whole numbers"
        if not isinstance(p.get("in", ""), str):
            return f"board {type_}: its install id must be text"
    if not all(_whole(p[k]) for k in ("bt", "ctr") if p.get(k) is not None):
        return f"board {type_}: its boot and counter (bt, ctr) must be whole numbers"
    if p.get("type") != type_:
        return f"board {type_}: its message says type {p.get('type')!r}"
    return None


def start_problem(fmt: Format, p: dict) -> str | None:
    """Why a round start (of the right shape: actions.py) cannot run as the
    boards' schedule carries it (None: it can): a limit within the formats'
    (MAX_ROUND_MS), an end -- the latest start offset added -- within what
    a board's clock and JSON carry (MAX_MS), and a relay's rotations within
    the limit and at most MAX_ROTATIONS of them.  Checked before a start is
    stored (action_checks.py); one found stored (an older version let it
    through) is flagged by the fold, never sent."""
    limit = p.get("duration") or fmt.time_limit_ms
    if limit > MAX_ROUND_MS:
        return f"round_start: a limit of {fmt_duration(limit)} is longer than {fmt_duration(MAX_ROUND_MS)}"
    late = DAY_MS if fmt.start_offsets and fmt.offset_extends_limit else 0    # the latest start offset
    if p["at"] + limit + late > MAX_MS:
        return (f"round_start: at = {p['at']} (hub ms) is past any board's clock: the round would end after "
                f"{MAX_MS} ms")
    relay = fmt.relay
    interval = relay.rotation_interval_ms if relay is not None else None
    if interval and interval >= limit:
        return (f"round_start: the relay rotates every {fmt_duration(interval)}: a limit of "
                f"{fmt_duration(limit)} is not longer")
    if interval and limit > interval * MAX_ROTATIONS:
        return (f"round_start: a limit of {fmt_duration(limit)} is more than {MAX_ROTATIONS} relay rotations "
                f"(every {fmt_duration(interval)}): at most {fmt_duration(interval * MAX_ROTATIONS)}")
    return None


def round_window(start_row: dict | None, offsets: dict[str, int], time_limit_ms: int) -> tuple[int, int] | None:
    """Board press times that can be finishes of this round: start to
    end (the latest start offset added), give or take ROUND_MARGIN_MS;
    None before a round start."""
    if start_row is None:
        return None
    p = start_row["payload"]
    start = p["at"]
    end = start + (p.get("duration") or time_limit_ms)
    late = max(0, *offsets.values()) if offsets else 0
    return (start - ROUND_MARGIN_MS, end + late + ROUND_MARGIN_MS)


def press_problem(row: dict, window: tuple[int, int] | None, start_row: dict | None,
                  shift_ms: int = 0) -> str | None:
    """Why a board press's time cannot be a finish (None: it can).  shift_ms:
    how far the hub's clock was off the round's time base when the row was
    stored (a clock row of the boards' correction: time_base.py)."""
    at, got = row["payload"]["at"], row.get("received_ms")
    if isinstance(got, int):
        got += shift_ms
        if at > got + PRESS_FUTURE_MS:
            return (f"its time is {(at - got) // 60_000} min after the hub's clock when it arrived "
                    f"(more than {PRESS_FUTURE_MS // 60_000} min)")
        if at < got - PRESS_PAST_MS:
            return f"its time is {(got - at) // 86_400_000} days before it arrived (more than 7)"
    w = window
    if w is not None and not w[0] <= at <= w[1]:
        start = start_row["payload"]["at"]      # type: ignore[index]
        off = at - start
        return (f"its time is {fmt_duration(abs(off))} {'before' if off < 0 else 'after'} the round's "
                f"start, outside the round (more than {ROUND_MARGIN_MS // 60_000} min before the start"
                f" or after the end)")
    return None


def check_end(check_row: dict, start_rows: list[dict]) -> int | None:
    """When a hall check begun by check_row ends by the round's start (hub
    ms; None: no start yet): the start instant of the first start that
    came to pass after the beginning -- the one armed then, or one recorded
    since -- and not one moved before it came (a new `round_start` stored
    before its instant replaces it).  A start recorded later than its own
    `at` ended the check at that `at` (never before the beginning).  Once
    the round has started, a start moved later (a restart) does not open
    the check again.  start_rows: the folded round starts, in log order."""
    began = check_row.get("received_ms") or 0
    i = next((k for k, r in enumerate(start_rows) if r["id"] > check_row["id"]), len(start_rows))
    effective = start_rows[max(0, i - 1):]     # the start armed at the beginning, then those since
    for k, r in enumerate(effective):
        at = r["payload"]["at"]
        since = max(began, r.get("received_ms") or 0)      # when this start became the one that counts
        replaced = effective[k + 1].get("received_ms") if k + 1 < len(effective) else None
        if replaced is None or max(since, at) < replaced:  # its instant came before another replaced it
            return max(began, at)
    return None


def in_check(row: dict, check_row: dict | None, end: int | None) -> bool:
    """A board row of the hall check: stored after its beginning, and
    both stored and (when timed) pressed before its end (check_end): a
    press at or after the round's start is a call, never the check's."""
    if check_row is None or row["id"] <= check_row["id"]:
        return False
    if end is None:
        return True
    p = row.get("payload")
    at = p.get("at") if isinstance(p, dict) else None
    return (row.get("received_ms") or 0) < end and not (isinstance(at, int) and at >= end)


def made_in_check(row: dict, check_row: dict | None, end: int | None) -> bool:
    """A board row made during the hall check: in_check, and (when timed)
    pressed at or after its beginning: a press kept in a journal from
    before the check, sent late, tested nothing of the check."""
    if not in_check(row, check_row, end):
        return False
    assert check_row is not None
    p = row.get("payload")
    at = p.get("at") if isinstance(p, dict) else None
    return not (isinstance(at, int) and at < (check_row.get("received_ms") or 0))
