"""The event log: the append-only SQLite store, its rows read one by one, its health and
repair, a standby's copy, and the shapes of the rows operators and boards write."""
