"""A damaged event log checked, and what of it can be read recovered:
`tabletimer log check DIR` and `tabletimer log recover DIR`
(docs/operations.md, "A damaged event log").

check() reads the log without writing it: every row read one by one
(log_rows.scan), SQLite's own PRAGMA integrity_check, the event id and the
hub's counters.  recover() keeps the damaged file as it was (copied, with its
-wal, to events.sqlite.damaged-YYYYmmdd-HHMMSS beside it), copies every
readable row into a new log made as EventStore makes one, under the same row
ids (a `seen` or a conflict's `of` names a row by its id), with the same
event id and counters, and its id sequence above every id the damaged log
gave (a lost row's id is never given to another row); the new log is checked
(opened by EventStore, every row read back) before it takes the log's
place.  The caller holds the hub's lock on the log (no hub writes it)."""

from __future__ import annotations

import os
import shutil
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import log_rows
from .log_rows import COLUMNS, Damaged, Scan
from .store import COUNTERS, EventStore


class NothingReadable(RuntimeError):
    """recover(): not one row of the log reads: nothing was changed."""


@dataclass
class Health:
    path: Path
    files: list[tuple[Path, int]]            # the log's files (itself, -wal, -shm) and their sizes
    scan: Scan
    problems: list[str]                      # PRAGMA integrity_check's, when it is not "ok"
    meta: dict[str, str] | None              # None: unreadable
    counters: dict[str, int] | None          # None: unreadable ({}: none yet)
    version: int | None                      # PRAGMA user_version (None: unreadable)

    @property
    def sound(self) -> bool:
        return self.scan.sound and not self.problems and self.meta is not None and self.counters is not None

    def lost(self) -> list[Damaged]:
        """The rows that cannot be recovered, damaged ones and the ids
        missing among them (a damaged log only: a sound one's gaps are ids
        never used)."""
        if self.sound:
            return []
        out = [d for d in self.scan.damaged if d.id is not None]
        missing = self.scan.missing()
        unnamed = []
        for d in self.scan.damaged:
            if d.id is None:            # a row whose id does not read: most likely the next id missing
                nxt = next((i for i in missing if i > d.after), None)
                if nxt is None:
                    unnamed.append(d)
                else:
                    missing.remove(nxt)
                    out.append(Damaged(nxt, d.what, d.after, d.seen))
        out += [Damaged(i, "is not in the file (lost with the damage, or an id never used)", i - 1)
                for i in missing]
        out.sort(key=lambda d: d.id or 0)
        return out + unnamed

    def event_id(self) -> int | None:
        value = (self.meta or {}).get("event_id")
        return int(value) if isinstance(value, str) and value.isdigit() else None


@dataclass
class Recovery:
    health: Health
    kept: list[int]                          # the ids copied, unchanged
    damaged_files: list[Path] = field(default_factory=list)   # the damaged log kept, as it was
    new_event_id: bool = False               # the old one was unreadable: the new log has a new one


def _connect(path: Path) -> sqlite3.Connection:
    """The log at path read-only: never created, never written, its -wal
    read and left as it is (a read-write connection would fold it into
    the file when it closes)."""
    return sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, isolation_level=None)


def log_files(path: Path) -> list[Path]:
    """The log's files: itself and, when they exist, its -wal and -shm."""
    return [p for p in (path, Path(f"{path}-wal"), Path(f"{path}-shm")) if p == path or p.exists()]


def _read(db: sqlite3.Connection, path: Path, files: list[tuple[Path, int]]) -> Health:
    def rows(sql: str) -> list[tuple] | None:
        try:
            return db.execute(sql).fetchall()
        except sqlite3.OperationalError as e:
            return [] if "no such table" in str(e) else None
        except sqlite3.DatabaseError:
            return None

    try:
        problems = [line for (text,) in db.execute("PRAGMA integrity_check(50)") for line in str(text).splitlines()
                    if line.strip() and not line.startswith("*** in database")]
    except sqlite3.DatabaseError as e:
        problems = [str(e)]
    if problems == ["ok"]:
        problems = []
    version = rows("PRAGMA user_version")
    meta = rows("SELECT key, value FROM meta")
    counters = rows("SELECT name, reserved FROM counters")
    return Health(path, files, log_rows.scan(db), problems,
                  None if meta is None else {k: v for k, v in meta if isinstance(k, str) and isinstance(v, str)},
                  None if counters is None else {k: v for k, v in counters if isinstance(k, str) and type(v) is int},
                  version[0][0] if version else None)


