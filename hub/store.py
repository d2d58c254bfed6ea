"""Append-only SQLite event store: the hub's source of truth.

Every input is a row in `events`, committed (WAL, synchronous=FULL) before
the hub acknowledges it.  Board events are unique by (board, boot, seq), so a
retransmitted event is recognised and only re-acknowledged.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path

SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    received_ms INTEGER NOT NULL,
    source      TEXT    NOT NULL,   -- 'board' | 'operator' | 'hub'
    type        TEXT    NOT NULL,   -- protocol type or operator action
    board       TEXT,
    boot        INTEGER,
    seq         INTEGER,
    payload     TEXT    NOT NULL,   -- the message as JSON
    UNIQUE (board, boot, seq)
);
"""


class EventStore:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.executescript(SCHEMA)

    def append_board_event(self, board: str, msg: dict, received_ms: int) -> dict | None:
        """Store a board event; returns the stored row, or None if (board,
        boot, seq) is already stored (a retransmission)."""
        with self._lock:
            cur = self._db.execute(
                "INSERT OR IGNORE INTO events (received_ms, source, type, board, boot, seq, payload)"
                " VALUES (?, 'board', ?, ?, ?, ?, ?)",
                (received_ms, msg["type"], board, msg["boot"], msg["seq"], json.dumps(msg)))
            if cur.rowcount == 0:
                return None
            return self._row(cur.lastrowid, received_ms, "board", msg["type"], board, msg)

    def append(self, source: str, type_: str, payload: dict, received_ms: int,
               board: str | None = None) -> dict:
        """Store any other input (status message, operator action, ...)."""
        with self._lock:
            cur = self._db.execute(
                "INSERT INTO events (received_ms, source, type, board, payload) VALUES (?, ?, ?, ?, ?)",
                (received_ms, source, type_, board, json.dumps(payload)))
            return self._row(cur.lastrowid, received_ms, source, type_, board, payload)

    def events(self, after: int = 0) -> list[dict]:
        """Stored rows in log order (those with id > after)."""
        with self._lock:
            rows = self._db.execute(
                "SELECT id, received_ms, source, type, board, payload FROM events WHERE id > ? ORDER BY id",
                (after,)).fetchall()
        return [self._row(i, r, s, t, b, json.loads(p)) for i, r, s, t, b, p in rows]

    def reserve(self, name: str, count: int, floor: int = 0) -> int:
        """Reserve `count` numbers of the counter `name` (in the table
        `counters`, beside the log), above every number reserved before, by
        any process in any run, and above floor; committed before it returns,
        so they may be used at once.  Returns the first of them."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.execute("CREATE TABLE IF NOT EXISTS counters"
                                 " (name TEXT PRIMARY KEY, reserved INTEGER NOT NULL)")
                row = self._db.execute("SELECT reserved FROM counters WHERE name = ?", (name,)).fetchone()
                first = max(row[0] if row else 0, floor) + 1
                self._db.execute("INSERT INTO counters (name, reserved) VALUES (?, ?) ON CONFLICT (name)"
                                 " DO UPDATE SET reserved = excluded.reserved", (name, first + count - 1))
                self._db.execute("COMMIT")
            except BaseException:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise
        return first

    @staticmethod
    def _row(id_, received_ms, source, type_, board, payload) -> dict:
        return {"id": id_, "received_ms": received_ms, "source": source, "type": type_,
                "board": board, "payload": payload}

    def close(self) -> None:
        with self._lock:
            self._db.close()
