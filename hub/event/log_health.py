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
        what = "the file is not an event log or is damaged: put back your copy of the event folder"
    elif "i/o" in low:
        what = "the disk failed or was removed (a USB stick pulled out?)"
    else:
        what = "check the disk (free space: df -h) and the file's permissions"
    return f"cannot {doing} the event log {path} ({text}): {what}"