def check(path: str | Path) -> Health:
    """The log at path read whole, row by row, without writing it
    (FileNotFoundError: no log there)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no event log at {path}")
    files = [(p, p.stat().st_size) for p in log_files(path)]
    db = _connect(path)
    try:
        return _read(db, path, files)
    finally:
        db.close()


def _free(name: Path) -> Path:
    n = 1
    found = name
    while found.exists() or Path(f"{found}-wal").exists():
        n += 1
        found = name.with_name(f"{name.name}-{n}")
    return found


def _copy(src: Path, dst: Path) -> None:
    shutil.copyfile(src, dst)
    with open(dst, "rb+") as f:
        os.fsync(f.fileno())


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:                 # (not on Windows)
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def recover(path: str | Path, stamp: str | None = None) -> Recovery:
    """The log at path replaced by a new one holding every row of it that
    reads, the damaged one kept beside it (see the module's doc).
    NothingReadable: nothing was changed."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no event log at {path}")
    stamp = stamp or time.strftime("%Y%m%d-%H%M%S")
    kept = _free(path.with_name(f"{path.name}.damaged-{stamp}"))
    wal = Path(f"{path}-wal")
    copies = [(path, kept)] + ([(wal, Path(f"{kept}-wal"))] if wal.exists() and wal.stat().st_size else [])
    files = [(p, p.stat().st_size) for p in log_files(path)]
    for src, dst in copies:                  # the damaged log as it was, before SQLite opens it
        _copy(src, dst)
    db = _connect(path)
    try:
        health = _read(db, path, files)
    finally:
        db.close()
    if not health.scan.rows:
        for _, dst in copies:
            dst.unlink()
        raise NothingReadable(f"not one row of {path} can be read ({'; '.join(health.problems[:2]) or 'empty'})"
                              ": nothing was changed; put back your copy of the event folder")
    new = path.with_name(path.name + ".recovering")
    for p in (new, Path(f"{new}-wal"), Path(f"{new}-shm")):
        if p.exists():
            p.unlink()
    event_id = _write(new, health)
    for p in (wal, Path(f"{path}-shm")):     # never beside the new log: SQLite would read them into it
        if p.exists():
            p.unlink()
    os.replace(new, path)
    _fsync_dir(path.parent)
    return Recovery(health, sorted(health.scan.rows), [dst for _, dst in copies],
                    new_event_id=event_id != health.event_id())


def _write(new: Path, health: Health) -> int:
    """The new log at new: made by EventStore, the readable rows, event id
    and counters put in; read back whole.  Its event id.  A row that
    repeats another's board event identity (UNIQUE: damage made it so) is
    left out, and noted in health as damaged."""
    EventStore(new).close()                  # the schema, as the hub makes it
    db = sqlite3.connect(new, isolation_level=None)
    try:
        db.execute("BEGIN IMMEDIATE")
        if health.event_id() is not None:
            db.execute("UPDATE meta SET value = ? WHERE key = 'event_id'", (str(health.event_id()),))
        for k, v in (health.meta or {}).items():
            if k != "event_id":
                db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (k, v))
        insert = f"INSERT INTO events ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})"
        for i in sorted(health.scan.rows):
            try:
                db.execute(insert, health.scan.rows[i])
            except sqlite3.IntegrityError:
                raw = health.scan.rows.pop(i)
                health.scan.damaged.append(Damaged(i, "repeats an earlier row's board, boot and sequence "
                                                      "number", i - 1, {"source": raw[2], "type": raw[3]}))
        if health.counters:
            db.execute(COUNTERS)
            db.executemany("INSERT INTO counters (name, reserved) VALUES (?, ?)", health.counters.items())
        # the next row's id above every id the damaged log gave: a lost row's is never reused
        db.execute("DELETE FROM sqlite_sequence WHERE name = 'events'")
        db.execute("INSERT INTO sqlite_sequence (name, seq) VALUES ('events', ?)", (health.scan.highest,))
        db.execute("COMMIT")
    finally:
        db.close()
    store = EventStore(new)                  # read back as the hub will: quick_check, every row
    try:
        back = [r["id"] for r in store.events()]
        event_id = store.event_id
    finally:
        store.close()
    if back != sorted(health.scan.rows):
        raise RuntimeError(f"the recovered log {new} does not read back the rows written into it")
    db = sqlite3.connect(new, isolation_level=None)
    try:
        db.execute("PRAGMA journal_mode=DELETE")        # one file: no -wal to move with it
    finally:
        db.close()
    if Path(f"{new}-wal").exists():
        raise RuntimeError(f"the recovered log {new} keeps a -wal file: it was not moved into place")
    return event_id
