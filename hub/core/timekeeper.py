"""The hub's clock while it runs (event/time/time_base.py says what the time base
is): the base it starts on written to the log, the laptop's clocks watched
for a sleep or a stepped wall clock (each a clock row: said, never
followed), and the boards' clock-sync requests heard as witnesses: when most
of the boards kept another base, the hub takes theirs (a clock row, the
base's next generation, which the boards then follow).  Part of the hub's
service (service.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from ..event.time import host_clock
from ..event.fold.competition import Competition
from ..event.time.clock import HubClock, clock_rows
from ..event.log.log_health import LogWriteFailed
from ..event.log.store import EventStore
from ..event.time.time_base import (BOARDS, CLOCK_ROW, FROM_BOARDS, FROM_LOG, FROM_WALL, JUMP_MS, LOG_SLACK_MS, STARTED,
                               WALL_STEPPED, Base, BoardsWitness, choose_base, clock_row, jumps)


def other_round_anchors(logs: dict[int, Path]) -> list[dict]:
    """The clock rows' payloads of the event's other rounds' logs."""
    out: list[dict] = []
    for path in logs.values():
        store = EventStore(path)
        try:
            out += clock_rows(store.events_of("hub", CLOCK_ROW))
        finally:
            store.close()
    return out


class Timekeeper:
    """The hub's clock while it runs, given what it uses (service.py wires
    it): the hub clock, the fold (its rows), record (a clock row stored and
    applied: HubState.record) and write_failure (the failed writes' alert
    now, for the reason a start cannot write its base)."""

    def __init__(self, clock: HubClock, competition: Competition, record: Callable[..., dict],
                 write_failure: Callable[[], dict | None]) -> None:
        self.clock, self.competition, self.record, self.write_failure = clock, competition, record, write_failure
        self.witness = BoardsWitness()
        self._last: tuple[int, int, int] | None = None     # the last reading (wall, awake, boot ns)
        self._since_row: int | None = None    # rows from this one on may be off the round's base

    def start(self, other_anchors: list[dict] | None = None) -> list[str]:
        """The running hub's base, written to the log (a clock row
        `started`); other_anchors: the event's other rounds' clock rows (a
        base of this boot there is the base here too).  Returns what the
        operator must know (the wall clock disagrees with the log)."""
        clock, rows = self.clock, self.competition.rows
        r = host_clock.read()
        last = max((row["received_ms"] for row in rows), default=None)
        chosen = choose_base(clock_rows(rows) + (other_anchors or []), last, host_clock.boot_id(),
                             r.wall_ns, r.boot_ns)
        if clock.base.source == FROM_WALL and chosen.base.source == FROM_LOG:
            clock.adopt(chosen.base)                # another round's base, of this boot
        base, more = clock.base, {}
        behind = (last or 0) - (base.offset_ms + r.boot_ns // 1_000_000)
        if base.source == FROM_WALL and last is not None and behind > LOG_SLACK_MS:
            more["behind_ms"] = behind
        elif base.source == FROM_LOG and abs(chosen.wall_off_ms) > JUMP_MS:
            more["wall_off_ms"] = chosen.wall_off_ms        # the wall clock was changed since: said
        row = self._write(clock_row(STARTED, base, host_clock.boot_id(), r.boot_ns, r.wall_ns, **more))
        if row is None:
            failure = self.write_failure()
            raise LogWriteFailed(failure["advice"] if failure else "the log cannot be written")
        if base.source == FROM_WALL:
            self._since_row = row["id"]        # until the boards agree, the wall's base is a guess
        self._last = (r.wall_ns, r.awake_ns, r.boot_ns)
        return list(chosen.warnings) if base.source == chosen.base.source else []

    def heard_sync(self, board: str, msg: dict, received_ms: int) -> None:
        """A board's clock-sync request: "at", when it has a clock: [its hub
        time, its error(, the jump of the hub's clock it refused, the
        generation of its base)].  A jump refused on a generation this hub
        has moved on from is of the old base: the board follows the new one
        at its next reply, it does not refuse this hub's."""
        at = msg.get("at")
        if at is not None:
            refused = len(at) == 4 and at[3] == self.clock.base.gen
            self.witness.heard(board, at[2] if refused else None, at[1], received_ms)

    def tick(self) -> None:
        """The laptop's clocks compared since the last tick, the boards'
        verdict taken: each happening a clock row, which the consoles and
        the alerts say (LogWriteFailed: tried again at the next tick)."""
        if self._last is None:
            return
        r = host_clock.read()
        now = (r.wall_ns, r.awake_ns, r.boot_ns)
        found = jumps(self._last, now, host_clock.SLEEP_PROOF)
        self._last = now
        for j in found:
            more = {"slept_ms": j.ms} if j.why != WALL_STEPPED else {"stepped_ms": j.ms}
            self._write(clock_row(j.why, self.clock.base, host_clock.boot_id(), r.boot_ns, r.wall_ns, **more))
            if not host_clock.SLEEP_PROOF:     # a sleep or a step: hub time may have stopped meanwhile
                self._since_row = self._since_row or self.competition.last_row_id() + 1
        shift = self.witness.verdict(self.clock.now_ms())
        if shift:
            since = self._since_row or self.competition.last_row_id() + 1
            old = self.clock.base
            base = Base(old.offset_ms + shift, old.gen + 1, FROM_BOARDS)
            if self._write(clock_row(BOARDS, base, host_clock.boot_id(), r.boot_ns, r.wall_ns,
                                     shift_ms=shift, since_row=since)):
                self.clock.adopt(base)          # the boards follow it: a new generation
                self.witness.moved()
                self._since_row = None

    def _write(self, payload: dict) -> dict | None:
        """A clock row stored and applied (None: the log cannot be written:
        its alert says so; a move of the base is tried again at the next tick)."""
        try:
            return self.record("hub", CLOCK_ROW, payload)
        except LogWriteFailed:
            return None
