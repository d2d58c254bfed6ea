"""A referee's action from a phone is an intent made on what the page
showed: when the hub's state of that thing changed meanwhile (the board's
referee button confirmed the call, another referee counted the puzzle), the
intent is a visible conflict, never a silent replacement of the recorded
decision.  Pure: the competition as it is, no I/O.

The page sends, with the action, what it showed of the action's subject
(`seen`): a call's state ("open", or who closed it), a puzzle's recorded
count.  `conflict` compares it with the state now; the referee may then
send the action again with `replace` (recorded, logged with their name).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ..i18n.catalogue import N_, Words, words
from .table_view import recorded_counts

if TYPE_CHECKING:
    from ..event.fold.competition import Competition

# what a referee may do from the table page, and the door's staff from the
# check-in page (the round's start, a disqualification, a board's reset stay
# at the desk)
REFEREE_ACTIONS = ("confirm", "void", "count", "start_offset", "swap", "dns", "agree", "check_in")
_WHAT = {"confirm": "confirmed", "void": "voided", "correct": "corrected"}


class IntentConflict(ValueError):
    """The subject of an intent changed since the page showed it: action,
    its subject's state now and as the page showed it (seen).  str() is the
    English sentence; `said(w)` says it in a phone's language."""

    def __init__(self, action: str, now: Any, seen: Any) -> None:
        self.action, self.now, self.seen = action, now, seen
        super().__init__(self.said(words("en")))

    def said(self, w: Words) -> str:
        if self.action == "count":
            shown = w.t("no count") if self.seen is None else _count_text(w, self.seen)
            return w.t("this puzzle's count is {now} since your page showed {shown}",
                       now=_count_text(w, self.now), shown=shown)
        if self.now == "none":
            return w.t("the hub has no such call")
        return w.t("this call is {now} since your page showed it {seen}",
                   now=call_state_words(w, self.now), seen=call_state_words(w, self.seen))


def call_state(comp: Competition, press_id: str) -> str:
    """"open", or how and by whom the call was closed ("confirmed by board
    B1"), or "none" for a press the log does not have."""
    if comp.press_at(press_id) is None:
        return "none"
    if any(c[1] == press_id for c in comp.open_calls()):
        return "open"
    d = comp.decision(press_id)
    if d is None:
        return "superseded"           # voided earlier, or another call of its puzzle is current
    return f"{_WHAT.get(d.kind, d.kind)} by {d.who}"


def count_state(comp: Competition, entrant: str, puzzle: int) -> dict | None:
    """The piece count recorded for an entrant's puzzle (None: none yet)."""
    return recorded_counts(comp, {entrant}).get((entrant, puzzle))


def subject_state(comp: Competition, action: str, payload: dict) -> Any:
    """The state of what an action acts on, as the page shows it (None:
    an action whose subject the page does not show a state of)."""
    if action in ("confirm", "void") and isinstance(payload.get("press_id"), str):
        return call_state(comp, comp.canonical_press_id(payload["press_id"].strip()))
    if action == "count" and isinstance(payload.get("entrant"), str):
        return count_state(comp, payload["entrant"], payload.get("puzzle") or 1)
    return None


def _same(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def conflict(comp: Competition, action: str, payload: dict, seen: Any) -> IntentConflict | None:
    """The conflict the intent is (None: the subject is as the page
    showed it)."""
    if action not in ("confirm", "void", "count"):
        return None
    now = subject_state(comp, action, payload)
    return None if _same(now, seen) else IntentConflict(action, now, seen)


# a call's state as call_state has it, in a phone's words
_STATE_WORDS = {"open": N_("open"), "superseded": N_("superseded"), "none": N_("not in the log")}
_CLOSED_WORDS = {"confirmed": N_("confirmed by {who}"), "voided": N_("voided by {who}"),
                 "corrected": N_("corrected by {who}")}


def call_state_words(w: Words, state: Any) -> str:
    """call_state's text ("open", "confirmed by board B1") in w's language."""
    text = str(state)
    if text in _STATE_WORDS:
        return w.t(_STATE_WORDS[text])
    what, sep, who = text.partition(" by ")
    return w.t(_CLOSED_WORDS[what], who=who) if sep and what in _CLOSED_WORDS else text


def _count_text(w: Words, c: Any) -> str:
    if not isinstance(c, dict):
        return w.t("none")
    if c.get("placed") is not None:
        return w.t("{count} placed", count=c["placed"])
    return w.t("{count} remaining", count=c.get("remaining"))


def check(comp: Competition, action: str, payload: dict, seen: Any, replace: bool) -> None:
    """Raise IntentConflict unless the intent may be recorded now (under
    the service's lock: HubService.act's precondition)."""
    if replace:
        return
    found = conflict(comp, action, payload, seen)
    if found is not None:
        raise found
