"""Batch provisioning's rules (`tabletimer boards provision`), without I/O:
which board id the next plugged board gets, what a board's flash already
says about it, and the event folder's provisioning record.

The record (DIR/provisioning.csv, one row appended per attempt) says which
id went to which install id, on which port, when, and whether it finished.
An id is handed out once: a row `done` (or `found`: a board flashed for this
event before, recognised by its key) takes it; a row `failed` does not.  So
a restarted command goes on with the next free id, and a re-plugged board
is recognised by the install id in its /config.json.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from typing import Callable

RECORD_NAME = "provisioning.csv"
COLUMNS = ("time", "board", "install", "port", "usb_serial", "result", "detail")
DONE, FOUND, FAILED = "done", "found", "failed"
TAKEN = (DONE, FOUND)              # the results that hand an id out


class ProvisionError(ValueError):
    """Bad input (an id that is not in stations.csv, ...): said, nothing done."""


@dataclass(frozen=True)
class Entry:
    time: str
    board: str
    install: str
    port: str
    usb_serial: str
    result: str
    detail: str = ""


def parse_record(text: str) -> tuple[list[Entry], list[str]]:
    """The record's rows, and a problem per row that does not read (a row
    cut short by a power loss, an edit): skipped, never a reason to stop."""
    entries, problems = [], []
    reader = csv.reader(io.StringIO(text))
    while True:
        try:
            row = next(reader, None)
        except csv.Error as e:           # a cell past the csv module's limit (128 KB): that row
            problems.append(f"{RECORD_NAME} line {reader.line_num}: not a provisioning row (skipped): {e}")
            continue
        if row is None:
            break
        n = reader.line_num
        if not row or (n == 1 and tuple(row) == COLUMNS):
            continue
        if len(row) != len(COLUMNS) or row[5] not in (DONE, FOUND, FAILED) or not row[1]:
            problems.append(f"{RECORD_NAME} line {n}: not a provisioning row (skipped): {','.join(row)[:80]}")
            continue
        entries.append(Entry(*row))
    return entries, problems


def record_text(entry: Entry, header: bool) -> str:
    """The CSV text appended for entry (with the header line if the record
    is new)."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    if header:
        w.writerow(COLUMNS)
    w.writerow([entry.time, entry.board, entry.install, entry.port, entry.usb_serial, entry.result,
                entry.detail])
    return out.getvalue()


def taken(entries: list[Entry]) -> dict[str, Entry]:
    """Each board id handed out, with the row that took it last."""
    return {e.board: e for e in entries if e.result in TAKEN}


def board_order(rounds: list[list[str]]) -> list[str]:
    """The boards of stations.csv (of every round, in order), each once, in
    the order they first appear."""
    order: list[str] = []
    for boards in rounds:
        for b in boards:
            if b not in order:
                order.append(b)
    return order


def parse_ids(values: list[str] | None) -> list[str]:
    """--only T01,T02 (repeatable) as ids."""
    return [i.strip() for v in values or [] for i in v.split(",") if i.strip()]


@dataclass
class Plan:
    """The ids still to hand out: the chosen one (--id) first, then those
    of stations.csv in order (only those of --only, if given), less those
    the record has taken."""
    order: list[str]
    done: set[str] = field(default_factory=set)
    only: list[str] | None = None
    chosen: str | None = None

    def __post_init__(self) -> None:
        known = set(self.order)
        unknown = [i for i in (self.only or []) + ([self.chosen] if self.chosen else []) if i not in known]
        if unknown:
            shown = ", ".join(self.order[:8]) + (", ..." if len(self.order) > 8 else "")
            raise ProvisionError(f"not a board of stations.csv: {', '.join(dict.fromkeys(unknown))} "
                                 f"(its boards: {shown or 'none'}); a board outside it: `tabletimer board "
                                 f"flash PORT --id ID`")
        if not self.order:
            raise ProvisionError("stations.csv names no board: fill it first (board,button,table,...)")

    def todo(self) -> list[str]:
        allowed = set(self.only) if self.only else None
        rest = [b for b in self.order if b not in self.done and b != self.chosen
                and (allowed is None or b in allowed)]
        return ([self.chosen] if self.chosen else []) + rest

    def next(self) -> str | None:
        todo = self.todo()
        return todo[0] if todo else None

    def mark_done(self, board: str) -> None:
        self.done.add(board)
        if self.chosen == board:
            self.chosen = None


