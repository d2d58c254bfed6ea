"""The event log's rows read one by one, for a log that may be damaged: which
rows can be read whole, and what is wrong with the others (store.py names the
first of them when it refuses a damaged log; log_repair.py checks a log and
copies its readable rows into a new one).

A damaged SQLite file shows in three ways, each seen on a real log: a row
whose payload is no longer JSON (cut short: the text reads, it does not
decode); cells that read as blanks (the file cut short: the last page's
cells are zeros, rows with id 0 and NULL columns); a page that cannot be read
at all (garbage: sqlite3 raises "database disk image is malformed" when a
scan reaches it).  A scan in id order stops at such a page; the rows after
it are found again by looking each id up (a lookup descends the tree to its
own leaf, round the damaged one), and the scan goes on from the first found.

A row whose JSON decodes but whose content the fold cannot use (a status
without its state, a payload that is a list) is not damage: the fold flags
it (row_checks.py) and the event goes on."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field

COLUMNS = ("id", "received_ms", "source", "type", "board", "install", "boot", "seq", "payload")
GARBLED = 1_000_000         # an id this far beyond the log's last is a garbled one, not a row's


def _select(db: sqlite3.Connection) -> str:
    """COLUMNS from events; a log of schema version 0/1 has no install ('')."""
    try:
        have = {r[1] for r in db.execute("PRAGMA table_info(events)")}
    except sqlite3.DatabaseError:
        have = set(COLUMNS)
    cols = ["'' AS install" if c == "install" and have and c not in have else c for c in COLUMNS]
    return f"SELECT {', '.join(cols)} FROM events"


def is_damage(err: BaseException) -> bool:
    """Whether a sqlite3 error says the file is damaged (corrupt, or not a
    database at all), as opposed to a full disk, a lock, permissions."""
    if not isinstance(err, sqlite3.DatabaseError):
        return False
    name = getattr(err, "sqlite_errorname", "") or ""
    if name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")):
        return True
    text = str(err).lower()
    return "malformed" in text or "not a database" in text


def payload_damage(payload: object) -> str | None:
    """What is wrong with a stored payload's text (None: it decodes)."""
    if not isinstance(payload, str):
        return "its payload is blank (NULL)" if payload is None else f"its payload is not text ({type(payload).__name__})"
    try:
        json.loads(payload)
    except json.JSONDecodeError as e:
        return (f"its payload is cut or garbled: {len(payload)} characters that are not JSON "
                f"({e.msg}: character {e.pos})")
    except ValueError as e:
        return f"its payload is cut or garbled: {len(payload)} characters that are not JSON ({e})"
    return None


def row_damage(raw: tuple) -> str | None:
    """What is wrong with a stored row (COLUMNS' values) that the log's
    schema would never have let in (None: nothing)."""
    id_, received_ms, source, type_, board, install, boot, seq, payload = raw
    if type(id_) is not int or id_ <= 0:
        return "its id is unreadable"
    if type(received_ms) is not int:
        return "its time of arrival is blank"
    if not isinstance(source, str) or not isinstance(type_, str):
        return "its source or type is blank"
    if not (board is None or isinstance(board, str)) or not isinstance(install, str):
        return "its board is garbled"
    if not all(v is None or type(v) is int for v in (boot, seq)):
        return "its boot or sequence number is garbled"
    return payload_damage(payload)


@dataclass
class Damaged:
    """A row that cannot be read whole: its id (None: unreadable too, after
    is the last good id before it), what is wrong, and what of it could be
    read (source, type, board, received_ms: to tell the operator what it was)."""
    id: int | None
    what: str
    after: int = 0
    seen: dict = field(default_factory=dict)

    def name(self) -> str:
        return f"row #{self.id}" if self.id is not None else f"a row after #{self.after}"


