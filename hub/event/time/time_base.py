"""The round's time base: which instant hub time says it is, and how the hub
keeps it through a sleeping laptop, a stepped wall clock and a restart.
Pure: the clocks' readings are handed in (host_clock.py reads them).

Hub time = the base's offset + the laptop's boot clock (ms), which counts
through sleep and is never stepped.  The base is chosen once, when a
process opens an event's log (`choose_base`):
- from the log: the latest `clock` row of this boot of this laptop (a hub
  writes one when it starts and whenever its base moves).  Every process
  on the laptop (the hub, `tabletimer act`, a console beside it) so reads
  the running hub's time, and a hub restarted in the same boot carries on
  exactly, whatever the wall clock says now;
- else from the wall clock (another boot, another laptop: a takeover), the
  boards' clocks then the witness (`BoardsWitness`): they kept the round's
  base while the hub was away, and a hub whose base disagrees with theirs
  takes theirs.
While a hub runs, `jumps` compares its three clocks: a suspend (the awake
clock behind the boot clock) or a stepped wall clock is found and said,
never followed.  Every such happening is a `clock` row in the log
(`clock_row`), which the consoles and the head referee's page show
(`clock_alert`) and a replay reads as the hub did.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from statistics import median

from ...rules.durations import fmt_duration

CLOCK_ROW = "clock"           # the type of a hub row of the time base (source 'hub')

# why a clock row was written
STARTED = "started"           # a hub (re)started on this base
SLEPT = "slept"               # the laptop slept (its awake clock stopped): hub time ran on
WALL_STEPPED = "wall_stepped"   # the wall clock was stepped: hub time did not follow
BOARDS = "boards"             # the boards kept another base: the hub took theirs
WHYS = (STARTED, SLEPT, WALL_STEPPED, BOARDS)

# where a base came from
FROM_LOG = "log"              # this boot's latest clock row
FROM_WALL = "wall"            # the wall clock (no clock row of this boot)
FROM_BOARDS = "boards"

JUMP_MS = 1000                # a difference between the laptop's clocks larger than this is a jump
LOG_SLACK_MS = 1000           # a wall clock this far behind the log's last row is wrong
ALERT_MS = 10 * 60_000        # how long a clock happening stays an alert

# the boards' witness: the reports of the last WITNESS_MS count, a board's
# stated error plus SPREAD_MS is how far two boards' views of the jump may differ
WITNESS_MS = 60_000
SPREAD_MS = 50


@dataclass(frozen=True)
class Base:
    """Hub ms = offset_ms + boot clock ms.  gen: one more each time the
    hub moves its base on purpose (to the boards'), told to the boards in
    each clock-sync reply: a board follows a jump of a new generation and
    keeps its own base against one of the same (firmware/board.py)."""
    offset_ms: int
    gen: int = 0
    source: str = FROM_WALL


def wall_base(wall_ns: int, boot_ns: int, gen: int = 0) -> Base:
    return Base(wall_ns // 1_000_000 - boot_ns // 1_000_000, gen, FROM_WALL)


def clock_row(why: str, base: Base, boot_id: str, boot_ns: int, wall_ns: int, **more) -> dict:
    """A clock row's payload: why it was written, and the anchor it gives
    (this boot's boot clock and the hub time it was then), what the wall
    clock said, the base's generation and source; more: what happened
    (slept_ms, stepped_ms, shift_ms, since_row, ...)."""
    boot_ms = boot_ns // 1_000_000
    return {"why": why, "boot": boot_id, "boot_ms": boot_ms, "hub_ms": base.offset_ms + boot_ms,
            "wall_ms": wall_ns // 1_000_000, "gen": base.gen, "source": base.source, **more}


def clock_row_problem(p: dict) -> str | None:
    """Why a stored clock row's payload cannot be read (None: it can)."""
    if p.get("why") not in WHYS:
        return f"clock: why must be one of {', '.join(WHYS)}"
    for k in ("boot_ms", "hub_ms", "wall_ms", "gen"):
        if type(p.get(k)) is not int:
            return f"clock: {k} must be a whole number"
    if not isinstance(p.get("boot"), str):
        return "clock: boot must be text"
    for k in ("slept_ms", "stepped_ms", "shift_ms", "since_row", "behind_ms", "wall_off_ms"):
        if k in p and type(p[k]) is not int:
            return f"clock: {k} must be a whole number"
    return None


@dataclass(frozen=True)
class Chosen:
    base: Base
    warnings: tuple[str, ...] = ()
    wall_off_ms: int = 0          # the wall clock less hub time, when it was chosen


def choose_base(clock_rows: list[dict], last_row_ms: int | None, boot_id: str,
                wall_ns: int, boot_ns: int) -> Chosen:
    """The base for a process opening a log (clock_rows: the clock rows'
    payloads of the log and of the event's other rounds, any order;
    last_row_ms: the latest hub time a row of the log was stamped with):
    this boot's latest anchor, else the wall clock; and what is wrong with
    the wall clock, in an operator's words."""
    gen = max((p["gen"] for p in clock_rows), default=0)
    now_boot = boot_ns // 1_000_000
    mine = [p for p in clock_rows if boot_id and p["boot"] == boot_id and p["boot_ms"] <= now_boot]
    wall_ms = wall_ns // 1_000_000
    if mine:
        latest = max(mine, key=lambda p: p["boot_ms"])
        base = Base(latest["hub_ms"] - latest["boot_ms"], latest["gen"], FROM_LOG)
        off = wall_ms - (base.offset_ms + now_boot)
        warnings: tuple[str, ...] = ()
        if abs(off) > JUMP_MS:
            warnings = (f"this laptop's clock is {span(off)} {'ahead of' if off > 0 else 'behind'} "
                        f"the round's time (its clock was changed since the hub's base was taken): the hub "
                        f"keeps the round's time from its log; results are not affected. Set the laptop's "
                        f"clock right only after the event (a change now is also kept out)",)
        return Chosen(base, warnings, off)
    base = wall_base(wall_ns, boot_ns, gen)
    warnings = ()                        # (as above: tuple[str, ...])
    if last_row_ms is not None and wall_ms < last_row_ms - LOG_SLACK_MS:
        behind = last_row_ms - wall_ms
        warnings = (f"this laptop's clock is {span(behind)} behind the event log's last entry: it "
                    f"was set back, or this is another laptop whose clock is wrong. The boards that kept "
                    f"time correct the hub within seconds of reaching it (an alert says so); if no board "
                    f"does, stop the hub, set the clock right (the time of day to the second) and start it "
                    f"again",)
    return Chosen(base, warnings, 0)


# ------------------------------------------------------------ jumps
@dataclass(frozen=True)
class Jump:
    why: str          # SLEPT or WALL_STEPPED
    ms: int           # how long it slept; how far the wall clock was stepped (+ ahead)


def jumps(before: tuple[int, int, int], now: tuple[int, int, int], sleep_proof: bool = True) -> list[Jump]:
    """What happened between two readings of the laptop's clocks ((wall,
    awake, boot) ns each): it slept (the awake clock ran less than the boot
    clock), its wall clock was stepped (it ran more or less than the boot
    clock).  sleep_proof False: the boot clock is the awake clock (no
    clock counts through sleep here): a sleep then shows as the wall clock
    running ahead, said as either."""
    boot = now[2] - before[2]
    out = []
    slept = (boot - (now[1] - before[1])) // 1_000_000
    if sleep_proof and slept > JUMP_MS:
        out.append(Jump(SLEPT, slept))
    stepped = ((now[0] - before[0]) - boot) // 1_000_000
    if abs(stepped) > JUMP_MS:
        out.append(Jump(WALL_STEPPED, stepped))
    return out


# ------------------------------------------------------------ the boards
@dataclass
class Report:
    jump_ms: int | None      # the hub's jump the board refused (its offset less ours); None: it agrees
    err_ms: int
    at_ms: int


@dataclass
class BoardsWitness:
    """What the boards' clock-sync requests say of the hub's base: each
    board that keeps its own base against a hub reply (it saw the hub's
    clock jump: `"hj"` in its request) reports by how much; a board that
    took the hub's replies agrees.  The hub moves its base to the boards'
    when most of the boards heard in the last WITNESS_MS refuse it, by
    jumps that agree with each other (a board's stated error, plus
    SPREAD_MS): one board, forged or faulty, cannot move a hall's time."""
    reports: dict[str, Report] = field(default_factory=dict)

    def heard(self, board: str, jump_ms: int | None, err_ms: int, at_ms: int) -> None:
        self.reports[board] = Report(jump_ms, err_ms, at_ms)

    def verdict(self, now_ms: int) -> int | None:
        """The shift the hub's base needs (ms, + later), or None."""
        recent = [r for r in self.reports.values() if now_ms - r.at_ms <= WITNESS_MS]
        refusing = [r for r in recent if r.jump_ms is not None]
        if not refusing or 2 * len(refusing) <= len(recent):
            return None
        mid = median(j for r in refusing if (j := r.jump_ms) is not None)
        near = [r for r in refusing if r.jump_ms is not None and abs(r.jump_ms - mid) <= r.err_ms + SPREAD_MS]
        if 2 * len(near) <= len(recent):
            return None
        return -int(median(j for r in near if (j := r.jump_ms) is not None))

    def moved(self) -> None:
        """The hub took a new base: what the boards said was of the old one."""
        self.reports.clear()


# ------------------------------------------------------------ in words
def span(ms: int) -> str:
    """A clock's jump as the operator reads it: h:mm:ss, or ms under a second."""
    ms = abs(ms)
    return f"{ms} ms" if ms < 1000 else fmt_duration(round(ms, -3))


def clock_alert(p: dict, fmt_clock) -> str | None:
    """A clock row as the head referee reads it (None: a plain start on a
    base of this boot's log, nothing to say).  fmt_clock: hub ms as a clock
    time."""
    at = fmt_clock(p["hub_ms"])
    why = p["why"]
    if why == SLEPT:
        return (f"CLOCK: this laptop slept for {span(p.get('slept_ms', 0))}, until {at}: hub time ran "
                f"on and the boards kept time; presses made meanwhile were stored when it woke, at their "
                f"own instants. Keep it plugged in, and its lid open")
    if why == WALL_STEPPED:
        d = p.get("stepped_ms", 0)
        return (f"CLOCK: this laptop's clock was set {span(d)} {'forward' if d > 0 else 'back'} at "
                f"{at} (NTP or by hand): hub time did not follow; results are not affected")
    if why == BOARDS:
        d = p.get("shift_ms", 0)
        return (f"CLOCK: the boards kept the round's time {span(d)} {'ahead of' if d > 0 else 'behind'} "
                f"this hub's clock: the hub took theirs at {at}"
                + (f" (rows from #{p['since_row']} on are read with it)" if p.get("since_row") else "")
                + "; this laptop's clock is wrong: set it right only after the event")
    if why == STARTED and p.get("wall_off_ms"):
        d = p["wall_off_ms"]
        return (f"CLOCK: the hub started at {at} on the round's time from its log; this laptop's clock is "
                f"{span(d)} {'ahead of' if d > 0 else 'behind'} it (it was changed since): results are not "
                f"affected. Set the laptop's clock right only after the event")
    if why == STARTED and p.get("source") == FROM_WALL and p.get("behind_ms"):
        return (f"CLOCK: the hub started at {at} on this laptop's clock, {span(p['behind_ms'])} behind the "
                f"log's last entry: waiting for the boards to say the round's time")
    return None
