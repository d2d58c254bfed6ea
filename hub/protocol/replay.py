"""Replay protection for board messages.  Pure.

Every signed board message carries 'bt' (the sender's boot), 'ctr' (a
counter, strictly increasing within a boot) and, from a board flashed with
one, its install id ('bi'; on an event made under it, its 'in').  The counters are kept per (board, install): a
spare flashed with a dead board's id (a new install id) starts again at
boot 1 without being taken for a replay of the dead board.

A message is fresh when its boot is newer than the last of its (board,
install), or its counter higher than the last in the same boot.  A boot may
only advance by BOOT_WINDOW at a time: a validly signed message with a boot
far ahead (a corrupted boot counter, 'bt' = 2^53-1) would otherwise make
every later genuine message "older" -- the board locked out for good.  Such
a message is rejected; the operator action reset_board forgets a board's
counters (the next message of each of its installs starts afresh), for a
board whose boot counter really did jump, or went back (its flash lost).

A counter may only jump within a bound too: at most CTR_WINDOW plus
CTR_RATE a second (hub time) since the highest counter heard of the boot
came -- over that one, or, in a new boot (counting from 1), over 0 since the
previous boot was last heard.  A validly signed 'ctr' = 2^53-1 in the
current boot made every later genuine message a "replay" until reset_board.
A board signs what the hub does not hear only while the hub is not listening
(down, disconnected), and then at most about 40 messages a second
(docs/protocol.md, "Counter windows"); CTR_RATE is 2.5 times the most it
can, CTR_WINDOW more than a day of what it usually signs unheard, for when
the hub's clock was set back between two runs (no time allowance then).
A jump is rejected and nothing about the board changes: the genuine board
goes on.

Clock-sync requests count apart: they store nothing and the hub answers them
on its network thread at once, while the board's events and statuses wait
for the commit thread, which checks them after -- in the order the board
sent them among themselves, not among its sync requests.  A request is
fresh when its counter is above the last request's (of the same boot), a
stored message when above the last stored message's: replays of either are
still refused, and an event sent just before a sync request is not taken for
a replay of it (it was: the board sent it again a second later).

The last will is the exception to the counter rule: the board signs it at
connect time, before its birth message, and the broker sends it later; it
is accepted once, and only if its counter lies between the previous and the
latest birth -- so a stale will of an earlier connection cannot mark a
reconnected board offline.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .hub_protocol import sender_install

BOOT_WINDOW = 1000      # a boot may be at most this far ahead of the last one seen
CTR_WINDOW = 100_000    # a counter may be at most this far above the highest heard of its boot...
CTR_RATE = 100          # ... plus this many for each second since that one was heard


@dataclass
class _Board:
    boot: int
    last: int = -1
    sync_last: int = -1         # the clock-sync requests' own (see above)
    birth: int | None = None
    prev_birth: int = -1
    wills: set[int] = field(default_factory=set)
    high: int = 0               # the highest counter heard in the boot (any message)...
    high_ms: int = 0            # ... and when (hub time): the jump bound's base


class ReplayGuard:
    def __init__(self) -> None:
        self.boards: dict[tuple[str, str], _Board] = {}    # (board, install) -> counters

    def check(self, board: str, msg: dict, stored: bool = False, now_ms: int = 0) -> str | None:
        """None if fresh (and remembered), else why it is rejected.  now_ms:
        when it came (hub time; a stored row's received_ms).
        stored: a row of the log, replayed at start (it was accepted when it
        came; the windows are not checked again: messages never stored, clock
        syncs, may have advanced the boot in steps in between)."""
        bt, ctr = msg.get("bt"), msg.get("ctr")
        if bt is None or ctr is None:
            return "unnumbered (no 'bt'/'ctr')"
        key = (board, sender_install(msg))
        st = self.boards.get(key)
        if st is not None and not stored:
            if bt > st.boot + BOOT_WINDOW:
                return f"boot jump: boot {bt} is more than {BOOT_WINDOW} ahead of the board's boot {st.boot}"
            if bt >= st.boot:
                base = st.high if bt == st.boot else 0        # a new boot counts from 1
                room = CTR_WINDOW + CTR_RATE * max(0, now_ms - st.high_ms) // 1000
                if ctr > base + room:
                    of = f"the board's {base} in boot {bt}" if bt == st.boot else f"boot {bt}'s start"
                    return f"counter jump: counter {ctr} is more than {room} ahead of {of}"
        if st is None or bt > st.boot:
            st = self.boards[key] = _Board(bt, high_ms=now_ms)
        elif bt < st.boot:
            return f"replayed: boot {bt} is older than the board's boot {st.boot}"
        why = self._fresh(st, msg, ctr)
        if why is None and ctr > st.high:
            st.high, st.high_ms = ctr, now_ms
        return why

    @staticmethod
    def _fresh(st: _Board, msg: dict, ctr: int) -> str | None:
        if msg["type"] == "status" and msg["state"] == "offline":
            if ctr in st.wills:
                return "replayed last will"
            if st.birth is not None and not st.prev_birth < ctr < st.birth:
                return "stale last will of an earlier connection"
            st.wills.add(ctr)
            st.last = max(st.last, ctr)
            return None
        if msg["type"] == "sync":
            if ctr <= st.sync_last:
                return f"replayed: counter {ctr} is not above {st.sync_last} (sync requests)"
            st.sync_last = ctr
            return None
        if ctr <= st.last:
            return f"replayed: counter {ctr} is not above {st.last}"
        st.last = ctr
        if msg["type"] == "status":
            st.prev_birth, st.birth = (st.birth if st.birth is not None else -1), ctr
        return None

    def reset(self, board: str) -> None:
        """Forget the board's counters (every install of it)."""
        for key in [k for k in self.boards if k[0] == board]:
            del self.boards[key]