@dataclass
class Scan:
    rows: dict[int, tuple] = field(default_factory=dict)       # id -> COLUMNS' values, readable whole
    damaged: list[Damaged] = field(default_factory=list)
    stops: list[str] = field(default_factory=list)             # sqlite's words for what stopped a read
    last_id: int | None = None       # the highest id the log has given (sqlite_sequence), None: unreadable

    @property
    def highest(self) -> int:
        """The highest id the log has given or holds."""
        return max([self.last_id or 0, *self.rows, *(d.id for d in self.damaged if d.id is not None)])

    def missing(self) -> list[int]:
        """Ids up to the highest that are neither read nor damaged (a
        damaged page's rows, rows whose ids read as blanks, or ids never
        used: an ignored insert of an older version used one up)."""
        held = set(self.rows) | {d.id for d in self.damaged if d.id is not None}
        return [i for i in range(1, self.highest + 1) if i not in held]

    def first_damage(self) -> Damaged | None:
        """The first damaged row in id order (rows with no id by the row
        they follow); missing ids count only when something is damaged."""
        known = sorted(self.damaged, key=lambda d: d.id if d.id is not None else d.after + 0.5)
        first = known[0] if known else None
        if self.stops or first is not None:
            gone = self.missing()
            if gone and (first is None or gone[0] < (first.id if first.id is not None else first.after + 0.5)):
                return Damaged(gone[0], "is not in the file (its page is damaged)", gone[0] - 1)
        return first

    def readable_before(self, first: Damaged) -> int:
        """How many rows read whole before a damaged one."""
        below = first.id if first.id is not None else first.after + 1
        return sum(1 for i in self.rows if i < below)

    @property
    def sound(self) -> bool:
        return not self.damaged and not self.stops


def decoded(raw: tuple) -> dict:
    """A readable row (COLUMNS' values) as EventStore.events() gives it."""
    id_, received_ms, source, type_, board, _install, _boot, _seq, payload = raw
    return {"id": id_, "received_ms": received_ms, "source": source, "type": type_,
            "board": board, "payload": json.loads(payload)}


def _seen(raw: tuple) -> dict:
    """What a damaged row's other columns say, if they read."""
    names = ("source", "type", "board", "received_ms")
    values = (raw[2], raw[3], raw[4], raw[1])
    return {k: v for k, v in zip(names, values) if isinstance(v, (str, int)) and not isinstance(v, bool)}


def scan(db: sqlite3.Connection) -> Scan:
    """Every row of the log's events table that can be read, and what is
    wrong with the others.  Reads only."""
    out = Scan()
    try:
        row = db.execute("SELECT seq FROM sqlite_sequence WHERE name = 'events'").fetchone()
        out.last_id = row[0] if row and type(row[0]) is int and row[0] >= 0 else None
    except sqlite3.DatabaseError as e:
        out.stops.append(f"the log's count of rows: {e}")
    top = None
    try:
        (top,) = db.execute("SELECT max(id) FROM events").fetchone()
        top = top if type(top) is int and top >= 0 else None
    except sqlite3.DatabaseError as e:
        out.stops.append(f"the log's last row: {e}")
    if out.last_id is not None and top is not None and abs(out.last_id - top) > GARBLED:
        out.stops.append(f"the log's count of rows (#{out.last_id}) and its last row (#{top}) disagree")
        out.last_id = top = min(out.last_id, top)        # the larger is garbage
    bound = max(out.last_id or 0, top or 0)
    pos = 0                                     # every id up to it is handled
    select = _select(db)

    def take(raw: tuple) -> int | None:
        """A row read: kept, or noted damaged; its id if it is one."""
        what = row_damage(raw)
        id_ = raw[0]
        if type(id_) is int and bound and id_ > bound + GARBLED:
            what = f"its id is garbled (#{id_}, beyond the log's last #{bound})"
            id_ = None
        if type(id_) is not int or id_ <= 0 or id_ in out.rows:
            if all(v is None or v == "" for v in raw[1:]):     # (install: its default '')
                what = "reads as blanks (its page is cut short or zeroed: the end of the file is missing?)"
            elif id_ in out.rows:
                what = f"repeats row #{id_}'s id"
            out.damaged.append(Damaged(None, what or "its id is unreadable", pos, _seen(raw)))
            return None
        if what is None:
            out.rows[id_] = raw
        else:
            out.damaged.append(Damaged(id_, what, pos, _seen(raw)))
        return id_

    while True:
        try:
            for raw in db.execute(select + " WHERE id > ? ORDER BY id", (pos,)):
                id_ = take(raw)
                if id_ is not None:
                    pos = max(pos, id_)
            break                                # the end of the table
        except sqlite3.DatabaseError as e:
            out.stops.append(f"after row #{pos}: {e}")
        # round the damage: each id looked up, until one is found
        found = False
        while pos < bound and not found:
            pos += 1
            try:
                raw = db.execute(select + " WHERE id = ?", (pos,)).fetchone()
            except sqlite3.DatabaseError as e:
                out.damaged.append(Damaged(pos, f"its page does not read ({e})", pos - 1))
                continue
            if raw is not None:
                take(raw)
                found = True
        if not found:
            break
    return out
