"""Whether an operator action may be recorded in this event, in words an
operator understands: the action's shape (actions.py), then what the event
makes of it (its entrants, presses, puzzles and their sizes, the round's
limit) and, given the hub's time now, whether its times are plausible.
Pure: the fold of the log (competition.py) hands over what it knows."""

from __future__ import annotations

from typing import Collection, Mapping

from ..fold.check_in import not_in_round
from ..fold.competition import Competition
from ..log.action_rows import ENTRANT_ACTIONS, OBJECTION_ACTIONS, shape_problem
from ..fold.row_checks import PLAUSIBLE_MS, start_problem
from ...rules.facts import Press
from ...rules.format_model import Format


def check_action(comp: Competition, action: str, p: dict, now_ms: int | None = None) -> None:
    """ValueError, in an operator's words, unless the action may be
    recorded in this event as it is: nothing is stored before this passes.
    Its shape and what the event makes of it (check_shaped_action), then
    what the fold keeps (a replacement's book, the hall check, open
    conflicts: Competition.check_fold_action)."""
    entrants = comp.entrant_ids()
    pid = p.get("press_id") if isinstance(p, dict) else None
    named = comp.press(pid) if isinstance(pid, str) else None
    presses = {pid: named} if isinstance(pid, str) and named is not None else {}
    check_shaped_action(comp.format, entrants, presses, action, p, now_ms)
    comp.check_fold_action(action, p, now_ms)


def check_shaped_action(fmt: Format, entrants: Collection[str], presses: Mapping[str, Press], action: str,
                        p: dict, now_ms: int | None = None) -> None:
    """ValueError unless the action may be recorded as it is, by its shape
    and the event's entrants, presses and puzzles.  entrants: the event's
    entrant ids; presses: its presses by press id (the one it names is
    enough)."""
    if action == "dq" and isinstance(p, dict) and not (isinstance(p.get("reason"), str) and p["reason"].strip()):
        raise ValueError("dq: a reason is needed")
    # (a form's check before it is recorded has no why yet: the stored action's has)
    if action == "resolve" and isinstance(p, dict) and "why" in p and \
            not (isinstance(p["why"], str) and p["why"].strip()):
        raise ValueError("resolve: say why (what was decided about the conflict): why=...")
    if action == "reopen" and isinstance(p, dict) and "why" in p and \
            not (isinstance(p["why"], str) and p["why"].strip()):
        raise ValueError('reopen: say why the results are reopened: --why "..." (logged with who reopened '
                         'them); nothing recorded')
    if action in OBJECTION_ACTIONS and isinstance(p, dict) and p.get("objection") is not None and \
            not (isinstance(p["objection"], str) and p["objection"].strip()):
        raise ValueError(f'{action}: an objection needs its reason: --objection "what the competitor objects '
                         f'to, and what the head referee decided"; nothing recorded')
    problem = shape_problem(action, p)
    if problem is not None:
        raise ValueError(problem)
    if action == "check_in" and p["entrant"] not in entrants:
        raise ValueError(not_in_round(p["entrant"]))
    if (action in ENTRANT_ACTIONS or p.get("entrant") is not None) and action != "replace":
        if p.get("entrant") not in entrants:     # (a replacement's may be a new entry: replacements.py)
            raise ValueError(f"{action}: no entrant {p.get('entrant')!r}")
    n = len(fmt.puzzles)
    for k in ("puzzle", "packed", "opened"):
        if p.get(k) is not None and not 1 <= p[k] <= n:
            raise ValueError(f"{action}: {k} = {p[k]} is outside 1..{n} (this round has {n} "
                             f"puzzle{'s' if n > 1 else ''})")
    if action in ("press", "count") and p.get("puzzle") is None and n > 1 or \
            action == "agree" and p.get("press_id") is None and p.get("puzzle") is None and n > 1:
        raise ValueError(f"{action}: puzzle is needed (1..{n})")
    if action in ("void", "correct") or (action in ("confirm", "agree") and p.get("press_id")):
        if p.get("press_id") not in presses:
            raise ValueError(f"{action}: no press {p.get('press_id')!r}")
    named = presses.get(p.get("press_id") or "")
    # a confirmation by press id counts the pieces of that press's puzzle
    puzzle = p.get("puzzle") or (named.puzzle if named is not None else None) or 1
    pieces = fmt.puzzles[puzzle - 1]
    for k in ("placed", "remaining", "missing_found", "missing_lost", "missing_adjacent"):
        if p.get(k) is not None and p[k] > pieces:
            raise ValueError(f"{action}: {k} = {p[k]} is outside 0..{pieces} (puzzle {puzzle} has "
                             f"{pieces} pieces)")
    if action == "round_start":
        limit = p.get("duration") or fmt.time_limit_ms
        over = [w for w in p.get("warnings") or () if w >= limit]
        if over:
            raise ValueError(f"round_start: a warning {over[0]} ms before the end is not within "
                             f"the {limit} ms limit")
        problem = start_problem(fmt, p)
        if problem is not None:
            raise ValueError(problem)
    if now_ms is not None and p.get("at") is not None and abs(p["at"] - now_ms) > PLAUSIBLE_MS:
        raise ValueError(f"{action}: at = {p['at']} (hub ms) is more than 7 days from the hub's "
                         f"time now ({now_ms}); give a time near now")
