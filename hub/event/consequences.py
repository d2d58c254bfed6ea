"""What an operator action would replace or discard among the recorded
results, in words for the operator who must confirm it first."""

from __future__ import annotations

from ..rules.timetext import fmt_clock
from .competition import Competition


_DONE = {"confirm": "confirmation", "void": "void", "correct": "correction"}


def _decided(comp: Competition, pid: str) -> str:
    """Who recorded a call's decision and when, for the desk to see before
    it replaces it: ", Anna's confirmation recorded at 10:42:03 (log row #25)"."""
    d = comp.decision(pid)
    if d is None:
        return ""
    when = f" at {fmt_clock(d.at_ms)}" if d.at_ms is not None else ""
    return f", {d.who}'s {_DONE.get(d.kind, d.kind)} recorded{when} (log row #{d.row})"


def consequences(comp: Competition, action: str, payload: dict, now: int,
                 last_count: dict | None = None) -> list[str]:
    """What recorded results an action (already checked) would replace or
    discard at hub time now; empty when it changes no recorded decision.
    A replaced decision is named with who recorded it and when (last_count:
    the operator row of the count recorded last on the action's puzzle)."""
    out: list[str] = []
    facts = comp.facts()
    presses = [f for f in facts if f.kind == "press"]
    confirmed = {f.press_id for f in facts if f.kind == "confirm" and f.press_id}
    start = comp.start_ms
    if action == "round_start" and start is not None:
        state = "running since" if now >= start else "armed for"
        early = sum(1 for f in presses if f.at_ms < payload["at"])
        out.append(f"replaces the round start ({state} {fmt_clock(start)}); {len(presses)} finish "
                   f"call(s) recorded so far" + (f", {early} of them before the new start, which "
                                                  "would no longer count" if early else ""))
    elif action in ("void", "correct"):
        pid = payload["press_id"]
        what = "a confirmed finish" if pid in confirmed else "a recorded finish call"
        out.append(f"{'voids' if action == 'void' else 'changes the time of'} {what} ({pid}{_decided(comp, pid)})")
    elif action == "confirm" and payload.get("press_id") in confirmed:
        pid = payload["press_id"]
        out.append(f"replaces the confirmation already recorded for {pid}{_decided(comp, pid)}")
    elif action == "count":
        puzzle = payload.get("puzzle") or 1
        if any(f.kind == "count" and f.entrant == payload["entrant"] and f.puzzle == puzzle
               for f in facts):
            by = ""
            if last_count is not None:
                lp = last_count["payload"]
                by = (f" (by {lp.get('who') or 'operator'} at {fmt_clock(last_count['received_ms'])}, "
                      f"log row #{last_count['id']})")
            out.append(f"replaces the piece count recorded for {payload['entrant']} puzzle {puzzle}{by}")
    elif action == "dq":
        out.append(f"disqualifies {payload['entrant']}")
    elif action == "dns" and any(f.entrant == payload["entrant"] for f in presses):
        out.append(f"marks {payload['entrant']}, who has recorded finish calls, as not started")
    return out
