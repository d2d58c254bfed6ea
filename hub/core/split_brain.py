"""Two hubs of one event at once (a split brain: the standby took over while
the primary was alive, cut off from it only), found and healed.  Part of
the hub's service (service.py); what it knows is in the log, as hub rows:

- `standby_lost` {"since", "term", "copied"}: the primary's standby (a laptop that
  proved it holds the hub secret and follows it: console_api.py tells
  `heard_standby`) has not been heard for STANDBY_SILENT_MS.  Every desk
  action recorded from then on is flagged: if the standby took over, it is
  not in its log (nor any after "copied", the last row it asked after).
  `standby_back` {"term"} when it is heard again (it copies them).  Written
  by the hub at its tick (`check`).
- `fenced` {"term", "hash", "by", "after"}: the hub that took over showed
  this one its proven term (the console API's POST /hub/fence): this hub
  stops (HubService.fenced, terms.py), and its desk actions after `after` (the row
  the takeover's copy ended at) are flagged: not in the event's log unless
  redone there.  They are the fence's answer (`fence`).
- `split` {"primary", "term", "after", "actions"}: the hub that took over
  got those actions (console/old_primary.py) and keeps them for the desk,
  an alert until `tabletimer redo` redoes them through the usual checks
  (`redone` {"split", "results"}).

Desk actions are operator rows (the desk's, the referees' phones', `act`'s).
Board events need no such care: a board sends the hub that took over every
entry it keeps in flash (protocol.md, "Hub terms")."""

from __future__ import annotations

import threading
from collections import deque
from pathlib import Path
from typing import Any, Callable

from .changes import Changes, RowApplied
from .terms import Terms
from ..event.fold.competition import Competition
from ..event.time.clock import HubClock
from ..event.log.log_health import LogWriteFailed
from ..event.log.rows import RowKind, kind_of
from ..event.log.replica import desk_action_text, split_action_problem
from ..rules.timetext import fmt_clock

STANDBY_SILENT_MS = 5_000     # the standby asks at least every 1-2 s (a long poll): 5 s unheard is lost
SHOWN = 5                     # desk actions named in an alert line (then "and N more")
# POST /hub/fence's answer (409) to the hub that sent it: its web server has the old primary's address
SELF = "that is this hub itself (its web server has the old primary's address)"


def _listed(rows: list[dict]) -> str:
    named = "; ".join(desk_action_text(r) for r in rows[:SHOWN])
    return named + (f"; and {len(rows) - SHOWN} more" if len(rows) > SHOWN else "")


