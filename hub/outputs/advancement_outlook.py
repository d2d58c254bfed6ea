"""Live marks on a round's pages while it runs (issue 50, item 4): who is
certain to advance, who is in the qualifying places but not yet certain,
and who can no longer make it (rules/advancement_marks.py).

`AdvanceOutlook` is one round's: it finds the later round whose format's
`[advancement]` names this round in `from` (the first in the event's order,
when several do), reads the other source rounds as `tabletimer advance`
reads them (advancement_plan.load_source: their standings as they stand,
their countries), again only when their files change, and makes the marks
from this round's live standings:

- an entrant still solving or waiting is open: in a time-ranked round its
  floor is the time it has solved for (now - start - its start offset: a
  finish can come no sooner, a penalty only adds), in a pieces-ranked one
  it has none (any result);
- an entrant of another source round still solving is open too, its floor
  the time it had solved for when that round's log was read (read again
  when it changes); every entrant of a source round not started (its
  entrants.csv) is open without a floor (any result).

No marks at all (rather than wrong ones) while a source's entrants cannot
be known: a source that has a log but cannot be read, one with no
entrants yet, or a country column missing that the rule's per_country
needs.  (A source not started whose files do not load together yet, its
entrants listed but not yet seated, counts its entrants.csv.)  Reads only;
called from a page view's worker thread (round_views.RoundView.make)."""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping, Sequence

from ..event.folder import advance_files, rounds
from ..event.folder.csv_table import EventFolderError
from ..rules.advancement import Candidate, result_key
from ..rules.advancement_marks import Open, marks
from ..rules.advancement_rule import AdvancementRule
from ..rules.formats import FormatError, load_format
from ..rules.standings import StandingRow
from .advancement_plan import SourceRound, load_source

LOOK_S = 2.0           # the event's rounds' files looked at (stat) at most this often
OPEN_STATUSES = ("running", "waiting")
_FILES = ("format.toml", "entrants.csv", "events.sqlite", "events.sqlite-wal")
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Outlook:
    """The marks of a source round's entrants for the round it feeds."""
    to: str                          # the later round
    marks: dict[str, str]            # entrant id -> CERTAIN | IN | OUT (advancement_marks); no key: none


def _signature(folder: Path, names: Sequence[str] = _FILES) -> tuple:
    out: list[tuple[int, int] | None] = []
    for n in names:
        try:
            st = (folder / n).stat()
            out.append((st.st_mtime_ns, st.st_size))
        except OSError:
            out.append(None)
    return tuple(out)


def floor(order_by: str, start: int | None, now: int, offset: int) -> tuple[int, ...] | None:
    """The best result an entrant solving at now can still get: in a
    time-ranked round, a finish no sooner than the time solved for (a
    penalty only adds); otherwise any (None)."""
    if order_by != "time" or start is None:
        return None
    return result_key("finished", max(now - start - offset, 0), 0)


def own_candidates(name: str, rows: Sequence[StandingRow], order_by: str, countries: Mapping[str, str],
                   start: int | None, now: int, offsets: Mapping[str, int]) -> tuple[list[Candidate], list[Open]]:
    """This round's candidates as its live standings stand, and its open
    entrants (solving or waiting) with their floors."""
    cands, opens = [], []
    for i, r in enumerate(rows):
        country = countries.get(r.entrant, "")
        if r.place is None and r.status in OPEN_STATUSES:
            opens.append(Open(r.entrant, r.name, name, country,
                              floor(order_by, start, now, offsets.get(r.entrant, 0))))
            continue
        cands.append(Candidate(r.entrant, r.name, name, r.place, r.status, r.net_time_ms, r.pieces, country, i,
                               result_key(r.status, r.net_time_ms, r.pieces, order_by)))
    return cands, opens


def other_opens(src: SourceRound, read_at: int) -> list[Open]:
    """Another source round's open entrants: those still solving when its
    log was read (at read_at, their floors then), or every entrant of a
    round not started (without a floor)."""
    country = {i: r.get(advance_files.COUNTRY, "") for i, r in src.entrant_rows.items()}
    if not src.rows:
        return [Open(i, r.get("name", i), src.name, country[i]) for i, r in src.entrant_rows.items() if i]
    return [Open(r.entrant, r.name, src.name, country.get(r.entrant, ""),
                 floor(src.order, src.start_ms, read_at, src.offsets.get(r.entrant, 0)))
            for r in src.rows if r.place is None and r.status in OPEN_STATUSES]