# what a plugged board's /config.json says about it
NEW, RETRY, KNOWN, EVENTS, FOREIGN = "new", "retry", "known", "event's", "foreign"


@dataclass(frozen=True)
class Seen:
    kind: str
    board: str | None = None         # the id its configuration carries
    install: str | None = None
    entry: Entry | None = None       # the record's row for it


def recognise(cfg: dict | None, entries: list[Entry], event_boards: set[str],
              key_of: Callable[[str], str | None]) -> Seen:
    """What the board is, from its /config.json (None: it has none):
    NEW (nothing on it), RETRY (an attempt of this record that did not
    finish), KNOWN (provisioned by this record, still its id's board),
    EVENTS (flashed for this event otherwise: its key is the event's for its
    id), FOREIGN (anything else: another event's, an id given to a spare
    since)."""
    if cfg is None:
        return Seen(NEW)
    board, install = cfg.get("board"), cfg.get("install")
    board = board if isinstance(board, str) else None
    install = install if isinstance(install, str) else None
    last = taken(entries)
    if install and board in last and last[board].install == install:
        return Seen(KNOWN, board, install, last[board])
    tried = [e for e in entries if install and e.install == install and e.board == board]
    if tried and all(e.result == FAILED for e in tried):
        return Seen(RETRY, board, install, tried[-1])
    if board in event_boards and board not in last and cfg.get("key") and cfg.get("key") == key_of(board):
        return Seen(EVENTS, board, install)
    return Seen(FOREIGN, board, install, last.get(board) if board else None)


@dataclass(frozen=True)
class Decision:
    board: str | None                # the id to provision it with; None: nothing to write
    message: str                     # for the volunteer, when nothing is written
    record_found: bool = False       # add a `found` row (an event's board flashed before)


def decide(seen: Seen, plan: Plan, overwrite: bool) -> Decision:
    """What to do with the board seen: provision it with the next id, or
    leave it as it is and say why."""
    if seen.kind == KNOWN:
        e = seen.entry
        return Decision(None, f"this board is {seen.board} already (provisioned {e.time if e else '?'}, "
                              f"install {seen.install}): nothing to do; unplug it and plug the next")
    if seen.kind == EVENTS:
        return Decision(None, f"this board is {seen.board}, flashed for this event before (its key is the "
                              f"event's): recorded as {seen.board}, not changed; unplug it and plug the next",
                        record_found=True)
    if seen.kind == FOREIGN and not overwrite:
        what = f"board {seen.board}, install {seen.install}" if seen.board else "not this event's"
        since = (f"; {seen.board} is another board since {seen.entry.time} (install {seen.entry.install})"
                 if seen.entry else "")
        return Decision(None, f"it carries a configuration from elsewhere ({what}{since}): not changed. "
                              f"If it is from an earlier event or a spare to reuse, start again with "
                              f"--overwrite (it gets the next free id)")
    board = plan.next()
    if board is None:
        return Decision(None, "every board of the plan is provisioned: nothing to give it")
    return Decision(board, "")


def settings_lines(cfg: dict) -> list[str]:
    """What every board gets, for the plan printed at the start (no secret)."""
    wifi, broker, bz = cfg.get("wifi") or {}, cfg.get("broker") or {}, cfg.get("buzzer") or {}
    hosts = broker.get("host")
    hosts = ", ".join(hosts) if isinstance(hosts, list) else hosts
    lines = [f"WiFi:    {wifi.get('ssid')!r}" + (" (password set)" if wifi.get("password") else " (no password)"),
             f"broker:  {hosts} port {broker.get('port', 1883)}" + (" (TLS)" if broker.get("ca") else "")
             + (f", failover {broker['failover']} s" if broker.get("failover") is not None else ""),
             f"board:   buttons on GPIO {','.join(str(p) for p in cfg.get('buttons', []))}; buzzer "
             + (f"GPIO {bz['pin']} {bz.get('kind', 'passive')}" if "pin" in bz else "none")
             + (f"; LED GPIO {cfg['led']}" if cfg.get("led") is not None else "")]
    return lines


def summary(done: list[str], failed: list[str], remaining: list[str]) -> str:
    """The last line: done this session, failed attempts, what is left."""
    def ids(xs: list[str]) -> str:
        return (": " + ", ".join(xs[:12]) + (", ..." if len(xs) > 12 else "")) if xs else ""
    return (f"provisioned {len(done)}{ids(done)}; failed attempts {len(failed)}{ids(failed)}; "
            f"remaining {len(remaining)}{ids(remaining)}")
