"""What the parts of the hub's service share (service.py holds it as
`service.state` and hands each part what it uses of it): the event log and
its fold, the boards' keys and registry, the replay guard, the one hub
clock, the two locks, what the hub counted of the boards' messages
(`counts`, board_counts.py), the hub's terms (`terms`, terms.py), the
consoles' event-log lines, and the health of the log's writes.

A row enters the state one way, `apply`, live and at a replay alike: the
registry and the terms follow it, the parts hear of an operator's row
(OperatorRowFolding), the competition folds it, and RowApplied is told
(the consoles' lines first, console_lines.py): the named notifications of
changes.py, which every subscriber outside the core names.  A write to the log
goes one way, `write`: a failure becomes the alert of `write_failure`, and
the first write that works again ends it.

Locks: `lock` (the message lock) is held while the state is read or changed,
never for a commit; `writer`, taken before it, is held from a write to the
log to its apply, so rows apply in the log's order.  Both are for the
service's parts, never for its readers (consoles, pages), which go through
the service's public methods.
"""

from __future__ import annotations

import logging
import secrets
import threading
from collections import deque
from pathlib import Path

from ..event.time.clock import HubClock
from ..event.fold.competition import Competition
from ..event.log.log_health import STORE_ERRORS, LogWriteFailed, write_failure_advice
from ..event.fold.row_checks import row_problem
from ..event.log.rows import FW_ROWS, RowKind, kind_of
from ..event.log.store import EventStore
from ..rules.timetext import fmt_clock
from ..protocol.hub_secret import HubAuth
from ..protocol.hub_protocol import Outgoing
from ..protocol.keys import BoardKeys
from . import fold_changes
from .changes import FOLD_NOTES, Changes, OperatorRowFolding, Queries, RowApplied, ToBoards
from .console_lines import ConsoleLines
from .board_counts import BoardCounts
from .registry import BoardRegistry
from .terms import Terms
from ..protocol.replay import ReplayGuard

# the service's log (HubService holds this state and its parts): one name for what it logs
log = logging.getLogger("tabletimer.hub.core.service")


