"""After time-up: the competitor's agreement, the objections, the official
results (issue 47, item 4), as the fold of the log (competition.py) keeps
them.  Pure: no I/O, never raises while folding.

- Agreement: the competitor saw the recorded time of a confirmed finish (or
  a puzzle's recorded count) and agreed to it: an `agree` row (a referee's
  tap on the phone, `act agree` at the desk).  A board's confirm gesture
  means the referee has shown the time at the board (`shown`): the
  competitor's agreement is then recorded by a tap or at the desk (a
  phone's decision made meanwhile may still replace a board's: a conflict,
  conflict_book.py, not an objection).
- An objection: after agreement, a change of that time or count (void,
  correct, confirm again, count again) is recorded only as the head
  referee's decision on an objection: the change's `objection` field holds
  its reason.  A corrected time keeps its call's agreement (a later change
  is an objection again).
- Official: an `official` row makes the round's results official; from then
  on every change of a result is refused until a `reopen` row (who and why)
  reopens them.  The format's `results.official_at` names the moment
  (rules/format_model.py): after time-up and every check, or at the
  prize-giving (003: objections at the desk until then); both need the
  checks done first (`readiness_problem`).

The checks before storing (`check`, `readiness_problem`) are called by
Competition.check_fold_action; the fold calls `agreed_by_board`,
`operator`.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..log.action_rows import OBJECTION_ACTIONS, RESULT_ACTIONS
from ..log.rows import RowKind
from .call_book import CallBook
from ...rules.timetext import fmt_clock

Subject = tuple      # ("call", press id) | ("count", entrant, puzzle): conflict_book.subject_of's


@dataclass(frozen=True)
class Agreement:
    row: int                 # the agree row (or the board's confirm row)
    who: str                 # the referee who showed it ("board B1": at the board)
    at_ms: int | None        # when it was stored (hub ms)


@dataclass(frozen=True)
class Objection:
    row: int
    action: str              # confirm | void | correct | count
    who: str                 # the head referee
    reason: str
    entrant: str
    puzzle: int
    at_ms: int | None


@dataclass(frozen=True)
class OfficialMark:
    row: int
    kind: str                # "official" | "reopen"
    who: str
    why: str
    at_ms: int | None

    def text(self) -> str:
        when = f" at {fmt_clock(self.at_ms)}" if self.at_ms is not None else ""
        if self.kind == "official":
            return f"made official by {self.who}{when} (log row #{self.row})"
        return f"reopened by {self.who}{when} (log row #{self.row}): {self.why}"


def _subject(action: str, p: dict, calls: CallBook) -> Subject | None:
    """What a change or an agreement is of: a call (by press id, or a
    confirmation by entrant and puzzle: its current call) or a count."""
    if action in ("confirm", "void", "correct", "agree") and isinstance(p.get("press_id"), str):
        return ("call", p["press_id"])
    if action == "confirm" and isinstance(p.get("entrant"), str):
        pid = calls.current_call(p["entrant"], p.get("puzzle") or 1)
        return ("call", pid) if pid is not None else None
    if action in ("count", "agree") and isinstance(p.get("entrant"), str):
        return ("count", p["entrant"], p.get("puzzle") or 1)
    return None


class OfficialBook:
    def __init__(self) -> None:
        self.agreed: dict[Subject, Agreement] = {}
        self.shown: dict[str, Agreement] = {}          # press id -> the board's confirm: the time shown
        self.objections: list[Objection] = []
        self.marks: list[OfficialMark] = []           # official and reopen rows, in log order

    # ------------------------------------------------------------ the fold
    def shown_at_board(self, pid: str, row: dict) -> None:
        """A board's confirm of a call: the referee has shown the time."""
        self.shown.setdefault(pid, Agreement(row["id"], "board " + str(row.get("board")), row.get("received_ms")))

    def operator(self, row: dict, kind: RowKind, calls: CallBook) -> None:
        """Fold an operator row (after the fold of its facts)."""
        p = row["payload"]
        who, at = p.get("who") or "operator", row.get("received_ms")
        if kind is RowKind.OP_AGREE:
            subject = _subject("agree", p, calls)
            if subject is not None:
                self.agreed.setdefault(subject, Agreement(row["id"], who, at))
        elif kind in (RowKind.OP_OFFICIAL, RowKind.OP_REOPEN):
            self.marks.append(OfficialMark(row["id"], kind.type or "", who, p.get("why") or "", at))
        elif kind.type in OBJECTION_ACTIONS:
            subject = _subject(kind.type or "", p, calls)
            if kind is RowKind.OP_CORRECT and subject in self.agreed:
                self.agreed.setdefault(("call", f"op/{row['id']}"), self.agreed[subject])   # the new time
            reason = p.get("objection")
            if isinstance(reason, str) and reason.strip() and subject is not None:
                press = calls.press(subject[1]) if subject[0] == "call" else None
                entrant, puzzle = ((press.entrant, press.puzzle) if press is not None
                                   else (subject[1], subject[2]) if subject[0] == "count" else ("", 0))
                self.objections.append(Objection(row["id"], kind.type or "", who, reason.strip(),
                                                 entrant, puzzle, at))

    # ------------------------------------------------------------ queries
    def official(self) -> OfficialMark | None:
        """The row that made the results official, while they are (None:
        not official, or reopened since)."""
        last = self.marks[-1] if self.marks else None
        return last if last is not None and last.kind == "official" else None

    def agreement(self, subject: Subject) -> Agreement | None:
        return self.agreed.get(subject)

    def call_agreed(self, pid: str) -> bool:
        return ("call", pid) in self.agreed

    def call_shown(self, pid: str) -> bool:
        """The time was shown at the board (its confirm gesture) or agreed."""
        return pid in self.shown or self.call_agreed(pid)

    def count_agreed(self, entrant: str, puzzle: int) -> bool:
        return ("count", entrant, puzzle) in self.agreed

    # ------------------------------------------------------------ checks
    def check(self, action: str, p: dict, calls: CallBook) -> None:
        """ValueError, in the desk's words, unless the book allows the action:
        a change after official, a change of an agreed time or count that is
        no objection, an agreement of nothing recorded, a reopen of results
        not official."""
        done = self.official()
        if action == "reopen":
            if done is None:
                raise ValueError("reopen: the results are not official: nothing to reopen")
            if not (isinstance(p.get("why"), str) and p["why"].strip()) and "why" in p:
                raise ValueError('reopen: say why the results are reopened: --why "..." (logged with your name)')
            return
        if done is not None and (action in RESULT_ACTIONS or action == "official"):
            raise ValueError(f"{action}: the results are official ({done.text()}): reopen first, saying why: "
                             f"tabletimer results DIR --round R --reopen --why \"...\"; nothing recorded")
        if action == "agree":
            self._check_agree(p, calls)
        if action not in OBJECTION_ACTIONS:
            return
        reason = p.get("objection")
        if reason is not None and not (isinstance(reason, str) and reason.strip()):
            raise ValueError(f"{action}: an objection needs its reason: --objection \"what the competitor "
                             f"objects to, and what the head referee decided\"; nothing recorded")
        subject = _subject(action, p, calls)
        agreed = self.agreed.get(subject) if subject is not None else None
        if agreed is not None and reason is None:
            what = ("time" if subject is not None and subject[0] == "call" else "count")
            raise ValueError(f"{action}: the competitor agreed to this {what} ({agreed.who}, log row "
                             f"#{agreed.row}): a change now is the head referee's decision on an objection: "
                             f"run it again with --objection \"REASON\" --who \"HEAD REFEREE\" (--force is not "
                             f"enough); nothing recorded")

    def _check_agree(self, p: dict, calls: CallBook) -> None:
        pid = p.get("press_id")
        if isinstance(pid, str):
            if calls.is_voided(pid):
                raise ValueError(f"agree: {pid} was voided: nothing to agree to")
            if calls.confirmed_missing(pid) is None:
                raise ValueError(f"agree: {pid} is not confirmed yet: the referee confirms the time (and "
                                 "the missing pieces) first, then shows it to the competitor")
            subject: Subject = ("call", pid)
        else:
            entrant, puzzle = p.get("entrant") or "", p.get("puzzle") or 1
            if calls.recorded_count(entrant, puzzle) is None:
                raise ValueError(f"agree: no piece count recorded for {entrant} puzzle {puzzle} (a finish: "
                                 "give its press_id)")
            subject = ("count", entrant, puzzle)
        if subject in self.agreed:
            a = self.agreed[subject]
            raise ValueError(f"agree: already agreed ({a.who}, log row #{a.row}); nothing recorded")


def readiness_problem(official_at: str, time_left_ms: int | None, started: bool, open_calls: int,
                      open_conflicts: int, provisional: list[str]) -> str | None:
    """Why the round's results cannot be made official yet (None: they
    can): the round's time is up and every check is done -- no call
    waiting, no open conflict, nothing provisional (a finish not confirmed,
    a count missing).  official_at: the format's moment, named in the
    message."""
    moment = ("at the prize-giving, once" if official_at == "prize-giving" else "once")
    if not started:
        return "official: the round has not started: nothing to make official"
    if time_left_ms is not None:
        return (f"official: the round's time is not up ({time_left_ms // 1000} s left): results are made "
                f"official {moment} time is up and every check is done")
    problems = []
    if open_calls:
        problems.append(f"{open_calls} call(s) waiting for a referee")
    if open_conflicts:
        problems.append(f"{open_conflicts} open conflict(s) (resolve them: the console's alerts)")
    if provisional:
        problems.append(f"{len(provisional)} provisional result(s), a finish not confirmed or a count "
                        f"missing ({', '.join(provisional[:10])})")
    if problems:
        return (f"official: not every check is done: {'; '.join(problems)}; results are made official "
                f"{moment} every check is done; nothing recorded")
    return None
