"""The hub's core: turns incoming MQTT messages into stored events, acks,
clock-sync replies and an updated round state, and produces the commands
(signed schedules, station states, identify) the operator's actions call for.

I/O-free except for the event store it is given: the MQTT adapter feeds
`handle()`, publishes what it returns, and subscribes to ToBoards
(changes.py) for what the parts publish.

`HubService` holds the state (`state`, hub_state.py: the fold, the terms,
the board counts, the locks, the log's write path) and the parts that each
own one concept, which it wires here -- each is given the collaborators it
uses by name (keys, clock, locks, fold, record, publish, the notifications
...), none the service or the state.  It is no subclass of the state: its
callers read its public face (the store, the keys, the clock, the fold, the
registry, the notifications, the counts, the term, ...: read-only
properties) and its methods; the state's internals are the parts'.  Parts:
- `admission` (admission.py): which board messages are taken -- verified,
  parsed, deduplicated, rejected in counted categories, a sync answered;
- `answers` (answers.py): the store-and-answer path -- one commit for what
  arrived together, applied in log order, then each acked with its answers;
- `actions` (operator_actions.py): the operators' actions, checked, stored,
  applied, sent on;
- `commands` (board_commands.py): what is sent to the boards, numbered and
  signed;
- the alerts (alerts.py, pure) and the consoles' snapshot (snapshot.py).
"""

from __future__ import annotations

from collections import deque
from pathlib import Path
from typing import Callable, TypeVar

from .admission import REJECTED_LINE_EVERY_MS, SIGNED_PAYLOAD_MAX, Admission, Taken
from .alerts import POOR_SYNC_MS, hub_alerts, network_alerts
from ..fleet.hall_check import CLOCK_LIMIT_MS, RSSI_MIN_DBM, HallCheck, latest_check, running_check
from .answers import Answers
from ..fleet.firmware_update import FirmwareUpdates
from .board_commands import CTR_BLOCK, IDENTIFY_TTL_MS, BoardCommands, other_rounds_reserved
from .timekeeper import Timekeeper
from .board_counts import BoardCounts
from .changes import Changes, OperatorRowFolding, Queries
from .hub_state import HubState, Outgoing
from ..protocol.hub_secret import HubAuth
from ..protocol.keys import BoardKeys
from .operator_actions import AlreadyRecorded, OperatorActions, RequestConflict, StaleDecision, with_defaults
from .snapshot import Ranker, Snapshot, read as read_snapshot
from .registry import BoardRegistry
from .split_brain import SplitBrain
from ..event.time.clock import HubClock
from ..event.fold.competition import Competition
from ..event.time.time_base import ALERT_MS, clock_alert
from ..rules.timetext import fmt_clock
from ..event.fold.row_checks import row_problem
from ..event.log.rows import RowKind, kind_of
from ..event.fold.station_state import StationState, station_states
from ..event.log.store import EventStore
from ..rules.standings import StandingRow, desk_notes

T = TypeVar("T")

# what the service's callers name from here
__all__ = ["AlreadyRecorded", "CTR_BLOCK", "IDENTIFY_TTL_MS", "REJECTED_LINE_EVERY_MS", "SIGNED_PAYLOAD_MAX", "HubService",
           "Outgoing", "RequestConflict", "StaleDecision", "with_defaults"]


