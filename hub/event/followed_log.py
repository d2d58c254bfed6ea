"""The event log as another process reads it while the hub writes it (the
hall's pages, web/hall_process.py): what HubService needs of an EventStore,
read-only.  Rows are read from the hub's SQLite file (WAL: a reader never
waits for the hub's writes, nor the hub for it); nothing is ever written."""

from __future__ import annotations

from pathlib import Path

from .store import SCHEMA_VERSION, EventStore, schema_version


class ReadOnlyLog(PermissionError):
    """A write to a followed log: only the hub writes its log."""


class FollowedLog:
    def __init__(self, path: str | Path) -> None:
        """FileNotFoundError if there is no log at path (a reader must not
        make one)."""
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"no event log at {path}")
        # EventStore only reads a log at the current schema version (an older
        # one it migrates: a write); the hub that writes it has migrated it
        version = schema_version(path)
        if version != SCHEMA_VERSION:
            raise ReadOnlyLog(f"{path} is at schema version {version}, not {SCHEMA_VERSION}: "
                              "the hub has not opened it yet")
        self._store = EventStore(path)
        self.path = self._store.path
        self.event_id = self._store.event_id

    def events(self, after: int = 0) -> list[dict]:
        return self._store.events(after)

    def append(self, *args, **kwargs) -> dict:
        raise ReadOnlyLog(f"{self.path} is followed here, not written: only the hub writes it")

    append_board_event = reserve = transaction = append

    def close(self) -> None:
        self._store.close()