class SplitBrain:
    """Given what it uses (service.py wires it): the terms, the hub clock,
    the fold, the notifications (it folds every row applied), record (a
    row of its own written and applied: HubState.record), the writer and
    message locks (a check and its row in one go), the consoles' activity
    lines and the log's path (what a fenced hub's desk is told to copy)."""

    def __init__(self, terms: Terms, clock: HubClock, competition: Competition, changes: Changes,
                 record: Callable[..., dict], writer: threading.RLock, lock: threading.RLock,
                 activity: deque[str], log_path: Path | str) -> None:
        self.terms, self.clock, self.competition, self.record = terms, clock, competition, record
        self.writer, self.lock, self.activity, self.log_path = writer, lock, activity, log_path
        self.heard: int | None = None          # hub ms the standby last asked (None: not this run)
        self.copied = 0                        # the last row it has (it asked for the rows after it)
        self.lost: dict | None = None          # the open standby_lost row of this hub's term
        self.unseen: list[dict] = []           # desk actions recorded while it was open
        self.desk: list[dict] = []             # every desk action, in log order (a fence lists some)
        self.fenced_row: dict | None = None    # the fenced row (this hub was told of a higher term)
        self.takeover: dict | None = None      # the latest takeover row this hub's term comes from
        self.splits: dict[int, dict] = {}      # split rows not redone, by id
        self.split_log: list[dict] = []        # every split row
        self.redone: set[int] = set()
        changes.subscribe(RowApplied, lambda n: self._row(n.row))

    # ------------------------------------------------------ the fold
    def _row(self, row: dict) -> None:
        """Every row applied, live and at a replay (a row hook of the state)."""
        p, terms = row["payload"], self.terms
        kind = kind_of(row)
        if kind.from_operator and row["id"] not in self.competition.flagged:
            self.desk.append(row)
            if self.lost is not None:
                self.unseen.append(row)
            return
        if kind is RowKind.HUB_STANDBY_LOST and p.get("term") == terms.term:
            self.lost, self.unseen = row, []
        elif kind is RowKind.HUB_STANDBY_BACK and p.get("term") == terms.term:
            self.lost, self.unseen = None, []
        elif kind is RowKind.HUB_TAKEOVER and terms.term == p.get("term"):
            self.takeover, self.lost, self.unseen = row, None, []      # a new term: its own standby
        elif kind is RowKind.HUB_FENCED and (terms.proofs is None or terms.proven(p.get("term"), p.get("hash"))):
            self.fenced_row = row
            if type(p.get("term")) is int and p["term"] > terms.seen_term[0]:
                terms.seen_term = (p["term"], f"{p.get('by') or 'another hub'} holds")
        elif kind is RowKind.HUB_SPLIT and isinstance(p.get("actions"), list):
            self.split_log.append(row)
            if row["id"] not in self.redone:
                self.splits[row["id"]] = row
        elif kind is RowKind.HUB_REDONE and type(p.get("split")) is int:
            self.redone.add(p["split"])
            self.splits.pop(p["split"], None)

    def split_rows(self) -> list[dict]:
        """Every split row of the log (redone or not)."""
        with self.lock:
            return list(self.split_log)

    def fence_point(self) -> tuple[int, str] | None:
        """Where the log of the hub that fenced this one may end: the row the
        takeover's copy ended at (a fenced row says), else, fenced by a
        board's birth, the last row the lost standby had asked after; with
        how that is known.  None: not fenced, or not known."""
        f = self.fenced_row
        if f is not None and type(f["payload"].get("after")) is int:
            return f["payload"]["after"], "where the takeover's copy ended"
        if self.terms.fenced and self.lost is not None and type(self.lost["payload"].get("copied")) is int:
            return self.lost["payload"]["copied"], "the last row the standby had when it was lost"
        return None

    def after_fence(self) -> list[dict]:
        """The desk actions this hub recorded after its fence point (none
        before a fence)."""
        point = self.fence_point()
        return [] if point is None else [r for r in self.desk if r["id"] > point[0]]

    # ------------------------------------------------------ the primary's standby
    def heard_standby(self, after: int) -> None:
        """The standby asked for the rows after `after`, proving it holds
        the hub secret."""
        self.heard = self.clock.now_ms()
        self.copied = max(self.copied, after)

    def check(self) -> None:
        """At the hub's tick: a standby that followed this hub and is not
        heard for STANDBY_SILENT_MS is lost (a row), heard again back."""
        if self.heard is None or self.fenced_row is not None:
            return
        silent = self.clock.now_ms() - self.heard > STANDBY_SILENT_MS
        if silent and self.lost is None:
            self._write("standby_lost", {"since": self.heard, "term": self.terms.term, "copied": self.copied})
        elif not silent and self.lost is not None:
            self._write("standby_back", {"term": self.terms.term, "lost": self.lost["id"]})

    def _write(self, kind: str, payload: dict) -> dict | None:
        try:
            return self.record("hub", kind, payload)
        except LogWriteFailed:
            return None                     # the failed write is alerted; tried again at the next tick

    def unseen_warning(self) -> str | None:
        """What the desk is told of an action recorded now (None: nothing)."""
        if self.lost is None:
            return None
        return (f"the standby has not been heard since {fmt_clock(self.lost['payload']['since'])} (log row "
                f"#{self.lost['id']}): if it took over, this action is not in its log; once the two laptops "
                "see each other again the hub that took over gets it, to redo it there (tabletimer redo)")

    # ------------------------------------------------------ fenced by the hub that took over
    def fence(self, term: Any, proof: Any, by: str, after: Any) -> list[dict]:
        """The hub that took over shows its term: proven and above this
        hub's, this hub is fenced (a row, once) and its desk actions after
        `after` are the answer; else ValueError (nothing changes)."""
        if type(after) is not int or after < 0:
            raise ValueError("'after' must be the row the takeover's copy ended at")
        with self.writer, self.lock:
            if not self.terms.proven(term, proof):
                raise ValueError(f"term {term!r} without this event's hub proof: not fenced")
            if term <= self.terms.term:
                raise ValueError(f"this hub's term is {self.terms.term}, not below {term}: not fenced")
            f = self.fenced_row
            if f is None or f["payload"].get("term") != term:
                self.record("hub", "fenced", {"term": term, "hash": proof, "by": by[:200], "after": after},
                            told=True)
                self.activity.append(f"FENCED by {by} (term {term}): this hub stops")
            return [dict(r) for r in self.after_fence()]

    def fenced_lines(self) -> list[str]:
        """What a fenced hub says as it stops: its desk actions the event's
        log lacks."""
        point, actions = self.fence_point(), self.after_fence()
        if point is None:
            return []
        if not actions:
            return [f"this hub recorded no desk action after row #{point[0]}, {point[1]}: the hub that took "
                    "over has them all"]
        if self.fenced_row is not None:
            how = ("The hub that took over has them (it asked for them): redo them there in one step, "
                   "`tabletimer redo` on its folder")
        else:
            how = (f"Redo them at the hub that took over in one step: `tabletimer redo ITS-DIR --from "
                   f"{self.log_path}` (a copy of this log)")
        return [f"{len(actions)} desk action(s) recorded here after row #{point[0]}, {point[1]}, are not in "
                f"the event's log: {_listed(actions)}. {how}"]

    # ------------------------------------------------------ the hub that took over
    def store_split(self, primary: str, term: Any, after: int, actions: Any) -> dict | None:
        """The old primary's desk actions after the takeover's copy (its
        answer to the fence), kept in a split row for the desk (once; None:
        kept already).  ValueError when they are not desk actions after it."""
        if not isinstance(actions, list):
            raise ValueError("the old primary's answer has no list of desk actions")
        for a in actions:
            problem = split_action_problem(a, after)
            if problem:
                raise ValueError(f"the old primary's desk actions: {problem}")
        with self.writer, self.lock:
            if any(r["payload"].get("after") == after and r["payload"].get("primary") == primary
                   for r in self.split_log):
                return None
            row = self.record("hub", "split", {"primary": primary, "term": term if type(term) is int else None,
                                               "after": after, "actions": actions}, told=True)
            if actions:
                self.activity.append(f"SPLIT: the old primary {primary} had {len(actions)} desk action(s) this "
                                     f"log lacks (row #{row['id']}): tabletimer redo")
        return row

    def store_redone(self, split_id: int, results: dict[str, object]) -> dict:
        """The split row's desk actions redone here (`tabletimer redo`): what
        became of each (its new row, a conflict, refused), in a redone row."""
        with self.writer, self.lock:
            return self.record("hub", "redone", {"split": split_id, "results": results}, told=True)

    # ------------------------------------------------------ alerts
    def alerts(self) -> list[str]:
        out = []
        if self.lost is not None:
            since = fmt_clock(self.lost["payload"]["since"])
            named = (f"; {len(self.unseen)} desk action(s) recorded since, which it may not have: "
                     f"{_listed(self.unseen)}") if self.unseen else ""
            out.append(f"STANDBY NOT HEARD since {since} (log row #{self.lost['id']}){named}. If it took over "
                       "(--auto-after), they are not in its log: once the laptops see each other again this hub "
                       "stops and the new one gets them to redo (docs/operations.md, 'Two hubs at once')")
        out += [f"FENCED: {line}" for line in self.fenced_lines()]
        for row in self.splits.values():
            p = row["payload"]
            acts = [a for a in p["actions"] if isinstance(a, dict)]
            if acts:
                out.append(f"SPLIT: the old primary {p.get('primary')} (term {p.get('term')}) recorded "
                           f"{len(acts)} desk action(s) after row #{p.get('after')} that this log lacks: "
                           f"{_listed(acts)}. Redo them here in one step: tabletimer redo (each through the "
                           "usual checks: one decided here since is a conflict to resolve)")
        return out