class AdvanceOutlook:
    def __init__(self, hall: str | Path, round: str, clock: Callable[[], float] = time.monotonic) -> None:
        """hall: the event folder; round: this round's name."""
        self.hall, self.round = Path(hall), round
        self._clock = clock
        self._lock = threading.Lock()
        self._looked = -LOOK_S - 1.0
        self._formats: tuple | None = None                   # the rounds' format files' signature
        self._next: tuple[str, AdvancementRule] | None = None
        self._own_sig: tuple | None = None
        self._countries: dict[str, str] | None = None
        self._sources: dict[str, tuple[tuple, int, SourceRound]] = {}   # name -> (files' signature, when, as read)
        self._said = ""

    def outlook(self, rows: Sequence[StandingRow], order_by: str, start: int | None, now: int,
                offsets: Mapping[str, int]) -> Outlook | None:
        """The marks for the later round (None: no round is fed by this one,
        or the marks cannot be made now: logged once)."""
        with self._lock:
            try:
                return self._made(rows, order_by, start, now, offsets)
            except Exception as e:                # the page is shown without marks, never without standings
                if repr(e) != self._said:
                    log.warning("round %s: the advancement marks cannot be made: %s", self.round, e)
                self._said = repr(e)
                return None

    def _made(self, rows: Sequence[StandingRow], order_by: str, start: int | None, now: int,
              offsets: Mapping[str, int]) -> Outlook | None:
        fresh = self._clock() - self._looked >= LOOK_S
        if fresh:
            self._looked = self._clock()
            self._look_for_next()
        if self._next is None:
            return None
        to, rule = self._next
        need_country = bool(rule.per_country)
        if fresh:
            self._read_sources(rule, now, need_country)
        countries = self._countries
        if need_country and countries is None:
            return Outlook(to, {})
        cands, opens = own_candidates(self.round, rows, order_by, countries or {}, start, now, offsets)
        sources: dict[str, list[Candidate]] = {self.round: cands}
        open_by: dict[str, list[Open]] = {self.round: opens}
        for name, (_, read_at, src) in self._sources.items():
            if not src.entrant_rows:
                return Outlook(to, {})            # a source that cannot be read, or without entrants yet
            if need_country and any(advance_files.COUNTRY not in r for r in src.entrant_rows.values()):
                return Outlook(to, {})
            sources[name] = list(src.candidates)
            open_by[name] = other_opens(src, read_at)
        mine = {c.entrant for c in cands}
        return Outlook(to, {e: m for e, m in marks(rule, sources, open_by).items() if e in mine})

    def _look_for_next(self) -> None:
        """The later round naming this one, when the rounds' formats changed."""
        names = rounds.names(self.hall)
        sig = (tuple(names), tuple(_signature(rounds.round_dir(self.hall, n), ("format.toml",)) for n in names))
        if sig == self._formats:
            return
        self._formats, self._next = sig, None
        for name in names:
            if name == self.round:
                continue
            try:
                rule = load_format(rounds.round_dir(self.hall, name) / "format.toml").advancement
            except (FormatError, OSError):
                continue                          # `advance` and `formats check` say what is wrong with it
            if rule is not None and self.round in rule.sources:
                self._next = (name, rule)
                return

    def _read_sources(self, rule: AdvancementRule, now: int, need_country: bool) -> None:
        """This round's countries and the other sources, each read again
        only when its files changed."""
        own = rounds.round_dir(self.hall, self.round)
        sig = _signature(own, ("entrants.csv",))
        if sig != self._own_sig:
            try:
                self._countries = advance_files.countries(own / "entrants.csv")
            except EventFolderError:
                self._countries = None
            self._own_sig = sig
        keep = {}
        for name in rule.sources:
            if name == self.round:
                continue
            sig = _signature(rounds.round_dir(self.hall, name))
            got = self._sources.get(name)
            keep[name] = got if got is not None and got[0] == sig else (sig, now, self._load(name, now, need_country))
        self._sources = keep

    def _load(self, name: str, now: int, need_country: bool) -> SourceRound:
        """A source as `advance` reads it; one without a log whose files do
        not load together yet (entrants listed, not yet seated) has the
        entrants of its entrants.csv, none started."""
        src = load_source(self.hall, name, now, need_country)
        d = rounds.round_dir(self.hall, name)
        if not src.entrant_rows and not (d / "events.sqlite").exists():
            try:
                _, rows = advance_files.read_rows(d / "entrants.csv")
            except EventFolderError:
                return src
            src.entrant_rows = {r.get("id", ""): r for r in rows if r.get("id")}
        return src
