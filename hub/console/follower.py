"""A standby's follower (`tabletimer standby`): the primary hub's log copied
row for row into this laptop's events.sqlite as the primary writes it, over
the primary's console API (GET /rows, console/client.py's HubClient), and
what the standby's console says of it: how far behind it is, how long the
primary has been silent, this laptop's clock against the primary's.

The copy's rules (the same event, rows that follow on) are event/log/replica.py's;
a batch that breaks them is not stored, the follower stops copying and says
why (it never writes a row of its own).  `StandbyLog` is the copy as the
standby's HubService sees it: read, never written (an operator action on a
standby is refused: the primary's log is the one truth)."""

from __future__ import annotations

import threading
import time
from collections import deque

from ..event.log.replica import last_desk_action
from ..event.log.store import EventStore
from ..rules.timetext import fmt_clock
from .client import HubClient, RemoteError

POLL_S = 0.1            # the primary is asked for new rows this often (one that cannot wait)
WAIT_S = 1.0            # a long poll: the primary answers once it stores a row, or after this
RETRY_S = 1.0           # ... and, while it does not answer, this often
LAGS_KEPT = 1000        # rows whose copy lag the status line's percentile is of
SILENT_S = 5.0          # the primary silent this long: the standby's alert turns red (--silent-after)


class StandbyRefusal(ValueError):
    """An operator action on a standby: the text says where to act."""


class StandbyLog:
    """The copy, for the standby's HubService: its rows and event id; every
    write refused (the follower alone writes it, with copy_rows)."""

    def __init__(self, store: EventStore, primary: str) -> None:
        self.store, self.path, self.primary = store, store.path, primary

    @property
    def event_id(self) -> int:
        return self.store.event_id

    def events(self, after: int = 0) -> list[dict]:
        return self.store.events(after)

    def refuse(self, *args, **kwargs):
        """StandbyRefusal: every write, and `act` before it says what it would record."""
        raise StandbyRefusal(f"this laptop is a standby: it records nothing (its log is a copy of "
                             f"{self.primary}'s); act on the primary: its console, or `tabletimer console "
                             f"{self.primary} --token-file ...`")

    append = append_board_event = reserve = refuse


