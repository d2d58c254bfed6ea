"""Firmware over the air, the hub's half (issue 29, item 2; docs/protocol.md,
"fw"; docs/firmware.md, "Firmware over the air"; docs/operations.md,
"Updating the boards' firmware").

A request is an operator action `firmware` (one row per board: {"board",
"fw": the version, "pkg": its folder under the log's folder's firmware/,
"sha": the manifest's sha256, "trial": s, "older": 1 when the desk allows a
version older than the board's}), stored by `tabletimer boards
update` (cli/board_firmware.py).  The running hub applies the row: the
board's update is queued here, and a few boards at a time (PARALLEL: the
broker and the hall's WiFi are shared) get theirs: the begin (the
manifest's size and HMAC under the board's key), then the manifest and
each file in chunks (CHUNK bytes, in base64: a signed message of at most
protocol.MAX_PAYLOAD), WINDOW of them ahead of the place the board last
said it waits for.  A board answers each chunk with that place ("next"):
one it did not take (lost, duplicated, out of order) is sent again from
there (go-back-N), and after RESEND_S without an answer too; TRIES times
without one, or a board that restarts RESTARTS times in the middle, and
the update fails ("no answer").  A board restarted in the middle (a power
loss) begins again.  The chunks' answers are not stored (admission asks
`heard`), but one a quarter of the way, for the desk's progress; the rest
(receiving, staged, refused, committed) are board rows `fw`; a failure
here is a hub row `fw` (state "failed")."""

from __future__ import annotations

import base64
import hashlib
import logging
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from tabletimer.shared import protocol

from ..protocol import hub_protocol
from ..event.log.log_health import LogWriteFailed
from ..event.log.rows import RowKind, kind_of

log = logging.getLogger(__name__)

CHUNK = 640            # bytes of a file a chunk carries (860 in base64: its message under 1 KB)
WINDOW = 4             # chunks sent ahead of the board's answer
PARALLEL = 4           # boards updated at once
RESEND_S = 2.0         # no answer this long: sent again from the board's place
TRIES = 8              # ... this many times: the update failed
RESTARTS = 3           # the board restarted in the middle this many times: failed
SEND_WITHIN_MS = 60_000   # a request row applied later than this (a hub restarted) is not started
MANIFEST = "manifest.txt"
NO_RAM = ("the board has not the RAM free for an update: it restarted, on the version it had "
          "(docs/firmware.md, 'Firmware over the air')")


@dataclass
class Package:
    """A version to send (hub/fleet/firmware_build.package's folder)."""
    version: str
    family: str
    manifest: bytes
    files: list[tuple[str, bytes]]

    @property
    def sha(self) -> str:
        return hashlib.sha256(self.manifest).hexdigest()

    @property
    def size(self) -> int:
        return sum(len(d) for _, d in self.files)

    def chunks(self) -> list[tuple[int, int, bytes]]:
        """(file, offset, data): the manifest (file 0), then each file in its order."""
        out = []
        for i, data in enumerate([self.manifest] + [d for _, d in self.files]):
            out += [(i, o, data[o:o + CHUNK]) for o in range(0, len(data), CHUNK)]
        return out


def older(version: str, than: str) -> bool:
    """Whether a firmware version comes before another, in the order the
    boards keep (firmware/firmware_update.py's own function, run here: one order
    at the desk and on the board; docs/firmware.md, "Versions")."""
    from .board_settings import firmware_module

    return bool(firmware_module("firmware_update").older(version, than))


def load_package(folder: Path) -> Package:
    """The package in folder, every file checked against its manifest
    (ValueError in words for the desk)."""
    path = Path(folder) / MANIFEST
    try:
        manifest = path.read_bytes()
    except OSError as e:
        raise ValueError(f"no firmware package at {folder} ({e.strerror})") from None
    lines = manifest.decode(errors="replace").splitlines()
    head = lines[0].split() if lines else []
    if len(head) != 3 or head[0] != "tabletimer-firmware":
        raise ValueError(f"{path}: not a firmware manifest")
    files = []
    for ln in lines[1:]:
        name, size, sha = ln.split()
        data = (Path(folder) / name).read_bytes()
        if len(data) != int(size) or hashlib.sha256(data).hexdigest() != sha:
            raise ValueError(f"{folder}/{name}: not the file its manifest lists (size or sha256)")
        files.append((name, data))
    if not files:
        raise ValueError(f"{path}: lists no file")
    return Package(head[1], head[2], manifest, files)


