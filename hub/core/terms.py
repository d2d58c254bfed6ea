"""The hub's terms (docs/protocol.md, "Hub terms"): this hub's term (1, one
more at each takeover recorded in the log with its proof), the highest
proven term a board reports it has seen (above this hub's: another hub took
over from this log, and this one is fenced), the terms without a hub's
proof (alerts, never a fence), and the proofs themselves, from the event's
hub secret.  HubState folds the rows that carry terms into it (a board's
birth, a takeover row); the commands carry term_proof; split_brain.py
raises seen_term when the hub that took over shows itself."""

from __future__ import annotations

import logging
import threading
from collections import deque
from dataclasses import dataclass
from typing import Callable

from ..event.log.replica import takeover_term
from ..event.time.clock import HubClock
from ..protocol.hub_secret import TermProofs
from ..rules.timetext import fmt_clock

log = logging.getLogger("tabletimer.hub.core.service")


UNPROVEN_ALERT_MS = 30 * 60_000    # a term without a hub's proof is alerted this long after it came


@dataclass
class Unproven:
    """A hub term above this hub's that came without a hub's proof: a
    board's birth (somebody has its key, or its firmware predates proofs),
    or a takeover row (written by a TableTimer before proofs, or copied from
    an impostor).  An alert, never a fence."""
    term: int
    row: int                 # the log row
    at_ms: int               # when it came (hub time)
    board: str | None        # the board that reported it (None: a takeover row)


class Terms:
    def __init__(self, secret: bytes | None, event_id: int | None, clock: HubClock, lock: threading.RLock,
                 activity: deque[str], other_rounds: Callable[[], dict], live: Callable[[], bool]) -> None:
        """secret: the event folder's hub secret (None: terms are not judged
        here: a remote console, a hall's pages process, a test); lock: the
        message lock; activity: the consoles' lines (an unproven term is
        said there); other_rounds: the event's other rounds' logs by event id
        (a term of their chain is not this round's); live: not replaying."""
        self.clock, self.lock, self.activity = clock, lock, activity
        self.other_rounds, self.live = other_rounds, live
        # the proofs of this log's hub terms, from the event folder's hub secret (hub_secret.py);
        # None where there is no secret: a takeover row counts as recorded, a board's term fences nothing
        self.proofs = TermProofs(secret, event_id) if secret is not None and event_id else None
        self._secret = secret                     # (the chains of the event's other rounds: board_term)
        # the hub's term: 1, and one more at each takeover recorded in the log (a standby that
        # carried on: cli/takeover.py) with its proof; every command carries it (and its proof),
        # and a board refuses a lower one
        self.term = 1
        # the highest proven term a board's birth said it has seen (or the hub that took over showed:
        # split_brain.py), and who, as the alert says it ("board T07 has seen"): above this hub's,
        # another hub took over from this log's (fenced)
        self.seen_term: tuple[int, str] = (1, "")
        # terms above this hub's without a hub's proof, by who said them: alerts, never a fence
        self.unproven: dict[str, Unproven] = {}

    @property
    def fenced(self) -> str | None:
        """Why this hub must not act (None: it may): a board has seen a
        higher term than its own, another hub took over from this log's.
        Nothing is sent to the boards while it is so (mqtt_adapter)."""
        term, who = self.seen_term
        if term <= self.term:
            return None
        return (f"{who} hub term {term}, this hub's is {self.term}: another hub took over "
                "from this log (tabletimer takeover). This hub sends nothing to the boards: stop it")

    def term_proof(self) -> str | None:
        """This hub's term's proof, which its commands carry (None: no secret)."""
        return self.proofs.proof(self.term) if self.proofs is not None else None

    def proven(self, term: object, proof: object) -> bool:
        """Whether a term comes with a hub's proof (False without a secret here)."""
        return self.proofs is not None and self.proofs.proven(term, proof)

    def board_term(self, ev: dict) -> None:
        """A board's birth says the hub term it has seen: above this hub's
        and proven, another hub took over (fenced); unproven, an alert."""
        p, board = ev["payload"], ev["board"]
        term = p.get("term") or 1
        if term <= 1 or self.proofs is None:
            return
        if self.proven(term, p.get("hash")):
            if term > self.seen_term[0]:
                self.seen_term = (term, f"board {board} has seen")
        elif self._secret is not None and any(TermProofs(self._secret, eid).proven(term, p.get("hash"))
                                              for eid in self.other_rounds()):
            pass          # a term of the event's round before (its log's own chain): not this round's, no alert
        elif term > self.term:
            self.unproven[f"board {board}"] = Unproven(term, ev["id"], ev["received_ms"], board)
            self.activity.append(self.unproven_line(self.unproven[f"board {board}"]))
            if self.live():
                log.warning("%s", self.unproven_line(self.unproven[f"board {board}"]))

    def takeover(self, ev: dict) -> None:
        """A takeover row: this hub's term, if it has a hub's proof."""
        term = takeover_term(ev["payload"])
        if self.proofs is None or self.proven(term, ev["payload"].get("hash")):
            self.term = max(self.term, term)
        else:
            u = self.unproven[f"row {ev['id']}"] = Unproven(term, ev["id"], ev["received_ms"], None)
            self.activity.append(self.unproven_line(u))

    def unproven_line(self, u: Unproven) -> str:
        """The alert of a term without a hub's proof."""
        when = fmt_clock(u.at_ms)
        if u.board is not None:
            return (f"board {u.board} reports hub term {u.term} without a hub's proof (log row #{u.row}, "
                    f"{when}): no hub took over; somebody has the board's key (its config.json) and signed "
                    f"that, or its firmware is older than the hub's. This hub carries on (term {self.term}); "
                    f"flash the board again for a new key (tabletimer board flash)")
        return (f"log row #{u.row} ({when}) records a takeover to term {u.term} without this event's hub "
                f"proof (written by a TableTimer before proofs, or copied from a hub that is not this "
                f"event's): not this hub's term (it is {self.term})")

    def term_alerts(self) -> list[str]:
        """The unproven terms of the last UNPROVEN_ALERT_MS (hub time)."""
        now = self.clock.now_ms()
        with self.lock:
            found = sorted(self.unproven.values(), key=lambda u: u.row)
        return [self.unproven_line(u) for u in found if now - u.at_ms < UNPROVEN_ALERT_MS]
