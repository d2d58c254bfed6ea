"""The operators' actions (the console's keys, `tabletimer act`, the
referees' phones): checked against the event (nothing stored when a check
fails), their consequences told for the operator to confirm, stored with
who and why, applied, and what they change sent to the boards they touch.
An idempotency key makes an action sent again harmless, and the same key
with other content a conflict.  Part of the hub's service (service.py)."""

from __future__ import annotations

import threading
from collections import deque
from typing import Callable

from .board_commands import BoardCommands
from .changes import Changes, OperatorRowFolding
from .hub_state import Outgoing
from .registry import BoardRegistry
from ..event.time.clock import HubClock
from ..protocol.keys import BoardKeys
from ..event.log.action_rows import MAX_TEXT, META
from ..event.log.rows import kind_of, operator_kind
from ..event.fold.competition import Competition
from ..rules.format_model import Format
from ..event.fold.conflict_book import DONE, INTENT_CONFLICT, subject_of
from ..event.actions.action_checks import check_action
from ..event.actions.consequences import consequences
from ..rules.timetext import fmt_clock


def with_defaults(fmt: Format, action: str, payload: dict) -> dict:
    """The payload as it is recorded: a round start that names no warnings
    (absent or null) gets the format's default ones within its limit; an
    empty list stays: no warnings.  Anything else as it is (a malformed
    field is the checks' to refuse)."""
    if action != "round_start" or not isinstance(payload, dict) or payload.get("warnings") is not None:
        return payload
    duration = payload.get("duration")
    limit = duration if type(duration) is int and duration > 0 else None
    return dict(payload, warnings=fmt.default_warnings_ms(limit))


class RequestConflict(ValueError):
    """An action sent again under the idempotency key of a stored one, with
    other content: not stored, never a silent replacement."""

    def __init__(self, message: str, row: dict) -> None:
        super().__init__(message)
        self.row = row


class StaleDecision(ValueError):
    """A desk's decision made on what it saw (`seen`) when another decision
    on that call or count has been recorded since: not stored, a CONFLICT
    for the desk and the head referee (row: the intent_conflict row)."""

    def __init__(self, message: str, row: dict) -> None:
        super().__init__(message)
        self.row = row


class AlreadyRecorded(Exception):
    """Raised by an action's precondition: the very decision is the one
    recorded now (the same person's second tap, sent under another key):
    nothing is stored, the recorded row is the answer."""

    def __init__(self, row: dict) -> None:
        super().__init__(f"already recorded as row #{row['id']}")
        self.row = row


