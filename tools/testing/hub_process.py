"""The hub as organizers run it, `tabletimer run DIR --broker ...`, as a
child process: for the benchmarks (tools/bench/hall_rig.py) and the tests that kill
and restart it (hub resilience, chaos rehearsal)."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

TT = str(Path(sys.executable).parent / "tabletimer")


class HubProcess:
    """`tabletimer run DIR [--broker ...]` as a child process.  Its output (one
    line per stored event) is read all the time by a thread, so a long run
    never blocks the hub on a full pipe; `lines` holds it."""

    def __init__(self, ev: Path, port: int | None, *extra: str, timeout: float = 30.0,
                 web_port: int | None = None, hall_port: int = 0, env: dict | None = None) -> None:
        # port: the external broker's on 127.0.0.1 (--broker); None: the hub
        # starts its own (give --port, --broker-kind in extra).
        # web_port: the hub's web server (the referees' pages) on
        # 127.0.0.1:web_port; None (the default): no web server.
        # hall_port: the hall's pages' process, with the web server, on
        # 127.0.0.1:hall_port (0, the default: a free port; see hall_url()).
        # env: its environment (default: this process's)
        web = "off" if web_port is None else f"127.0.0.1:{web_port}"
        self.web_port = web_port
        broker = [] if port is None else ["--broker", f"mqtt://127.0.0.1:{port}"]
        self.proc = subprocess.Popen(
            [TT, "run", str(ev), *broker, "--web-listen", web, "--hall-listen", f"127.0.0.1:{hall_port}",
             *extra],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
        self.lines: list[str] = []
        self._connected = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        # wait until it is connected (or gone)
        if not self._connected.wait(timeout):
            self.kill()
            raise TimeoutError(f"the hub did not start in {timeout} s: {self.said(2000)}")
        if not any(li.startswith("broker:") for li in self.lines):   # its output ended: it exits
            self._reader.join(10)
            try:
                code = self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()
                code = "killed"
            raise RuntimeError(f"the hub exited ({code}): {self.said(2000)}")

    @property
    def pid(self) -> int:
        return self.proc.pid

    def said(self, chars: int = 1500) -> str:
        """The end of what the hub printed (for an error)."""
        return "".join(self.lines)[-chars:]

    def without_web(self) -> str | None:
        """Why the hub's web server will never answer, if it will not: it
        exited, or it said it cannot listen (the hub then runs without it);
        None while it may still come."""
        if self.proc.poll() is not None:
            return f"the hub exited ({self.proc.returncode})"
        if any("no remote consoles: cannot listen" in ln for ln in self.lines):
            return "the hub cannot listen there"
        return None

    def _read(self) -> None:
        assert self.proc.stdout
        for line in self.proc.stdout:
            self.lines.append(line)
            if line.startswith("broker:"):
                self._connected.set()
        self._connected.set()          # EOF: the hub is gone

    def hall_url(self, timeout: float = 60.0) -> str:
        """The hall's pages' address (http://127.0.0.1:PORT), once the hub
        has said it (TimeoutError if it does not)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in list(self.lines):
                if line.startswith("hall pages"):
                    return line.split("): ", 1)[1].split("/hall", 1)[0]
                if line.startswith("warning: no hall pages"):
                    raise RuntimeError(line.strip())
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        raise TimeoutError(f"the hub did not say where the hall's pages are: {self.said(2000)}")

    def kill(self) -> None:
        """SIGKILL: no clean shutdown at all."""
        self.proc.kill()
        self.proc.wait()
        self._reader.join(10)

    def stop(self, timeout: float = 30.0) -> str:
        """SIGTERM (a clean stop); the hub's whole output.  A hub still
        running after timeout is killed and RuntimeError raised: one that
        ignores SIGTERM is a defect (one did, for an hour: cli/common.py's
        stop_on_signals), not something to clean up quietly."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            self._reader.join(10)
            raise RuntimeError(f"the hub did not stop within {timeout:g} s of SIGTERM (killed); its last "
                               f"lines:\n{''.join(self.lines[-30:])}") from None
        self._reader.join(10)
        return "".join(self.lines)


def stored_presses(ev: Path) -> list[dict]:
    """The press events in an event folder's log."""
    from tabletimer.hub.event.log.store import EventStore

    store = EventStore(ev / "events.sqlite")
    try:
        return [e for e in store.events() if e["type"] == "press"]
    finally:
        store.close()
