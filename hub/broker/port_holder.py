"""Who holds the TCP port a hub's broker cannot listen on, for the error it
prints (issue #32): a hub of ours (a rehearsal, a demo, another event's
`run`), named by its pid and event folder, or another program.

A hub of ours is found from the listening process: the hub itself, or an
ancestor of it (the embedded broker is the hub's child, a child Mosquitto
its watchdog's), that has an event log's lock open (folder_lock.py) and is
the pid the lock file names.  The listeners come from /proc (Linux), else
from `lsof`; a process of another user may be out of sight (None: the
holder is not known, and the message says how to find it)."""

from __future__ import annotations

import os
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..event.folder.folder_lock import read_holder

ANCESTORS = 3          # the listener, its parent, its grandparent (Mosquitto -> watchdog -> hub)


@dataclass
class Holder:
    """The process listening on a port (pid, its command name) and, when
    it is a hub of ours or a broker of one, the hub's pid, event folder and
    command (as its lock file says)."""
    pid: int
    name: str
    hub_pid: int | None = None
    folder: Path | None = None
    command: str = ""


def port_holder(port: int) -> Holder | None:
    """Who listens on TCP port (a hub of ours first); None: not known here."""
    pids = _listeners(port)
    if not pids:
        return None
    holders = [_holder(pid) for pid in pids]
    return next((h for h in holders if h.hub_pid), holders[0])


def port_taken_advice(host: str, port: int, why: str) -> str:
    """What to say when host:port cannot be listened on: who holds it, and what to do."""
    said = f"cannot listen on {host}:{port} ({why})"
    h = port_holder(port)
    if h is not None and h.hub_pid:
        via = "" if h.pid == h.hub_pid else f"; its broker: pid {h.pid} ({h.name})"
        what = f": {h.command}" if h.command else ""
        return (f"{said}: another TableTimer hub holds it: pid {h.hub_pid}, event folder {h.folder}"
                f"{what}{via}. One hub per port: stop that one first (Ctrl-C in its window, or kill "
                f"{h.hub_pid}), then start this one again; or start this one on another --port (boards "
                f"flashed for port {port} do not reach it there)")
    who = (f"pid {h.pid} ({h.name}) holds it, not a TableTimer hub (`ps -fp {h.pid}` says what it is)"
           if h is not None else f"another program holds it (see which: `sudo ss -ltnp 'sport = :{port}'` "
           f"or `sudo lsof -i :{port}`)")
    return (f"{said}: {who}. Debian/Ubuntu's mosquitto package starts a broker as a system service: stop "
            f"it with `sudo systemctl disable --now mosquitto` (or use it: --broker mqtt://127.0.0.1:{port}), "
            "or pick another --port")


def _holder(pid: int) -> Holder:
    h = Holder(pid, _name(pid))
    p: int | None = pid
    for _ in range(ANCESTORS):
        if not p or p <= 1:
            break
        for lock in _open_locks(p):
            who = read_holder(lock)
            if who.get("pid") == p and who.get("host") == socket.gethostname():
                h.hub_pid, h.folder, h.command = p, lock.parent, str(who.get("command") or "")
                return h
        p = _parent(p)
    return h


# ---------------------------------------------------------------- /proc, else lsof and ps

PROC = Path("/proc")


def _linux() -> bool:
    return (PROC / "net" / "tcp").exists()


def _listeners(port: int) -> list[int] | None:
    """Pids of the processes listening on TCP port that this user can see."""
    if not _linux():
        out = _run(["lsof", "-nP", f"-iTCP:{port}", "-sTCP:LISTEN", "-t"])
        return [int(w) for w in out.split() if w.isdigit()] if out else None
    sockets = set()
    for table in ("tcp", "tcp6"):
        try:
            rows = (PROC / "net" / table).read_text().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            f = row.split()     # sl local_address rem_address st ... inode
            if len(f) > 9 and f[3] == "0A" and int(f[1].rsplit(":", 1)[1], 16) == port and f[9] != "0":
                sockets.add(f"socket:[{f[9]}]")
    if not sockets:
        return None
    pids = []
    for proc in PROC.iterdir():
        if proc.name.isdigit() and any(link in sockets for link in _fd_links(proc)):
            pids.append(int(proc.name))
    return pids


def _fd_links(proc: Path) -> list[str]:
    try:
        fds = os.listdir(proc / "fd")
    except OSError:            # another user's, or gone
        return []
    links = []
    for fd in fds:
        try:
            links.append(os.readlink(proc / "fd" / fd))
        except OSError:
            pass
    return links


def _open_locks(pid: int) -> list[Path]:
    """The event logs' lock files (*.sqlite.lock) that process pid has open."""
    if _linux():
        names = _fd_links(PROC / str(pid))
    else:
        names = [ln[1:] for ln in _run(["lsof", "-nP", "-p", str(pid), "-Fn"]).splitlines() if ln[:1] == "n"]
    return [Path(n) for n in names if n.endswith(".sqlite.lock")]


def _parent(pid: int) -> int | None:
    if _linux():
        try:
            return int((PROC / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            return None
    out = _run(["ps", "-o", "ppid=", "-p", str(pid)]).strip()
    return int(out) if out.isdigit() else None


def _name(pid: int) -> str:
    if _linux():
        try:
            return (PROC / str(pid) / "comm").read_text().strip()
        except OSError:
            return "?"
    return _run(["ps", "-o", "comm=", "-p", str(pid)]).strip() or "?"


def _run(cmd: list[str]) -> str:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ""
