"""The store-and-answer path of the board messages the hub took
(admission.py): stored in one transaction, one commit for them all, applied
in the log's order, then each answered -- acks only for what is committed.
An event's ack carries its answers (the time recorded for the call, the
board's stations' state when it changed) to a board whose birth says it
takes them there, and they go apart to last month's firmware.  Part of the
hub's service (service.py)."""

from __future__ import annotations

import threading
from collections import deque
from pathlib import Path
from typing import Callable

from tabletimer.shared import protocol

from ..protocol import hub_protocol
from .admission import SIGNED_PAYLOAD_MAX, Admission, Taken
from .board_commands import BoardCommands
from .board_counts import BoardCounts
from .hub_state import Outgoing
from .registry import BoardRegistry
from ..event.fold.competition import Competition
from ..event.log.log_health import STORE_ERRORS, LogWriteFailed
from ..event.log.store import DUPLICATE, STORED, EventStore

# a board event made under the schedule of another round of the event (a
# press left in its journal when the hall moved on): stored in that round's
# log, and acked; nothing of it in this round
OTHER_ROUND = "other round"


class Answers:
    """The store-and-answer path, given what it uses (service.py wires it):
    the admission (what a stored message tells it) and the commands (the
    answers), the store with the writer and message locks, the log's write
    health (write_failed, written), apply and applied_next (rows applied in
    the log's order), the other rounds' logs (read when a message names
    one), the fold, the registry, the consoles' activity lines and the
    board counts (the duplicates)."""

    def __init__(self, admission: Admission, commands: BoardCommands, catch_up: Callable[[], int] | None = None,
                 *, store: EventStore, writer: threading.RLock, lock: threading.RLock,
                 write_failed: Callable[[BaseException], object], written: Callable[[], None],
                 apply: Callable[[dict], None], applied_next: Callable[[list[int]], None],
                 other_rounds: Callable[[], dict[int, Path]], competition: Competition,
                 registry: BoardRegistry, activity: deque[str], counts: BoardCounts) -> None:
        self.admission = admission
        self.commands = commands
        self.store, self.writer, self.lock = store, writer, lock
        self.write_failed, self.written, self.apply, self.applied_next = write_failed, written, apply, applied_next
        self.other_rounds, self.competition, self.registry = other_rounds, competition, registry
        self.activity, self.counts = activity, counts
        # the rows other processes wrote (the service's catch_up): read before a board event of
        # another round is stored, so that a hall check begun just now is known (check_stray)
        self.catch_up = catch_up

    def store_and_answer(self, taken: list[Taken], emit: Callable[[list[Outgoing]], None]) -> None:
        """Store the messages in one transaction, apply them, then answer
        each.  The writer lock keeps every other write (an operator's
        action, rows of another process caught up) out from the commit to
        the apply, so rows are applied in the log's order; it is let go
        before the answers, so that a referee's action waits for one commit
        and its apply, not for a batch's acks.  The message lock is not held
        during the commit (sync replies, the consoles' and pages' reads go
        on meanwhile)."""
        if self.catch_up is not None and any(t.msg.get("ev") in self.other_rounds() for t in taken):
            self.catch_up()
        with self.writer:
            try:
                with self.store.transaction():              # one commit (fsync) for all
                    results = [self._store(t) for t in taken]
            except STORE_ERRORS as e:
                self.write_failed(e)
                return           # nothing acked: the boards keep their events and send them again
            self.written()
            with self.lock:
                for _, row in results:
                    if row is not None:
                        self.apply(row)     # a conflict row is alerted, never folded as the event
                self.applied_next([row["id"] for stored, row in results
                                 if row is not None and stored != DUPLICATE])
        for t, (stored, row) in zip(taken, results):
            # numbered and published under the one lock: a board drops a
            # command whose counter is not above the last it took, so two
            # threads must not publish theirs in the other order
            with self.lock:
                try:
                    out = self._answer(t, stored, row)
                except LogWriteFailed:
                    continue     # stored, not acked (no command counters): sent again, acked then
                if out:
                    emit(out)

    def _store(self, t: Taken) -> tuple[str, dict | None]:
        """Append a message inside the open transaction."""
        store = self.store
        if t.kind == protocol.STATUS:         # a birth or will; or an answer to settings (its type: config)
            return STORED, store.append("board", t.msg["type"], t.msg, t.received_ms, t.board)
        ev = t.msg.get("ev")
        other = self.other_rounds().get(ev) if isinstance(ev, int) else None   # (None: this round's, or an unknown event's)
        if other is not None and self.competition.check_stray(
                {"id": store.last_id() + 1, "source": "board", "type": t.msg["type"],
                 "received_ms": t.received_ms, "payload": t.msg}):
            other = None         # a press of this round's hall check, on the round before's schedule
        if other is not None:
            # its own commit in its own log, before this transaction's: an
            # error in either, and nothing is acked (the board sends it again)
            elsewhere = EventStore(other)
            try:
                stored, _row = elsewhere.append_board_event(t.board, t.msg, t.received_ms)
            finally:
                elsewhere.close()
            self.activity.append(f"board {t.board}: its {t.msg['type']} (boot {t.msg['boot']} seq "
                                       f"{t.msg['seq']}) of the round before was "
                                       + ("stored in that round's log" if stored == STORED else
                                          f"in that round's log already ({stored})"))
            return OTHER_ROUND, None
        return store.append_board_event(t.board, t.msg, t.received_ms)

    def _answer(self, t: Taken, stored: str, row: dict | None) -> list[Outgoing]:
        """A stored message (committed and applied): answered; first, the
        hub's (re)connection, to a board that did not take it for the boot it
        is in (board_commands.owes_online)."""
        cmds = self.commands
        owed = cmds.hub_online([t.board]) if cmds.owes_online(t.board) else []
        return owed + self._answer_message(t, stored, row)

    def _answer_message(self, t: Taken, stored: str, row: dict | None) -> list[Outgoing]:
        cmds = self.commands
        board, msg = t.board, t.msg
        typ = msg["type"]
        if t.kind == protocol.STATUS:
            if typ in (hub_protocol.T_CONFIG, hub_protocol.T_FW):
                return []
            if msg["state"] == protocol.ONLINE:
                # a board flashed after the round began has no retained
                # schedule yet; a rebooted one gets the current one again,
                # and the state of its stations
                return cmds.schedules([board], force=True) + cmds.station_messages([board], force=True)
            return []
        assert row is not None or stored in (DUPLICATE, OTHER_ROUND)
        # the install named once the id has more than one: a dead board's
        # (boot, seq) is not its spare's
        install = hub_protocol.install_of(msg) if self.admission.several_installs(board) else None
        if stored == DUPLICATE:
            self.counts.duplicates += 1
            lost = self.registry.duplicate(board, hub_protocol.install_of(msg), msg["boot"], msg["seq"],
                                         t.received_ms)
            if lost:
                self.activity.append(lost)
        if stored == DUPLICATE and typ in ("press", "confirm", "void"):
            # sent again: the first answer may never have reached the board
            # (a broker restarted, a hub killed between storing and
            # answering), and a board that does not know the hub has its
            # call never counts a missing piece: the whole answer again,
            # its stations' state forced
            rec = self._recorded(board, msg) if typ != "void" else None
            return self._event_answers(board, msg, install, rec, cmds.changed_entries(board, force=True))
        if stored != STORED:          # a duplicate of another kind, or a conflict row: the ack alone
            return [cmds.to_board(board, protocol.CMD, hub_protocol.ack(msg["boot"], msg["seq"], install), 1,
                                  to=msg)]
        assert row is not None
        rec = entries = None
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
            entries = cmds.changed_entries(board, force=refused)
        out = self._event_answers(board, msg, install, rec, entries)
        if self.competition.format.relay is not None and typ in ("press", "void"):
            # a relay finish changes its team's rotations
            out += cmds.schedules(self.competition.team_boards(board, msg["station"]))
        return out

    def _event_answers(self, board: str, msg: dict, install: str | None, rec: dict | None,
                       entries: list[list] | None) -> list[Outgoing]:
        """A stored event's ack, with its recorded time (rec) and its
        stations' new state (entries) in it for a board that takes them
        there (its birth said "ack": 2), else (last month's firmware) the
        ack, then `recorded`, then `stations`.  LogWriteFailed when the ack
        cannot be numbered: nothing is sent (the board sends the event
        again), and the stations are sent again with the next change."""
        cmds = self.commands
        boot, seq = msg["boot"], msg["seq"]
        info = self.registry.boards.get(board)
        try:
            if info is not None and info.answers_in_ack and (rec is not None or entries is not None):
                one = cmds.to_board(board, protocol.CMD, hub_protocol.ack(boot, seq, install, rec, entries), 1,
                                    to=msg)
                if len(one.payload) <= SIGNED_PAYLOAD_MAX:
                    return [one]
                # (a board of dozens of stations: too long for one message, sent apart)
            out = [cmds.to_board(board, protocol.CMD, hub_protocol.ack(boot, seq, install), 1, to=msg)]
        except LogWriteFailed:
            if entries is not None:
                cmds.stations_not_sent(board)
            raise
        try:
            if rec is not None:
                out.append(cmds.to_board(board, protocol.CMD, rec, 1, to=msg))
            if entries is not None:
                out.append(cmds.to_board(board, protocol.CMD, hub_protocol.stations(entries), 1, to=msg))
        except LogWriteFailed:
            # the ack goes out; the recorded time is only for a display, and
            # the board gets the stations with the next change
            cmds.stations_not_sent(board)
        return out

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
