"""What an operator action would replace or discard among the recorded
results, in words for the operator who must confirm it first."""

from __future__ import annotations

from ..rules.timetext import fmt_clock
from .competition import Competition


def consequences(comp: Competition, action: str, payload: dict, now: int) -> list[str]:
    """What recorded results an action (already checked) would replace or
    discard at hub time now; empty when it changes no recorded decision."""
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
        out.append(f"{'voids' if action == 'void' else 'changes the time of'} {what} ({pid})")
    elif action == "confirm" and payload.get("press_id") in confirmed:
        out.append(f"replaces the confirmation already recorded for {payload['press_id']}")
    elif action == "count":
        puzzle = payload.get("puzzle") or 1
        if any(f.kind == "count" and f.entrant == payload["entrant"] and f.puzzle == puzzle
               for f in facts):
            out.append(f"replaces the piece count recorded for {payload['entrant']} puzzle {puzzle}")
    elif action == "dq":
        out.append(f"disqualifies {payload['entrant']}")
    elif action == "dns" and any(f.entrant == payload["entrant"] for f in presses):
        out.append(f"marks {payload['entrant']}, who has recorded finish calls, as not started")
    return out
