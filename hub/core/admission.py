"""Which board messages the hub takes: the topic parsed, the size, the
board's key, the signature, the message's shape and type, then the replay
guard (a counter not above the last, a boot or counter jump: alerted).  What fails is counted by
category, a line per category a second in the consoles' event log, and never
stored; a retained message that fails is cleared from the broker.  A clock
sync request is answered at once; an event or a status is passed on to be
stored (answers.py).  Part of the hub's service (service.py)."""

from __future__ import annotations

import threading
from collections import deque
from typing import NamedTuple

from tabletimer.shared import protocol
from tabletimer.shared.auth import AuthError

from ..protocol import hub_protocol
from .board_commands import BoardCommands
from ..fleet.firmware_update import FirmwareUpdates
from .changes import Changes, MessageRejected, OperatorRowFolding
from .board_counts import BoardCounts, Jump, Refused
from .hub_state import Outgoing
from .registry import BoardRegistry
from ..event.time.clock import HubClock
from ..protocol.keys import BoardKeys
from ..protocol.replay import ReplayGuard
from .timekeeper import Timekeeper
from ..event.log.log_health import LogWriteFailed
from ..event.log.rows import RowKind, kind_of
from ..rules.timetext import fmt_clock

# (topic kind, message type) a board may send; events are checked separately
ACCEPTED = {(protocol.SYNC, protocol.T_SYNC), (protocol.STATUS, protocol.T_STATUS),
            (protocol.STATUS, hub_protocol.T_CONFIG),     # a board's answer to a settings command
            (protocol.STATUS, hub_protocol.T_FW)}         # ... to a firmware update
REJECTED_LINE_EVERY_MS = 1000     # the event log's lines for rejected messages, per category
# the longest signed message a board takes: its body (protocol.MAX_PAYLOAD), "\n" and the MAC
SIGNED_PAYLOAD_MAX = protocol.MAX_PAYLOAD + 1 + 64
JUMPS = ("boot jump", "counter jump")     # the replay guard's rejections that are alerted
REFUSAL_LINE_EVERY_MS = 60_000    # the event log's lines for a board's refused commands, per board


class Taken(NamedTuple):
    """A board message that passed the checks, to be stored."""
    board: str
    kind: str            # protocol.STATUS or protocol.EVENT
    msg: dict
    received_ms: int


