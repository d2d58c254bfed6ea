"""The event log as another process reads it while the hub writes it (the
hall's pages, web/hall_process.py): what HubService needs of an EventStore,
read-only.  Rows are read from the hub's SQLite file (WAL: a reader never
waits for the hub's writes, nor the hub for it); nothing is ever written.

A round that has not started may have no log yet (the hall's pages show
any round of the event): `FollowedLog(path, wait=True)` reads nothing
until the log is there, and `look()` opens it once it is."""

from __future__ import annotations

from pathlib import Path

from .store import SCHEMA_VERSION, EventStore, schema_version


class ReadOnlyLog(PermissionError):
    """A write to a followed log: only the hub writes its log."""


class FollowedLog:
    def __init__(self, path: str | Path, wait: bool = False) -> None:
        """FileNotFoundError if there is no log at path (a reader must not
        make one); wait: none, the log is read once it is there (look)."""
        self.path = Path(path)
        self._store: EventStore | None = None
        self.event_id: int | None = None
        self._open(wait)

    def _open(self, wait: bool) -> bool:
        if not self.path.is_file():
            if wait:
                return False
            raise FileNotFoundError(f"no event log at {self.path}")
        # EventStore only reads a log at the current schema version (an older
        # one it migrates: a write); the hub that writes it has migrated it
        version = schema_version(self.path)
        if version != SCHEMA_VERSION:
            if wait and version == 0:            # being made (a hub or `act` this instant)
                return False
            raise ReadOnlyLog(f"{self.path} is at schema version {version}, not {SCHEMA_VERSION}: "
                              "the hub has not opened it yet")
        self._store = EventStore(self.path)
        self.path = self._store.path
        self.event_id = self._store.event_id
        return True

    @property
    def there(self) -> bool:
        """The log is open (False: a wait=True log not made yet)."""
        return self._store is not None

    def look(self) -> bool:
        """Open the log if it is there now (FollowedLog(wait=True)); whether it is open."""
        return self.there or self._open(wait=True)

    def events(self, after: int = 0) -> list[dict]:
        return self._store.events(after) if self._store is not None else []

    def append(self, *args, **kwargs) -> dict:
        raise ReadOnlyLog(f"{self.path} is followed here, not written: only the hub writes it")

    append_board_event = reserve = transaction = append

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
