"""The hub's named change notifications, in one catalogue: what the state's
one apply path (hub_state.py) and its parts publish, and what the boards'
command sender (the MQTT link), the consoles, the web pages' change feeds,
the hall process and the standby subscribe to, by name.

A notification is a frozen dataclass; a subscriber names its class and is
called with it, synchronously, in the publisher's thread (the service's
parts publish under its lock: a subscriber must be quick and must not
block), in the order the subscriptions were made.

Beside them, the named queries the service asks when it shows its alerts
(`Queries`): a part that knows something the log does not (the MQTT link's
self-probe, a standby's follower, a remote console's hub) registers its
alerts, or its reason to be blind, by name, and withdraws them by name.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Callable, Generic, Literal, NamedTuple, TypeVar

from ..protocol.hub_protocol import Outgoing


# ------------------------------------------------------------ the catalogue
@dataclass(frozen=True)
class OperatorRowFolding:
    """An operator's row (not a round's start), about to be folded, live or
    at a replay: the parts' own book-keeping of it (idempotency keys,
    decisions, a board's reset, identify, settings, firmware)."""
    row: dict


@dataclass(frozen=True)
class RowApplied:
    """A stored row, folded into the state (once), live or at a replay."""
    row: dict


@dataclass(frozen=True)
class MessageRejected:
    """A board's message refused by the admission, in its counted category."""
    category: str
    detail: str


@dataclass(frozen=True)
class ToBoards:
    """Messages for the boards, signed and numbered, in counter order: the
    MQTT link sends them (nothing does where no link runs)."""
    messages: list[Outgoing]


# ------------------------------------------------------------ what a row changed
# Told by the state's apply right after RowApplied, in log order, for every row
# folded (live or at a replay): fold_changes.py derives them, in one place.
@dataclass(frozen=True)
class CallOpened:
    """A finish call recorded: a board's press (board, station: its button)
    or a referee's press by hand (board and station None)."""
    row_id: int
    press_id: str
    entrant: str
    puzzle: int
    board: str | None
    station: int | None


@dataclass(frozen=True)
class CallDecided:
    """A decision on a call: confirmed or voided (a correction is a void and a
    new call), by a board ("board b1") or an operator (who they said)."""
    row_id: int
    press_id: str            # "" for a confirmation by entrant and puzzle with no call to name
    decision: Literal["confirmed", "voided"]
    by: str


@dataclass(frozen=True)
class StandingsChanged:
    """The round's facts changed with this row (a fact folded on top, or the
    fold to be done again: a late row, a round start, a replacement)."""
    row_id: int


@dataclass(frozen=True)
class BoardHealthChanged:
    """A board's status row (its birth, its status, its will: state) stored."""
    row_id: int
    board: str
    state: str | None


@dataclass(frozen=True)
class RoundMoved:
    """The round started (or was started again), a hall check began or had
    its verdict."""
    row_id: int
    what: Literal["round_start", "hall_check_begin", "hall_check_verdict"]


@dataclass(frozen=True)
class ConflictOpened:
    """A conflict to resolve (its row: open_conflicts' row)."""
    row_id: int


@dataclass(frozen=True)
class ConflictResolved:
    """A conflict resolved (by a resolve row, or a later decision)."""
    row_id: int


@dataclass(frozen=True)
class StationStatesChanged:
    """A board's station states changed, as the boards' command sender sends
    them (board_commands.py): its entries, by button."""
    board: str
    entries: tuple


FOLD_NOTES = (CallOpened, CallDecided, StandingsChanged, BoardHealthChanged, RoundMoved,
              ConflictOpened, ConflictResolved)
CATALOGUE = (OperatorRowFolding, RowApplied, MessageRejected, ToBoards, StationStatesChanged,
             *FOLD_NOTES)

N = TypeVar("N")