class Follower:
    """Copies the primary's new rows in a thread of its own (start), until
    stop(): as the primary stores them (a long poll: the primary's answer
    waits up to WAIT_S for a row), or every POLL_S from a primary that
    does not wait (an older TableTimer)."""

    def __init__(self, client: HubClient, store: EventStore, silent_s: float = SILENT_S,
                 takeover: str | None = None) -> None:
        """takeover: the command that makes this laptop the hub (said when the primary is silent)."""
        self.client, self.store, self.silent_s = client, store, silent_s
        self.takeover = takeover or f"tabletimer takeover {store.path.parent} --primary {client.url}"
        self.copied = store.last_id()          # the copy's last row id
        # the copy's last desk action (what the desk did after it on the primary is not here)
        self.last_desk: dict | None = last_desk_action(store.events())
        self.primary_last: int | None = None   # the primary's last row id, at its last answer
        self.heard: float | None = None        # time.monotonic() of the primary's last answer
        self.down: str | None = None           # why it does not answer, while it does not
        self.refused: str | None = None        # why a batch was not stored (copying stopped)
        self._tail_checked = False
        # ms from a row's arrival at the primary to its copy here, the last LAGS_KEPT rows copied
        # live (not those of the first fetch: the log so far)
        self.lags: deque[int] = deque(maxlen=LAGS_KEPT)
        self.live = False
        self.long_poll = False                 # the primary waits for a row (/rows ...&wait=): no pause
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def fetch(self) -> int:
        """Copy what the primary has after the copy's last row (RemoteError:
        it did not answer, or refused); how many rows were copied."""
        n = 0
        if not self._tail_checked:
            self._check_tail()
        wait = WAIT_S if self.live else 0.0       # the first of a live fetch waits for a row
        while True:
            rows, reply = self._rows_after(self.copied, wait)
            wait = 0.0
            self.long_poll = "waited_ms" in reply
            n += self.store.copy_rows(rows, reply.get("event_id"))   # ValueError: nothing stored
            if rows:
                self.copied = rows[-1]["id"]
                self.last_desk = last_desk_action(rows) or self.last_desk
                now = self.client.clock.now_ms()              # the primary's time, on this laptop
                if self.live:
                    self.lags.extend(max(0, now - r["received_ms"]) for r in rows)
            self.primary_last = reply.get("last") if type(reply.get("last")) is int else self.copied
            self.heard, self.down = time.monotonic(), None
            if not reply.get("more"):
                self.live = True          # from now on each row is copied as it is written
                return n

    def _rows_after(self, after: int, wait: float = 0.0) -> tuple[list, dict]:
        reply = self.client.request("GET", f"/rows?after={after}" + (f"&wait={wait:g}" if wait else ""))
        rows = reply.get("rows") if isinstance(reply, dict) else None
        if not isinstance(rows, list):
            raise RemoteError(f"{self.client.url}/rows did not answer with rows: is it a TableTimer hub?")
        return rows, reply

    def _check_tail(self) -> None:
        """The copy's last row is the primary's (ValueError: it is not: a log
        written here, or by another hub)."""
        if self.copied:
            rows, reply = self._rows_after(self.copied - 1)
            self.store.copy_rows([], reply.get("event_id"))      # ValueError: another event's log
            mine = self.store.events(after=self.copied - 1)
            if not rows or not mine or rows[0] != mine[0]:
                raise ValueError(f"row #{self.copied} of this log is not the primary's: this log was "
                                 "written by another hub; move this events.sqlite away and start the "
                                 "standby again")
        self._tail_checked = True

    def start(self) -> "Follower":
        self._thread = threading.Thread(target=self._run, name="standby-follower", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(5)

    def _run(self) -> None:
        while not self._stop.wait(RETRY_S if self.down else 0 if self.long_poll else POLL_S):
            try:
                self.fetch()
            except RemoteError as e:
                self.down = str(e)
            except ValueError as e:             # rows that do not follow on: stop, say why
                self.refused = str(e)
                return
            except Exception as e:              # the copy cannot be written (a full disk): stop, say why
                self.refused = f"the copy {self.store.path} could not be written ({e}): nothing more is copied"
                return

    # ------------------------------------------------------------ what it says
    def silent_for(self) -> float | None:
        """Seconds since the primary last answered (None: it never has)."""
        return None if self.heard is None else time.monotonic() - self.heard

    def status(self) -> str:
        """One line: how far the copy is, the primary heard, the clocks."""
        behind = max(0, (self.primary_last or self.copied) - self.copied)
        silent = self.silent_for()
        heard = "never answered" if silent is None else f"heard {silent:.1f} s ago"
        offset = self.client.clock.offset_ms
        clock = (f"this laptop's clock {abs(offset) / 1000:.1f} s {'behind' if offset > 0 else 'ahead of'} "
                 "the primary's" if abs(offset) >= 1000 else "the clocks agree within 1 s")
        lag = self.lag_ms()
        copied = (f", each within {lag[0] / 1000:.2f} s of being written (p99 of the last {lag[1]}: "
                  f"{lag[2] / 1000:.2f} s)") if lag else ""
        desk = self.last_desk
        said = (f"; the last desk action copied: #{desk['id']} {desk['type']} at {fmt_clock(desk['received_ms'])}"
                if desk else "")
        return (f"STANDBY of {self.client.url}: copied up to row #{self.copied}{copied}, {behind} row(s) behind, "
                f"{heard}; {clock}{said}; it acks no board")

    def lag_ms(self) -> tuple[int, int, int] | None:
        """(the last row's, how many rows, their 99th percentile): ms from a
        row's arrival at the primary to its copy here; None before any."""
        if not self.lags:
            return None
        ordered = sorted(self.lags)
        return self.lags[-1], len(ordered), ordered[min(len(ordered) - 1, (len(ordered) * 99) // 100)]

    def alerts(self) -> list[str]:
        """The standby's lines for its console: the status, and what is
        wrong (red: the primary silent for silent_s, copying stopped)."""
        out = [self.status()]
        if self.refused:
            out.append(f"STANDBY STOPPED COPYING: {self.refused}")
        silent = self.silent_for()
        if silent is None or silent > self.silent_s:
            since = "since the standby started" if silent is None else f"for {silent:.0f} s"
            out.append(f"PRIMARY SILENT {since} ({self.down or 'no answer'}): if its laptop is dead, stop "
                       f"this standby and `{self.takeover}` (docs/operations.md, 'The hub laptop died')")
        return out
