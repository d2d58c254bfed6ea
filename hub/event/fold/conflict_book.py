"""What the fold of the log (competition.py) keeps of conflicts: an intent
refused because it was made on a state that changed meanwhile (a phone's
confirmation of a call a board had confirmed, a desk's void of a call a
referee confirmed after the desk looked: an `intent_conflict` row the hub
stores, source 'hub'), which conflicts are resolved, and the decisions that
replaced another person's (the one whose decision it was is told).  Pure.

A conflict stays open, one CONFLICT line for the desk and the head
referee, until someone resolves it: a decision on its subject recorded
after it (someone looked again and decided), or the desk's `resolve` of it
(`tabletimer act resolve conflict=ROW why=...`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .fold_records import Conflict, Decision

INTENT_CONFLICT = "intent_conflict"      # the row type (source 'hub')
DONE = {"confirm": "confirmed", "void": "voided", "correct": "corrected", "count": "counted"}   # a decision in words


def subject_of(action: str, fields: dict) -> tuple | None:
    """What a decision decides: a call (confirm, void, correct) or a
    puzzle's count (None: not a decision on either)."""
    if action in ("confirm", "void", "correct") and isinstance(fields.get("press_id"), str):
        return ("call", fields["press_id"])
    if action == "count" and isinstance(fields.get("entrant"), str):
        return ("count", fields["entrant"], fields.get("puzzle") or 1)
    return None


def intent_conflict_problem(payload: dict) -> str | None:
    """Why a stored intent_conflict row cannot be folded (None: it can)."""
    for k in ("who", "by", "action", "text"):
        if not isinstance(payload.get(k), str):
            return f"intent_conflict: {k} must be text"
    if payload["by"] not in ("phone", "desk"):
        return "intent_conflict: by must be 'phone' or 'desk'"
    return None


@dataclass(frozen=True)
class OpenConflict:
    row: int            # the conflict's log row (what `resolve` names)
    text: str           # one line, beginning "CONFLICT"


class ConflictBook:
    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.intents: list[dict] = []                 # intent_conflict rows, log order
        self.resolutions: dict[int, dict] = {}        # conflict row id -> the resolve row
        self.overrides: dict[str, tuple[Decision, Decision]] = {}   # press id -> (replaced, by)
        self._latest: dict[tuple, int] = {}           # subject -> the row of its latest decision

    # ------------------------------------------------------------ the fold
    def decided(self, subject: tuple, row_id: int) -> None:
        self._latest[subject] = max(row_id, self._latest.get(subject, 0))

    def replaced(self, pid: str, old: Decision | None, new: Decision) -> None:
        """A call decided (again): another person's decision replaced is kept."""
        self.decided(("call", pid), new.row)
        if old is not None and old.who != new.who:
            self.overrides[pid] = (old, new)
        else:
            self.overrides.pop(pid, None)

    def intent(self, row: dict) -> None:
        self.intents.append(row)

    def resolve(self, row: dict) -> None:
        self.resolutions.setdefault(row["payload"]["conflict"], row)

    # ------------------------------------------------------------ reading
    def latest(self, subject: tuple) -> int:
        """The row of the latest decision on a subject (0: none)."""
        return self._latest.get(subject, 0)

    def is_resolved(self, row_id: int, subject: tuple | None) -> bool:
        return row_id in self.resolutions or (subject is not None and self._latest.get(subject, 0) > row_id)

    def override_text(self, pid: str, short: str) -> dict | None:
        """The decision on a call that replaced another person's, for the
        one whose it was: {"row", "text"} (row: the replaced decision's)."""
        got = self.overrides.get(pid)
        if got is None:
            return None
        old, new = got
        return {"row": old.row, "by": new.who,
                "text": f"{DONE.get(new.kind, new.kind)} by {new.who} after {old.who}'s "
                        f"{'confirmation' if old.kind == 'confirm' else old.kind} (row #{old.row})"
                        f" of call {short}"}


def intent_text(row: dict, short: str) -> str:
    """An intent_conflict row as the desk's CONFLICT line."""
    p = row["payload"]
    where = f" at {p['table']}" if isinstance(p.get("table"), str) else ""
    on = f"call {short}" if isinstance(p.get("press_id"), str) else \
        f"{p.get('entrant')}'s puzzle {p.get('puzzle') or 1}" if isinstance(p.get("entrant"), str) else "it"
    return (f"CONFLICT{where} ({p['by']}, {p['who']}): {p['action']} of {on} not recorded: {p['text']}; "
            f"look at it and decide, or `tabletimer act resolve conflict={row['id']} why=...` (log row "
            f"#{row['id']})")


def key_conflict_text(row: dict) -> str:
    """A conflict row (an event identity sent again with other content:
    store.py) as the desk's CONFLICT line."""
    p = row["payload"]
    m = p.get("msg") or {}
    return (f"CONFLICT: {row['board']} sent boot {m.get('boot')} seq {m.get('seq')} again with other "
            f"content than log row #{p.get('of')} (two boards with one install id? a board's "
            f"flash reset?): stored as row #{row['id']}, not ranked; check it, record a finish "
            f"by hand if it is one, then `tabletimer act resolve conflict={row['id']} why=...`")


def open_conflicts(book: ConflictBook, board: list[Conflict], keyed: list[dict],
                   short: Callable[[str], str]) -> list[OpenConflict]:
    """Every conflict not resolved yet, in log order: a board's decision on
    a call already decided (board), an event identity sent again with other
    content (keyed: its conflict rows), an intent refused (the book's).
    short: a press id as the desk reads it."""
    out = [OpenConflict(c.row, c.text()) for c in board if not book.is_resolved(c.row, ("call", c.press_id))]
    out += [OpenConflict(row["id"], key_conflict_text(row)) for row in keyed if not book.is_resolved(row["id"], None)]
    for row in book.intents:
        p = row["payload"]
        if not book.is_resolved(row["id"], subject_of(p["action"], p)):
            pid = p.get("press_id")
            out.append(OpenConflict(row["id"], intent_text(row, short(pid) if isinstance(pid, str) else "")))
    return sorted(out, key=lambda c: c.row)
