"""Files that hold secrets (board keys, the hub's broker password, the
broker's password and ACL files, a board's configuration with its key and
WiFi password): written whole, replacing the old one atomically, and
readable by the owner only from the first byte -- the mode is given when the
file is created and set again on its descriptor (the umask, or a left-over
temporary file, may differ), never a chmod after the text is in.  Logs
with client addresses and user names (`append_private`) likewise."""
from __future__ import annotations

import os
from pathlib import Path


def write_private(path: Path, text: str, mode: int = 0o600) -> None:
    """Replace path atomically with text, created with mode (0600: the
    owner only)."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        if hasattr(os, "fchmod"):
            os.fchmod(f.fileno(), mode)
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def append_private(path: Path, mode: int = 0o600):
    """path opened to append bytes (made if missing), readable by the owner
    only from its first byte: a log another process may write too."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, mode)
    if hasattr(os, "fchmod"):
        os.fchmod(fd, mode)
    return os.fdopen(fd, "ab")
