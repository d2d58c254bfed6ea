"""The competition as a deterministic fold of the event log: stored rows
(board events, operator actions) become the ranking engine's facts, and the
standings, the relay positions and each board's signal schedule follow from
them.  Pure: no I/O.

Rows are kept in log order (by id) and everything is recomputed from them,
so a row that reaches this process late (an operator action written by
another process) lands in its place and the result is the same as a replay.

Board events map through the stations table: (board, button) -> (entrant,
puzzle); an absent entrant's replacement (replacements.py) gives its
stations to another entrant from the replacement's time on.  A station
without a puzzle number means "the entrant's next puzzle" (one-at-a-time
rounds): its n-th standing finish call is puzzle n.
A press id names a board event by its board install, boot and sequence
number (board_events.py); operator presses are "op/<row id>".

A board press is a finish only when its time is plausible (row_checks.py:
near the hub's clock when it arrived and, once the round has a start,
within the round).  Any other is refused: kept in the log,
listed in `refused` (alerted), never ranked.  A conflict row (the same
event identity sent again with other content: hub/event/log/store.py) is listed in
`key_conflicts`, never folded.  A board's confirmation or void of a call
already decided (at the desk, say) is listed in `conflicts`: the recorded
decision stands.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from ..log.action_rows import FIELDS as OPERATOR_ACTIONS
from ..log.rows import BOARD_DECISIONS, RowKind, kind_of, operator_kind
from ..log.board_events import board_order, event_key, install_press_id, maker, press_id
from .call_book import CallBook, Out
from .check_in import CheckIn, CheckInBook, CheckInSummary, check as check_check_in
from .conflict_book import ConflictBook, OpenConflict, open_conflicts, subject_of
from ..folder.event_folder import Station
from .fold_records import Conflict, Decision, Refused, Unassigned
from .official import OfficialBook, readiness_problem
from .on_table import OnTable
from .order_book import FixedOrder, resolve_refusal
from .press_numbers import PressNumbers, is_board_press
from .replacements import Replacement, ReplacementBook, check as check_replacement
from .row_checks import check_end, in_check, made_in_check, press_problem, round_window, row_problem, start_problem
from .station_index import StationIndex
from ...rules.formats import Format
from ...rules.standings import (FACT_KINDS, Confirm, DidNotStart, Entrant, Fact, Press, Reinstated,
                               RoundStart, StandingRow, Standings, Void)

__all__ = ["OPERATOR_ACTIONS", "Competition", "Unassigned", "press_id"]

# the operator rows that are a fact as they stand (dns, dq, a count, ...), by their kind
FACT_ROWS = {operator_kind(k): cls for k, cls in FACT_KINDS.items()}


@dataclass
class Competition:
    """auto_stations: every station of every board that reports is an
    individual entrant named board/station (tests and quick trials without
    an entrants list)."""
    format: Format
    entrants: list[Entrant]
    stations: list[Station]
    auto_stations: bool = False
    rows: list[dict] = field(default_factory=list)
    # the log's event id (the hub's state sets it): a board event made under
    # another event's schedule ('ev': a journal from an earlier event or
    # round) is flagged, never ranked
    event_id: int | None = None
    _ids: list[int] = field(default_factory=list)
    _facts: list[Fact] | None = None
    _live: Standings | None = None

    def __post_init__(self) -> None:
        self._index = StationIndex(self.format, self.stations, self.entrants, self.auto_stations)
        self._by_station = self._index.by_station
        self._start_row: dict | None = None     # the latest round start
        self._start_rows: list[dict] = []       # every round start, in log order (a hall check's end)
        self._check_row: dict | None = None     # the latest hall check begun (fleet/hall_check.py)
        self._offsets: dict[str, int] = {}      # entrant -> start offset (latest)
        self.flagged: dict[int, str] = {}       # row id -> why that stored row cannot apply
        self._window: tuple[int, int] | None = None   # plausible board press times (the round)
        # the hub's clock corrections (clock rows, time_base.py): (first row, the correction's row,
        # ms): rows stored in between were stamped that far off the round's time base
        self._shifts: list[tuple[int, int, int]] = []
        self._numbers = PressNumbers()          # the short press ids
        self._replaced = ReplacementBook()      # absent entrants' stations given to others
        self._replace_flags: dict[int, str] = {}
        self._table = OnTable()                 # the puzzle on each entrant's table (next-puzzle stations)
        self._order = FixedOrder(self.format)    # a fixed order's calls out of it: conflicts (order_book.py)
        self._ranked: list[Entrant] | None = None          # the entrants ranked (ranked_entrants)
        self._check_ins = CheckInBook()         # who is here (check_in.py): no fact
        self._reset_fold()
        rows, self.rows, self._ids = self.rows, [], []
        for row in rows:
            self.apply(row)

    def clock_shift(self, row_id: int) -> int:
        """How far the hub's clock was off the round's time base when row
        row_id was stored (0: on it): the boards' corrections that cover it."""
        return sum(ms for first, fixed, ms in self._shifts if first <= row_id < fixed)

    def station_at(self, board: str, button: int) -> Station | None:
        """The station of stations.csv on a board's button (None: none there)."""
        return self._by_station.get((board, button))

    def recorded_time(self, board: str, button: int, at: int | None) -> int | None:
        """A finish call's time as the standings show it (since the
        entrant's start, at the format's resolution), without re-ranking:
        for the station's display right after the call."""
        st = self._index.at(board, button)
        if st is None or at is None or self._start_row is None:
            return None
        entrant = self._replaced.entrant_at(board, button, at, st.entrant)
        t = at - self._start_row["payload"]["at"] - self._offsets.get(entrant, 0)
        if t < 0:
            return None
        res = self.format.resolution_ms
        return t // res * res

    def has(self, row_id: int) -> bool:
        i = bisect.bisect_left(self._ids, row_id)
        return i < len(self._ids) and self._ids[i] == row_id

    def _other_event(self, row: dict) -> str | None:
        ev = row["payload"].get("ev") if kind_of(row).from_board else None
        if ev is None or self.event_id is None or ev == self.event_id or self.check_stray(row):
            return None
        return (f"made under another event's schedule (event {ev}): a press left in board "
                f"{row['board']}'s journal from an earlier event or round")

    def apply(self, row: dict) -> None:
        """Add a stored row (any order; duplicates by id ignored).  A row
        after all the others (the live case) is folded on top of the facts
        and the standings so far; one that lands among them (an action
        another process wrote, seen late) makes both be folded again."""
        i = bisect.bisect_left(self._ids, row["id"])
        if i < len(self._ids) and self._ids[i] == row["id"]:
            return
        self._ids.insert(i, row["id"])
        self.rows.insert(i, row)
        kind = kind_of(row)
        problem = row_problem(row) or self._other_event(row)
        if problem is None and kind is RowKind.OP_ROUND_START:
            problem = start_problem(self.format, row["payload"])     # its schedule: a board's limits
        if problem is not None:                  # kept in the log, flagged, never folded
            self.flagged[row["id"]] = problem
            return
        if is_board_press(row):
            self._numbers.numbered(row, self.rows, i == len(self._ids) - 1, self.flagged)
        moved = False
        if kind is RowKind.HUB_CLOCK and row["payload"].get("shift_ms"):
            # the hub took the boards' time base: the rows it stored since its start before that
            # are read with it (presses refused or not: again)
            p = row["payload"]
            self._shifts.append((p.get("since_row") or row["id"], row["id"], p["shift_ms"]))
            moved = True
        if kind.from_operator:
            if kind is RowKind.OP_ROUND_START:
                bisect.insort(self._start_rows, row, key=lambda r: r["id"])
                if self._start_row is None or row["id"] > self._start_row["id"]:
                    self._start_row = row
            elif kind is RowKind.OP_HALL_CHECK and row["payload"]["phase"] == "begin" and (
                    self._check_row is None or row["id"] > self._check_row["id"]):
                self._check_row = row
            elif kind is RowKind.OP_START_OFFSET and self.format.start_offsets:
                self._offsets[row["payload"]["entrant"]] = row["payload"]["offset_ms"]
            window = round_window(self._start_row, self._offsets, self.format.time_limit_ms)
            moved, self._window = window != self._window, window   # presses refused or not: again
            if kind is RowKind.OP_REPLACE:     # the stations change hands: folded again now, so that
                self._facts = self._live = None     # the stations table is the new one from here on
                self.facts()
                return
            if kind is RowKind.OP_SWAP and self._facts is not None and self._table.moves_a_press(row["payload"]):
                moved = True                 # a call already folded was of the puzzle it opened
        if i < len(self._ids) - 1 or self._facts is None or moved or self._overtakes(row):
            self._facts = self._live = None
            return
        n, entrants = len(self._facts), len(self.entrants)
        self._fold_row(row)
        if self._live is not None:
            if len(self.entrants) != entrants:      # an auto station appeared
                self._live = self._ranked = None
            elif len(self._facts) > n:
                self._live.extend(self._facts[n:])

    # ------------------------------------------------------------ facts
    def facts(self) -> list[Fact]:
        facts = self._facts
        if facts is None:
            facts = self._reset_fold()
            for rid in self._replace_flags:      # the stations as the replacements leave them, first
                self.flagged.pop(rid, None)
            self._replace_flags = self._replaced.scan(self.format, self._index, self.rows, self.flagged)
            self.flagged.update(self._replace_flags)
            self._table.scan(self.rows, self.flagged)    # every swap, by its time (on_table.py)
            for row in board_order([r for r in self.rows if r["id"] not in self.flagged]):
                self._fold_row(row)
        return facts

    def _call_pid(self, board: str, install: str, call: list, station: int) -> str:
        """The press id a confirmation's or void's call [boot, seq] names:
        the same install's press, or -- a board flashed again mid-round (a
        new install id, the same station states and boot counter) -- the
        press of another install of the board at the same station."""
        own = install_press_id(self._installs, board, install, call[0], call[1])
        if self._calls.press(own) is not None:
            return own
        for other in reversed(self._installs.get(board, ())):
            pid = install_press_id(self._installs, board, other, call[0], call[1])
            if other != install and self._press_station.get(pid) == (board, station):
                return pid
        return own

    def press_id_of(self, board: str, install: str, boot: int, seq: int) -> str:
        """The press id of a board event (after its row is folded)."""
        self.facts()
        return install_press_id(self._installs, board, install, boot, seq)

    def call_press_id(self, board: str, msg: dict) -> str:
        """The press id a board's confirm or void names (after its row is folded)."""
        self.facts()
        return self._call_pid(board, msg.get("in") or "", msg["call"], msg["station"])

    def _overtakes(self, row: dict) -> bool:
        """A board event that arrives after a later one of the same board (it
        waited for a retransmission meanwhile): folding it on top would give
        it the place of the later one, e.g. a next-puzzle call another
        puzzle."""
        key = event_key(row)
        if key is None:
            return False
        last = self._board_last.get(maker(row))
        return last is not None and key < last

    def _reset_fold(self) -> list[Fact]:
        facts: list[Fact] = []
        self._facts = facts
        self._entrant_facts: dict[str, list[int]] = {}   # entrant -> positions in _facts (ranked_entrants)
        self._live = None
        self._ranked = None
        self._ranked_ids: set[str] = set()
        self.unassigned: list[Unassigned] = []
        self.strays: list[dict] = []
        self.refused: list[Refused] = []          # board presses whose time cannot be a finish
        self.key_conflicts: list[dict] = []       # conflict rows (hub/event/log/store.py): a key sent again, other content
        self._installs: dict[str, list[str]] = {}  # board -> its installs, as they appear in the log
        self._table.reset()
        self._calls = CallBook()                  # presses, open/voided/confirmed calls, counts, who is out
        self._press_station: dict[str, tuple[str, int]] = {}   # board press id -> (board, button)
        self._press_row: dict[str, int] = {}      # board press id -> its log row
        self._station_last: dict[tuple[str, int], str] = {}    # (board, button) -> its latest call
        self._decided: dict[str, Decision] = {}   # press id -> the decision that closed it
        self.conflicts: list[Conflict] = []       # board decisions on calls already decided
        self._book = ConflictBook()               # intents refused as conflicts, resolutions, overrides
        self._board_last: dict[tuple[str, str], tuple[int, int]] = {}   # (board, install) -> latest (boot, seq)
        self._out: dict[str, Out] = {}            # entrant -> "dns" | "dq" (the latest of dns, dq, reinstate)
        self._official = OfficialBook()           # agreements, objections, official and reopened (official.py)
        self._check_ins.reset()
        self._numbers.forget_names()
        return facts

    def _add(self, f: Fact) -> None:
        facts = self._facts
        assert facts is not None, "a fact added outside a fold"    # (_fold_row's: flagged, never raised)
        facts.append(f)
        pid = getattr(f, "press_id", "")
        press = self._calls.press(pid) if pid and not isinstance(f, Press) else None
        entrant = press.entrant if press is not None else getattr(f, "entrant", "")
        if entrant:
            if entrant not in self._entrant_facts and self._ranked is not None and \
                    entrant not in self._ranked_ids and entrant in self._index.entrant_ids:
                self._ranked = self._live = None    # an entrant without a station, in the log now
            self._entrant_facts.setdefault(entrant, []).append(len(facts) - 1)
        if isinstance(f, Press):
            self._table.called(f.entrant, f.press_id, f.at_ms, f.puzzle)
        self._calls.add(f)

    def _fold_row(self, row: dict) -> None:
        """Fold one row; a row that still cannot apply is flagged (the fold
        never raises: an event log must always load)."""
        try:
            self._fold_row_unchecked(row)
        except Exception as e:
            self.flagged[row["id"]] = f"cannot apply: {e!r}"

    def _fold_row_unchecked(self, row: dict) -> None:
        p = row["payload"]
        kind = kind_of(row)
        key = event_key(row)
        if key is not None:
            made_by = maker(row)
            self._board_last[made_by] = max(key, self._board_last.get(made_by, key))
            install_press_id(self._installs, *made_by, *key)     # the install numbered as it first appears
        if kind.from_operator:
            self._operator(row, kind)
            return
        if kind is RowKind.HUB_CONFLICT:
            self.key_conflicts.append(row)
            return
        if kind is RowKind.HUB_INTENT_CONFLICT:
            self._book.intent(row)
            return
        if not kind.from_board:
            return
        if kind is RowKind.BOARD_STATUS:
            if self.auto_stations and p["state"] == "online":
                for n in range(1, p["stations"] + 1):
                    self._index.add_auto(row["board"], n)
            return
        if kind in (RowKind.BOARD_CONFIG, RowKind.BOARD_FW):   # an answer to a settings command, a firmware update: no fact
            return
        st = self._index.at(row["board"], p["station"])
        if st is None:
            self.unassigned.append(Unassigned(row["board"], p["station"], row["type"], p.get("at")))
            return
        if kind is RowKind.BOARD_PRESS:
            if p["at"] is None:
                self.unassigned.append(Unassigned(row["board"], p["station"], "untimed press", None))
                return
            pid = install_press_id(self._installs, *maker(row), p["boot"], p["seq"])
            self._numbers.named(row, pid)
            why = press_problem(row, self._window, self._start_row, self.clock_shift(row["id"]))
            if why is not None:
                self.refused.append(Refused(row, pid, why))
                return
            # the station's entrant when it was pressed (a replacement since: the absent one's)
            entrant = self._replaced.entrant_at(row["board"], p["station"], p["at"], st.entrant)
            puzzle = st.puzzle
            if puzzle is None:              # the puzzle on the table when it was pressed
                puzzle = self._table.puzzle(entrant, self._index.free_puzzles(entrant), p["at"])
            self._press_station[pid] = (row["board"], p["station"])
            self._press_row[pid] = row["id"]
            self._station_last[row["board"], p["station"]] = pid
            self._add(Press(entrant=entrant, puzzle=puzzle, at_ms=p["at"], press_id=pid))
        elif kind in BOARD_DECISIONS:
            typ = "confirm" if kind is RowKind.BOARD_CONFIRM else "void"
            pid = self._call_pid(*maker(row), p["call"], p["station"])
            if self._calls.is_closed(pid):
                # made on a stale state: the call was already decided (at the
                # desk, say); the recorded decision stands, this one is shown
                self.conflicts.append(Conflict(row["id"], row["board"], p["station"], pid, typ,
                                               p.get("missing"), row.get("received_ms"),
                                               self._decided.get(pid)))
                return
            self._decide(pid, Decision(row["id"], typ, "board " + row["board"], row.get("received_ms"),
                                       p.get("missing")))
            if kind is RowKind.BOARD_CONFIRM:
                self._add(Confirm(press_id=pid, missing_found=p["missing"]))
                self._official.shown_at_board(pid, row)     # the referee has shown the time at the board
            else:
                self._void(pid)
        elif kind is RowKind.BOARD_STRAY:
            self.strays.append(row)

    def stations_on(self, boards: set[str]) -> list[Station]:
        """The stations of these boards, in the order of `stations` (which
        only grows: auto stations are appended)."""
        return self._index.on(boards)

    def calls_of(self, station: Station) -> int:
        """How many finish calls a station makes: one for its own puzzle,
        or one per puzzle it counts through ('next puzzle' stations)."""
        return self._index.calls_of(station)

    def _decide(self, pid: str, d: Decision) -> None:
        self._book.replaced(pid, self._decided.get(pid), d)
        self._decided[pid] = d

    def _void(self, pid: str) -> None:
        if self._calls.is_voided(pid):
            return
        self._add(Void(press_id=pid))
        self._table.voided(pid)     # its puzzle is on the table again

    def _operator(self, row: dict, kind: RowKind) -> None:
        p, typ = row["payload"], row["type"]
        if kind in (RowKind.OP_CONFIRM, RowKind.OP_VOID, RowKind.OP_CORRECT) and p.get("press_id"):
            missing = sum(p.get(k) or 0 for k in ("missing_found", "missing_lost", "missing_adjacent"))
            self._decide(p["press_id"], Decision(row["id"], typ, p.get("who") or "operator", row.get("received_ms"),
                                                 missing if kind is RowKind.OP_CONFIRM else None))
        elif kind is RowKind.OP_COUNT:
            self._book.decided(("count", p["entrant"], p.get("puzzle") or 1), row["id"])
        elif kind is RowKind.OP_RESOLVE:
            self._book.resolve(row)
        elif kind is RowKind.OP_DNS:
            self._out[p["entrant"]] = "dns"
        elif kind is RowKind.OP_DQ:
            self._out[p["entrant"]] = "dq"
        elif kind is RowKind.OP_REINSTATE:
            self._out.pop(p["entrant"], None)
        elif kind is RowKind.OP_CHECK_IN:
            self._check_ins.record(row)
        if kind is RowKind.OP_REPLACE:
            r = self._replaced.rows.get(row["id"])
            if r is not None and self._out.get(r.absent) != "dq":  # (one that cannot apply: flagged by the scan)
                self._add(DidNotStart(entrant=r.absent, reason=self._replaced.reason(r, self.entrants)))
                self._out[r.absent] = "dns"
                if self._out.pop(r.entrant, None) == "dns":     # a listed reserve marked DNS: starts now
                    self._add(Reinstated(entrant=r.entrant))
        elif kind is RowKind.OP_SWAP:
            self._add(self._table.swap(row["id"], p))     # (a refold's scan knew it already)
        elif kind is RowKind.OP_ROUND_START:
            self._add(RoundStart(at_ms=p["at"], limit_ms=p.get("duration")))
        elif kind is RowKind.OP_PRESS:
            self._add(Press(entrant=p["entrant"], puzzle=p.get("puzzle") or 1, at_ms=p["at"],
                            press_id=f"op/{row['id']}"))
        elif kind is RowKind.OP_VOID:
            self._void(p["press_id"])
        elif kind is RowKind.OP_CORRECT:
            old = self._calls.press(p["press_id"])
            if old is not None:
                self._void(p["press_id"])
                new = f"op/{row['id']}"
                self._add(Press(entrant=old.entrant, puzzle=old.puzzle, at_ms=p["at"], press_id=new))
                # a confirmation of the old press carries over to the corrected one
                # (by its press id, or by the entrant and puzzle it was for)
                by_entrant = [c for c in self._calls.confirmations("")
                              if (c.entrant, c.puzzle) == (old.entrant, old.puzzle)]
                for c in self._calls.confirmations(p["press_id"]) + by_entrant:
                    self._add(Confirm(press_id=new, missing_found=c.missing_found,
                                      missing_lost=c.missing_lost, missing_adjacent=c.missing_adjacent))
        elif kind in FACT_ROWS:
            cls = FACT_ROWS[kind]
            named = {("at_ms" if k == "at" else k): v for k, v in p.items() if v is not None}
            kw = {k: v for k, v in named.items() if k in cls.__dataclass_fields__ and k != "kind"}
            self._add(cls(**kw))
        self._official.operator(row, kind, self._calls)

    def entrant_ids(self) -> set[str]:
        """Every entrant id of the round (auto stations' too, once folded)."""
        self.facts()                       # auto stations appear while folding
        return set(self._index.entrant_ids)

    def call_book(self) -> CallBook:
        """The finish calls as the facts leave them, folded up to the last
        row: open, voided and confirmed calls, counts, who is out (call_book.py)."""
        self.facts()
        return self._calls

    def press(self, pid: str) -> Press | None:
        """The press a press id names, or None."""
        return self._calls.press(pid)

    def check_fold_action(self, action: str, p: dict, now_ms: int | None = None) -> None:
        """ValueError, in an operator's words, unless what the fold keeps
        allows the action: a replacement's book, the hall check before the
        start, an open conflict to resolve.  The action's own checks are
        actions/action_checks.py's, which calls this."""
        self.facts()
        if action in ("replace", "reinstate"):
            check_replacement(self.format, self._index, self._replaced, action, p, self.start_ms,
                              self.time_up_of(p.get("absent") or ""), self._out, now_ms)
        if action == "check_in":
            check_check_in(self._check_ins, p, self._index.entrant_ids, self._given_to())
        start = self.start_ms
        if action == "hall_check" and p["phase"] == "begin" and start is not None and now_ms is not None \
                and now_ms >= start:
            raise ValueError("hall_check: the round has started: the hall is checked before it (its "
                             "presses now are calls)")
        if action in ("draw", "seat") and self._start_row is not None:
            fixed = "teams" if action == "draw" else "stations"
            raise ValueError(f"{action}: the round's start is recorded (log row #{self._start_row['id']}): its "
                             f"{fixed} are fixed from then on, nothing was written (an absent entrant's "
                             f"station goes to another participant with `tabletimer act DIR replace`)")
        if action == "resolve" and p["conflict"] not in {c.row for c in self.open_conflicts()}:
            raise ValueError(f"resolve: log row #{p['conflict']} is no open conflict "
                             "(the console's alerts list them: CONFLICT ... log row #N)")
        if action == "resolve" and p["conflict"] in {c.row for c in self._order_conflicts()}:
            raise ValueError(resolve_refusal(p["conflict"]))
        pid = p.get("press_id")
        self._order.check(self._calls, action, p, self._calls.press(pid) if isinstance(pid, str) else None,
                          start, self._numbers.short)
        self._official.check(action, p, self._calls)
        if action == "official":
            problem = self.official_problem(now_ms)
            if problem is not None:
                raise ValueError(problem)

    def official_book(self) -> OfficialBook:
        """The agreements, objections and official marks, folded up to the
        last row (official.py)."""
        self.facts()
        return self._official

    def official_problem(self, now_ms: int | None) -> str | None:
        """Why the results cannot be made official at now_ms (None: they can)."""
        left = self.time_left_ms(now_ms) if now_ms is not None else None
        provisional = [r.entrant for r in self.standings(None) if r.provisional]
        return readiness_problem(self.format.official_at, left, self.start_ms is not None,
                                 len(self._calls.open_presses()), len(self.open_conflict_ids()), provisional)

    def _given_to(self) -> dict[str, str]:
        """Absent entrant -> who took its station (replacements that stand)."""
        return {r.absent: r.entrant for r in self._replaced.done if self._replaced.of_absent(r.absent) is r}

    def check_in_summary(self) -> CheckInSummary:
        """Who of the entrants at a station is here: "34 of 41 checked in"
        (check_in.py)."""
        self.facts()
        seated = {s.entrant for s in self.stations}
        return self._check_ins.summary([e.id for e in self.entrants], seated, set(self._out),
                                       {r.entrant for r in self._replaced.done})

    def check_in_of(self, entrant: str) -> CheckIn | None:
        """An entrant's latest check-in row (None: none)."""
        self.facts()
        return self._check_ins.latest(entrant)

    def open_calls(self) -> list[tuple[int, str, str, int, str]]:
        """Finish calls waiting for a referee, oldest first:
        (press time, press id, entrant, puzzle, table)."""
        self.facts()
        out = []
        for f in self._calls.open_presses():
            bs = self._press_station.get(f.press_id)
            if bs is None:
                table = "by hand"
            else:
                st = self._by_station.get(bs)
                table = f"{st.table if st else bs[0]} #{bs[1]}"
            out.append((f.at_ms, f.press_id, f.entrant, f.puzzle, table))
        return sorted(out)

    def team_boards(self, board: str, button: int) -> list[str]:
        """The boards that hold stations of the entrant at (board, button):
        those whose relay schedule a finish there can change."""
        return self._index.team_boards(board, button)

    def entrant_boards(self, entrant: str) -> list[str]:
        """The boards that hold stations of an entrant (none: not at a station)."""
        return self._index.entrant_boards(entrant)

    def short_press_id(self, pid: str) -> str:
        """What an operator reads aloud for a press id: a board press's short
        form ("T07-5", board_events.py); any other press id as it is."""
        self.facts()
        return self._numbers.short(pid)

    def canonical_press_id(self, text: str) -> str:
        """The press id a short form names ("T07-5", or "t07-5" when no other
        board's reads the same), else the text as it is: a press id, or
        what the checks then name as no press."""
        self.facts()
        return self._numbers.canonical(text)

    def press_entrant(self, pid: str) -> str | None:
        """The entrant of a press (by press id), if it is in the log."""
        self.facts()
        p = self._calls.press(pid)
        return p.entrant if p is not None else None

    def decision(self, pid: str) -> Decision | None:
        """Who closed a call (by press id), how and when; None while it is
        open (or when there is no such press)."""
        self.facts()
        return self._decided.get(pid)

    def fold_mark(self) -> tuple[list[Fact] | None, int]:
        """Where the fold is now, without folding: folded_since's mark."""
        facts = self._facts
        return facts, (len(facts) if facts is not None else 0)

    def folded_since(self, mark: tuple[list[Fact] | None, int]) -> list[Fact] | None:
        """The facts folded on top since mark (fold_mark), in fact order;
        None when the fold was, or is to be, done again since."""
        facts, n = mark
        return facts[n:] if facts is not None and facts is self._facts else None

    def open_conflict_ids(self) -> frozenset[int]:
        """The rows of the conflicts not resolved yet (open_conflicts' rows):
        nothing to read when the fold has no conflict at all."""
        self.facts()
        if not (self.conflicts or self.key_conflicts or self._book.intents or self._order_conflicts()):
            return frozenset()
        return frozenset(c.row for c in self.open_conflicts())

    def open_conflicts(self) -> list[OpenConflict]:
        """Every conflict not resolved yet, in log order (conflict_book.py;
        a call out of a fixed order: order_book.py)."""
        self.facts()
        got = open_conflicts(self._book, self.conflicts, self.key_conflicts, self._numbers.short)
        order = self._order_conflicts()
        return sorted(got + order, key=lambda c: c.row) if order else got

    def _order_conflicts(self) -> list[OpenConflict]:
        """The calls out of the fixed order (none without one): order_book.py."""
        facts = self.facts()
        return self._order.conflicts(self._calls, facts, self._row_of_press, self._table_of_press,
                                     self._numbers.short, self.start_ms) if self._order.active else []

    def _row_of_press(self, pid: str) -> int:
        """The log row of a press (a board's, or the desk's op/ROW)."""
        if pid.startswith("op/") and pid[3:].isdigit():
            return int(pid[3:])
        return self._press_row.get(pid, 0)

    def _table_of_press(self, pid: str) -> str:
        bs = self._press_station.get(pid)
        st = self._by_station.get(bs) if bs is not None else None
        return st.table if st is not None else (f"{bs[0]} #{bs[1]}" if bs is not None else "the desk")

    def overridden(self, pid: str) -> dict | None:
        """The decision on a call that replaced another person's, in words
        for the one whose it was (None: none)."""
        self.facts()
        return self._book.override_text(pid, self._numbers.short(pid))

    def latest_decision_row(self, action: str, fields: dict) -> int | None:
        """The log row of the latest decision on what an action decides (0:
        none yet; None: the action decides no call or count): what the desk
        saw before it decided."""
        subject = subject_of(action, fields)
        if subject is None:
            return None
        self.facts()
        return self._book.latest(subject)

    def press_at(self, pid: str) -> int | None:
        """The time of a press (by press id), if it is in the log."""
        self.facts()
        p = self._calls.press(pid)
        return p.at_ms if p is not None else None

    # ------------------------------------------------------------ results
    def standings(self, now_ms: int | None = None) -> list[StandingRow]:
        """The standings, kept up to date as rows arrive (only entrants with
        new facts are evaluated again)."""
        facts = self.facts()
        if self._live is None:
            live = Standings(self.format, self.ranked_entrants())
            live.extend(facts)
            self._live = live
        return self._live.rows(now_ms)

    def standings_as_they_stand(self, now_ms: int) -> tuple[list[StandingRow], int | None]:
        """The standings at now_ms and how long until the last time-up: final
        (None) once it is up or when the round never started; before it, the
        live standings (entrants still solving are "running", without a
        place, and all of it provisional), as `results`, `replay` and a
        stopped hub all show them."""
        left = self.time_left_ms(now_ms)
        return (self.standings(now_ms), left) if left is not None else (self.standings(None), None)

    def time_left_ms(self, now_ms: int) -> int | None:
        """How long until the last entrant's time is up (an armed start's
        round too); None: the round is over, or never started."""
        end = self.round_end_ms()
        return end - now_ms if self.start_ms is not None and end is not None and now_ms < end else None

    def ranked_entrants(self) -> list[Entrant]:
        """The entrants the standings rank: those at a station, and any
        other the log has a fact of (a finish or count recorded by hand, a
        DNS).  A reserve listed without a station (ready to replace an
        absent entrant) is not in the round: not running, no place, nothing
        provisional, until a replacement gives it a station."""
        self.facts()
        if self._ranked is None:
            seated = {s.entrant for s in self.stations}
            self._ranked = [e for e in self.entrants if e.id in seated or e.id in self._entrant_facts]
            self._ranked_ids = {e.id for e in self._ranked}
        return self._ranked

    @property
    def start_ms(self) -> int | None:
        row = self._start_row
        return row["payload"]["at"] if row is not None else None

    def round_start_row(self) -> dict | None:
        return self._start_row

    def hall_check_row(self) -> dict | None:
        """The latest hall check's beginning (None: none begun)."""
        return self._check_row

    def in_hall_check(self, row: dict) -> bool:
        """A board row of the hall check: stored after its beginning, stored
        and pressed before the round's start (a press then is the check's,
        not a stray; one at or after the start never: row_checks.in_check)."""
        return in_check(row, self._check_row, self.hall_check_end_ms())

    def check_stray(self, row: dict) -> bool:
        """A stray made during this round's hall check: the check's press,
        whatever schedule the board made it under.  Before a round's start
        the hub sends no schedule, so a board still holds the round
        before's (or an earlier event's), and every press of the check is a
        stray under it (issue 45, item 4): this round's, stored in its log."""
        return (kind_of(row) is RowKind.BOARD_STRAY
                and made_in_check(row, self._check_row, self.hall_check_end_ms()))

    def hall_check_end_ms(self) -> int | None:
        """When the latest hall check ends by the round's start (hub ms: the
        start instant, in the future for a start armed ahead; None: no start
        yet, or no check begun): row_checks.check_end."""
        c = self._check_row
        return None if c is None else check_end(c, self._start_rows)

    def round_limit_ms(self) -> int | None:
        """The round's time limit: the start's own, else the format's."""
        row = self._start_row
        if row is None:
            return None
        return row["payload"].get("duration") or self.format.time_limit_ms

    def replacements(self) -> list[Replacement]:
        """The absent entrants' stations given to others, in log order
        (replacements.py)."""
        self.facts()
        return list(self._replaced.done)

    def time_up_of(self, entrant: str) -> int | None:
        """When an entrant's time is up (hub ms; None: no start)."""
        fmt, start = self.format, self.start_ms
        extra = self.offset_of(entrant) if fmt.start_offsets and fmt.offset_extends_limit else 0
        return None if start is None else start + (self.round_limit_ms() or 0) + extra

    def offset_of(self, entrant: str) -> int:
        """An entrant's start offset (a new start time), 0 without one."""
        return self._offsets.get(entrant, 0)

    def free_puzzles(self, entrant: str) -> tuple[int, ...]:
        """The puzzles an entrant's 'next puzzle' stations count through."""
        return self._index.free_puzzles(entrant)

    def puzzle_on_table(self, entrant: str) -> int:
        """The puzzle on the entrant's table now, of those its 'next
        puzzle' stations count through (its finishes and swaps: on_table.py)."""
        self.facts()
        return self._table.puzzle(entrant, self._index.free_puzzles(entrant))

    def station_of(self, pid: str) -> tuple[str, int] | None:
        """(board, button) of a board's finish call, None for the desk's."""
        self.facts()
        return self._press_station.get(pid)

    def last_call_at(self, board: str, button: int) -> str | None:
        """The press id of a board station's latest finish call (open,
        confirmed or voided), None before its first."""
        self.facts()
        return self._station_last.get((board, button))

    def round_end_ms(self) -> int | None:
        """When the last entrant's time is up: the round's end, later for an
        entrant whose new start time extends its limit (None: no start)."""
        row = self._start_row
        if row is None:
            return None
        p = row["payload"]
        end = p["at"] + (p.get("duration") or self.format.time_limit_ms)
        if self.format.start_offsets and self.format.offset_extends_limit:
            end += max([0, *self._offsets.values()])
        return end

    def last_row_id(self) -> int:
        return self._ids[-1] if self._ids else 0
