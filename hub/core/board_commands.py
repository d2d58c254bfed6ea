"""What the hub sends to the boards: each command numbered (a counter a board
requires to grow, reserved durably in the log a block at a time) and signed
with the board's key; the boards' signal schedules and their stations'
states, each sent when it changed since it was last sent; the hub's
(re)connection; an identify.  Part of the hub's service (service.py)."""

from __future__ import annotations

import threading
from collections import deque
from typing import Callable

from tabletimer.shared import protocol

from ..protocol import hub_protocol
from .changes import Changes, OperatorRowFolding, StationStatesChanged, ToBoards
from .terms import Terms
from ..event.fold.competition import Competition
from ..event.time.clock import HubClock
from ..protocol.hub_protocol import Outgoing
from ..protocol.keys import BoardKeys
from ..protocol.station_messages import station_entries
from ..event.log.log_health import LogWriteFailed
from ..event.log.rows import RowKind, kind_of
from ..event.fold.schedule import board_schedule
from ..event.fold.station_state import StationState, station_states
from ..event.log.store import EventStore

IDENTIFY_TTL_MS = 10_000
SEND_WITHIN_MS = 60_000       # a settings request applied later than this (a hub restarted) is not sent
# the hub's command counter (each command's 'ctr', which a board requires to
# grow, and to follow the hub's clock: a jump is refused) is reserved in the
# log this many numbers at a time: one write per block, not per message (at
# most one a minute: the counter follows the clock's ms), and a restart
# continues above the last block -- at most this far ahead of the clock
CTR_BLOCK = 60_000
# how far ahead of the clock the counters may start to pass another round's hub's (follow_counters):
# below the boards' window for a counter jump (5 minutes past the first this boot: firmware
# _HUB_JUMP_MS), whatever the other round's log reserved
FOLLOW_AHEAD_MS = 4 * 60_000


def other_rounds_reserved(logs) -> int:
    """The highest command counter the hubs of the event's other rounds
    reserved in their logs (logs: paths; 0: none)."""
    top = 0
    for path in logs:
        store = EventStore(path)
        try:
            top = max(top, store.reserved("hub_ctr"))
        finally:
            store.close()
    return top


