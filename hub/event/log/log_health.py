"""The event log's health in an operator's words: what a failed write (or
open, or read) raises and what it means to do."""

from __future__ import annotations

import sqlite3
from pathlib import Path


# what a failed write of the event log raises (disk full, read-only, locked,
# a USB stick pulled out)
STORE_ERRORS = (sqlite3.Error, OSError)


class LogWriteFailed(RuntimeError):
    """The event log could not be written: nothing was stored, so nothing was
    acknowledged.  The message says what failed and what to do."""


def write_failure_advice(path: str | Path, err: BaseException, doing: str = "write") -> str:
    """What a failed write (open, read) of the log at path means, in an
    operator's words."""
    text = str(err) or type(err).__name__
    low = text.lower()
    if "full" in low:
        what = f"the disk is full: free space on it (df -h {Path(path).parent})"
    elif "readonly" in low or "read-only" in low or "permission" in low or isinstance(err, PermissionError):
        what = (f"the file or its folder is read-only: check `ls -l {path}` (owner, permissions) and "
                f"that its disk is not mounted read-only")
    elif "locked" in low or "busy" in low:
        what = "another program is writing to the log (a database browser?): close it"
    elif "unable to open" in low:
        what = f"the folder {Path(path).parent} is gone or not writable"
    elif "not a database" in low or "malformed" in low:
        what = (f"the file is not an event log or is damaged: stop the hub, then `tabletimer log check "
                f"{Path(path).parent}` and `tabletimer log recover {Path(path).parent}` "
                f"(docs/operations.md, \"A damaged event log\")")
    elif "i/o" in low:
        what = "the disk failed or was removed (a USB stick pulled out?)"
    else:
        what = "check the disk (free space: df -h) and the file's permissions"
    return f"cannot {doing} the event log {path} ({text}): {what}"


class DamagedLog(RuntimeError):
    """The event log's file is damaged (a payload cut short, the file cut
    short, a page of garbage): it is not read on.  The message names the
    file, its first damaged row, and what to do: `tabletimer log check` to
    see every damaged row, `tabletimer log recover` to copy every readable
    row into a new log (docs/operations.md, "A damaged event log")."""

    def __init__(self, path: str | Path, row: str | None, what: str, readable: int | None = None,
                 detail: str = "") -> None:
        self.path, self.row, self.what, self.readable, self.detail = Path(path), row, what, readable, detail
        super().__init__(damaged_advice(self.path, row, what, readable, detail))


def damaged_advice(path: Path, row: str | None, what: str, readable: int | None = None,
                   detail: str = "") -> str:
    """A damaged log in an operator's words: the file, the first damaged
    row, what is wrong with it, how many rows before it read, what to do."""
    where = path.parent
    if row is not None:
        said = f"{row} {what}" if what.startswith(("is ", "reads ")) else f"{row} cannot be read: {what}"
    else:
        said = f"its file is damaged ({what or detail or 'sqlite says so'})"
    before = ("" if readable is None or row is None else
              f"; the {readable} row{'s' if readable != 1 else ''} before it read whole" if readable else
              "; no row before it reads")
    return (f"the event log {path} is damaged: {said}{before}. Run `tabletimer log check {where}` to see "
            f"every damaged row, then `tabletimer log recover {where}`: it copies every readable row into "
            f"a new log and keeps the damaged file beside it (docs/operations.md, \"A damaged event log\")")