class Subscription(Generic[N]):
    """One subscriber of one notification; `cancel` ends it (again: nothing)."""

    def __init__(self, changes: Changes, kind: type[N], fn: Callable[[N], None]) -> None:
        self.kind, self.fn, self._changes = kind, fn, changes

    def cancel(self) -> None:
        self._changes.unsubscribe(self)


class Changes:
    """The pub/sub of the catalogue's notifications."""

    def __init__(self) -> None:
        self._subs: dict[type, tuple[Subscription, ...]] = {kind: () for kind in CATALOGUE}
        self._lock = threading.Lock()      # (the tuples are replaced whole: publish reads without it)

    def subscribe(self, kind: type[N], fn: Callable[[N], None]) -> Subscription[N]:
        if kind not in self._subs:
            raise TypeError(f"{kind!r} is not a notification of the catalogue (changes.py)")
        sub = Subscription(self, kind, fn)
        with self._lock:
            self._subs[kind] = self._subs[kind] + (sub,)
        return sub

    def unsubscribe(self, sub: Subscription) -> None:
        with self._lock:
            self._subs[sub.kind] = tuple(s for s in self._subs[sub.kind] if s is not sub)

    def subscribed(self, kinds: tuple[type, ...]) -> bool:
        """Anyone subscribes to one of kinds (nobody: they need not be made)."""
        return any(self._subs[k] for k in kinds)

    def subscribers(self, kind: type) -> int:
        """How many subscribe to kind (a closed console leaves none behind)."""
        return len(self._subs[kind])

    def publish(self, note: object) -> None:
        for sub in self._subs[type(note)]:
            sub.fn(note)


# ------------------------------------------------------------ the queries
AlertSource = Callable[[], list[str]]
BlindSource = Callable[[], "str | None"]
StatusSource = Callable[[], "tuple[str, bool] | None"]     # (a part's status line, healthy), None: nothing to say


class StatusLine(NamedTuple):
    """A part's status for the console's header, at all times (an alert
    only while it fails): "public site (r2:cup): published 10:42:05 (v123)"."""
    text: str
    ok: bool


class Queries:
    """The named sources of alerts, status lines and blindness the service
    asks (in the order they were registered); registering a name again
    replaces it."""

    def __init__(self) -> None:
        self._alerts: dict[str, AlertSource] = {}
        self._blind: dict[str, BlindSource] = {}
        self._status: dict[str, StatusSource] = {}
        self._lock = threading.Lock()

    def add_alerts(self, name: str, fn: AlertSource) -> None:
        with self._lock:
            self._alerts = {**self._alerts, name: fn}

    def drop_alerts(self, name: str) -> None:
        with self._lock:
            self._alerts = {k: v for k, v in self._alerts.items() if k != name}

    def add_status(self, name: str, fn: StatusSource) -> None:
        """fn: the part's status line for the console's header (quick: it must not block)."""
        with self._lock:
            self._status = {**self._status, name: fn}

    def drop_status(self, name: str) -> None:
        with self._lock:
            self._status = {k: v for k, v in self._status.items() if k != name}

    def status_lines(self) -> list[StatusLine]:
        """Every part's status now; a source that fails says so in its line."""
        out = []
        for name, fn in list(self._status.items()):
            try:
                said = fn()
            except Exception as e:           # a part's bug never takes the console's header down
                said = (f"{name}: status unknown ({e!r})", False)
            if said is not None:
                out.append(StatusLine(*said))
        return out

    def add_blind(self, name: str, fn: BlindSource) -> None:
        """fn says why this process cannot know the boards' state now (None: it can)."""
        with self._lock:
            self._blind = {**self._blind, name: fn}

    def drop_blind(self, name: str) -> None:
        with self._lock:
            self._blind = {k: v for k, v in self._blind.items() if k != name}

    def alert_names(self) -> list[str]:
        return list(self._alerts)

    def alert_sources(self) -> list[AlertSource]:
        return list(self._alerts.values())

    def blind(self) -> str | None:
        """The first registered reason to be blind now (None: live)."""
        for fn in list(self._blind.values()):
            why = fn()
            if why:
                return why
        return None