class BoardCommands:
    """What is sent to the boards, given what it uses (service.py wires it):
    the board keys, the hub clock, the message lock, the terms (every
    command carries this hub's), the boots each board is in (every command
    names its board's), the fold (schedules, station states), the store and
    its write path (the counter blocks reserved), the event's id (read when
    a schedule is made: a hall process learns it late), publish,
    the consoles' activity lines, the notifications (identify and settings
    sent as their rows apply) and live (not replaying the log)."""

    def __init__(self, *, keys: BoardKeys, clock: HubClock, lock: threading.RLock, terms: Terms,
                 boots: dict[str, tuple[int, str]], competition: Competition, store: EventStore,
                 write: Callable, event_id: Callable[[], int | None], publish: Callable[[list[Outgoing]], None],
                 activity: deque[str], changes: Changes, live: Callable[[], bool]) -> None:
        self.keys, self.clock, self.lock, self.terms, self.boots = keys, clock, lock, terms, boots
        self.competition, self.store, self.write, self.event_id = competition, store, write, event_id
        self.publish, self.activity, self.live = publish, activity, live
        self.ctr_next, self.ctr_last = 1, 0   # the reserved block not used yet
        # the highest counter the hubs of the event's other rounds reserved (other_rounds_reserved):
        # a board that took theirs (up to a block ahead of the clock) refuses any below it
        self.ctr_floor = 0
        self.sched_sent: dict[str, tuple] = {}  # board -> (content, id) last published
        self.stations_sent: dict[str, list] = {}   # board -> station entries last published
        # the boot (and install) each board was told the hub's (re)connection for (hub_online);
        # a board whose boot the hub did not know then, or that has another since (it restarted
        # while the hub was away: it refused it), is told again with the answer to its next
        # message (owes_online)
        self.online_named: dict[str, tuple[int, str] | None] = {}
        self.changes = changes
        changes.subscribe(OperatorRowFolding, lambda n: self._operator_row(n.row))

    def sending(self) -> bool:
        """This process sends what is made here: it is live (not replaying the log, not a command-
        line action beside the running hub: HubService.send_nothing) and its MQTT link listens
        (ToBoards).  Whatever sends nothing must not number commands: each block of counters it
        reserved in the log put the running hub's next block a minute further ahead of the clock,
        and a board refuses a counter 5 minutes ahead as a jump (a desk's 8 `act`s beside a hub:
        every board refused the hub's acks from its next block on)."""
        return self.live() and self.changes.subscribed((ToBoards,))

    # ------------------------------------------------------ one command
    def to_board(self, board: str, kind: str, msg: dict, qos: int, retain: bool = False,
                 to: dict | None = None) -> Outgoing:
        """A command to one board, numbered and signed with its key
        (LogWriteFailed when no counter can be reserved: nothing is sent).
        A command (not a schedule: retained, a rebooted board must take it)
        names the board's boot it is for, 'bt', and its install, 'bi': to's,
        the board message it answers (an ack, a clock-sync reply), else the
        latest the hub has taken of the board (HubState.boots; none yet: the
        command names none, and a board that checks refuses it).  A board
        refuses a command of another boot, so nothing captured in one boot
        is taken in a later one (docs/protocol.md, "Authenticity and replay
        protection")."""
        signer = self.keys.signer(board)
        assert signer is not None
        with self.lock:
            term = self.terms.term
            if term > 1:
                msg["term"] = term                   # after a takeover: the boards refuse a lower one
            # its proof (hub_secret.py): with a higher term, which a board takes only so proven; in a
            # schedule always (term 1's: what a board checks the next term's proof against)
            tp = self.terms.term_proof() if term > 1 or kind == protocol.SCHED else None
            if tp is not None:
                msg["hash"] = tp
            boot: tuple = ()
            if kind != protocol.SCHED:
                boot = ((to["bt"], hub_protocol.sender_install(to)) if to is not None
                        else self.boots.get(board, ()))
            protocol.stamp(msg, self.next_ctr(), *boot)
        topic = protocol.board_topic(board, kind)
        return Outgoing(topic, signer.sign(topic, protocol.encode(msg)), qos, retain)

    def follow_counters(self, reserved: int) -> None:
        """Number the commands above what the event's other rounds' hubs
        may have numbered a board with (their logs reserved up to
        `reserved`), but never more than FOLLOW_AHEAD_MS ahead of the clock:
        a counter that far ahead is refused by a board as a jump."""
        self.ctr_floor = min(reserved, self.clock.now_ms() + FOLLOW_AHEAD_MS)

    def check_writable(self) -> None:
        """LogWriteFailed unless the log takes a committed write now (the
        first block of command counters): a hub must not start on a log it
        cannot write, acknowledging nothing all event."""
        with self.lock:
            self._reserve_ctr_block(told=True)

    def _reserve_ctr_block(self, told: bool = False) -> None:
        first = self.write(self.store.reserve, "hub_ctr", CTR_BLOCK, max(self.clock.now_ms(), self.ctr_floor), told=told)
        self.ctr_next, self.ctr_last = first, first + CTR_BLOCK - 1

    def next_ctr(self) -> int:
        """The next command counter: max(the previous + 1, the hub clock in
        ms), strictly above every one this event's hub sent before, whatever
        the laptop's clock says now.  Numbers come from a block reserved
        durably in the log (store.reserve) before any is used.  Following the
        clock, the counter never jumps ahead of it by more than CTR_BLOCK (a
        restart within a block) unless the hub sends more than a command a
        millisecond for long: a board refuses a counter further ahead of the
        hub's clock than when it first heard the hub (docs/protocol.md).  (A
        counter left behind the clock, as when it counted commands only,
        made a jump of hours at the next block.)  The clock as a floor also
        puts a new log's first block above what a hub of another event
        numbered a board that has not rebooted since; a hub of another round
        of this event may have numbered it up to a block ahead of the clock:
        above ctr_floor too (the next round's hub was refused as a replay for
        up to a minute: issue 45, item 4)."""
        with self.lock:
            n = max(self.ctr_next, self.clock.now_ms(), self.ctr_floor + 1)
            if n > self.ctr_last:
                self._reserve_ctr_block()          # LogWriteFailed: the command is not sent
                n = self.ctr_next
            self.ctr_next = n + 1
            return n

    # ------------------------------------------------------ schedules
    def schedules(self, boards: list[str] | None = None, force: bool = False) -> list[Outgoing]:
        """Signed schedules for the boards (default: every board with a key)
        whose schedule changed since last published (all with force)."""
        out = []
        now = self.clock.now_ms()
        with self.lock:
            comp = self.competition
            for b in (boards if boards is not None else self.keys.boards()):
                content = board_schedule(comp, b, now)
                if content is None or self.keys.signer(b) is None:
                    continue
                last = self.sched_sent.get(b)
                if last is not None and last[0] == content and not force:
                    continue
                # ids rise within the event (log row ids); the event id tells
                # a board reused from an earlier event that this is another one
                sid = max(comp.last_row_id(), last[1] + 1 if last and last[0] != content else 0)
                start, end, signals, rot, calls = content
                sched = hub_protocol.schedule(sid, start, end, signals, rot, calls, ev=self.event_id())
                try:
                    o = self.to_board(b, protocol.SCHED, sched, 1, retain=True)
                except LogWriteFailed:
                    break        # not numbered: sent with the next change or reconnection
                self.sched_sent[b] = (content, sid)
                out.append(o)
        return out

    # ------------------------------------------------------ stations
    def station_messages(self, boards: list[str] | None = None, force: bool = False) -> list[Outgoing]:
        """Signed station states for the boards (default: every board with a
        key) whose stations changed since last published (all with force).
        Each entry is by button from 1; a button without a station is idle."""
        out: list[Outgoing] = []
        with self.lock:
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
                    out.append(self.to_board(b, protocol.CMD, hub_protocol.stations(entries), 1))
        return out

    def changed_entries(self, board: str, force: bool = False) -> list[list] | None:
        """One board's station entries to send (noted as sent); None when
        they did not change since last sent (always sent with force), or it
        has no station."""
        with self.lock:
            mine = {s.button: s for s in station_states(self.competition, self.clock.now_ms(), {board})}
            return self._entries_to_send(board, mine, force) if mine else None

    def _entries_to_send(self, board: str, mine: dict[int, StationState], force: bool) -> list[list] | None:
        entries = station_entries(self.competition, board, mine)
        same = self.stations_sent.get(board) == entries
        if not force and same:
            return None
        self.stations_sent[board] = entries
        if not same:
            self.changes.publish(StationStatesChanged(board, tuple(map(tuple, entries))))
        return entries

    def stations_not_sent(self, board: str) -> None:
        """The board's stations noted as sent did not go: sent with the next
        change."""
        self.stations_sent.pop(board, None)

    # ------------------------------------------------------ the hub, a board
    def hub_online(self, boards: list[str] | None = None) -> list[Outgoing]:
        """The hub's (re)connection, told to each board (default: every
        board with a key) on its own command topic, signed and numbered
        (the retained status on HUB_STATUS is unsigned: boards no longer act
        on it, or anyone could start sync storms).  A board sends what waits
        and syncs its clock.  A board whose boot the hub has not heard yet
        (a new round's log) would refuse it (a command names the boot it is
        for): it is told once a message of its boot is taken (owes_online)."""
        out: list[Outgoing] = []
        if boards is None and self.ctr_next > self.ctr_last:
            # counters reserved now, at the connection, not by the first command: a clock-sync
            # reply must never wait for a log write (answered while a commit waits)
            try:
                with self.lock:
                    self._reserve_ctr_block()
            except LogWriteFailed:
                return out       # no counters: the boards retry by themselves
        for board in self.keys.boards() if boards is None else boards:
            boot = self.online_named[board] = self.boots.get(board)
            if boot is None:
                continue
            try:
                out.append(self.to_board(board, protocol.CMD, hub_protocol.hub_status(protocol.ONLINE), 1))
            except LogWriteFailed:
                break            # no counters: the boards retry by themselves
        return out

    def owes_online(self, board: str) -> bool:
        """Whether the board was not told the hub's (re)connection for the
        boot it is in now (its boot unknown then, or another since)."""
        return board in self.online_named and self.online_named[board] != self.boots.get(board)

    def _operator_row(self, ev: dict) -> None:
        """An 'identify' action applied live (not at a replay, not an old
        one): the board buzzes and blinks."""
        kind = kind_of(ev)
        if kind is RowKind.OP_IDENTIFY and self.sending() and self.clock.now_ms() - ev["received_ms"] < IDENTIFY_TTL_MS:
            self._identify_now(ev["payload"]["board"])
        elif kind is RowKind.OP_SETTINGS and self.sending() and self.clock.now_ms() - ev["received_ms"] < SEND_WITHIN_MS:
            self._settings_now(ev)

    def _settings_now(self, ev: dict) -> None:
        """A settings request applied live: sent to its board, its secrets
        unsealed (not an old one read back at a restart: the operator asks
        again).  Not sent (the activity line says) without the key, or
        when the log gives no counter."""
        from ..fleet.board_settings import unseal

        p = ev["payload"]
        key = self.keys.key(p["board"])
        if key is None or self.keys.signer(p["board"]) is None:
            return
        try:
            msg = hub_protocol.settings(ev["id"], unseal(p["set"], key), p.get("trial"))
            self.publish([self.to_board(p["board"], protocol.CMD, msg, 1)])
        except (LogWriteFailed, ValueError) as e:
            self.activity.append(f"settings for board {p['board']} (log row #{ev['id']}) not sent: {e}")

    def _identify_now(self, board: str) -> None:
        if self.keys.signer(board) is None:
            return
        msg = hub_protocol.identify(self.clock.now_ms() + IDENTIFY_TTL_MS)
        try:
            self.publish([self.to_board(board, protocol.CMD, msg, 1)])
        except LogWriteFailed:
            pass                 # the alert says why; identify is not worth more
