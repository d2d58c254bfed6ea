"""The stations table as the fold of the log reads it (competition.py): a
station by (board, button), the stations of some boards, an entrant's
boards, the auto stations of a quick trial (every button of a board that
reports is an entrant of its own), and the puzzles a 'next puzzle' station
counts through.  The lists it is given only grow (auto stations are
appended), but for the stations an absent entrant's replacement gives to
another entrant (`give`, replacements.py: the station in its place, the new
entrant appended), which the fold takes back before it folds the log
again (`take_back`).  Pure."""

from __future__ import annotations

import dataclasses

from ..folder.event_folder import Station
from ...rules.facts import Entrant
from ...rules.format_model import Format


class StationIndex:
    def __init__(self, fmt: Format, stations: list[Station], entrants: list[Entrant], auto: bool) -> None:
        self.format = fmt
        self.stations = stations            # the competition's own lists, appended to here
        self.entrants = entrants
        self.auto = auto
        self.by_station = {(s.board, s.button): s for s in stations}
        self.entrant_ids = {e.id for e in entrants}
        self._on_board: dict[str, list[int]] = {}   # board -> positions in stations (on)
        self._indexed = -1                           # how many stations _on_board holds
        self._free_indexed = -1                      # how many stations _free was made of
        self._own_puzzles: dict[str, set[int]] = {}
        self._free: dict[str, tuple[int, ...]] = {}
        self._given: list[tuple[int, Station]] = []     # (position, the station before) of each give
        self._added: list[Entrant] = []                 # entrants a replacement brought in

    def give(self, absent: str, entrant: str, new: Entrant | None) -> tuple[tuple[str, int], ...]:
        """Every station of `absent` now times `entrant` (`new`: an entrant
        not in the list yet, appended to it); (board, button) of each."""
        moved = []
        for i, s in enumerate(self.stations):
            if s.entrant == absent:
                self._given.append((i, s))
                self.stations[i] = self.by_station[(s.board, s.button)] = dataclasses.replace(s, entrant=entrant)
                moved.append((s.board, s.button))
        if new is not None and new.id not in self.entrant_ids:
            self.entrants.append(new)
            self.entrant_ids.add(new.id)
            self._added.append(new)
        self._indexed = self._free_indexed = -1
        return tuple(moved)

    def take_back(self) -> None:
        """Every give undone: the stations and entrants as they were given."""
        for i, s in reversed(self._given):
            self.stations[i] = self.by_station[(s.board, s.button)] = s
        for e in reversed(self._added):
            self.entrants.remove(e)
            self.entrant_ids.discard(e.id)
        self._given, self._added = [], []
        self._indexed = self._free_indexed = -1

    def at(self, board: str, button: int) -> Station | None:
        """The station on a board's button, an auto station made for it in a
        quick trial (None: none there)."""
        st = self.by_station.get((board, button))
        if st is None and self.auto:
            st = self.add_auto(board, button)
        return st

    def add_auto(self, board: str, button: int) -> Station:
        """The auto station board/button (made, with its entrant, the first time)."""
        st = self.by_station.get((board, button))
        if st is None:
            eid = f"{board}/{button}"
            st = Station(board, button, board, eid, 1 if len(self.format.puzzles) == 1 else None)
            self.stations.append(st)
            self.by_station[(board, button)] = st
            if eid not in self.entrant_ids:
                self.entrants.append(Entrant(eid, eid))
                self.entrant_ids.add(eid)
        return st

    def on(self, boards: set[str]) -> list[Station]:
        """The stations of these boards, in the order of `stations`."""
        if self._indexed != len(self.stations):
            self._on_board = {}
            for i, st in enumerate(self.stations):
                self._on_board.setdefault(st.board, []).append(i)
            self._indexed = len(self.stations)
        return [self.stations[i] for i in sorted(i for b in boards for i in self._on_board.get(b, ()))]

    def entrant_boards(self, entrant: str) -> list[str]:
        """The boards that hold stations of an entrant (none: not at a station)."""
        return sorted({s.board for s in self.stations if s.entrant == entrant})

    def team_boards(self, board: str, button: int) -> list[str]:
        """The boards that hold stations of the entrant at (board, button):
        those whose relay schedule a finish there can change."""
        st = self.by_station.get((board, button))
        if st is None:
            return [board]
        return sorted(set(self.entrant_boards(st.entrant)) | {board})

    def free_puzzles(self, entrant: str) -> tuple[int, ...]:
        """The puzzles an entrant's 'next puzzle' stations count through: all
        of the round's, less those that have a station of their own."""
        if self._free_indexed != len(self.stations):      # (stations only grow: auto stations)
            self._own_puzzles = {}
            for s in self.stations:
                if s.puzzle is not None:
                    self._own_puzzles.setdefault(s.entrant, set()).add(s.puzzle)
            self._free = {}
            self._free_indexed = len(self.stations)
        free = self._free.get(entrant)
        if free is None:
            # once per entrant, not per press: a scan of the hall's stations
            # per board event made the hub's cost grow with the hall
            own = self._own_puzzles.get(entrant, ())
            free = self._free[entrant] = tuple(
                n for n in range(1, len(self.format.puzzles) + 1) if n not in own) or (1,)
        return free

    def calls_of(self, station: Station) -> int:
        """How many finish calls a station makes: one for its own puzzle,
        or one per puzzle it counts through ('next puzzle' stations)."""
        return 1 if station.puzzle is not None else len(self.free_puzzles(station.entrant))
