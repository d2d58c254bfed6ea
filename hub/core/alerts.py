"""What needs the head referee's attention, besides the waiting calls, in
words that say what to do: the log's failed writes, the boards (not seen,
offline during the round, a poor clock sync, a reset after a fault, not in
stations.csv), messages from boards without a key, what the fold could not
place (conflicts, rows that cannot apply, refused presses, events without a
station, strays), and what the hub sees on the network and the log does not
hold (a board locked out by a boot or counter jump, a jump rejected, a
command a board refused).  Pure: read from the state the service hands
over."""

from __future__ import annotations

from typing import Callable, Mapping

from ..protocol.hub_protocol import FW_ROLLED_BACK, ROLLED_BACK
from .board_counts import Jump, Refused
from .registry import BoardRegistry
from ..event.fold.competition import Competition
from ..rules.timetext import fmt_clock

POOR_SYNC_MS = 20            # a board's clock sync error above this is alerted
JUMP_ALERT_MS = 10 * 60_000  # how long a rejected jump (of a board heard since) or a refused command stays an alert


def hub_alerts(comp: Competition, registry: BoardRegistry, network: list[str], *,
               write_failure: dict | None, rejected: Mapping[str, int],
               sync_limit_ms: int = POOR_SYNC_MS, unused: frozenset[str] = frozenset()) -> list[str]:
    """Every alert, the network's (network_alerts) after the log's.
    unused: boards of the event's other rounds that this round does not use
    (in the hall, online or not): none of their own alerts (their faults,
    "not in stations.csv")."""
    out = []
    f = write_failure
    if f is not None:
        out.append(f"EVENT LOG NOT WRITTEN since {fmt_clock(f['since'])}: {f['count']} write(s) "
                   f"failed, nothing acknowledged meanwhile (the boards keep their presses and "
                   f"send them again) - {f['advice']}")
    out += network
    reg = registry.boards
    running = comp.start_ms is not None
    for b in sorted({s.board for s in comp.stations}):
        info = reg.get(b)
        if info is None:
            out.append(f"board {b} (stations.csv) has not been seen")
        elif not info.online and running:
            out.append(f"board {b} is OFFLINE during the round")
        elif info.sync_err_ms is not None and info.sync_err_ms > sync_limit_ms:
            out.append(f"board {b}: clock sync ±{info.sync_err_ms} ms (poor WiFi?)")
    for b, info in sorted(reg.items()):
        if b in unused:
            continue
        if info.fault and info.online and info.fault.startswith(ROLLED_BACK):
            out.append(f"board {b} went back to its previous settings by itself: "
                       f"{info.fault[len(ROLLED_BACK):].lstrip(': ')} (the new ones did not reach the hub: "
                       "check the WiFi name and password, or the broker's address and port, then "
                       "`tabletimer boards set` again)")
        elif info.fault and info.online and (m := FW_ROLLED_BACK.match(info.fault)) is not None:
            out.append(f"board {b} went back to its previous firmware by itself: firmware {m.group(1)} "
                       f"{info.fault[m.end():]} (it runs the version before it; tell the developers, "
                       "and do not send that version again)")
        elif info.fault and info.online:
            boot = f"boot {info.boot - 1}" if info.boot is not None else "its previous boot"
            out.append(f"board {b} RESET after a fault in {boot}: {info.fault} "
                       f"(it runs again from its flash; tell the developers if it repeats)")
    known = {s.board for s in comp.stations}
    if not comp.auto_stations:
        for b in sorted(set(reg) - known - unused):
            out.append(f"board {b} is not in stations.csv")
    if rejected.get("unknown board"):
        out.append(f"{rejected['unknown board']} message(s) from boards without a key")
    comp.facts()
    for c in comp.open_conflicts():          # every one until resolved (conflict_book.py)
        out.append(c.text)
    for rid, why in list(comp.flagged.items())[-5:]:
        out.append(f"log row #{rid} cannot apply ({why}): kept in the log, left out of the standings")
    for r in comp.refused[-5:]:
        short = comp.short_press_id(r.press_id)
        said = "" if short == r.press_id else f"{short}, "
        out.append(f"press {r.press_id} ({said}{r.row['board']} button {r.row['payload']['station']}) refused, "
                   f"not ranked: {r.why}; record the finish by hand if it is one")
    for u in comp.unassigned[-5:]:
        out.append(f"{u.type} from {u.board} button {u.station}: no station for it")
    # the check's presses are its own; a short press at a call (a repeat call, or the referee's
    # count) is the table page's, no alert
    for row in [r for r in comp.strays[-5:] if not comp.in_hall_check(r) and r["payload"]["state"] != "called"]:
        p = row["payload"]
        out.append(f"stray press {row['board']} button {p['station']} while {p['state']}")
    return out


def network_alerts(sources: list[Callable[[], list[str]]], registry: BoardRegistry, now_ms: int,
                   retained_junk: int, jumps: Mapping[str, Jump] | None = None,
                   refusals: Mapping[str, Refused] | None = None,
                   unused: frozenset[str] = frozenset()) -> list[str]:
    """The alerts of what the hub sees on the network and the log does not
    hold: its own path through the broker (sources: the MQTT adapter's
    self-probe), the boards' liveness, boot and counter jumps rejected (a
    board locked out, until it is heard again; else for JUMP_ALERT_MS),
    commands a board refused as a counter jump (for JUMP_ALERT_MS), retained
    junk cleared.  unused: boards this round does not use (hub_alerts):
    their liveness is not this round's alert."""
    out = []
    for fn in sources:
        out += fn()
    for b, info in sorted(registry.boards.items()):
        if b not in unused:
            out += registry.liveness_alerts(info, now_ms)
    for b, j in sorted((jumps or {}).items()):
        if not j.heard:
            out.append(f"board {b}: messages rejected, {j.why} (if the board is genuine: reset_board board={b})")
        elif now_ms - j.at_ms < JUMP_ALERT_MS:
            out.append(f"board {b}: a message rejected at {fmt_clock(j.at_ms)}, {j.why}; the board is heard "
                       f"since: signed with its key, not sent by it? (who has its key, or the hub's keys file?)")
    for b, r in sorted((refusals or {}).items()):
        if now_ms - r.at_ms >= JUMP_ALERT_MS:
            continue
        if r.ours:
            out.append(f"board {b} refuses this hub's commands as a counter jump (numbered {r.ctr}, at "
                       f"{fmt_clock(r.at_ms)}): was the hub's clock moved forward since the board started? "
                       f"It takes them again once restarted (power it off and on)")
        else:
            out.append(f"board {b} refused a command numbered {r.ctr} at {fmt_clock(r.at_ms)} as a counter "
                       f"jump: not this hub's (it has numbered none that high): somebody has the board's key "
                       f"(or the hub's keys file)")
    if retained_junk:
        out.append(f"{retained_junk} retained message(s) on board topics failed the checks and were "
                   f"cleared from the broker: somebody published them (who has a login?)")
    return out