@dataclass
class Job:
    board: str
    request: int                 # the request's log row
    pkg: Package
    trial: int | None
    chunks: list = field(default_factory=list)
    index: dict = field(default_factory=dict)     # (file, offset) -> chunk number
    state: str = "waiting"       # waiting, begun, sending, done
    acked: int = 0               # chunks the board has (its "next")
    sent: int = 0                # chunks sent from acked on
    back: int = -1               # the place last gone back to on a repeated answer
    last_ms: float = 0.0         # monotonic s of the last progress (or send)
    tries: int = 0
    restarts: int = 0
    quarter: int = 0             # the last quarter stored
    started: float = 0.0
    older: bool = False          # the desk allows a version older than the board's (--allow-older)


class FirmwareUpdates:
    """The updates under way at the running hub (the service's `firmware`),
    given what they use of it (core/service.py wires them): commands (what
    numbers and signs a message to a board), the board keys, the hub clock,
    the message lock and the log's writer lock, the store and its one write
    path (write: a failure becomes the alert) and apply, publish (messages
    for the boards), the consoles' activity lines, and live (not replaying
    the log: nothing is sent at a replay)."""

    def __init__(self, commands, *, keys, clock, lock, writer, store, write: Callable, apply: Callable[[dict], None],
                 publish: Callable[[list], None], activity: deque[str], live: Callable[[], bool]) -> None:
        self.commands, self.keys, self.clock, self.lock, self.writer = commands, keys, clock, lock, writer
        self.store, self.write, self.apply, self.publish = store, write, apply, publish
        self.activity, self.live = activity, live
        self.jobs: dict[str, Job] = {}          # board -> its update (waiting, or under way)
        self.done: list[tuple[str, float]] = []  # (board, s) each update took to "staged" (benchmarks)
        self.parallel = PARALLEL
        self._lock = threading.Condition()      # taken after the service's lock, never before it
        self._thread: threading.Thread | None = None
        self._stop = False

    # ------------------------------------------------------------ requests
    def operator_row(self, ev: dict) -> None:
        """An operator's row about to be folded (the service subscribes this
        to OperatorRowFolding): a firmware request applied live is sent."""
        if kind_of(ev) is not RowKind.OP_FIRMWARE or not self.live() or self.clock.now_ms() - ev["received_ms"] > SEND_WITHIN_MS:
            return
        p = ev["payload"]
        folder = Path(self.store.path).parent / "firmware" / p["pkg"]
        try:
            pkg = load_package(folder)
            if pkg.sha != p["sha"]:
                raise ValueError(f"{folder}: not the package the request names (its manifest changed)")
        except (ValueError, OSError) as e:
            self.activity.append(f"firmware for board {p['board']} (log row #{ev['id']}) not sent: {e}")
            self._failed(p["board"], ev["id"], str(e))
            return
        self.start(p["board"], ev["id"], pkg, p.get("trial"), bool(p.get("older")))

    def start(self, board: str, request: int, pkg: Package, trial: int | None = None, older: bool = False) -> None:
        """Queue a board's update (a request of the log, or a test's); older:
        the desk allows a version older than the board's."""
        job = Job(board, request, pkg, trial, pkg.chunks(), older=older)
        job.index = {(f, o): i for i, (f, o, _) in enumerate(job.chunks)}
        job.index[(len(pkg.files) + 1, 0)] = len(job.chunks)     # past the last: all in
        with self._lock:
            self.jobs[board] = job
            if self._thread is None or not self._thread.is_alive():
                self._stop = False
                self._thread = threading.Thread(target=self._run, name="hub-firmware", daemon=True)
                self._thread.start()
            self._lock.notify_all()

    def stop(self) -> None:
        with self._lock:
            self._stop = True
            self._lock.notify_all()

    # ------------------------------------------------------------ answers
    def heard(self, board: str, msg: dict, received_ms: int) -> bool:
        """A board's answer (admission, under the service's lock): whether
        to store it (a chunk's answer only a quarter of the way)."""
        store = msg["state"] != "at"
        with self._lock:
            job = self.jobs.get(board)
            if job is None or msg.get("id") != job.request:
                return store
            st = msg["state"]
            if st in ("receiving", "at"):
                k = job.index.get(tuple(msg.get("next") or ()))
                if k is None:
                    return store
                if st == "receiving":
                    job.state, job.acked, job.sent, job.back = "sending", 0, 0, -1
                elif k > job.acked:
                    job.acked = k
                    job.sent = max(job.sent, k)
                    job.tries = 0
                elif k == job.acked and job.sent > k and job.back != k:
                    job.sent, job.back = k, k     # one it did not take: again from there
                job.last_ms = time.monotonic()
                q = 4 * job.acked // max(1, len(job.chunks))
                if st == "at" and q > job.quarter:
                    job.quarter = q
                    store = True
            elif st in ("staged", "refused"):
                job.state = "done"
                self.done.append((board, time.monotonic() - job.started))
                del self.jobs[board]
            self._lock.notify_all()
        return store

    def born(self, board: str, fault: str | None = None) -> None:
        """A board's birth (admission): one that restarted in the middle of
        its update begins again (a power loss, a watchdog), unless it
        restarted for want of RAM for the update (its birth's fault a
        MemoryError, firmware/app.py): that fails at once, saying so."""
        with self._lock:
            job = self.jobs.get(board)
            if job is None or job.state not in ("begun", "sending"):
                return
            job.restarts += 1
            if str(fault or "").startswith("MemoryError"):
                del self.jobs[board]
                self._failed(board, job.request, NO_RAM)
                return
            if job.restarts <= RESTARTS:
                job.state, job.tries, job.last_ms = "waiting", 0, 0.0
                self._lock.notify_all()
                return
            del self.jobs[board]
        self._failed(board, job.request, f"restarted {RESTARTS} times during the update")

    # ------------------------------------------------------------ the sender
    def _run(self) -> None:
        while True:
            with self._lock:
                if self._stop:
                    self._thread = None
                    return
                now = time.monotonic()
                out: list[tuple[Job, dict]] = []
                failed: list[Job] = []
                active = [j for j in self.jobs.values() if j.state in ("begun", "sending")]
                for job in self.jobs.values():
                    if job.state == "waiting" and len(active) < self.parallel:
                        active.append(job)
                        job.state, job.last_ms = "begun", 0.0
                        if not job.started:
                            job.started = now
                for job in active:
                    if now - job.last_ms > RESEND_S and job.last_ms:
                        job.tries += 1
                        if job.tries > TRIES:
                            failed.append(job)
                            continue
                        if job.state == "begun":
                            job.last_ms = 0.0           # the begin again
                        else:
                            job.sent, job.last_ms = job.acked, now
                    if job.state == "begun" and not job.last_ms:
                        m = job.pkg.manifest
                        sig = self.manifest_mac(job.board, m).hex()
                        out.append((job, hub_protocol.fw_begin(job.request, len(m), sig, job.trial, job.older)))
                        job.last_ms = now
                    elif job.state == "sending":
                        while job.sent < min(job.acked + WINDOW, len(job.chunks)):
                            f, o, data = job.chunks[job.sent]
                            out.append((job, hub_protocol.fw_chunk(job.request, f, o, base64.b64encode(data).decode())))
                            job.sent += 1
                for job in failed:
                    del self.jobs[job.board]
            for job in failed:
                self._failed(job.board, job.request, f"no answer from the board ({TRIES} tries)")
            if out:
                self._send(out)
            with self._lock:
                if not self._stop and not self._due():
                    self._lock.wait(0.25)

    def manifest_mac(self, board: str, manifest: bytes) -> bytes:
        """The manifest's signature: HMAC-SHA256 under the board's key (no topic)."""
        return self.keys.signer(board).mac(manifest)

    def _due(self) -> bool:
        # something to send now (under the lock)
        busy = sum(j.state in ("begun", "sending") for j in self.jobs.values())
        return any(j.state == "sending" and j.sent < min(j.acked + WINDOW, len(j.chunks))
                   or j.state == "waiting" and busy < self.parallel for j in self.jobs.values())

    def _send(self, out: list[tuple[Job, dict]]) -> None:
        try:
            with self.lock:         # numbered and published in one go (Answers.store_and_answer)
                self.publish([self.commands.to_board(job.board, protocol.CMD, msg, 1 if "n" in msg else 0)
                              for job, msg in out])
        except LogWriteFailed as e:
            self.activity.append(f"firmware not sent: {e}")

    def _failed(self, board: str, request: int, why: str) -> None:
        self.activity.append(f"board {board}: firmware (log row #{request}) failed: {why}")
        try:
            with self.writer:
                row = self.write(self.store.append, "hub", "fw", {"board": board, "id": request, "state": "failed",
                                                                   "why": why[:200]}, self.clock.now_ms(), board)
                with self.lock:
                    self.apply(row)
        except (LogWriteFailed, Exception):      # the activity line says it
            log.exception("the firmware failure of board %s not stored", board)

    # ------------------------------------------------------------ the desk
    def progress(self) -> list[str]:
        """A line per update under way (the consoles')."""
        with self._lock:
            return [f"board {j.board}: firmware {j.pkg.version} {j.state}"
                    + (f" {100 * j.acked // max(1, len(j.chunks))}%" if j.state == "sending" else "")
                    for j in self.jobs.values()]
