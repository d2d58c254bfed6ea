"""Append-only SQLite event store: the hub's source of truth.

Every input is a row in `events`, committed (WAL, synchronous=FULL) before
the hub acknowledges it.  Board events that arrive together share one
transaction (`transaction()`): one commit, one fsync, for all of them.  A
board event is identified by (board, install, boot, seq) -- install: the
id made when the board was flashed ('' for a
board without one), so a spare flashed with a dead board's id, whose boot
count starts again at 1, makes events of its own.  A retransmission (the
same identity, the same content) is recognised and only re-acknowledged;
the same identity with different content is a conflict: stored as a row of
its own (source 'hub', type 'conflict', the message as sent) for the
operator, never dropped.

Schema versions (PRAGMA user_version): 0/1 had UNIQUE (board, boot, seq)
and no install column; 2 adds it.  A log of an older version is migrated
when opened, in one transaction (the table rebuilt with the same rows, ids
and sequence): every row stays as it was, its install ''.

The log also holds the event's id (table meta): random, made when the log
is created (or first opened by this version), the same across hub
restarts and laptops for as long as the log is the same -- boards tell one
event's schedules from another's by it.

A damaged log (a cut payload, the file cut short, a garbage page) is
refused with DamagedLog, which names the file, its first damaged row and
what to do (`tabletimer log check` / `log recover`, log_repair.py): at open
(PRAGMA quick_check, which the ids' index and the file's pages must pass)
and by events() (a payload that does not decode, a page that does not read).
"""

from __future__ import annotations

import json
import secrets
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

from . import log_rows
from .log_health import DamagedLog

SCHEMA_VERSION = 2
MAX_EVENT_ID = (1 << 30) - 1        # a small int on the board (no heap object)