class HubService:
    def __init__(self, store: EventStore, keys: BoardKeys, competition: Competition,
                 clock: HubClock | None = None, secret: bytes | None = None) -> None:
        """secret: the event folder's hub secret (hub_secret.py): this hub's
        term proven to the boards, the terms they report checked."""
        rows = store.events()
        # hub time on the round's base: this boot's latest in the log, else the wall clock's
        self.state = st = HubState(store, keys, competition, clock or HubClock.for_log(rows), secret)
        self.commands = BoardCommands(keys=st.keys, clock=st.clock, lock=st.lock, terms=st.terms,
                                      boots=st.boots, competition=st.competition, store=st.store,
                                      write=st.write, event_id=lambda: st.event_id, publish=st.publish,
                                      activity=st.activity, changes=st.changes, live=lambda: st.live)
        # updates under way (firmware_update.py), given what they use of the hub
        self.firmware = FirmwareUpdates(self.commands, keys=st.keys, clock=st.clock, lock=st.lock,
                                        writer=st.writer, store=st.store, write=st.write, apply=st.apply,
                                        publish=st.publish, activity=st.activity, live=lambda: st.live)
        st.changes.subscribe(OperatorRowFolding, lambda n: self.firmware.operator_row(n.row))
        self.timekeeper = Timekeeper(st.clock, st.competition, st.record, lambda: st.write_failure)
        self.admission = Admission(self.commands, self.timekeeper, self.firmware, keys=st.keys, lock=st.lock,
                                   guard=st.guard, counts=st.counts, boots=st.boots, registry=st.registry,
                                   clock=st.clock, activity=st.activity, changes=st.changes)
        self.answers = Answers(self.admission, self.commands, self.catch_up, store=st.store, writer=st.writer,
                               lock=st.lock, write_failed=st.write_failed, written=st.written, apply=st.apply,
                               applied_next=st.applied_next, other_rounds=lambda: st.other_rounds,
                               competition=st.competition, registry=st.registry, activity=st.activity,
                               counts=st.counts)
        self.actions = OperatorActions(self.commands, competition=st.competition, clock=st.clock, keys=st.keys,
                                       registry=st.registry, lock=st.lock, writer=st.writer, record=st.record,
                                       publish=st.publish, activity=st.activity, changes=st.changes,
                                       checks_seen=lambda: st.checks_seen)
        # two hubs at once: found, flagged, healed (split_brain.py)
        self.split = SplitBrain(st.terms, st.clock, st.competition, st.changes, st.record, st.writer,
                                st.lock, st.activity, store.path)
        # more alerts (the MQTT adapter's self-probe) are registered by name; first, the terms
        # without a hub's proof.  Why this process cannot know the boards' state now (a second
        # console whose hub is not running or cannot be reached) too: the first that says so counts
        st.queries.add_alerts("unproven terms", st.terms.term_alerts)
        self._ranker = Ranker()        # the consoles' standings (snapshot)
        for ev in rows:                          # resume: replay the log
            if row_problem(ev) is not None:
                pass                             # flagged by the fold (apply): nothing of it is read
            elif kind_of(ev).from_board:
                self.admission.stored(ev["board"], ev["payload"], ev["received_ms"])
            elif kind_of(ev) is RowKind.HUB_CONFLICT and isinstance(ev["payload"].get("msg"), dict):
                self.admission.stored(ev["board"], ev["payload"]["msg"], ev["received_ms"])
            st.apply(ev)
            st.caught_up = ev["id"]
        st.live = True

    # ------------------------------------------------------------ what it holds, read
    # (the state's own, for the parts, is `state`: hub_state.py)
    @property
    def store(self) -> EventStore:
        """The event log."""
        return self.state.store

    @property
    def keys(self) -> BoardKeys:
        return self.state.keys

    @property
    def clock(self) -> HubClock:
        """The one hub clock."""
        return self.state.clock

    @property
    def competition(self) -> Competition:
        """The fold of the log (read it under `read`, or after the hub's thread stopped)."""
        return self.state.competition

    @property
    def registry(self) -> BoardRegistry:
        """What the hub knows of each board (registry.py)."""
        return self.state.registry

    @property
    def changes(self) -> Changes:
        """The named change notifications, to subscribe to (changes.py)."""
        return self.state.changes

    @property
    def queries(self) -> Queries:
        """The named alerts and reasons to be blind, to register (changes.py)."""
        return self.state.queries

    @property
    def activity(self) -> deque[str]:
        """The consoles' event-log lines, the latest last."""
        return self.state.activity

    @property
    def counts(self) -> BoardCounts:
        """What the hub counted of the boards' messages (board_counts.py)."""
        return self.state.counts

    @property
    def event_id(self) -> int | None:
        return self.state.event_id

    @property
    def fenced(self) -> str | None:
        """Why this hub must not act (None: it may): Terms.fenced."""
        return self.state.terms.fenced

    @property
    def term(self) -> int:
        """This hub's term (terms.py)."""
        return self.state.terms.term

    @property
    def other_rounds(self) -> dict[int, Path]:
        """The logs of the event's other rounds, by event id (follow_rounds)."""
        return self.state.other_rounds

    @property
    def instance(self) -> str:
        """This process, told apart from another hub (split_brain.py)."""
        return self.state.instance

    @property
    def hub_auth(self) -> HubAuth | None:
        """The hubs' proofs to each other on the console API (None: no hub secret)."""
        return self.state.hub_auth

    def term_proof(self) -> str | None:
        """This hub's term's proof (terms.py)."""
        return self.state.terms.term_proof()

    @property
    def write_failure(self) -> dict | None:
        """The failed writes now (since, count, advice); None: the log is written."""
        return self.state.write_failure

    def note(self, text: str) -> None:
        """A line for the consoles' event log."""
        self.state.note(text)

    # ------------------------------------------------------------ input
    def handle(self, topic: str, payload: bytes, received_ms: int, retained: bool = False) -> list[Outgoing]:
        """One message from the broker, received at hub time received_ms;
        retained: the broker sent it because the hub subscribed (a board's
        retained status, at every hub start and reconnect)."""
        return self.handle_many([(topic, payload, received_ms, retained)])

    def handle_many(self, messages: list[tuple[str, bytes, int, bool]],
                    emit: Callable[[list[Outgoing]], None] | None = None) -> list[Outgoing]:
        """Messages that arrived together, (topic, payload, received_ms,
        retained) each, in arrival order: checked one by one, the ones to
        store (events, statuses) stored in one transaction -- one commit for
        them all -- and answered after it (acks only for what is committed).
        A clock-sync request is answered at once: it stores nothing and
        never waits for a commit.  emit: given, each message's answer is
        passed to it as soon as it is made (the first ack of a batch does
        not wait for the others' book-keeping), and nothing is returned."""
        out: list[Outgoing] = []
        emit = emit or out.extend
        taken: list[Taken] = []
        for topic, payload, received_ms, retained in messages:
            with self.state.lock:        # (numbered and passed on in one go: see Answers.store_and_answer)
                got = self.admission.admit(topic, payload, received_ms, retained)
                if isinstance(got, Taken):
                    taken.append(got)
                elif got:
                    emit(got)
        if taken:
            self.answers.store_and_answer(taken, emit)
        return out

    def follow_rounds(self, logs: dict[int, Path], unused: frozenset[str] = frozenset()) -> None:
        """The logs of the event's other rounds, by event id (`tabletimer
        run`): a board's event made under one of their schedules is stored
        there (answers.py), and this hub's command counters start above
        theirs (a board left on took them).  unused: their boards this
        round does not use (online in the hall, and no alert: alerts.py)."""
        self.state.other_rounds, self.state.unused_boards = logs, unused
        self.commands.follow_counters(other_rounds_reserved(logs.values()))

    def log_opened(self) -> None:
        """The store opened its log since the service was made (a round's
        log made later): nothing was applied before, and the rows are
        checked against the log's own event id, as a hub's are."""
        self.state.event_id = self.competition.event_id = self.store.event_id

    def send_nothing(self) -> None:
        """This process sends nothing to the boards (a command-line action
        beside the running hub, which sends as it applies the rows)."""
        self.state.live = False

    def catch_up(self) -> int:
        """Apply rows another process appended (operator commands from the
        command line); returns how many."""
        with self.state.writer, self.state.lock:
            rows = self.store.events(after=self.state.caught_up)
            new = [r for r in rows if not self.competition.has(r["id"])]
            for row in new:
                self.state.apply(row)
            if rows:
                self.state.caught_up = rows[-1]["id"]
            if new and self.commands.sending():
                self.state.publish(self.schedules() + self.station_messages())   # in counter order
        return len(new)

    def connected(self) -> None:
        """The hub is (again) connected to its broker: every board's
        schedule again (a broker restarted without persistence lost the
        retained ones) and the hub's status on each board's topic, published
        in counter order."""
        with self.state.lock:
            self.state.publish(self.schedules() + self.hub_online())

    # ------------------------------------------------------ the clock
    def start_clock(self, other_anchors: list[dict] | None = None) -> list[str]:
        """The running hub's time base, written to the log; what the operator
        must know of the laptop's clock (timekeeper.py)."""
        return self.timekeeper.start(other_anchors)

    def keep_time(self) -> None:
        """The laptop's clocks and the boards' witness checked (each tick)."""
        self.timekeeper.tick()

    def clock_alerts(self, now_ms: int | None = None) -> list[str]:
        """The clock's happenings of the last ALERT_MS, in the head referee's words."""
        now = self.clock.now_ms() if now_ms is None else now_ms
        with self.state.lock:
            recent = [p for p in self.state.clock_events if now - p["hub_ms"] < ALERT_MS]
        return [line for line in (clock_alert(p, fmt_clock) for p in recent) if line]

    # ------------------------------------------------------ to the boards
    def schedules(self, boards: list[str] | None = None, force: bool = False) -> list[Outgoing]:
        """Signed schedules for the boards (default: every board with a key)
        whose schedule changed since last published (all with force)."""
        return self.commands.schedules(boards, force)

    def station_messages(self, boards: list[str] | None = None, force: bool = False) -> list[Outgoing]:
        """Signed station states for the boards (default: every board with a
        key) whose stations changed since last published (all with force)."""
        return self.commands.station_messages(boards, force)

    def hub_online(self) -> list[Outgoing]:
        """The hub's (re)connection, told to each board, signed and numbered."""
        return self.commands.hub_online()

    def check_writable(self) -> None:
        """LogWriteFailed unless the log takes a committed write now (the
        first block of command counters): a hub must not start on a log it
        cannot write, acknowledging nothing all event."""
        self.commands.check_writable()

    # ------------------------------------------------------ operator actions
    def start_round(self, at_ms: int | None = None, duration_ms: int | None = None,
                    warnings_ms: tuple[int, ...] = (), who: str = "operator", why: str = "") -> dict:
        """Start the round at at_ms (default now): operator_actions.py."""
        return self.actions.start_round(at_ms, duration_ms, warnings_ms, who, why)

    def check_action(self, action: str, payload: dict, who: str = "operator", why: str = "") -> None:
        """ValueError (in an operator's words) unless the action may be
        recorded as it is: operator_actions.py."""
        self.actions.check_action(action, payload, who, why)

    def consequences(self, action: str, payload: dict) -> list[str]:
        """What recorded results an action (already checked) would replace
        or discard, for the operator to confirm; empty when none."""
        return self.actions.consequences(action, payload)

    def act(self, action: str, payload: dict, who: str = "operator", why: str = "",
            request: str | None = None, precondition: Callable[[Competition], None] | None = None) -> dict:
        """Check an operator action, then store and apply it (its
        idempotency key `request`, its `precondition`: operator_actions.py).
        A round start without warnings (absent or null) gets the format's
        (Format.default_warnings_ms): blank means the same on every path."""
        return self.actions.act(action, with_defaults(self.competition.format, action, payload), who, why,
                                request, precondition)

    def identical_decision(self, action: str, payload: dict, who: str) -> dict | None:
        """The stored row of this very decision by who, if it is the one
        recorded now (a second tap: no conflict, nothing new): operator_actions.py."""
        return self.actions.identical_decision(action, payload, who)

    def latest_decision_row(self, action: str, payload: dict) -> int | None:
        """The row of the latest decision on the action's call or count (0:
        none; None: not a decision): the desk's `seen` (operator_actions.py)."""
        return self.actions.latest_decision_row(action, payload)

    def note_conflict(self, by: str, who: str, action: str, payload: dict, text: str,
                      table: str | None = None) -> dict:
        """Store an intent refused as a conflict: a CONFLICT line until resolved."""
        return self.actions.note_conflict(by, who, action, payload, text, table)

    # ------------------------------------------------------ views
    def read(self, fn: Callable[[Competition, int], T]) -> T:
        """fn(competition, hub time now), with the state held still (the
        message lock): for views of the state that are not the consoles'
        snapshot (the web pages).  fn must be quick and must not block."""
        with self.state.lock:
            return fn(self.competition, self.clock.now_ms())

    def station_states(self, now_ms: int | None = None) -> list[StationState]:
        """Every station's state as the log makes it (at now_ms, default
        now): what the boards are told and what the consoles show."""
        with self.state.lock:
            return station_states(self.competition, self.clock.now_ms() if now_ms is None else now_ms)

    def alerts(self, sync_limit_ms: int = POOR_SYNC_MS) -> list[str]:
        """What needs the head referee's attention, besides waiting calls
        (and, while a hall check runs, what it still waits for)."""
        fenced = [f"FENCED: {self.fenced}"] if self.fenced else []
        return fenced + self.split.alerts() + self.clock_alerts() + self._hall_check_lines() + hub_alerts(
            self.competition, self.registry, self.network_alerts(), write_failure=self.write_failure,
            rejected=self.counts.rejected, sync_limit_ms=sync_limit_ms, unused=self.state.unused_boards)

    def _hall_check_lines(self) -> list[str]:
        """While a hall check runs: the hall's progress and each board not ready."""
        check = self.hall_check_running()
        if check is None:
            return []
        return [f"HALL CHECK: {check.progress()}"] + [
            f"hall check: {b.board} not ready: {'; '.join(b.reasons)}" for b in check.boards if not b.ready]

    def network_alerts(self) -> list[str]:
        """The alerts of what the hub sees on the network and the log does
        not hold.  A remote console shows the hub's (server.py sends them)."""
        with self.state.lock:        # the jumps and refusals are the network thread's
            jumps, refusals = dict(self.counts.jumps), dict(self.counts.refusals)
        return network_alerts(self.queries.alert_sources(), self.registry, self.clock.now_ms(), self.counts.retained_junk,
                              jumps, refusals, unused=self.state.unused_boards)

    def blind(self) -> str | None:
        """Why what this process shows of the boards may be out of date
        (None: it is live)."""
        return self.queries.blind()

    def snapshot(self) -> Snapshot:
        """What the consoles show, read at once under the message lock; the
        standings are ranked after it is let go, so a ranking never delays
        an ack."""
        with self.state.lock:
            now = self.clock.now_ms()
            snap, work = read_snapshot(self.competition, self.registry, now, rejected=self.counts.rejected,
                                       duplicates=self.counts.duplicates, alerts=self.alerts(),
                                       activity=list(self.activity), blind=self.blind())
        snap.standings = self._ranker.rank(work, now)
        snap.status = self.queries.status_lines()      # outside the lock: a part's own lock only
        # the ranking's remarks for the desk (a confirmation with no finish to confirm, ...):
        # alerts here, never in what the hall or the results show
        notes = desk_notes(snap.standings, routine=False)
        if notes:
            snap.alerts = snap.alerts + [f"NOTE {n}" for n in notes]
        return snap

    def hall_check(self, hub_fw: str | None = None, clock_limit_ms: int = CLOCK_LIMIT_MS,
                   rssi_min: int = RSSI_MIN_DBM) -> HallCheck:
        """The latest hall check as the log and the boards make it now; one
        the round's start ended (before its verdict) as it stood then, saying
        so (ended_by_start_ms): hall_check.latest_check."""
        with self.state.lock:
            return latest_check(self.competition, self.registry.boards, self.clock.now_ms(), hub_fw,
                                clock_limit_ms, rssi_min)

    def hall_check_running(self, hub_fw: str | None = None, clock_limit_ms: int = CLOCK_LIMIT_MS,
                           rssi_min: int = RSSI_MIN_DBM) -> HallCheck | None:
        """The hall check while it runs (begun, its verdict not given, the
        round not started), as hall_check(); None when none runs:
        hall_check.running_check."""
        with self.state.lock:
            return running_check(self.competition, self.registry.boards, self.clock.now_ms(), hub_fw,
                                 clock_limit_ms, rssi_min)

    def standings_as_they_stand(self) -> tuple[list[StandingRow], int | None]:
        """The standings now, final once the round's time is up, and how long
        until then (None: final): Competition.standings_as_they_stand."""
        with self.state.lock:
            return self.competition.standings_as_they_stand(self.clock.now_ms())

    def standings(self, final: bool = False) -> list[StandingRow]:
        """The standings now (entrants still within their time are
        'running'), or as final results."""
        with self.state.lock:
            return self.competition.standings(None if final else self.clock.now_ms())
