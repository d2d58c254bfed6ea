"""Mosquitto as a child process of the hub (`tabletimer run` and `demo`
when it is installed): found, started on the event's configuration
(mosquitto_config.py), watched, stopped with the hub.

The hub does not start Mosquitto itself but a small watchdog (this module
run as `python -m tabletimer.hub.broker.mosquitto_child BINARY CONF`), whose
child Mosquitto is.  The watchdog reads its stdin, a pipe from the hub:
when the hub goes away, however it ends (a clean stop, SIGTERM, Ctrl-C, or
SIGKILL), the pipe closes and the watchdog stops Mosquitto and exits.  This
works on Linux and macOS alike; on Linux, Mosquitto also gets SIGTERM when
the watchdog itself is killed (prctl(PR_SET_PDEATHSIG), Linux only).  The
watchdog has a session of its own, so a terminal's Ctrl-C reaches the hub
only, which stops the boards first and then the broker.  If Mosquitto exits
by itself, the watchdog exits with its code: the hub sees it (`alive`).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

from .ports import wait_port
from .open_files import BROKER_FILES, room_for
from .port_holder import port_taken_advice
from ..event.folder.private_file import append_private

# where Mosquitto is when it is not on PATH: Debian/Ubuntu, Homebrew on Intel and on Apple silicon
SEARCH = ("/usr/sbin/mosquitto", "/usr/local/sbin/mosquitto", "/opt/homebrew/sbin/mosquitto")
# os.pathsep-separated paths to look at instead of SEARCH (empty: none; the tests use it)
SEARCH_ENV = "TABLETIMER_MOSQUITTO_SEARCH"

INSTALL_HINT = ("install it: Debian/Ubuntu `sudo apt-get install mosquitto` (then `sudo systemctl "
                "disable --now mosquitto`: the package starts a system broker on port 1883), macOS "
                "`brew install mosquitto`")


def find_mosquitto(environ=os.environ) -> str | None:
    """The mosquitto binary: on PATH, else in the usual places (SEARCH, or $TABLETIMER_MOSQUITTO_SEARCH)."""
    found = shutil.which("mosquitto", path=environ.get("PATH"))
    if found:
        return found
    search = environ[SEARCH_ENV].split(os.pathsep) if SEARCH_ENV in environ else SEARCH
    return next((p for p in search if p and os.access(p, os.X_OK)), None)


def parse_version(help_text: str) -> str | None:
    """'2.0.11' from what `mosquitto -h` prints ("mosquitto version 2.0.11")."""
    for line in help_text.splitlines():
        words = line.split()
        if words[:2] == ["mosquitto", "version"] and len(words) > 2:
            return words[2]
    return None


def mosquitto_version(binary: str) -> str | None:
    try:
        p = subprocess.run([binary, "-h"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return parse_version(p.stdout + p.stderr)


class PortTaken(RuntimeError):
    pass


def check_port_free(host: str, port: int) -> None:
    """PortTaken if host:port cannot be listened on (as Mosquitto binds it:
    a port held only by closed connections, TIME_WAIT, is free)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as e:
            raise PortTaken(port_taken_advice(host, port, e.strerror or str(e))) from e


def _reachable(host: str) -> str:
    """Where this machine connects to a listener on host."""
    return {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(host, host)


class MosquittoChild:
    """Mosquitto on conf (listening on host:port, as conf says), its
    output appended to log, as a child of a watchdog (see the module)."""

    def __init__(self, binary: str, conf: Path, host: str, port: int, log: Path) -> None:
        self.binary, self.conf, self.host, self.port, self.log = binary, Path(conf), host, port, Path(log)
        self.proc: subprocess.Popen | None = None
        self.pid: int | None = None          # Mosquitto's own
        self.version = mosquitto_version(binary)

    def start(self, timeout: float = 10.0) -> "MosquittoChild":
        check_port_free(self.host, self.port)
        # client addresses and user names: the owner's only, from the first byte
        # (Mosquitto, running as this user, appends to the same file: log_dest)
        with append_private(self.log) as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "tabletimer.hub.broker.mosquitto_child", self.binary, str(self.conf)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, start_new_session=True)
        assert self.proc.stdout is not None
        first = self.proc.stdout.readline().decode(errors="replace").split()
        if first[:1] == ["pid"]:
            self.pid = int(first[1])
        try:
            if self.pid is None:
                raise RuntimeError("the watchdog did not start Mosquitto")
            wait_port(_reachable(self.host), self.port, timeout, self.proc)
        except (RuntimeError, TimeoutError) as e:
            self.stop()
            tail = self.log_tail()
            if "Address already in use" in tail:
                raise PortTaken(port_taken_advice(self.host, self.port, "address already in use")) from None
            raise RuntimeError(f"Mosquitto did not start ({e}); its log, {self.log}:\n{tail}") from None
        return self

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    @property
    def exit_code(self) -> int | None:
        return None if self.proc is None else self.proc.poll()

    def reload(self) -> None:
        """Mosquitto reads its password and ACL files again (SIGHUP)."""
        if self.alive and self.pid is not None:
            os.kill(self.pid, signal.SIGHUP)

    def log_tail(self, lines: int = 8) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def stop(self, timeout: float = 10.0) -> None:
        p, self.proc = self.proc, None
        if p is None:
            return
        if p.poll() is None:
            assert p.stdin is not None
            p.stdin.close()                 # the watchdog stops Mosquitto, then exits
            try:
                p.wait(timeout)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        for f in (p.stdin, p.stdout):
            if f is not None and not f.closed:
                f.close()


# ------------------------------------------------------------ the watchdog
PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """In Mosquitto's process before it runs (Linux): SIGTERM when the
    watchdog dies, were it killed itself (SIGKILL: it cannot stop Mosquitto);
    elsewhere the watchdog's own stop is all there is."""
    import ctypes
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


def _watch(binary: str, conf: str) -> int:
    """The watchdog process: Mosquitto until stdin closes (the hub is gone)
    or a signal comes; Mosquitto's exit code if it exits by itself."""
    room_for(BROKER_FILES)        # Mosquitto inherits it: out of files, it lets nobody in
    mosq = subprocess.Popen([binary, "-c", conf], stdin=subprocess.DEVNULL,   # stdout, stderr: the log
                            preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None)
    print(f"pid {mosq.pid}", flush=True)
    done = threading.Event()

    def stop_mosquitto(*_) -> None:
        done.set()
        if mosq.poll() is None:
            mosq.terminate()                # Mosquitto saves its persistence file and exits

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, stop_mosquitto)

    def stop_when_stdin_closes() -> None:
        sys.stdin.buffer.read()
        stop_mosquitto()

    threading.Thread(target=stop_when_stdin_closes, daemon=True).start()
    while True:
        try:
            code = mosq.wait(10 if done.is_set() else None)
            break
        except subprocess.TimeoutExpired:
            mosq.kill()
    return 0 if done.is_set() else (code if code else 1)


if __name__ == "__main__":
    code = _watch(*sys.argv[1:3])
    sys.stdout.flush()
    # not sys.exit: the interpreter's shutdown waited for the stdin reader
    # thread's lock and aborted ("Fatal Python error: ... could not acquire
    # lock for <stdin> at interpreter shutdown") into Mosquitto's log
    os._exit(code)
