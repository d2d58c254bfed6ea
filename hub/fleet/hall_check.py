"""The hall check before a round: is every table ready?  Pure: given the
round's stations, what the hub knows of each board (registry.py: its birth
message, its last clock error) and the board rows stored since the check
began, a verdict per board and for the hall, with the reasons in words the
person walking the tables acts on.

A board is ready when it is online, every one of its stations in
stations.csv has been pressed since the check began (a press at a station
not running is the check's: no call, no stray), its clock error (the bound
its last press carried) is within the limit, and its WiFi signal (from its
birth message) is not below the limit.  Its firmware version, free heap and
uptime are shown; an older firmware than the hub's is a note, not a
reason (it still times correctly).

A check runs from its beginning to its verdict or the round's start,
whichever comes first: a press at or after the start is a call, never the
check's (event/fold/row_checks.py: `in_check`), and a check the start ended says
so.  `latest_check` and `running_check` read the check from the fold (the
service calls them under its lock)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Mapping

from ..rules.timetext import fmt_clock
from ..event.log.rows import BOARD_EVENTS, RowKind, kind_of

CLOCK_LIMIT_MS = 50        # a board's clock error bound above this: not ready (docs/operations.md)
RSSI_MIN_DBM = -80         # a WiFi signal below this: not ready
LOW_HEAP = 8192            # free heap below this at birth: a note
# flash free below this at birth: not ready.  A journal entry is a file of
# 250-300 bytes, and on LittleFS (4 KB blocks) a file can take a block:
# 256 KB is about 60 of them, a round's presses and calls at a busy table
LOW_FLASH = 256 * 1024


@dataclass
class BoardCheck:
    board: str
    stations: list[int]                       # its buttons in stations.csv
    pressed: list[int]                        # those pressed since the check began
    online: bool = False
    fw: str | None = None
    rssi: int | None = None
    mem: int | None = None
    clock_err_ms: int | None = None           # from its latest press of the check (None: untimed or none)
    reasons: list[str] = field(default_factory=list)   # why it is not ready (empty: ready)
    notes: list[str] = field(default_factory=list)
    flash_free: int | None = None             # bytes, at its start
    journal: int | None = None                # entries in its journal at its start

    @property
    def ready(self) -> bool:
        return not self.reasons

    @property
    def missing(self) -> list[int]:
        """Its buttons not pressed yet."""
        return [n for n in self.stations if n not in self.pressed]

    @property
    def board_reasons(self) -> list[str]:
        """Why it is not ready but its buttons not pressed (those: missing):
        offline, its clock, its WiFi."""
        buttons = buttons_reason(self.missing) if self.missing else None
        return [r for r in self.reasons if r != buttons]


@dataclass
class HallCheck:
    began_ms: int | None                      # the check's beginning (hub ms); None: none begun
    boards: list[BoardCheck]
    # the round's start, when it ended the check (before any verdict): the check as it stood then
    ended_by_start_ms: int | None = None

    @property
    def ready(self) -> bool:
        return self.began_ms is not None and all(b.ready for b in self.boards)

    @property
    def stations(self) -> tuple[int, int]:
        """(pressed, all) over the hall."""
        return (sum(len(b.pressed) for b in self.boards), sum(len(b.stations) for b in self.boards))

    @property
    def boards_ready(self) -> int:
        return sum(1 for b in self.boards if b.ready)

    def progress(self) -> str:
        """"3/5 boards ready, 7/9 buttons pressed"."""
        pressed, total = self.stations
        return f"{self.boards_ready}/{len(self.boards)} boards ready, {pressed}/{total} buttons pressed"


def check_hall(stations: Iterable, boards: Mapping, rows: Iterable[dict], began_ms: int | None,
               hub_fw: str | None = None, clock_limit_ms: int = CLOCK_LIMIT_MS,
               rssi_min: int = RSSI_MIN_DBM, ended_by_start_ms: int | None = None) -> HallCheck:
    """stations: the round's (board, button); boards: board id -> BoardInfo
    (registry.py); rows: the board rows of the check (stored since it
    began, before the round's start), in order; hub_fw: the firmware
    version `board flash` writes; ended_by_start_ms: the round's start,
    when it ended the check."""
    buttons: dict[str, set[int]] = {}
    for s in stations:
        buttons.setdefault(s.board, set()).add(s.button)
    pressed: dict[str, set[int]] = {b: set() for b in buttons}
    err: dict[str, int | None] = {}
    for row in rows:
        if kind_of(row) not in BOARD_EVENTS or row.get("board") not in buttons:
            continue
        p = row["payload"]
        if p.get("station") in buttons[row["board"]]:
            pressed[row["board"]].add(p["station"])
        err[row["board"]] = p.get("err") if p.get("at") is not None else None
    out = []
    for b in sorted(buttons):
        info = boards.get(b)
        c = BoardCheck(b, sorted(buttons[b]), sorted(pressed[b]))
        if info is not None:
            c.online, c.fw, c.rssi, c.mem = info.online, info.fw, info.rssi, info.mem_free
            c.flash_free, c.journal = info.flash_free, info.journal
        c.clock_err_ms = err.get(b)
        _judge(c, b in err, hub_fw, clock_limit_ms, rssi_min)
        out.append(c)
    return HallCheck(began_ms, out, ended_by_start_ms)


def latest_check(comp, boards: Mapping, now_ms: int, hub_fw: str | None = None,
                 clock_limit_ms: int = CLOCK_LIMIT_MS, rssi_min: int = RSSI_MIN_DBM) -> HallCheck:
    """The latest hall check as the fold (comp: competition.py) and the
    boards (registry.py) make it at now_ms; one the round's start ended
    (before its verdict) as it stood then, saying so (ended_by_start_ms)."""
    begun = comp.hall_check_row()
    rows = _rows_after(comp, begun["id"]) if begun is not None else []
    check = _checked(comp, boards, begun, rows, hub_fw, clock_limit_ms, rssi_min)
    end = comp.hall_check_end_ms()
    if end is not None and now_ms >= end and not any(
            kind_of(r) is RowKind.OP_HALL_CHECK and r["received_ms"] < end for r in rows):
        check.ended_by_start_ms = end
    return check


def running_check(comp, boards: Mapping, now_ms: int, hub_fw: str | None = None,
                  clock_limit_ms: int = CLOCK_LIMIT_MS, rssi_min: int = RSSI_MIN_DBM) -> HallCheck | None:
    """The hall check while it runs (begun, its verdict not given, the
    round not started), as latest_check; None when none runs.  Cheap when
    none does: the fold knows the latest beginning and the start, and only
    the rows after the beginning are read (from the last)."""
    begun, end = comp.hall_check_row(), comp.hall_check_end_ms()
    if begun is None or (end is not None and now_ms >= end):
        return None                       # none begun, or the round's start ended it
    rows = _rows_after(comp, begun["id"])
    if any(kind_of(r) is RowKind.OP_HALL_CHECK for r in rows):
        return None                       # its verdict is given (a later beginning would be the latest)
    return _checked(comp, boards, begun, rows, hub_fw, clock_limit_ms, rssi_min)


def _rows_after(comp, row_id: int) -> list[dict]:
    """The folded rows after row_id, in log order (read from the last)."""
    out = []
    for row in reversed(comp.rows):
        if row["id"] <= row_id:
            break
        out.append(row)
    out.reverse()
    return out


def _checked(comp, boards: Mapping, begun: dict | None, rows: list[dict], hub_fw: str | None,
             clock_limit_ms: int, rssi_min: int) -> HallCheck:
    if begun is not None:           # the limits the check began with (check-hall's), for every view of it
        clock_limit_ms = begun["payload"].get("clock_limit", clock_limit_ms)
        rssi_min = begun["payload"].get("rssi_min", rssi_min)
    # a row that cannot apply (flagged: another event's press, sent from a journal) tested nothing
    checked = [r for r in rows if comp.in_hall_check(r) and r["id"] not in comp.flagged]
    return check_hall(comp.stations, boards, checked, begun["received_ms"] if begun is not None else None,
                      hub_fw, clock_limit_ms, rssi_min)


def _judge(c: BoardCheck, heard: bool, hub_fw: str | None, clock_limit_ms: int, rssi_min: int) -> None:
    if not c.online:
        c.reasons.append("offline: power it on, check its WiFi (it has never been heard)" if c.fw is None
                         else "offline: check its power and WiFi")
    if c.missing:
        c.reasons.append(buttons_reason(c.missing))
    if heard and c.clock_err_ms is None:
        c.reasons.append("no clock: its last press had no time (not synchronised with the hub yet)")
    elif c.clock_err_ms is not None and c.clock_err_ms > clock_limit_ms:
        c.reasons.append(f"clock error ±{c.clock_err_ms} ms, over ±{clock_limit_ms} ms: a slow or busy "
                         "WiFi link; move the access point or the board, then press again")
    if c.rssi is not None and c.rssi < rssi_min:
        c.reasons.append(f"WiFi signal {c.rssi} dBm, below {rssi_min} dBm: move the board or the "
                         "access point closer")
    if c.fw is not None and hub_fw is not None and _version(c.fw) < _version(hub_fw):
        c.notes.append(f"firmware {c.fw}, older than this hub's {hub_fw}: it works; "
                       "`tabletimer board flash` brings it up to date")
    if c.mem is not None and c.mem < LOW_HEAP:
        c.notes.append(f"free heap {c.mem} bytes at its start, low")
    if c.flash_free is not None and c.flash_free < LOW_FLASH:
        c.reasons.append(f"flash nearly full ({c.flash_free // 1024} KB free): its journal could not "
                         "keep a round's presses; flash it again (`tabletimer board flash`)")
    if c.journal:
        c.notes.append(f"{c.journal} entries in its journal at its start (not acknowledged yet, or kept "
                       "after a round for a hub that takes over): it sends them to this hub")


def ended_by_start(start_ms: int) -> str:
    """What the operator reads of a check the round's start ended."""
    return (f"the check ended at the round's start ({fmt_clock(start_ms)}): presses from then on are calls, "
            "not the check's")


def buttons_reason(missing: list[int]) -> str:
    """The reason a board is not ready while these buttons are not pressed."""
    return f"button{'s' if len(missing) > 1 else ''} {', '.join(map(str, missing))} not pressed yet: press each once"


def _version(text: str) -> tuple:
    parts = []
    for x in text.split("."):
        parts.append(int(x) if x.isdigit() else 0)
    return tuple(parts)


def checklist(check: HallCheck, title: str = "") -> str:
    """The check as a checklist: the hall's verdict, then a line per board
    (its reasons, its notes)."""
    if check.began_ms is None:
        return "no hall check begun"
    head = f"{title + ': ' if title else ''}hall {'READY' if check.ready else 'NOT READY'}: {check.progress()}"
    lines = [head]
    if check.ended_by_start_ms is not None:
        lines.append(ended_by_start(check.ended_by_start_ms))
    for b in check.boards:
        facts = [f"fw {b.fw or '?'}", f"WiFi {b.rssi} dBm" if b.rssi is not None else "WiFi ?",
                 f"clock ±{b.clock_err_ms} ms" if b.clock_err_ms is not None else "clock ?",
                 f"heap {b.mem // 1024} KB" if b.mem is not None else "heap ?",
                 f"flash {b.flash_free // 1024} KB free" if b.flash_free is not None else "flash ?",
                 f"journal {b.journal}" if b.journal is not None else "journal ?",
                 f"buttons {len(b.pressed)}/{len(b.stations)}"]
        lines.append(f"[{'x' if b.ready else ' '}] {b.board}: {'ready' if b.ready else 'NOT READY'} "
                     f"({', '.join(facts)})")
        lines += [f"      - {r}" for r in b.reasons]
        lines += [f"      note: {n}" for n in b.notes]
    return "\n".join(lines)