class OperatorActions:
    """The operators' actions, given what they use (service.py wires them):
    the commands to the boards, the fold, the hub clock, the board keys and
    registry, the writer and message locks (a check and its row in one
    go), record (a row written and applied: HubState.record), publish
    (messages for the boards), the consoles' activity lines, the
    notifications (each operator row's idempotency key and decision, live
    and at a replay) and checks_seen (whether the desk's `seen` is checked
    here: not on a remote console, whose hub checks it)."""

    def __init__(self, commands: BoardCommands, *, competition: Competition, clock: HubClock, keys: BoardKeys,
                 registry: BoardRegistry, lock: threading.RLock, writer: threading.RLock, record: Callable[..., dict],
                 publish: Callable[[list[Outgoing]], None], activity: deque[str], changes: Changes,
                 checks_seen: Callable[[], bool]) -> None:
        self.commands, self.competition, self.clock, self.keys, self.registry = commands, competition, clock, keys, registry
        self.lock, self.writer, self.record, self.publish, self.activity = lock, writer, record, publish, activity
        self.checks_seen = checks_seen
        self.requests: dict[str, dict] = {}   # idempotency key -> the operator row it stored
        self.decisions: dict[tuple, dict] = {}   # subject_of -> the operator row that decided it last
        changes.subscribe(OperatorRowFolding, lambda n: self._operator_row(n.row))

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
        with self.lock:
            payload = self._long_press_id(payload)
            check_action(self.competition, action, payload, self.clock.now_ms())
            if action in ("identify", "reset_board"):
                b = payload["board"]
                if b not in self.keys.boards() and b not in self.registry.boards:
                    raise ValueError(f"{action}: no board {b!r}")
            if action == "settings":
                self._check_settings(payload)
            if action == "firmware":
                self._check_firmware(payload)

    def _check_firmware(self, payload: dict) -> None:
        """A firmware request (fleet/firmware_update.py): a board with a
        key, no round running on it (nor a call of it waiting for the
        referee), no other update of it under way, and a version not older
        than the one its last birth said, unless the desk allows it
        (`older`: --allow-older; the board checks again).  Under the lock."""
        from ..fleet import board_settings
        from ..fleet.firmware_update import older

        b = payload["board"]
        if self.keys.key(b) is None:
            raise ValueError(f"firmware: no board {b!r} in the keys file (flashed with `tabletimer board flash`?)")
        busy = board_settings.round_on(self.competition, b, self.clock.now_ms())
        if busy:
            raise ValueError(f"firmware: board {b}: {busy.replace('change the settings', 'update it')}")
        runs = self.registry.boards[b].fw if b in self.registry.boards else None
        if runs and not payload.get("older") and older(payload["fw"], runs):
            raise ValueError(f"firmware: board {b} runs {runs}: {payload['fw']} is older, refused "
                             "(--allow-older to put it on all the same)")

    def _check_settings(self, payload: dict) -> None:
        """A settings request (fleet/board_settings.py): a board with a key,
        no round running on it (nor a call of it waiting for the referee),
        and changes the board's own checks take.  Under the lock."""
        from ..fleet import board_settings

        b = payload["board"]
        key = self.keys.key(b)
        if key is None:
            raise ValueError(f"settings: no board {b!r} in the keys file (flashed with `tabletimer board flash`?)")
        busy = board_settings.round_on(self.competition, b, self.clock.now_ms())
        if busy:
            raise ValueError(f"settings: board {b}: {busy}")
        board_settings.check(board_settings.unseal(payload["set"], key))

    def consequences(self, action: str, payload: dict) -> list[str]:
        """What recorded results an action (already checked) would replace
        or discard, in words for the operator who must confirm it; empty
        when it changes no recorded decision."""
        with self.lock:
            payload = self._long_press_id(payload)
            subject = subject_of(action, payload)
            last_count = self.decisions.get(subject) if subject is not None and subject[0] == "count" else None
            return consequences(self.competition, action, payload, self.clock.now_ms(), last_count)

    def act(self, action: str, payload: dict, who: str = "operator", why: str = "",
            request: str | None = None, precondition: Callable[[Competition], None] | None = None) -> dict:
        """Check an operator action (check_action), then append it (with who
        and why) and apply it; nothing is stored when the check fails
        (ValueError) or the log cannot be written (LogWriteFailed).  A press
        id may be given in either form (competition.canonical_press_id): the
        row holds the long one.

        request: the action's idempotency key (a phone's queued action sent
        again because its answer was lost).  The same key with the same
        action, payload and who: the stored row again, nothing new stored
        (its "duplicate" is True); with other content: RequestConflict.

        precondition(competition): called under the lock just before the
        action is stored (after the checks); what it raises is raised and
        nothing is stored (a page's intent made on a state that changed
        meanwhile: the web layer's conflict check); AlreadyRecorded(row):
        nothing is stored and that row is the answer (its "duplicate" True)."""
        cmds = self.commands
        with self.writer, self.lock:
            payload = self._long_press_id(payload)      # stored as the long id: the record's
            if request is not None:
                earlier = self.requests.get(request)
                if earlier is not None:
                    return self._same_request(earlier, action, payload, who, why, request)
            stored = dict(payload, who=who, why=why)
            if request is not None:
                stored["request"] = request
            self.check_action(action, stored, who, why)
            if isinstance(payload.get("seen"), int) and self.checks_seen():
                self._check_seen(action, payload, who)
            if precondition is not None:
                try:
                    precondition(self.competition)
                except AlreadyRecorded as same:
                    return dict(same.row, duplicate=True)
            row = self.record("operator", action, stored, told=True)
            boards = self._boards_of(action, payload)
            if cmds.sending():       # (else the running hub sends them as it applies the row)
                self.publish(cmds.schedules(boards) + cmds.station_messages(boards))   # in counter order
        return row

    def latest_decision_row(self, action: str, payload: dict) -> int | None:
        """The log row of the latest decision on what the action decides (0:
        none; None: it decides no call or count): the `seen` the desk sends
        with a decision it made looking at the state now."""
        with self.lock:
            return self.competition.latest_decision_row(action, self._long_press_id(payload))

    def note_conflict(self, by: str, who: str, action: str, payload: dict, text: str,
                      table: str | None = None) -> dict:
        """Store an intent refused as a conflict (an intent_conflict row,
        source 'hub'): a CONFLICT line for the desk and the head referee
        until someone resolves it.  by: "phone" or "desk"."""
        with self.writer, self.lock:
            payload = self._long_press_id(payload)
            row_payload = {"by": by, "who": who, "action": action, "text": text[:MAX_TEXT]}
            for k in ("press_id", "entrant", "puzzle"):
                if isinstance(payload.get(k), (str, int)) and not isinstance(payload.get(k), bool):
                    row_payload[k] = payload[k]
            if table is not None:
                row_payload["table"] = table[:MAX_TEXT]
            row = self.record("hub", INTENT_CONFLICT, row_payload, told=True)
            self.activity.append(f"CONFLICT: {action} by {who} ({by}) not recorded: {row_payload['text']}")
        return row

    def _check_seen(self, action: str, payload: dict, who: str) -> None:
        """StaleDecision (and a CONFLICT) when a decision on the action's
        call or count was recorded after the one the desk saw."""
        comp = self.competition
        latest = comp.latest_decision_row(action, payload)
        if latest is None or latest == payload["seen"]:
            return
        subject = subject_of(action, payload) or ("", "")
        op = self.decisions.get(subject) if subject[0] == "count" else None
        d = comp.decision(payload["press_id"]) if isinstance(payload.get("press_id"), str) else None
        if d is not None and d.row == latest:
            when = f" at {fmt_clock(d.at_ms)}" if d.at_ms is not None else ""
            since = f"{d.who} {DONE.get(d.kind, d.kind)} it{when} (log row #{d.row})"
        elif op is not None and op["id"] == latest:
            since = (f"{op['payload'].get('who')} counted it at {fmt_clock(op['received_ms'])} "
                     f"(log row #{op['id']})")
        else:
            since = f"log row #{latest} decided it"
        text = f"{since}, after the desk looked"
        row = self.note_conflict("desk", who, action, payload, text)
        raise StaleDecision(f"{action}: not recorded: {text}; look again (run it again to see what it "
                            f"would replace) and decide", row)

    def identical_decision(self, action: str, payload: dict, who: str) -> dict | None:
        """The operator row of this very decision (the same action and
        fields, by the same person) if it is what is recorded now on its
        subject: a second tap of one decision, sent under another key, is
        that decision, not a conflict with it (None otherwise)."""
        with self.lock:
            payload = self._long_press_id(payload)
            subject = subject_of(action, payload)
            row = self.decisions.get(subject) if subject is not None else None
            if row is None or kind_of(row) is not operator_kind(action) or row["payload"].get("who") != who:
                return None
            fields = {k: v for k, v in row["payload"].items() if k not in META and v is not None}
            if fields != {k: v for k, v in payload.items() if k not in META and v is not None}:
                return None
            if action in ("confirm", "void"):
                d = self.competition.decision(payload["press_id"])
                if d is None or d.row != row["id"]:       # decided again since (a board's, the desk's)
                    return None
            return row

    def _long_press_id(self, payload: dict) -> dict:
        """The payload with its press id in the long form the log records
        ("T07/3/5"), whichever form the operator typed ("T07-5")."""
        pid = payload.get("press_id") if isinstance(payload, dict) else None
        if not isinstance(pid, str):
            return payload
        long = self.competition.canonical_press_id(pid.strip())
        return payload if long == pid.strip() else dict(payload, press_id=long)

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
        payload = {k: v for k, v in payload.items() if k not in META}
        if (earlier["type"], stored, earlier["payload"].get("who"), earlier["payload"].get("why") or "") \
                == (action, payload, who, why):
            return dict(earlier, duplicate=True)
        raise RequestConflict(f"{action}: request {request!r} was already stored as row #{earlier['id']} "
                              f"({earlier['type']} by {earlier['payload'].get('who')}) with other content; "
                              "nothing stored", earlier)

    def _operator_row(self, ev: dict) -> None:
        """A stored action's idempotency key, known from its row on (live or
        read back from the log)."""
        if isinstance(ev["payload"].get("request"), str):
            self.requests.setdefault(ev["payload"]["request"], ev)
        subject = subject_of(ev["type"], ev["payload"])
        if subject is not None:
            self.decisions[subject] = ev