_EVENTS = """
CREATE TABLE IF NOT EXISTS {name} (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    received_ms INTEGER NOT NULL,
    source      TEXT    NOT NULL,   -- 'board' | 'operator' | 'hub'
    type        TEXT    NOT NULL,   -- protocol type or operator action ('conflict': source hub)
    board       TEXT,
    install     TEXT    NOT NULL DEFAULT '',   -- board events: the install id they were made under
    boot        INTEGER,
    seq         INTEGER,
    payload     TEXT    NOT NULL,   -- the message as JSON
    UNIQUE (board, install, boot, seq)
);
"""
SCHEMA = _EVENTS.format(name="events") + """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""
# the hub's counters beside the log (reserve), made when first used
COUNTERS = "CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, reserved INTEGER NOT NULL)"

# fields of a board message that change with every transmission (the
# envelope: counter, the sender's boot and install); the rest is the content
_ENVELOPE = ("ctr", "bt", "bi")

STORED, DUPLICATE, CONFLICT = "stored", "duplicate", "conflict"


def content(msg: dict) -> dict:
    """What a board event says, without its envelope (a retransmission has
    a new counter, and perhaps a newer boot and install)."""
    return {k: v for k, v in msg.items() if k not in _ENVELOPE}


def schema_version(path: str | Path) -> int:
    """The schema version of the log at path (PRAGMA user_version), read
    read-only: nothing is made, migrated or written."""
    db = sqlite3.connect(f"file:{Path(path)}?mode=ro", uri=True)
    try:
        (version,) = db.execute("PRAGMA user_version").fetchone()
    finally:
        db.close()
    return int(version)


class EventStore:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()      # re-entered by the appends inside transaction()
        self.transactions = 0                 # transaction()s committed (batches, counter blocks: the tests' count)
        existed = self.path.is_file() and self.path.stat().st_size > 0
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        try:
            self._open(existed)
        except BaseException as e:
            damaged = self._damaged(e) if log_rows.is_damage(e) else None
            self._db.close()
            if damaged is not None:
                raise damaged from None
            raise

    def _open(self, existed: bool) -> None:
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        if existed:
            problems = [line for (text,) in self._db.execute("PRAGMA quick_check(5)")
                        for line in str(text).splitlines() if line and not line.startswith("*** in database")]
            if problems != ["ok"]:
                more = f", and {len(problems) - 1} more" if len(problems) > 1 else ""
                raise self._damaged(None, f"PRAGMA quick_check: {problems[0] if problems else '?'}{more}")
        value = self._current_event_id()
        if value is None:
            # a new or older log: one process migrates, the others wait and
            # see it done (a current log is only read here, so that a log the
            # running hub is writing, or a read-only copy, opens for results)
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._migrate()
                self._db.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('event_id', ?)",
                                 (str(secrets.randbelow(MAX_EVENT_ID) + 1),))
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            value = self._current_event_id()
        self.event_id = int(cast(str, value))     # (written just now, or the log's)

    def _current_event_id(self) -> str | None:
        """The event id of a log at the current schema version, else None."""
        (version,) = self._db.execute("PRAGMA user_version").fetchone()
        if version != SCHEMA_VERSION:
            return None
        row = self._db.execute("SELECT value FROM meta WHERE key = 'event_id'").fetchone()
        return row[0] if row else None

    def _migrate(self) -> None:
        db = self._db
        cols = [r[1] for r in db.execute("PRAGMA table_info(events)")]
        if cols and "install" not in cols:
            # version 0/1: UNIQUE (board, boot, seq) cannot be altered; rebuild
            (seq,) = db.execute("SELECT coalesce(max(seq), 0) FROM sqlite_sequence "
                                "WHERE name = 'events'").fetchone()
            db.execute(_EVENTS.format(name="events_v2"))
            db.execute("INSERT INTO events_v2 (id, received_ms, source, type, board, install, boot, seq, payload)"
                       " SELECT id, received_ms, source, type, board, '', boot, seq, payload FROM events"
                       " ORDER BY id")
            db.execute("DROP TABLE events")
            db.execute("ALTER TABLE events_v2 RENAME TO events")
            db.execute("UPDATE sqlite_sequence SET seq = max(seq, ?) WHERE name = 'events'", (seq,))
        for stmt in SCHEMA.split(";"):
            if stmt.strip():
                db.execute(stmt)
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """The appends made inside share one transaction: committed (one
        fsync) when the block ends, rolled back whole if it raises -- a
        commit that fails (a full disk) leaves none of them stored.  Other
        threads' writes wait for the commit; reads of other connections see
        the rows only once it is done."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield
                self._db.execute("COMMIT")
                self.transactions += 1
            except BaseException:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise

    def append_board_event(self, board: str, msg: dict, received_ms: int) -> tuple[str, dict | None]:
        """Store a board event.  Returns (STORED, the row); (DUPLICATE, None)
        if its identity is stored with the same content (a retransmission),
        or the same conflicting content already is; (CONFLICT, the row) if
        its identity is stored with other content: the message is stored as
        a conflict row (source 'hub', type 'conflict', payload {"of": the
        stored row's id, "msg": the message as sent})."""
        install = msg.get("in") or ""
        with self._lock:
            # (not INSERT OR IGNORE: an ignored insert uses up a row id all the same)
            stored = self._db.execute(
                "SELECT id, payload FROM events WHERE board = ? AND install = ? AND boot = ? AND seq = ?",
                (board, install, msg["boot"], msg["seq"])).fetchone()
            if stored is None:
                cur = self._db.execute(
                    "INSERT INTO events (received_ms, source, type, board, install, boot, seq, payload)"
                    " VALUES (?, 'board', ?, ?, ?, ?, ?, ?)",
                    (received_ms, msg["type"], board, install, msg["boot"], msg["seq"], json.dumps(msg)))
                return STORED, self._row(cur.lastrowid, received_ms, "board", msg["type"], board, msg)
            first_id, first = stored
            said = content(msg)
            if content(json.loads(first)) == said:
                return DUPLICATE, None
            for (p,) in self._db.execute("SELECT payload FROM events WHERE source = 'hub' AND type = 'conflict'"
                                         " AND board = ?", (board,)):
                p = json.loads(p)
                if p.get("of") == first_id and content(p.get("msg") or {}) == said:
                    return DUPLICATE, None          # this conflict is stored (and was alerted) already
            payload = {"of": first_id, "msg": msg}
            cur = self._db.execute(
                "INSERT INTO events (received_ms, source, type, board, payload) VALUES (?, 'hub', 'conflict', ?, ?)",
                (received_ms, board, json.dumps(payload)))
            return CONFLICT, self._row(cur.lastrowid, received_ms, "hub", "conflict", board, payload)

    def append(self, source: str, type_: str, payload: dict, received_ms: int,
               board: str | None = None) -> dict:
        """Store any other input (status message, operator action, ...)."""
        with self._lock:
            cur = self._db.execute(
                "INSERT INTO events (received_ms, source, type, board, payload) VALUES (?, ?, ?, ?, ?)",
                (received_ms, source, type_, board, json.dumps(payload)))
            return self._row(cur.lastrowid, received_ms, source, type_, board, payload)

    def last_id(self) -> int:
        """The id of the log's last row (0: none)."""
        with self._lock:
            (last,) = self._db.execute("SELECT coalesce(max(id), 0) FROM events").fetchone()
        return int(last)

    def copy_rows(self, rows: list[dict], event_id: Any) -> int:     # (the primary's word: checked)
        """A standby's write (replica.py): rows of the primary's log, stored
        as they are there (their ids, times and payloads), after the last one
        here, in one transaction; the log takes the primary's event id while
        it has no row.  ValueError (nothing stored) when they do not follow on
        from this log (replica.continuation_problem says why)."""
        from .replica import continuation_problem, stored_columns

        with self._lock:
            problem = continuation_problem(self.last_id(), self.event_id, event_id, rows)
            if problem:
                raise ValueError(problem)
            with self.transaction():
                if self.last_id() == 0 and self.event_id != event_id:
                    self._db.execute("UPDATE meta SET value = ? WHERE key = 'event_id'", (str(event_id),))
                    self.event_id = event_id
                self._db.executemany(
                    "INSERT INTO events (id, received_ms, source, type, board, install, boot, seq, payload)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", [stored_columns(r) for r in rows])
        return len(rows)

    def events(self, after: int = 0) -> list[dict]:
        """Stored rows in log order (those with id > after)."""
        return self._select("id > ?", (after,))

    def events_of(self, source: str, type_: str) -> list[dict]:
        """The stored rows of one kind (source, type), in log order."""
        return self._select("source = ? AND type = ?", (source, type_))

    def _select(self, where: str, args: tuple) -> list[dict]:
        with self._lock:
            try:
                rows = self._db.execute(
                    f"SELECT id, received_ms, source, type, board, payload FROM events WHERE {where} ORDER BY id",
                    args).fetchall()
            except sqlite3.DatabaseError as e:
                if log_rows.is_damage(e):
                    raise self._damaged(e) from None
                raise
        out = []
        for i, r, s, t, b, p in rows:
            if type(i) is not int or type(r) is not int or type(s) is not str or type(t) is not str:
                raise self._damaged(None)           # a blank row: a damaged page's cells
            try:
                out.append(self._row(i, r, s, t, b, json.loads(p)))
            except (TypeError, ValueError):         # a payload cut short, garbled or blank
                raise self._damaged(None) from None
        return out

    def _damaged(self, err: BaseException | None, detail: str = "") -> DamagedLog:
        """The log is damaged: the error that says so, naming its first
        damaged row (the log read row by row) and how many rows read whole
        before it."""
        detail = detail or (str(err) if err is not None else "")
        try:
            with self._lock:
                found = log_rows.scan(self._db)
        except sqlite3.Error:
            return DamagedLog(self.path, None, detail)
        first = found.first_damage()
        if first is None:
            return DamagedLog(self.path, None, detail, readable=len(found.rows))
        return DamagedLog(self.path, first.name(), first.what, readable=found.readable_before(first),
                          detail=detail)

    def reserve(self, name: str, count: int, floor: int = 0) -> int:
        """Reserve `count` numbers of the counter `name` (in the table
        `counters`, beside the log), above every number reserved before, by
        any process in any run, and above floor; committed before it returns,
        so they may be used at once.  Returns the first of them."""
        with self.transaction():
            self._db.execute(COUNTERS)
            row = self._db.execute("SELECT reserved FROM counters WHERE name = ?", (name,)).fetchone()
            first = max(row[0] if row else 0, floor) + 1
            self._db.execute("INSERT INTO counters (name, reserved) VALUES (?, ?) ON CONFLICT (name)"
                             " DO UPDATE SET reserved = excluded.reserved", (name, first + count - 1))
        return first

    def reserved(self, name: str) -> int:
        """The highest number of the counter `name` reserved so far (0: none)."""
        with self._lock:
            self._db.execute(COUNTERS)
            row = self._db.execute("SELECT reserved FROM counters WHERE name = ?", (name,)).fetchone()
        return int(row[0]) if row else 0

    def refuse_writes(self, refuse: bool = True) -> None:
        """The log taken read-only (refuse) or writable again: every write
        is then refused by SQLite itself ("attempt to write a readonly
        database"), as when the disk under it is remounted read-only.  For
        the drills and tests of the failed-write path: the alert, nothing
        acknowledged, the boards' retries stored once the log takes writes
        again.  The running hub never calls it."""
        with self._lock:
            self._db.execute(f"PRAGMA query_only = {1 if refuse else 0}")

    @staticmethod
    def _row(id_, received_ms, source, type_, board, payload) -> dict:
        return {"id": id_, "received_ms": received_ms, "source": source, "type": type_,
                "board": board, "payload": payload}

    def close(self) -> None:
        with self._lock:
            self._db.close()
