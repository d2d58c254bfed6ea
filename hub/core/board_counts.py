"""What the hub counted of the boards' messages (not in the log): the
rejected ones by category, the duplicates, the retained statuses sent again
and the retained junk cleared, each board's last message rejected for a
boot or counter jump and the last command it refused as one.  Written by
admission.py and answers.py under the message lock; the alerts, the
consoles' snapshot and the console API read them (a remote console shows
its hub's)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass


@dataclass
class Jump:
    """A board's latest message rejected for a boot or counter jump."""
    why: str
    at_ms: int               # when it came (hub time)
    heard: bool = False      # a message of the board was taken since: it is not locked out


@dataclass
class Refused:
    """A board's latest report of a command it refused as a counter jump
    (the 'hub_ctr' of its clock-sync request)."""
    ctr: int                 # the command's counter
    at_ms: int               # when the report came (hub time)
    ours: bool               # this hub has numbered commands that high: it is refusing this hub


class BoardCounts:
    def __init__(self) -> None:
        self.rejected: Counter[str] = Counter()   # reason -> count
        self.duplicates = 0
        self.retained_again = 0     # boards' retained statuses had before, sent again at a (re)subscribe
        self.retained_junk = 0      # retained messages on board topics that failed the checks: cleared
        self.jumps: dict[str, Jump] = {}            # board -> its last message rejected for a jump
        self.refusals: dict[str, Refused] = {}      # board -> the last command it refused as a jump