class Admission:
    """Which board messages are taken, given what it uses (service.py wires
    it): the commands (a sync's answer, a hub status owed), the timekeeper
    (a sync request's report of the board's clock), the firmware updates
    (a board's answers to one under way), the board keys, the message lock,
    the replay guard, the board counts, the boots each board is in, the
    registry, the hub clock, the consoles' activity lines and the
    notifications (a rejection told; a board's reset as its row applies)."""

    def __init__(self, commands: BoardCommands, timekeeper: Timekeeper, firmware: FirmwareUpdates, *,
                 keys: BoardKeys, lock: threading.RLock, guard: ReplayGuard, counts: BoardCounts,
                 boots: dict[str, tuple[int, str]], registry: BoardRegistry, clock: HubClock,
                 activity: deque[str], changes: Changes) -> None:
        self.keys, self.lock, self.guard, self.counts, self.boots = keys, lock, guard, counts, boots
        self.registry, self.clock, self.activity, self.changes = registry, clock, activity, changes
        self.commands = commands
        self.timekeeper = timekeeper      # a sync request's report of the board's clock
        self.firmware = firmware          # a board's answers to an update under way, and its births
        self.cleared: set[str] = set()   # topics cleared so (the empty message comes back to the hub)
        self.rejections_noted: dict[str, list] = {}   # category -> [hub ms of its last line, not noted since]
        self.installs: dict[str, set[str]] = {}  # board -> the installs heard under its id
        changes.subscribe(OperatorRowFolding, lambda n: self._operator_row(n.row))

    def admit(self, topic: str, payload: bytes, received_ms: int, retained: bool) -> list[Outgoing] | Taken:
        """A message's checks: what answers it now (a rejection, a sync
        reply), or the message to store."""
        if topic == hub_protocol.HUB_STATUS:
            return []                            # our own retained status
        if not payload and topic in self.cleared:
            self.cleared.discard(topic)          # our own clear of retained junk, back
            return []
        try:
            board, kind = hub_protocol.parse_board_topic(topic)
        except protocol.ProtocolError as e:
            return self.reject("malformed", str(e), topic, retained)
        if retained and kind in (protocol.EVENT, protocol.SYNC):
            # boards never retain these: somebody's junk, sent again at every
            # hub start by the broker until it is cleared
            return self.reject("malformed", "a retained " + kind, topic, retained)
        if len(payload) > SIGNED_PAYLOAD_MAX:
            return self.reject("malformed", f"payload too large: {len(payload)} bytes", topic, retained)
        signer = self.keys.signer(board)
        if signer is None:
            self.keys.refresh()     # flashed since the hub started? (a file read only if it changed)
            signer = self.keys.signer(board)
            if signer is None:
                return self.reject("unknown board", board, topic, retained)
        try:
            msg = hub_protocol.decode_from_board(signer.open(topic, payload))
        except AuthError as e:
            return self.reject("forged", str(e), topic, retained)
        except (protocol.ProtocolError, RecursionError) as e:
            return self.reject("malformed", str(e) or "nested too deep", topic, retained)
        typ = msg["type"]
        if (kind, typ) not in ACCEPTED and not (kind == protocol.EVENT and typ in hub_protocol.EVENT_TYPES):
            return self.reject("malformed", f"unexpected {typ} message on {kind}", topic, retained)
        if kind == protocol.SYNC and "t2" in msg:
            return self.reject("malformed", "a sync reply from a board", topic, retained)
        with self.lock:
            why = self.guard.check(board, msg, now_ms=received_ms)
            if why and why.startswith(JUMPS):
                # a board's counters moved beyond what it can do honestly:
                # alerted (network_alerts), the board's counters unchanged
                self.counts.jumps[board] = Jump(why, received_ms)
                return self.reject(why[:why.index(":")], why, topic, retained)
            if why and retained and kind == protocol.STATUS:
                # a board's retained status the hub has had before: what
                # the broker keeps for it, sent again because the hub
                # (re)subscribed -- not an attack, not counted as one (a
                # replay published live by anyone comes without the flag)
                self.counts.retained_again += 1
                return []
            if why:
                return self.reject("replayed", why, topic, retained)
            jump = self.counts.jumps.get(board)
            if jump is not None:
                jump.heard = True              # it is heard again: not locked out
            self.heard(board, msg)
            self.registry.seen(board, received_ms)
            if typ == protocol.T_STATUS and msg["state"] == protocol.ONLINE:
                self.firmware.born(board, msg.get("fault"))   # restarted in an update: it begins again
            if typ == hub_protocol.T_FW and not self.firmware.heard(board, msg, received_ms):
                return []              # a chunk's answer: the update's, not the log's
            if kind != protocol.SYNC:
                return Taken(board, kind, msg, received_ms)
            if "hub_ctr" in msg:
                self.refused_command(board, msg["hub_ctr"], received_ms)
            self.timekeeper.heard_sync(board, msg, received_ms)
            try:
                reply = hub_protocol.sync_reply(msg, received_ms, self.clock.now_ms(), self.clock.base.gen)
                # numbered in the order published (a board drops a counter not above the last it
                # took): the reply first (the board times it), then the hub online owed
                out = [self.commands.to_board(board, protocol.CMD, reply, 0, to=msg)]   # the request's boot
                return out + (self.commands.hub_online([board]) if self.commands.owes_online(board) else [])
            except LogWriteFailed:
                return []         # no command counters: the board asks again

    def stored(self, board: str, msg: dict, received_ms: int) -> None:
        """A stored board message, read back from the log at start: the
        replay guard and the installs know it, as when it came live."""
        self.guard.check(board, msg, stored=True, now_ms=received_ms)
        self.heard(board, msg)

    def heard(self, board: str, msg: dict) -> None:
        """Note the installs a board message shows under its board id, and
        the boot (and install) it was sent in: the board's now, which the
        commands to it name (a board refuses a command of another boot)."""
        seen = self.installs.setdefault(board, set())
        install = hub_protocol.sender_install(msg)
        seen.add(install)
        if type(msg.get("bt")) is int:
            self.boots[board] = (msg["bt"], install)
        if msg.get("type") in hub_protocol.EVENT_TYPES:
            seen.add(hub_protocol.install_of(msg))

    def refused_command(self, board: str, ctr: int, received_ms: int) -> None:
        """The board says (in a clock-sync request) that it refused a
        command numbered ctr as a counter jump: alerted (network_alerts).
        Under the message lock."""
        ours = ctr < self.commands.ctr_next          # numbered as high as this hub has numbered
        last = self.counts.refusals.get(board)
        if last is None or received_ms - last.at_ms > REFUSAL_LINE_EVERY_MS:
            self.activity.append(f"board {board} refused a command numbered {ctr} as a counter jump"
                               + (" (this hub's)" if ours else " (not this hub's)"))
        self.counts.refusals[board] = Refused(ctr, received_ms, ours)

    def several_installs(self, board: str) -> bool:
        """More than one install was heard under the board id (a dead board
        and its spare): the install is named in the answers."""
        return len(self.installs.get(board, ())) > 1

    def reject(self, category: str, detail: str, topic: str, retained: bool = False) -> list[Outgoing]:
        """Count a message that failed a check, with a line in the consoles'
        event log (a retained one: cleared from the broker)."""
        if retained:
            # junk a broker keeps on a board's topic (it came live once, and
            # was counted then if the hub listened): cleared, so that it is
            # not sent again at every hub start, and not counted again
            with self.lock:
                self.counts.retained_junk += 1
                self.cleared.add(topic)
                self.activity.append(f"cleared a retained message on {topic} ({category}: {detail})")
            return [Outgoing(topic, b"", 1, True)]
        with self.lock:         # a snapshot reads these whole
            self.counts.rejected[category] += 1
            # a line per category a second at most: 20,000 junk messages
            # must not push the event log's real lines off the console
            now = self.clock.now_ms()
            noted = self.rejections_noted.get(category)
            if noted is not None and now - noted[0] < REJECTED_LINE_EVERY_MS:
                noted[1] += 1
            else:
                more = f" (and {noted[1]} more like it since {fmt_clock(noted[0])})" if noted and noted[1] else ""
                self.activity.append(f"rejected ({category}) on {topic}: {detail}{more}")
                self.rejections_noted[category] = [now, 0]
        self.changes.publish(MessageRejected(category, detail))
        return []

    def _operator_row(self, ev: dict) -> None:
        """reset_board: the board's next message of each install starts afresh."""
        if kind_of(ev) is RowKind.OP_RESET_BOARD and isinstance(ev["payload"].get("board"), str):
            self.guard.reset(ev["payload"]["board"])
            self.counts.jumps.pop(ev["payload"]["board"], None)
