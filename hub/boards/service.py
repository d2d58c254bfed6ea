"""The hub's core: turns incoming MQTT messages into stored events, acks,
clock-sync replies and an updated round state, and produces the commands
(signed schedules, identify) the operator's actions call for.

I/O-free except for the event store it is given: the MQTT adapter feeds
`handle()` and publishes what it returns or passes to `publish`.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter, deque
from typing import Callable, NamedTuple, TypeVar

from tabletimer.shared import protocol
from tabletimer.shared.auth import AuthError

from . import hub_protocol
from .snapshot import Ranker, Snapshot, read as read_snapshot
from ..event.clock import HubClock
from ..event.actions import META, MAX_TEXT
from ..event.competition import Competition
from ..event.station_state import StationState, station_states
from .keys import BoardKeys
from .registry import BoardRegistry
from .replay import ReplayGuard
from ..rules.standings import StandingRow
from ..rules.timetext import fmt_clock
from ..event.store import CONFLICT, DUPLICATE, STORED, EventStore
from ..event.log_health import STORE_ERRORS, LogWriteFailed, write_failure_advice
from ..event.consequences import consequences
from .station_messages import station_entries

log = logging.getLogger(__name__)
T = TypeVar("T")

IDENTIFY_TTL_MS = 10_000
# the hub's command counter (each command's 'ctr', which a board requires to
# grow) is reserved in the log this many numbers at a time: one write per
# block, not per message, and a restart continues above the last block
CTR_BLOCK = 10_000
# (topic kind, message type) a board may send; events are checked separately
_ACCEPTED = {(protocol.SYNC, protocol.T_SYNC), (protocol.STATUS, protocol.T_STATUS)}


REJECTED_LINE_EVERY_MS = 1000     # the event log's lines for rejected messages, per category
# the longest signed message a board takes: its body (protocol.MAX_PAYLOAD), "\n" and the MAC
SIGNED_PAYLOAD_MAX = protocol.MAX_PAYLOAD + 1 + 64


class RequestConflict(ValueError):
    """An action sent again under the idempotency key of a stored one, with
    other content: not stored, never a silent replacement."""

    def __init__(self, message: str, row: dict) -> None:
        super().__init__(message)
        self.row = row


class Outgoing(NamedTuple):
    topic: str
    payload: bytes
    qos: int
    retain: bool


class _Taken(NamedTuple):
    """A board message that passed the checks, to be stored."""
    board: str
    kind: str            # protocol.STATUS or protocol.EVENT
    msg: dict
    received_ms: int


class HubService:
    def __init__(self, store: EventStore, keys: BoardKeys, competition: Competition,
                 clock: HubClock | None = None) -> None:
        self.store = store
        self.keys = keys
        self.clock = clock or HubClock()
        self.registry = BoardRegistry()
        self.competition = competition
        self.guard = ReplayGuard()
        self.boot_jumps: dict[str, str] = {}        # board -> its last message rejected for a boot jump
        # the event's id, in every schedule (a remote console's log has none: it sends none)
        self.event_id: int | None = store.event_id
        self.rejected: Counter[str] = Counter()   # reason -> count
        self.retained_again = 0     # boards' retained statuses had before, sent again at a (re)subscribe
        self.retained_junk = 0      # retained messages on board topics that failed the checks: cleared
        self._cleared: set[str] = set()   # topics cleared so (the empty message comes back to the hub)
        self._rejections_noted: dict[str, list] = {}   # category -> [hub ms of its last line, not noted since]
        self.duplicates = 0
        self.activity: deque[str] = deque(maxlen=200)
        self.listeners: list[Callable[[dict], None]] = []
        self.reject_listeners: list[Callable[[str, str], None]] = []   # (category, detail)
        self.alert_sources: list[Callable[[], list[str]]] = []   # more alerts (the MQTT adapter's self-probe)
        # why this process cannot know the boards' state now (a second console whose hub is not
        # running or cannot be reached); the first that says so counts
        self.blind_sources: list[Callable[[], str | None]] = []
        self.publish: Callable[[list[Outgoing]], None] = lambda out: None   # set by the adapter
        self._ctr_next, self._ctr_last = 1, 0   # the reserved block not used yet
        self.write_failure: dict | None = None   # the failed writes now: since, count, advice
        self._sched_sent: dict[str, tuple] = {}  # board -> (content, id) last published
        self._stations_sent: dict[str, list] = {}   # board -> station entries last published
        self._installs: dict[str, set[str]] = {}  # board -> the installs heard under its id
        self._lock = threading.RLock()        # the state: held while it is read or changed, never for a commit
        # held from a write to the log to its apply (taken before _lock): rows apply in the log's order
        self._writer = threading.RLock()
        self._ranker = Ranker()        # the consoles' standings (snapshot)
        self._caught_up = 0      # every row with an id up to this one is applied
        self._requests: dict[str, dict] = {}   # idempotency key -> the operator row it stored
        self._live = False       # replaying the log at start: no commands go out
        for ev in store.events():                # resume: replay the log
            if ev["source"] == "board":
                self.guard.check(ev["board"], ev["payload"], stored=True)
                self._heard(ev["board"], ev["payload"])
            elif ev["type"] == "conflict" and isinstance(ev["payload"].get("msg"), dict):
                self.guard.check(ev["board"], ev["payload"]["msg"], stored=True)
                self._heard(ev["board"], ev["payload"]["msg"])
            self._apply(ev)
            self._caught_up = ev["id"]
        self._live = True

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
        taken: list[_Taken] = []
        for topic, payload, received_ms, retained in messages:
            with self._lock:        # (numbered and passed on in one go: see _store_and_answer)
                got = self._admit(topic, payload, received_ms, retained)
                if isinstance(got, _Taken):
                    taken.append(got)
                elif got:
                    emit(got)
        if taken:
            self._store_and_answer(taken, emit)
        return out

    def _admit(self, topic: str, payload: bytes, received_ms: int, retained: bool) -> "list[Outgoing] | _Taken":
        """A message's checks: what answers it now (a rejection, a sync
        reply), or the message to store."""
        if topic == hub_protocol.HUB_STATUS:
            return []                            # our own retained status
        if not payload and topic in self._cleared:
            self._cleared.discard(topic)         # our own clear of retained junk, back
            return []
        try:
            board, kind = hub_protocol.parse_board_topic(topic)
        except protocol.ProtocolError as e:
            return self._reject("malformed", str(e), topic, retained)
        if retained and kind in (protocol.EVENT, protocol.SYNC):
            # boards never retain these: somebody's junk, sent again at every
            # hub start by the broker until it is cleared
            return self._reject("malformed", "a retained " + kind, topic, retained)
        if len(payload) > SIGNED_PAYLOAD_MAX:
            return self._reject("malformed", f"payload too large: {len(payload)} bytes", topic, retained)
        signer = self.keys.signer(board)
        if signer is None:
            self.keys.refresh()     # flashed since the hub started? (a file read only if it changed)
            signer = self.keys.signer(board)
            if signer is None:
                return self._reject("unknown board", board, topic, retained)
        try:
            msg = hub_protocol.decode_from_board(signer.open(topic, payload))
        except AuthError as e:
            return self._reject("forged", str(e), topic, retained)
        except (protocol.ProtocolError, RecursionError) as e:
            return self._reject("malformed", str(e) or "nested too deep", topic, retained)
        typ = msg["type"]
        if (kind, typ) not in _ACCEPTED and not (kind == protocol.EVENT and typ in hub_protocol.EVENT_TYPES):
            return self._reject("malformed", f"unexpected {typ} message on {kind}", topic, retained)
        if kind == protocol.SYNC and "t2" in msg:
            return self._reject("malformed", "a sync reply from a board", topic, retained)
        with self._lock:
            why = self.guard.check(board, msg)
            if why and why.startswith("boot jump"):
                self.boot_jumps[board] = why
                return self._reject("boot jump", why, topic, retained)
            if why and retained and kind == protocol.STATUS:
                # a board's retained status the hub has had before: what
                # the broker keeps for it, sent again because the hub
                # (re)subscribed -- not an attack, not counted as one (a
                # replay published live by anyone comes without the flag)
                self.retained_again += 1
                return []
            if why:
                return self._reject("replayed", why, topic, retained)
            self.boot_jumps.pop(board, None)     # it is heard again: not locked out
            self._heard(board, msg)
            self.registry.seen(board, received_ms)
            if kind != protocol.SYNC:
                return _Taken(board, kind, msg, received_ms)
            try:
                reply = hub_protocol.sync_reply(msg, received_ms, self.clock.now_ms())
                return [self._to_board(board, protocol.CMD, reply, 0)]
            except LogWriteFailed:
                return []         # no command counters: the board asks again

    def _store_and_answer(self, taken: "list[_Taken]", emit: Callable[[list[Outgoing]], None]) -> None:
        """Store the messages in one transaction, apply them, then answer
        each.  The writer lock keeps every other write (an operator's
        action, rows of another process caught up) out from the commit to
        the apply, so rows are applied in the log's order; it is let go
        before the answers, so that a referee's action waits for one commit
        and its apply, not for a batch's acks.  The message lock is not held
        during the commit (sync replies, the consoles' and pages' reads go
        on meanwhile)."""
        with self._writer:
            try:
                with self.store.transaction():              # one commit (fsync) for all
                    results = [self._store(t) for t in taken]
            except STORE_ERRORS as e:
                self._write_failed(e)
                return           # nothing acked: the boards keep their events and send them again
            self._written()
            with self._lock:
                for _, row in results:
                    if row is not None:
                        self._apply(row)     # a conflict row is alerted, never folded as the event
                self._applied_next([row["id"] for stored, row in results
                                    if row is not None and stored != DUPLICATE])
        for t, (stored, row) in zip(taken, results):
            # numbered and published under the one lock: a board drops a
            # command whose counter is not above the last it took, so two
            # threads must not publish theirs in the other order
            with self._lock:
                try:
                    out = self._answer(t, stored, row)
                except LogWriteFailed:
                    continue     # stored, not acked (no command counters): sent again, acked then
                if out:
                    emit(out)

    def _applied_next(self, ids: list[int]) -> None:
        """Rows this hub wrote in one transaction (their ids consecutive),
        applied: when they are the next ones after every row applied, so is
        every row up to the last of them, and catch_up need not read them
        back (it read, and decoded, every row the hub wrote, four times a
        second).  A row of another process in between: catch_up reads from
        it, as before.  Called under the writer lock."""
        if ids and ids[0] == self._caught_up + 1:
            self._caught_up = ids[-1]

    def _store(self, t: "_Taken") -> tuple[str, dict | None]:
        """Append a message inside the open transaction."""
        if t.kind == protocol.STATUS:
            return STORED, self.store.append("board", "status", t.msg, t.received_ms, t.board)
        return self.store.append_board_event(t.board, t.msg, t.received_ms)

    def _answer(self, t: "_Taken", stored: str, row: dict | None) -> list[Outgoing]:
        """A stored message (committed and applied): answered."""
        board, msg = t.board, t.msg
        typ = msg["type"]
        if t.kind == protocol.STATUS:
            if msg["state"] == protocol.ONLINE:
                # a board flashed after the round began has no retained
                # schedule yet; a rebooted one gets the current one again,
                # and the state of its stations
                return self.schedules([board], force=True) + self.station_messages([board], force=True)
            return []
        assert row is not None or stored == DUPLICATE
        # the install named once the id has more than one: a dead board's
        # (boot, seq) is not its spare's
        several = len(self._installs.get(board, ())) > 1
        install = hub_protocol.install_of(msg) if several else None
        if stored == DUPLICATE:
            self.duplicates += 1
            lost = self.registry.duplicate(board, hub_protocol.install_of(msg), msg["boot"], msg["seq"],
                                           t.received_ms)
            if lost:
                self.activity.append(lost)
        if stored != STORED:          # a duplicate, or a conflict row: the ack alone
            return [self._to_board(board, protocol.CMD, hub_protocol.ack(msg["boot"], msg["seq"], install), 1)]
        assert row is not None
        rec = st = None
        if typ in ("press", "confirm"):
            rec = self._recorded(board, msg)
        if typ in ("press", "confirm", "void"):
            # when its stations changed (not after every event: one more
            # message per event broke the board's 64 KB heap), and after a
            # decision refused as a conflict: the board that made it
            # follows the one recorded
            comp = self.competition
            comp.facts()                  # folded: its conflicts listed
            refused = typ != "press" and any(c.row == row["id"] for c in comp.conflicts)
            st = self._changed_entries(board, force=refused)
        out = self._event_answers(board, msg, install, rec, st)
        if self.competition.format.relay is not None and typ in ("press", "void"):
            # a relay finish changes its team's rotations
            out += self.schedules(self.competition.team_boards(board, msg["station"]))
        return out

    def _event_answers(self, board: str, msg: dict, install: str | None, rec: dict | None,
                       st: list[list] | None) -> list[Outgoing]:
        """A stored event's ack, with its recorded time (rec) and its
        stations' new state (st) in it for a board that takes them there
        (its birth said "ack": 2), else (last month's firmware) the ack, then
        `recorded`, then `stations`.  LogWriteFailed when the ack cannot be
        numbered: nothing is sent (the board sends the event again), and the
        stations are sent again with the next change."""
        boot, seq = msg["boot"], msg["seq"]
        info = self.registry.boards.get(board)
        try:
            if info is not None and info.answers_in_ack and (rec is not None or st is not None):
                one = self._to_board(board, protocol.CMD, hub_protocol.ack(boot, seq, install, rec, st), 1)
                if len(one.payload) <= SIGNED_PAYLOAD_MAX:
                    return [one]
                # (a board of dozens of stations: too long for one message, sent apart)
            out = [self._to_board(board, protocol.CMD, hub_protocol.ack(boot, seq, install), 1)]
        except LogWriteFailed:
            if st is not None:
                self._stations_sent.pop(board, None)
            raise
        try:
            if rec is not None:
                out.append(self._to_board(board, protocol.CMD, rec, 1))
            if st is not None:
                out.append(self._to_board(board, protocol.CMD, hub_protocol.stations(st), 1))
        except LogWriteFailed:
            # the ack goes out; the recorded time is only for a display, and
            # the board gets the stations with the next change
            self._stations_sent.pop(board, None)
        return out

    def _heard(self, board: str, msg: dict) -> None:
        """Note the installs a board message shows under its board id."""
        seen = self._installs.setdefault(board, set())
        seen.add(hub_protocol.sender_install(msg))
        if msg.get("type") in hub_protocol.EVENT_TYPES:
            seen.add(hub_protocol.install_of(msg))

    def _recorded(self, board: str, msg: dict) -> dict | None:
        """The time recorded for the call, back to its station (cheap: no
        re-ranking in the path of the ack): the `recorded` message, or None
        when the call is no finish."""
        comp = self.competition
        if msg["type"] == "press":
            call = [msg["boot"], msg["seq"]]
            pid = comp.press_id_of(board, hub_protocol.install_of(msg), *call)
        else:
            call = msg["call"]
            pid = comp.call_press_id(board, msg)
        at = comp.press_at(pid)              # None: not a timed press that can be a finish (refused)
        t = comp.recorded_time(board, msg["station"], at)
        if t is None:
            return None
        return hub_protocol.recorded(msg["station"], call, t, msg["type"] == "confirm")

    def _reject(self, category: str, detail: str, topic: str, retained: bool = False) -> list[Outgoing]:
        if retained:
            # junk a broker keeps on a board's topic (it came live once, and
            # was counted then if the hub listened): cleared, so that it is
            # not sent again at every hub start, and not counted again
            with self._lock:
                self.retained_junk += 1
                self._cleared.add(topic)
                self.activity.append(f"cleared a retained message on {topic} ({category}: {detail})")
            return [Outgoing(topic, b"", 1, True)]
        with self._lock:         # a snapshot reads these whole
            self.rejected[category] += 1
            # a line per category a second at most: 20,000 junk messages
            # must not push the event log's real lines off the console
            now = self.clock.now_ms()
            noted = self._rejections_noted.get(category)
            if noted is not None and now - noted[0] < REJECTED_LINE_EVERY_MS:
                noted[1] += 1
            else:
                more = f" (and {noted[1]} more like it since {fmt_clock(noted[0])})" if noted and noted[1] else ""
                self.activity.append(f"rejected ({category}) on {topic}: {detail}{more}")
                self._rejections_noted[category] = [now, 0]
        for fn in self.reject_listeners:
            fn(category, detail)
        return []

    def _to_board(self, board: str, kind: str, msg: dict, qos: int, retain: bool = False) -> Outgoing:
        """A command to one board, numbered and signed with its key."""
        signer = self.keys.signer(board)
        assert signer is not None
        with self._lock:
            protocol.stamp(msg, self._next_ctr())
        topic = protocol.board_topic(board, kind)
        return Outgoing(topic, signer.sign(topic, protocol.encode(msg)), qos, retain)

    # ------------------------------------------------------ log writes
    def _write(self, fn, *args, told: bool = False):
        """A write to the log (fn(*args)); LogWriteFailed if it fails (told:
        the caller shows its message to whoever asked)."""
        try:
            result = fn(*args)
        except STORE_ERRORS as e:
            raise self._write_failed(e, told) from e
        self._written()
        return result

    def _write_failed(self, err: BaseException, told: bool = False) -> LogWriteFailed:
        """Note a failed write: an alert while they last, logged once per
        burst (not once per message: a hall of boards resends every second),
        unless the one who asked is told (an operator's action)."""
        advice = write_failure_advice(getattr(self.store, "path", "events.sqlite"), err)
        with self._lock:
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

    def _written(self) -> None:
        if self.write_failure is None:
            return
        with self._lock:
            f, self.write_failure = self.write_failure, None
        if f is not None:
            msg = (f"the event log is written again, after {f['count']} failed write(s) since "
                   f"{fmt_clock(f['since'])}; the boards send again what was not acknowledged")
            if f["logged"]:
                log.warning("%s", msg)
            self.note(msg)

    def check_writable(self) -> None:
        """LogWriteFailed unless the log takes a committed write now (the
        first block of command counters): a hub must not start on a log it
        cannot write, acknowledging nothing all event."""
        with self._lock:
            self._reserve_ctr_block(told=True)

    def _reserve_ctr_block(self, told: bool = False) -> None:
        first = self._write(self.store.reserve, "hub_ctr", CTR_BLOCK, self.clock.now_ms(), told=told)
        self._ctr_next, self._ctr_last = first, first + CTR_BLOCK - 1

    def _next_ctr(self) -> int:
        """The next command counter: strictly above every one this event's
        hub sent before, whatever the laptop's clock says now.  Numbers come
        from a block reserved durably in the log (store.reserve) before any is
        used; the hub clock is a floor, so a new log's first block is above
        what a hub of another event numbered a board that has not rebooted
        since (counters were the clock's milliseconds)."""
        with self._lock:
            if self._ctr_next > self._ctr_last:
                self._reserve_ctr_block()          # LogWriteFailed: the command is not sent
            n = self._ctr_next
            self._ctr_next += 1
            return n

    # ------------------------------------------------------ operator actions
    def start_round(self, at_ms: int | None = None, duration_ms: int | None = None,
                    warnings_ms: tuple[int, ...] = (), who: str = "operator", why: str = "") -> dict:
        """Start the round at at_ms (default now).  The limit defaults to the
        format's; time-up and the warnings (ms before the end) are scheduled
        on every board (signed, retained, so a board that reboots gets it
        again)."""
        now = self.clock.now_ms()
        return self.act("round_start", {"at": at_ms if at_ms is not None else now,
                                        "duration": duration_ms, "warnings": list(warnings_ms)},
                        who, why)

    def check_action(self, action: str, payload: dict, who: str = "operator", why: str = "") -> None:
        """Raise ValueError (in an operator's words) unless the action may be
        recorded as it is: its fields' shape, the event's entrants, presses
        and puzzles, times near the hub's clock, a board that exists."""
        if not isinstance(who, str) or not who.strip() or len(who) > MAX_TEXT:
            raise ValueError(f"{action}: who must be a name of at most {MAX_TEXT} characters")
        if not isinstance(why, str) or len(why) > MAX_TEXT:
            raise ValueError(f"{action}: why must be text of at most {MAX_TEXT} characters")
        with self._lock:
            self.competition.check_action(action, payload, self.clock.now_ms())
            if action in ("identify", "reset_board"):
                b = payload["board"]
                if b not in self.keys.boards() and b not in self.registry.boards:
                    raise ValueError(f"{action}: no board {b!r}")

    def consequences(self, action: str, payload: dict) -> list[str]:
        """What recorded results an action (already checked) would replace
        or discard, in words for the operator who must confirm it; empty
        when it changes no recorded decision."""
        with self._lock:
            return consequences(self.competition, action, payload, self.clock.now_ms())

    def act(self, action: str, payload: dict, who: str = "operator", why: str = "",
            request: str | None = None, precondition: Callable[[Competition], None] | None = None) -> dict:
        """Check an operator action (check_action), then append it (with who
        and why) and apply it; nothing is stored when the check fails
        (ValueError) or the log cannot be written (LogWriteFailed).

        request: the action's idempotency key (a phone's queued action sent
        again because its answer was lost).  The same key with the same
        action, payload and who: the stored row again, nothing new stored
        (its "duplicate" is True); with other content: RequestConflict.

        precondition(competition): called under the lock just before the
        action is stored (after the checks); what it raises is raised and
        nothing is stored (a page's intent made on a state that changed
        meanwhile: the web layer's conflict check)."""
        with self._writer, self._lock:
            if request is not None:
                earlier = self._requests.get(request)
                if earlier is not None:
                    return self._same_request(earlier, action, payload, who, why, request)
            stored = dict(payload, who=who, why=why)
            if request is not None:
                stored["request"] = request
            self.check_action(action, stored, who, why)
            if precondition is not None:
                precondition(self.competition)
            row = self._write(self.store.append, "operator", action, stored, self.clock.now_ms(), told=True)
            self._apply(row)
            self._applied_next([row["id"]])
            boards = self._boards_of(action, payload)
            self.publish(self.schedules(boards) + self.station_messages(boards))   # in counter order
        return row

    def _boards_of(self, action: str, payload: dict) -> list[str] | None:
        """The boards whose schedule or stations an operator action can
        change (None: every board: the round's start, an action on nobody's
        station).  300 boards' schedules after every referee's confirmation
        held the boards' acks back by seconds during a burst."""
        comp = self.competition
        entrant = payload.get("entrant")
        pid = payload.get("press_id")
        if action in ("identify", "reset_board") and isinstance(payload.get("board"), str):
            return [payload["board"]]
        if isinstance(pid, str) and not isinstance(entrant, str):
            at = comp.station_of(pid)
            if at is not None:
                return comp.team_boards(*at)
            entrant = comp.press_entrant(pid)          # a press recorded by hand
        if isinstance(entrant, str):
            return comp.entrant_boards(entrant) or None
        return None

    @staticmethod
    def _same_request(earlier: dict, action: str, payload: dict, who: str, why: str, request: str) -> dict:
        stored = {k: v for k, v in earlier["payload"].items() if k not in META}
        if (earlier["type"], stored, earlier["payload"].get("who"), earlier["payload"].get("why") or "") \
                == (action, payload, who, why):
            return dict(earlier, duplicate=True)
        raise RequestConflict(f"{action}: request {request!r} was already stored as row #{earlier['id']} "
                              f"({earlier['type']} by {earlier['payload'].get('who')}) with other content; "
                              "nothing stored", earlier)

    def read(self, fn: Callable[[Competition, int], T]) -> T:
        """fn(competition, hub time now), with the state held still (the
        message lock): for views of the state that are not the consoles'
        snapshot (the web pages).  fn must be quick and must not block."""
        with self._lock:
            return fn(self.competition, self.clock.now_ms())

    def catch_up(self) -> int:
        """Apply rows another process appended (operator commands from the
        command line); returns how many."""
        with self._writer, self._lock:
            rows = self.store.events(after=self._caught_up)
            new = [r for r in rows if not self.competition.has(r["id"])]
            for row in new:
                self._apply(row)
            if rows:
                self._caught_up = rows[-1]["id"]
            if new:
                self.publish(self.schedules() + self.station_messages())   # in counter order
        return len(new)

    def schedules(self, boards: list[str] | None = None, force: bool = False) -> list[Outgoing]:
        """Signed schedules for the boards (default: every board with a key)
        whose schedule changed since last published (all with force)."""
        out = []
        now = self.clock.now_ms()
        with self._lock:
            for b in (boards if boards is not None else self.keys.boards()):
                content = self.competition.schedule(b, now)
                if content is None or self.keys.signer(b) is None:
                    continue
                last = self._sched_sent.get(b)
                if last is not None and last[0] == content and not force:
                    continue
                # ids rise within the event (log row ids); the event id tells
                # a board reused from an earlier event that this is another one
                sid = max(self.competition.last_row_id(), last[1] + 1 if last and last[0] != content else 0)
                start, end, signals, rot, calls = content
                sched = hub_protocol.schedule(sid, start, end, signals, rot, calls, ev=self.event_id)
                try:
                    o = self._to_board(b, protocol.SCHED, sched, 1, retain=True)
                except LogWriteFailed:
                    break        # not numbered: sent with the next change or reconnection
                self._sched_sent[b] = (content, sid)
                out.append(o)
        return out

    def connected(self) -> None:
        """The hub is (again) connected to its broker: every board's
        schedule again (a broker restarted without persistence lost the
        retained ones) and the hub's status on each board's topic, published
        in counter order."""
        with self._lock:
            self.publish(self.schedules() + self.hub_online())

    def hub_online(self) -> list[Outgoing]:
        """The hub's (re)connection, told to each board on its own command
        topic, signed and numbered (the retained status on HUB_STATUS is
        unsigned: boards no longer act on it, or anyone could start sync
        storms).  A board sends what waits and syncs its clock."""
        out = []
        for board in self.keys.boards():
            try:
                out.append(self._to_board(board, protocol.CMD, hub_protocol.hub_status(protocol.ONLINE), 1))
            except LogWriteFailed:
                break            # no counters: the boards retry by themselves
        return out

    def station_states(self, now_ms: int | None = None) -> list[StationState]:
        """Every station's state as the log makes it (at now_ms, default
        now): what the boards are told and what the consoles show."""
        with self._lock:
            return station_states(self.competition, self.clock.now_ms() if now_ms is None else now_ms)

    def station_messages(self, boards: list[str] | None = None, force: bool = False) -> list[Outgoing]:
        """Signed station states for the boards (default: every board with a
        key) whose stations changed since last published (all with force).
        Each entry is by button from 1; a button without a station is idle."""
        out = []
        with self._lock:
            wanted = boards if boards is not None else self.keys.boards()
            if not wanted:
                return out
            by_board: dict[str, dict[int, StationState]] = {}
            for s in station_states(self.competition, self.clock.now_ms(),
                                    None if boards is None else set(wanted)):
                by_board.setdefault(s.board, {})[s.button] = s
            for b in wanted:
                mine = by_board.get(b)
                if not mine or self.keys.signer(b) is None:
                    continue
                entries = self._entries_to_send(b, mine, force)
                if entries is not None:
                    out.append(self._to_board(b, protocol.CMD, hub_protocol.stations(entries), 1))
        return out

    def _changed_entries(self, board: str, force: bool = False) -> list[list] | None:
        """One board's station entries to send (_entries_to_send); None
        when they did not change, or it has no station."""
        with self._lock:
            mine = {s.button: s for s in station_states(self.competition, self.clock.now_ms(), {board})}
            return self._entries_to_send(board, mine, force) if mine else None

    def _entries_to_send(self, board: str, mine: dict[int, StationState], force: bool) -> list[list] | None:
        """The board's station entries (station_entries) when they changed
        since last sent (always, with force), noted as sent; else None."""
        entries = station_entries(self.competition, board, mine)
        if not force and self._stations_sent.get(board) == entries:
            return None
        self._stations_sent[board] = entries
        return entries

    def _identify_now(self, board: str) -> None:
        """An 'identify' action applied live: the board buzzes and blinks."""
        if self.keys.signer(board) is None:
            return
        msg = hub_protocol.identify(self.clock.now_ms() + IDENTIFY_TTL_MS)
        try:
            self.publish([self._to_board(board, protocol.CMD, msg, 1)])
        except LogWriteFailed:
            pass                 # the alert says why; identify is not worth more

    # ------------------------------------------------------------ state
    def _apply(self, ev: dict) -> None:
        if self.competition.has(ev["id"]):
            return
        p = ev["payload"]
        if ev["source"] == "board" and ev["type"] == "status":
            self.registry.status(ev["board"], p, ev["received_ms"])
            self.activity.append(f"board {ev['board']} {p['state']}")
            if p.get("fault"):
                self.activity.append(f"board {ev['board']} RESET after a fault (boot {p['boot'] - 1}): {p['fault']}")
        elif ev["source"] == "board":
            if p.get("err") is not None:
                self.registry.get(ev["board"]).sync_err_ms = p["err"]
            self.activity.append(f"{ev['type']} {ev['board']}/{p['station']} at {p['at']}")
        elif ev["source"] == "hub" and ev["type"] == "conflict":
            m = p.get("msg") or {}
            self.activity.append(f"CONFLICT {ev['board']} boot {m.get('boot')} seq {m.get('seq')}: sent again "
                                 f"with other content than row #{p.get('of')}; stored as row #{ev['id']}")
        elif ev["type"] == "round_start":
            self.activity.append(f"round started at {p['at']}")
        elif ev["source"] == "operator":
            if isinstance(p.get("request"), str):
                self._requests.setdefault(p["request"], ev)
            if ev["type"] == "identify" and self._live and self.clock.now_ms() - ev["received_ms"] < IDENTIFY_TTL_MS:
                self._identify_now(p["board"])
            elif ev["type"] == "reset_board" and isinstance(p.get("board"), str):
                self.guard.reset(p["board"])     # its next message of each install starts afresh
                self.boot_jumps.pop(p["board"], None)
            self.activity.append(f"{p.get('who', 'operator')}: {ev['type']} "
                                 + " ".join(f"{k}={v}" for k, v in p.items() if k not in META and v is not None)
                                 + (f" ({p['why']})" if p.get("why") else ""))
        self.competition.apply(ev)
        if ev["id"] in self.competition.flagged:
            self.activity.append(f"row #{ev['id']} cannot apply: {self.competition.flagged[ev['id']]}")
        for fn in self.listeners:
            fn(ev)

    def alerts(self, sync_limit_ms: int = 20) -> list[str]:
        """What needs the head referee's attention, besides waiting calls."""
        out = []
        f = self.write_failure
        if f is not None:
            out.append(f"EVENT LOG NOT WRITTEN since {fmt_clock(f['since'])}: {f['count']} write(s) "
                       f"failed, nothing acknowledged meanwhile (the boards keep their presses and "
                       f"send them again) - {f['advice']}")
        out += self.network_alerts()
        comp, reg = self.competition, self.registry.boards
        running = comp.start_ms is not None
        for b in sorted({s.board for s in comp.stations}):
            info = reg.get(b)
            if info is None:
                out.append(f"board {b} (stations.csv) has not been seen")
            elif not info.online and running:
                out.append(f"board {b} is OFFLINE during the round")
            elif info.sync_err_ms is not None and info.sync_err_ms > sync_limit_ms:
                out.append(f"board {b}: clock sync ±{info.sync_err_ms} ms (poor WiFi?)")
        for b, info in sorted(reg.items()):
            if info.fault and info.online:
                out.append(f"board {b} RESET after a fault in boot {info.boot - 1}: {info.fault} "
                           f"(it runs again from its flash; tell the developers if it repeats)")
        known = {s.board for s in comp.stations}
        if not comp.auto_stations:
            for b in sorted(set(reg) - known):
                out.append(f"board {b} is not in stations.csv")
        if self.rejected.get("unknown board"):
            out.append(f"{self.rejected['unknown board']} message(s) from boards without a key")
        comp.facts()
        for c in comp.conflicts[-5:]:
            out.append(c.text())
        for rid, why in list(comp.flagged.items())[-5:]:
            out.append(f"log row #{rid} cannot apply ({why}): kept in the log, left out of the standings")
        for b, why in sorted(self.boot_jumps.items()):
            out.append(f"board {b}: messages rejected, {why}")
        for row in comp.key_conflicts[-5:]:
            p = row["payload"]
            m = p.get("msg") or {}
            out.append(f"CONFLICT: {row['board']} sent boot {m.get('boot')} seq {m.get('seq')} again with other "
                       f"content than log row #{p.get('of')} (two boards with one install id? a board's "
                       f"flash reset?): stored as row #{row['id']}, not ranked; check it, record a finish "
                       f"by hand if it is one")
        for r in comp.refused[-5:]:
            out.append(f"press {r.press_id} ({r.row['board']} button {r.row['payload']['station']}) refused, "
                       f"not ranked: {r.why}; record the finish by hand if it is one")
        for u in comp.unassigned[-5:]:
            out.append(f"{u.type} from {u.board} button {u.station}: no station for it")
        for row in comp.strays[-5:]:
            p = row["payload"]
            out.append(f"stray press {row['board']} button {p['station']} while {p['state']}")
        return out

    def network_alerts(self) -> list[str]:
        """The alerts of what the hub sees on the network and the log does
        not hold: its own path through the broker (alert_sources), the
        boards' liveness, retained junk cleared.  A remote console shows the
        hub's (server.py sends them)."""
        out = []
        for fn in self.alert_sources:
            out += fn()
        now = self.clock.now_ms()
        for _b, info in sorted(self.registry.boards.items()):
            out += self.registry.liveness_alerts(info, now)
        if self.retained_junk:
            out.append(f"{self.retained_junk} retained message(s) on board topics failed the checks and were "
                       f"cleared from the broker: somebody published them (who has a login?)")
        return out

    def blind(self) -> str | None:
        """Why what this process shows of the boards may be out of date
        (None: it is live)."""
        for fn in self.blind_sources:
            why = fn()
            if why:
                return why
        return None

    def snapshot(self) -> Snapshot:
        """What the consoles show, read at once under the message lock; the
        standings are ranked after it is let go, so a ranking never delays
        an ack."""
        with self._lock:
            now = self.clock.now_ms()
            snap, work = read_snapshot(self, now)
        snap.standings = self._ranker.rank(work, now)
        return snap

    def note(self, text: str) -> None:
        """A line for the consoles' event log (appended under the lock, so a
        snapshot reads the log whole)."""
        with self._lock:
            self.activity.append(text)

    def standings(self, final: bool = False) -> list[StandingRow]:
        """The standings now (entrants still within their time are
        'running'), or as final results."""
        with self._lock:
            return self.competition.standings(None if final else self.clock.now_ms())


