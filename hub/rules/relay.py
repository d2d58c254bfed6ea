"""The relay rotation model of the Czech team championship, part 1
(seeds/000_ece84489642f6904.txt, 3.2).  Pure: no I/O.

The text, rule by rule, and how the model reads it:

- "each of the four team members has their own 500-piece puzzle ... Everyone
  starts at the same time": stations 1..n are numbered clockwise round the
  table; member k starts at station k (k = 1..members).
- "Every 8 minutes a sound signal is given.  After the signal, all actively
  assembling team members move clockwise to the next unfinished puzzle":
  signals fall at interval, 2*interval, ... after the part start.  At a signal
  every active member moves from their station to the next UNFINISHED
  station clockwise (finished stations are skipped).
- "A team member who has finished a puzzle no longer assembles actively in
  part 1": a finish at a station takes the member who is there out of the
  rotation; they stay put (and may advise).
- "the remaining active members continue rotating at eight-minute intervals
  only among unfinished puzzles": as above - with k unfinished stations and k
  active members, each signal shifts everyone one unfinished station on.
  With one unfinished puzzle left a signal moves nobody (next_moves is empty).
- "Part 1 ends when all four 500-piece puzzles have been finished": no more
  signals for the team (next_signal_ms is None).
- A finish pressed at the very instant of a signal counts before the signal
  (the finisher raised the hand; the others move).

A finish is the team's press for that station; who pressed is not needed: it
is whoever the model puts at that station at that moment.  The model is a
function of the finishes so far - a voided press simply is not one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

from .format_model import Format
from .standings import Entrant, Fact, Press, RoundStart, StartOffset, Void


@dataclass(frozen=True)
class RelayFinish:
    station: int
    at_ms: int                  # since the part start
    member: int | None          # who was at the station (None: nobody was)


@dataclass(frozen=True)
class RelayEvent:
    kind: str                   # "signal" | "finish"
    at_ms: int
    moves: tuple[tuple[int, int, int], ...] = ()   # signal: (member, from station, to station)
    station: int | None = None  # finish
    member: int | None = None   # finish


@dataclass(frozen=True)
class RelayState:
    """The relay of one team at `at_ms` (times since the part start;
    start_ms is the part start on the caller's clock)."""
    start_ms: int
    at_ms: int
    stations: int
    positions: dict[int, int]                 # active member -> station
    finished: dict[int, RelayFinish]          # station -> its finish
    unfinished: tuple[int, ...]
    rotations: int                            # signals given so far
    next_signal_ms: int | None                # None once the part is complete
    next_moves: tuple[tuple[int, int, int], ...]   # (member, from, to) at the next signal
    complete: bool
    history: tuple[RelayEvent, ...]
    notes: tuple[str, ...] = ()

    def station_of(self, member: int) -> int | None:
        return self.positions.get(member)

    def member_at(self, station: int) -> int | None:
        for m, st in self.positions.items():
            if st == station:
                return m
        return None

    @property
    def next_signal_at(self) -> int | None:
        """The next signal on the caller's clock."""
        return None if self.next_signal_ms is None else self.start_ms + self.next_signal_ms


def _moves(at: dict[int, int], unfinished: list[int]) -> tuple[tuple[int, int, int], ...]:
    """Everyone at an unfinished station moves to the next unfinished one clockwise."""
    if len(unfinished) < 2:
        return ()
    nxt = {u: unfinished[(i + 1) % len(unfinished)] for i, u in enumerate(unfinished)}
    return tuple((m, st, nxt[st]) for st, m in sorted(at.items()))


def relay_state(stations: int, interval_ms: int, finishes: Iterable[tuple[int, int]], now_ms: int,
                members: int | None = None, start_ms: int = 0) -> RelayState:
    """The relay at now_ms, all times since the part start (start_ms only
    labels the part start on the caller's clock).  finishes: (station, at_ms)
    pairs, stations 1..stations, in any order; a station's earliest finish
    counts, finishes after now_ms are not yet known."""
    if stations < 1 or interval_ms <= 0:
        raise ValueError("a relay needs stations >= 1 and a positive interval")
    members = stations if members is None else members
    if not 1 <= members <= stations:
        raise ValueError(f"a relay of {stations} stations needs 1..{stations} members, got {members}")
    notes: list[str] = []
    first: dict[int, int] = {}
    for st, t in finishes:
        if not 1 <= st <= stations:
            notes.append(f"finish at station {st} ignored: stations are 1-{stations}")
        elif t < 0:
            notes.append(f"finish at station {st} before the part start ignored")
        elif t <= now_ms and (st not in first or t < first[st]):
            first[st] = t
    pending = sorted((t, st) for st, t in first.items())

    at = {m: m for m in range(1, members + 1)}     # station -> member (member k starts at k)
    finished: dict[int, RelayFinish] = {}
    history: list[RelayEvent] = []
    signal = interval_ms
    rotations = 0
    i = 0
    while True:
        if i < len(pending) and pending[i][0] <= signal:
            t, st = pending[i]
            i += 1
            m = at.pop(st, None)
            if m is None:
                notes.append(f"station {st} finished at {t} ms with nobody at it")
            finished[st] = RelayFinish(st, t, m)
            history.append(RelayEvent("finish", t, station=st, member=m))
            continue
        if signal > now_ms or len(finished) == stations:
            break
        unfinished = [s for s in range(1, stations + 1) if s not in finished]
        moves = _moves(at, unfinished)
        at = {to: m for m, _, to in moves} if moves else at
        rotations += 1
        history.append(RelayEvent("signal", signal, moves=moves))
        signal += interval_ms
    unfinished = [s for s in range(1, stations + 1) if s not in finished]
    complete = not unfinished
    return RelayState(
        start_ms=start_ms, at_ms=now_ms, stations=stations,
        positions={m: st for st, m in sorted(at.items())}, finished=finished,
        unfinished=tuple(unfinished), rotations=rotations,
        next_signal_ms=None if complete else signal,
        next_moves=() if complete else _moves(at, unfinished), complete=complete,
        history=tuple(history), notes=tuple(notes))


def relay_states(fmt: Format, entrants: Sequence[Entrant], facts: Iterable[Fact],
                 now_ms: int) -> dict[str, RelayState | None]:
    """The relay of every entrant of a format with a relay part, from the
    same facts the ranking uses (round start, start offsets, presses, voids),
    at hub time now_ms.  Stations are numbered 1..n within the relay part
    (station = round-wide puzzle number - part.first + 1).  None for an
    entrant whose relay part has not started (no round start, or the parts
    before it are not all finished)."""
    part = fmt.relay
    if part is None:
        raise ValueError(f"format {fmt.name} has no relay part")
    assert part.rotation_interval_ms is not None
    ids = {e.id for e in entrants}
    start: int | None = None
    offsets: dict[str, int] = {}
    presses: dict[str, list[Press]] = {i: [] for i in ids}
    voided: set[str] = set()
    for f in facts:
        if isinstance(f, RoundStart):
            start = f.at_ms
        elif isinstance(f, StartOffset) and fmt.start_offsets and f.entrant in ids:
            offsets[f.entrant] = f.offset_ms
        elif isinstance(f, Press) and f.entrant in ids:
            presses[f.entrant].append(f)
        elif isinstance(f, Void):
            voided.add(f.press_id)
    out: dict[str, RelayState | None] = {}
    for e in entrants:
        if start is None:
            out[e.id] = None
            continue
        estart = start + offsets.get(e.id, 0)
        best: dict[int, int] = {}
        for p in presses[e.id]:
            if p.press_id and p.press_id in voided or p.at_ms < estart:
                continue
            if p.puzzle not in best or p.at_ms < best[p.puzzle]:
                best[p.puzzle] = p.at_ms
        part_start: int | None = estart
        for earlier in fmt.parts:
            if earlier is part:
                break
            ts = [best.get(n) for n in earlier.numbers]
            part_start = max(ts) if all(t is not None for t in ts) else None   # type: ignore[type-var]
            if part_start is None:
                break
        if part_start is None or now_ms < part_start:
            out[e.id] = None
            continue
        fins = [(n - part.first + 1, best[n] - part_start) for n in part.numbers if n in best]
        out[e.id] = relay_state(len(part.puzzles), part.rotation_interval_ms, fins,
                                now_ms - part_start, members=min(fmt.max_members, len(part.puzzles))
                                if not e.members else min(len(e.members), len(part.puzzles)),
                                start_ms=part_start)
    return out


def relay_view(fmt: Format, entrants: Sequence[Entrant], facts: Iterable[Fact], now_ms: int,
               end_ms: int | None) -> list[dict]:
    """The relay at now_ms as data a program can check: per team, who sits
    at which puzzle (round-wide puzzle numbers), the finished ones, and the
    rotation signals still to come before end_ms (the round's end)."""
    part = fmt.relay
    if part is None:
        return []
    interval = part.rotation_interval_ms
    first = part.first
    out = []
    for e, st in relay_states(fmt, entrants, list(facts), now_ms).items():
        if st is None:
            out.append({"entrant": e, "started": False})
            continue
        nxt = st.next_signal_at
        left = 0
        if nxt is not None and interval and end_ms is not None and nxt < end_ms:
            left = (end_ms - nxt + interval - 1) // interval
        out.append({"entrant": e, "started": True, "complete": st.complete,
                    "at_puzzle": {str(m): s + first - 1 for m, s in sorted(st.positions.items())},
                    "finished": {str(s + first - 1): {"at_ms": f.at_ms, "member": f.member}
                                 for s, f in sorted(st.finished.items())},
                    "next_signal_at": nxt, "signals_left": left,
                    "next_moves": [[m, a + first - 1, b + first - 1] for m, a, b in st.next_moves]})
    return out
