"""The public site's outbox (issue 49): the files rendered by public_site.py
waiting for the remote, bounded, and the thread that sends them.  The hub
never waits on it: `put` only replaces entries under a lock.

- Latest wins: one entry per path, the newest bytes; a file whose bytes are
  the ones last published is not sent again (`put(..., force=True)`:
  `publish --all`, everything again).
- Bounded: at most MAX_FILES paths wait; a new path beyond them is dropped
  and counted (the status says so; `publish --all` sends everything again).
- Every attempt sends every waiting file, as one batch (`send`: the
  remote's runner, rclone_remote.py), JSON first and index.html last, so a
  page never names a file the remote does not have yet.  A failed batch
  stays waiting (newer versions replace its files meanwhile) and is tried
  again after BACKOFF_S[n] (1, 2, 4, then every 5 s): within about 5 s of
  the link's return the newest state is out (a try costs one rclone run:
  120 in a 10-minute outage).
- `status()`: "published 10:42:05 (v123) · internet down since 10:40 · 3
  files waiting", the line the console, the calls page and `publish
  --status` show.

The sender and the clocks are given: pure but for the lock; OutboxThread
runs it."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from datetime import datetime
from typing import Callable

MAX_FILES = 2000
BACKOFF_S = (1.0, 2.0, 4.0, 5.0)    # at most 5 s: the "within seconds" (30 s took 22.9 s once)
UNREACHABLE = "unreachable"


class PublishFailed(Exception):
    """A batch the remote did not take; kind: unreachable | unknown remote |
    login refused | remote full | failed; the text says it in an organizer's words."""

    def __init__(self, kind: str, text: str) -> None:
        super().__init__(text)
        self.kind = kind


def order(path: str) -> tuple[int, str]:
    """JSON first, pages next, the event's index last."""
    return (2 if path == "index.html" else 0 if path.endswith(".json") else 1, path)


def hhmmss(wall_s: float, seconds: bool = True) -> str:
    return datetime.fromtimestamp(wall_s).strftime("%H:%M:%S" if seconds else "%H:%M")


@dataclass(frozen=True)
class OutboxStatus:
    published_at: float | None       # wall clock of the last batch taken
    version: int | None              # its version
    waiting: int                     # files waiting
    failing_since: float | None      # wall clock of the first failure since the last success
    kind: str | None                 # PublishFailed.kind of the last failure
    problem: str | None              # its text
    dropped: int = 0                 # files dropped by the bound
    sending: bool = False
    taken_put: int = 0               # the last put (Outbox.last_put) whose files the remote has, all of them

    @property
    def ok(self) -> bool:
        return self.problem is None and self.dropped == 0

    def line(self) -> str:
        parts = [f"published {hhmmss(self.published_at)} (v{self.version})" if self.published_at is not None
                 else "not published yet"]
        if self.problem is not None and self.failing_since is not None:
            since = hhmmss(self.failing_since, seconds=False)
            parts.append(f"internet down since {since}" if self.kind == UNREACHABLE
                         else f"{self.problem} (since {since})")
        if self.waiting:
            parts.append(f"{self.waiting} file{'s' if self.waiting != 1 else ''} waiting")
        if self.dropped:
            parts.append(f"{self.dropped} files dropped (outbox full): `tabletimer publish DIR --all`")
        return " · ".join(parts)