class HubState:
    def __init__(self, store: EventStore, keys: BoardKeys, competition: Competition,
                 clock: HubClock | None = None, secret: bytes | None = None) -> None:
        self.store = store
        self.keys = keys
        self.clock = clock or HubClock()
        self.registry = BoardRegistry()
        self.competition = competition
        self.guard = ReplayGuard()
        # the event's id, in every schedule (a remote console's log has none: it sends none)
        self.event_id: int | None = store.event_id
        competition.event_id = self.event_id     # a board event of another event's schedule: flagged
        # the logs of the event's other rounds, by their event ids (`tabletimer run` sets it): a
        # board's event made under one of their schedules is stored there (answers.py)
        self.other_rounds: dict[int, Path] = {}
        # the boards of the event's other rounds that this one does not use (`tabletimer run` sets
        # it): online in the hall, and no alert of this round's (alerts.py)
        self.unused_boards: frozenset[str] = frozenset()
        # what the hub counted of the boards' messages (a remote console shows its hub's)
        self.counts = BoardCounts()     # (board_counts.py)
        self.activity: deque[str] = deque(maxlen=200)   # the consoles' event log
        # the named change notifications of this state (changes.py): the consoles' lines of each
        # row are written first (console_lines.py), before any other subscriber hears of it
        self.changes = Changes()
        self.changes.subscribe(RowApplied, ConsoleLines(competition, self.activity))
        # the named alerts and reasons to be blind that the parts and their hosts register
        self.queries = Queries()
        self.write_failure: dict | None = None   # the failed writes now: since, count, advice
        self.lock = threading.RLock()
        self.writer = threading.RLock()
        self.live = False        # replaying the log at start: no commands go out
        # the desk's `seen` checked (and a conflict stored) here: False where the log's writer is
        # another process that checks it itself (a remote console: the hub's own act)
        self.checks_seen = True
        self.caught_up = 0       # every row with an id up to this one is applied
        # this hub's term, the terms the boards and the log report, their proofs (terms.py)
        self.terms = Terms(secret, self.event_id, self.clock, self.lock, self.activity,
                           other_rounds=lambda: self.other_rounds, live=lambda: self.live)
        # and the hubs' proofs to each other on the console API (a standby, a hub that took over)
        self.hub_auth = HubAuth(secret) if secret is not None else None
        # this process, told apart from another hub (a hub that took over and whose web server took
        # the old primary's address would otherwise ask itself to stop: split_brain.py)
        self.instance = secrets.token_hex(8)
        # the clock rows' payloads (event/time/time_base.py: a hub's start, a sleep, a stepped wall
        # clock, the boards' base taken), for the alerts
        self.clock_events: list[dict] = []
        # board -> (boot, install) of its latest message taken (live, or read back from the log
        # at start): the boot every command to it names ('bt', and 'bi'), which a board requires
        # to be its own (docs/protocol.md, "Authenticity and replay protection"; admission.py)
        self.boots: dict[str, tuple[int, str]] = {}

    # ------------------------------------------------------------ rows
    def apply(self, ev: dict) -> None:
        """A stored row into the state (once: a row applied before is left):
        the registry, the terms and the clock's happenings follow it, an
        operator's row is told to the parts (OperatorRowFolding), the
        competition folds it, and RowApplied is told (the consoles' lines
        first: console_lines.py), then what it changed (fold_changes.py)."""
        if self.competition.has(ev["id"]):
            return
        p, kind = ev["payload"], kind_of(ev)
        if row_problem(ev) is not None:
            pass                     # the fold flags it (below): nothing of it is read here
        elif kind is RowKind.HUB_TAKEOVER:
            self.terms.takeover(ev)
        elif kind is RowKind.HUB_CLOCK:
            self.clock_events.append(p)
        elif kind is RowKind.BOARD_STATUS:
            self.registry.status(ev["board"], p, ev["received_ms"])
            self.terms.board_term(ev)
        elif kind.from_board and kind not in FW_ROWS and kind is not RowKind.BOARD_CONFIG:
            if p.get("err") is not None:
                self.registry.get(ev["board"]).sync_err_ms = p["err"]
        elif kind.from_operator and kind is not RowKind.OP_ROUND_START:
            self.changes.publish(OperatorRowFolding(ev))
        told = self.changes.subscribed(FOLD_NOTES)       # (nobody: nothing read, fold_changes.py)
        before = fold_changes.mark(self.competition) if told else None
        self.competition.apply(ev)
        self.changes.publish(RowApplied(ev))
        if before is not None:               # what the row changed, by name, in log order
            for note in fold_changes.notes(self.competition, ev, kind, before):
                self.changes.publish(note)

    def record(self, source: str, kind: str, payload: dict, board: str | None = None, told: bool = False) -> dict:
        """A row of the hub's own stored now and applied, in log order (the
        writer lock, then the message lock, held: re-entrant for a caller
        that checked something under them first); LogWriteFailed if it
        cannot be written (told: the caller shows it to whoever asked)."""
        with self.writer, self.lock:
            row = self.write(self.store.append, source, kind, payload, self.clock.now_ms(), board, told=told)
            self.apply(row)
            self.applied_next([row["id"]])
        return row

    def applied_next(self, ids: list[int]) -> None:
        """Rows this hub wrote in one transaction (their ids consecutive),
        applied: when they are the next ones after every row applied, so is
        every row up to the last of them, and catch_up need not read them
        back (it read, and decoded, every row the hub wrote, four times a
        second).  A row of another process in between: catch_up reads from
        it, as before.  Called under the writer lock."""
        if ids and ids[0] == self.caught_up + 1:
            self.caught_up = ids[-1]

    def publish(self, out: list[Outgoing]) -> None:
        """Messages for the boards, told as ToBoards (the MQTT link sends them)."""
        self.changes.publish(ToBoards(out))

    def note(self, text: str) -> None:
        """A line for the consoles' event log (appended under the lock, so a
        snapshot reads the log whole)."""
        with self.lock:
            self.activity.append(text)

    # ------------------------------------------------------ log writes
    def write(self, fn, *args, told: bool = False):
        """A write to the log (fn(*args)); LogWriteFailed if it fails (told:
        the caller shows its message to whoever asked)."""
        try:
            result = fn(*args)
        except STORE_ERRORS as e:
            raise self.write_failed(e, told) from e
        self.written()
        return result

    def write_failed(self, err: BaseException, told: bool = False) -> LogWriteFailed:
        """Note a failed write: an alert while they last, logged once per
        burst (not once per message: a hall of boards resends every second),
        unless the one who asked is told (an operator's action)."""
        advice = write_failure_advice(getattr(self.store, "path", "events.sqlite"), err)
        with self.lock:
            f = self.write_failure
            if f is None:
                f = self.write_failure = {"since": self.clock.now_ms(), "count": 0, "advice": advice,
                                          "logged": False}
                self.activity.append(f"EVENT LOG NOT WRITTEN: {advice}")
            if not told and not f["logged"]:
                f["logged"] = True
                log.error("%s. Nothing is acknowledged until the log can be written again; the boards "
                          "keep their presses and send them again.", advice)
            f["count"] += 1
            f["advice"] = advice
        return LogWriteFailed(advice)

    def written(self) -> None:
        """A write worked: the alert of the failed ones before it ends."""
        if self.write_failure is None:
            return
        with self.lock:
            f, self.write_failure = self.write_failure, None
        if f is not None:
            msg = (f"the event log is written again, after {f['count']} failed write(s) since "
                   f"{fmt_clock(f['since'])}; the boards send again what was not acknowledged")
            if f["logged"]:
                log.warning("%s", msg)
            self.note(msg)
