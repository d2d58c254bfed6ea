"""One hub per event log: `tabletimer run`, `rehearse` and `demo` hold an OS
lock on a file beside the log (events.sqlite.lock) for as long as they run,
taken before they write anything in the folder (a refused one changes
nothing).

Two hubs on one folder would both take the boards' presses, ack them,
number their commands and publish schedules, each from its own idea of the
round.  The lock is `fcntl.flock`: the operating system drops it when the
holder exits in any way (Ctrl-C, crash, SIGKILL, power cut), so it is never
stale.  The holder writes who it is (pid, host, when it started, its
command) into the file, for the error the second one prints.  `act`,
`replay`, `results` and `console` take no lock: they are how operators work
beside a running hub.
"""

from __future__ import annotations

import errno
import json
import os
import socket
import sys
import time
from pathlib import Path

try:
    import fcntl
except ImportError:          # not on Windows: no lock there (said when the hub starts)
    fcntl = None             # type: ignore[assignment]


class FolderLocked(RuntimeError):
    """Another hub holds the lock (or the lock file cannot be made)."""


def lock_path(log: Path) -> Path:
    return log.with_name(log.name + ".lock")


class HubLock:
    """The lock beside one event log; `acquire()` or FolderLocked."""

    def __init__(self, log: Path, role: str | None = None) -> None:
        self.log = Path(log)
        self.role = role          # written for others to read: "standby URL" (a standby's copy)
        self.path = lock_path(self.log)
        self._fd: int | None = None

    @property
    def supported(self) -> bool:
        return fcntl is not None

    def acquire(self) -> "HubLock":
        folder = self.path.parent
        try:
            folder.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as e:
            raise FolderLocked(f"cannot create the hub's lock file {self.path} "
                               f"({e.strerror or e}): the hub must be able to write in {folder}; "
                               f"check its permissions and free space") from None
        if fcntl is None:
            self._fd = fd
            return self
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            holder = _read_holder(fd)
            os.close(fd)
            if e.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise FolderLocked(f"cannot lock {self.path} ({e.strerror or e})") from None
            raise FolderLocked(self._held_message(holder)) from None
        self._fd = fd
        me = {"pid": os.getpid(), "host": socket.gethostname(),
              "started": time.strftime("%Y-%m-%d %H:%M:%S %z"),
              "command": " ".join(["tabletimer", *sys.argv[1:]])[:300]}
        if self.role:
            me["role"] = self.role
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, (json.dumps(me) + "\n").encode(), 0)
        except OSError:
            pass                 # locked all the same; only the second hub's message is poorer
        return self

    def _held_message(self, holder: dict) -> str:
        pid = holder.get("pid")
        if pid and holder.get("host") == socket.gethostname() and not _alive(pid):
            pid = None           # what a hub before it wrote: the holder has not written yet
        who = (f"pid {pid}" + (f" on {holder['host']}" if holder.get("host") else "")
               + (f", started {holder['started']}" if holder.get("started") else "")
               + (f": {holder['command']}" if holder.get("command") else "")) if pid else "a process that is starting"
        folder = self.log.parent
        return (f"another hub is already running on {self.log} ({who}). One hub per event: stop "
                f"that one first (Ctrl-C in its window{f', or kill {pid}' if pid else ''}), then "
                f"start again. Beside a running hub, `tabletimer console {folder}` opens a second "
                f"screen and `tabletimer act {folder} ...` records actions.")

    def release(self) -> None:
        if self._fd is not None:
            if fcntl is not None:
                fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> "HubLock":
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()


def hub_running(log: Path) -> bool | None:
    """Is a hub running on this log now, as its lock file says (the pid it
    wrote, alive on this machine)?  None: cannot tell (no lock file yet, a
    hub on another machine's share, or no locks here).  Reads only: it
    never takes the lock, so it cannot make a starting hub fail."""
    holder = read_holder(lock_path(Path(log)))
    if not holder.get("pid") or holder.get("host") != socket.gethostname():
        return None
    return _alive(holder["pid"])


def standby_of(log: Path) -> str | None:
    """The primary a standby running on this log follows (its lock's role
    "standby URL"), else None: a standby's log is a copy, written by the
    standby alone."""
    holder = read_holder(lock_path(Path(log)))
    role = holder.get("role")
    if isinstance(role, str) and role.startswith("standby ") and hub_running(log):
        return role.split(" ", 1)[1]
    return None


def read_holder(lock: Path) -> dict:
    """What the hub holding (or last holding) a lock file wrote in it: pid,
    host, started, command ({} if nothing can be read)."""
    try:
        fd = os.open(lock, os.O_RDONLY)
    except OSError:
        return {}
    try:
        return _read_holder(fd)
    finally:
        os.close(fd)


def _read_holder(fd: int) -> dict:
    try:
        data = json.loads(os.pread(fd, 4096, 0).decode("utf-8", errors="replace") or "{}")
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _alive(pid) -> bool:
    try:
        os.kill(int(pid), 0)
    except PermissionError:
        return True
    except (OSError, ValueError, OverflowError):
        return False
    return True