class Outbox:
    def __init__(self, send: Callable[[list[tuple[str, bytes]]], None], wall: Callable[[], float] = time.time,
                 monotonic: Callable[[], float] = time.monotonic, max_files: int = MAX_FILES,
                 backoff: tuple[float, ...] = BACKOFF_S) -> None:
        """send: the batch to the remote, or PublishFailed."""
        self.send = send
        self._wall, self._mono = wall, monotonic
        self.max_files, self.backoff = max_files, backoff
        self._lock = threading.Lock()
        self._waiting: dict[str, bytes] = {}
        self._version: int | None = None             # of the newest put
        self._published: dict[str, bytes] = {}       # path -> the bytes the remote has
        self._published_at: float | None = None
        self._published_version: int | None = None
        self._failures = 0
        self._failing_since: float | None = None
        self._kind: str | None = None
        self._problem: str | None = None
        self._next_try = 0.0                         # monotonic: not before
        self._dropped = 0
        self._sending = False
        self._puts = 0                               # puts so far
        self._taken_put = 0                          # the last put every file of which the remote has
        self.batches = 0                             # batches taken (for the benchmark)
        self.failed = 0                              # attempts refused or unanswered (for the benchmark)
        self.bytes_sent = 0

    def put(self, files: dict[str, bytes], version: int, force: bool = False) -> int:
        """The newest version of these files; how many wait now.  force: even
        those whose bytes the remote has (`publish --all`)."""
        with self._lock:
            for path, data in files.items():
                if not force and self._published.get(path) == data:
                    self._waiting.pop(path, None)        # an older version waiting is not sent
                    continue
                if path not in self._waiting and len(self._waiting) >= self.max_files:
                    self._dropped += 1
                    continue
                self._waiting[path] = data
            self._version = version
            self._puts += 1
            if force:
                self._dropped = 0
                self._next_try = 0.0                     # --all: at once, whatever the backoff
            return len(self._waiting)

    def last_put(self) -> int:
        """The number of the last put: once status().taken_put reaches it, the
        remote has every file of it (or newer bytes of them)."""
        with self._lock:
            return self._puts

    def due_in(self) -> float | None:
        """Seconds until the next attempt (0: now); None: nothing waits."""
        with self._lock:
            if not self._waiting:
                return None
            return max(0.0, self._next_try - self._mono())

    def send_once(self) -> bool:
        """One attempt: every waiting file in one batch.  True: taken (or
        nothing waited)."""
        with self._lock:
            batch = sorted(self._waiting.items(), key=lambda kv: order(kv[0]))
            version, puts = self._version, self._puts
            self._sending = True
        if not batch:
            with self._lock:
                self._sending = False
                self._taken_put = max(self._taken_put, puts)
            return True
        try:
            self.send(batch)
        except PublishFailed as e:
            with self._lock:
                self._sending = False
                self._failures += 1
                self.failed += 1
                if self._failing_since is None:
                    self._failing_since = self._wall()
                self._kind, self._problem = e.kind, str(e)
                self._next_try = self._mono() + self.backoff[min(self._failures, len(self.backoff)) - 1]
            return False
        with self._lock:
            self._sending = False
            for path, data in batch:
                self._published[path] = data
                if self._waiting.get(path) is data:      # not replaced meanwhile
                    del self._waiting[path]
            self._published_at, self._published_version = self._wall(), version
            self._taken_put = max(self._taken_put, puts)
            self._failures, self._failing_since, self._kind, self._problem = 0, None, None, None
            self._next_try = 0.0
            self.batches += 1
            self.bytes_sent += sum(len(d) for _, d in batch)
        return True

    def status(self) -> OutboxStatus:
        with self._lock:
            return OutboxStatus(self._published_at, self._published_version, len(self._waiting),
                                self._failing_since, self._kind, self._problem, self._dropped, self._sending,
                                self._taken_put)


class OutboxThread:
    """The outbox's sender on a daemon thread of its own: it sends as soon
    as something waits and its backoff allows, and sleeps otherwise."""

    def __init__(self, outbox: Outbox, name: str = "site-outbox") -> None:
        self.outbox = outbox
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> OutboxThread:
        self._thread.start()
        return self

    def kick(self) -> None:
        """Something new waits: look now (a backoff still holds)."""
        self._wake.set()

    def _run(self) -> None:
        while not self._stop.is_set():
            due = self.outbox.due_in()
            if due is None or due > 0:
                self._wake.wait(timeout=due if due is not None else 1.0)
                self._wake.clear()
                continue
            self.outbox.send_once()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join(timeout)
