"""Operator actions: the fields each takes and their shape, checked before
anything is stored (and again when a stored row is folded, so that a row an
older version let through is flagged instead of breaking the event).  Pure:
no I/O, no state.

The shape is what needs no context: required fields, types, ranges that
hold for every event.  What needs the event (does the entrant exist, does
the puzzle have that many pieces, is the time plausible now) is checked by
Competition.check_action on top of this.
"""

from __future__ import annotations

from typing import Any

from ...rules.format_model import MAX_ENTRANTS, MAX_MEMBERS, MAX_PIECES, MAX_ROUND_MS
from ...rules.seating import ORDERS as SEAT_ORDERS

DAY_MS = 86_400_000
# MAX_PIECES (no jigsaw puzzle of a speed competition comes near it) and MAX_ROUND_MS (a round's
# limit, a format's or a start's own: 72 hours) are the formats' limits (rules/format_model.py)
MAX_WARNINGS = 10
MAX_TEXT = 500                # entrant ids, press ids, reasons, who, why
MAX_MS = 2 ** 53 - 1          # what JSON and a board's 64-bit arithmetic carry exactly
MAX_REPORT = 60_000           # a hall check's checklist: a line per board of a 300-board hall
HALL_CHECK_PHASES = ("begin", "verdict")
ADVANCE_PHASES = ("apply", "withdraw")

# what every action may carry besides its fields: who took it, why, the
# idempotency key of the request that made it (a phone's queued action, sent
# again after a lost answer, is stored once: HubService.act), and `seen`: the
# log row of the decision on its call or count the desk saw when it decided
# (0: none; a decision recorded since makes the action a conflict)
META = ("who", "why", "request", "seen")
MAX_REQUEST = 100             # an idempotency key's length

# the fields each action takes (besides META)
FIELDS: dict[str, tuple[str, ...]] = {
    "round_start": ("at", "duration", "warnings"),
    "press": ("entrant", "puzzle", "at"),                  # a finish the referee recorded by hand
    # objection: the reason, when a change of a time or count the competitor agreed to is the head
    # referee's decision on an objection (event/fold/official.py)
    "confirm": ("press_id", "entrant", "puzzle", "missing_found", "missing_lost", "missing_adjacent", "objection"),
    "void": ("press_id", "objection"),
    "correct": ("press_id", "at", "objection"),            # = void + press at the corrected time
    "count": ("entrant", "puzzle", "placed", "remaining", "objection"),
    "start_offset": ("entrant", "offset_ms"),
    "swap": ("entrant", "at", "packed", "opened"),
    "dns": ("entrant",),
    "dq": ("entrant", "reason"),
    "reinstate": ("entrant",),
    # an absent entrant's stations given to another participant (replacements.py): one of the
    # entrants list, or a new entry (name, members "A|B", eligible "yes" or "yes|no")
    "replace": ("absent", "entrant", "name", "members", "eligible", "at"),
    # at the door (fold/check_in.py): the entrant is here (present 1, the default), or a check-in
    # undone (present 0); no fact: the round's start names who is not here
    "check_in": ("entrant", "present"),
    "identify": ("board",),                                 # make a board buzz and blink (no fact)
    "reset_board": ("board",),                              # forget a board's boot counters (no fact)
    "resolve": ("conflict",),                               # a conflict looked at (why: what was decided)
    # the hall check before the round (fleet/hall_check.py): its beginning (from then on a press at
    # a station not running is the check's, not a stray), and its verdict (ready 1/0, the checklist)
    "hall_check": ("phase", "ready", "report", "clock_limit", "rssi_min"),
    # settings over the air (fleet/board_settings.py): one board's changes {"part.key": value} (its
    # passwords sealed with its key), how long it tries them (s) before it goes back by itself
    "settings": ("board", "set", "trial"),
    # firmware over the air (fleet/firmware_update.py): one board's new version, the package's
    # folder (under the log's firmware/) and its manifest's sha256, the trial (s) before it goes back,
    # older 1: the desk allows a version older than the board's (else refused, at the desk and the board)
    "firmware": ("board", "fw", "pkg", "sha", "trial", "older"),
    # before the start (cli/draw.py; refused once a round start is recorded: Competition.check_fold_action):
    # the team draw: its seed, the teams' size asked for, the teams drawn [{"id", "name", "members": [..]}],
    # the keep-apart column and the earlier round balanced by ("": none), how many were registered
    "draw": ("seed", "size", "teams", "apart_by", "balance_by", "registered"),
    # the seating written to stations.csv: in which order (rules/seating.py ORDERS), its seed (random),
    # the earlier round (rank-of), how many entrants were seated
    "seat": ("by", "seed", "rank_of", "seated"),
    # the competitor saw the time of a confirmed finish (press_id) or a recorded count (entrant and
    # puzzle) and agreed to it; the round's results made official, and reopened (why: required)
    "agree": ("press_id", "entrant", "puzzle"),
    "official": (),
    "reopen": (),
    # a round's entrants from earlier rounds (rules/advancement.py, cli/advance.py): the plan applied
    # (phase apply: the source rounds, the sha256 of their results, who advances and the reserves in
    # order, whom the desk took at ties, 1: the sources' results taken as they are, not official) or a
    # withdrawal (phase withdraw: who withdrew, which reserve came in, the round's entrants after it)
    "advance": ("phase", "sources", "hash", "entrants", "reserves", "taken", "as_they_are", "withdrawn",
                "reserve"),
}

# the actions that change a result (refused once the results are official: event/fold/official.py)
RESULT_ACTIONS = ("round_start", "press", "confirm", "void", "correct", "count", "start_offset", "swap",
                  "dns", "dq", "reinstate", "replace", "agree")
# the changes of a time or count an objection may make (its reason in `objection`)
OBJECTION_ACTIONS = ("confirm", "void", "correct", "count")

# actions that always name an entrant (confirm may name one instead of a press)
ENTRANT_ACTIONS = ("press", "count", "start_offset", "swap", "dns", "dq", "reinstate")

# hub times (ms since the Unix epoch) an action records
TIME_FIELDS = ("at",)

# field -> (kind, lowest, highest); kind: "int", "text", "ints" (a list of ints)
_SHAPES: dict[str, tuple[str, int, int]] = {
    "at": ("int", 0, MAX_MS),
    "duration": ("int", 1, MAX_ROUND_MS),
    "warnings": ("ints", 1, MAX_ROUND_MS),
    "entrant": ("text", 1, MAX_TEXT),
    "absent": ("text", 1, MAX_TEXT),
    "name": ("text", 1, MAX_TEXT),
    "members": ("text", 0, MAX_TEXT),
    "eligible": ("text", 1, MAX_TEXT),
    "press_id": ("text", 1, MAX_TEXT),
    "board": ("text", 1, MAX_TEXT),
    "reason": ("text", 0, MAX_TEXT),
    "puzzle": ("int", 1, 1000),
    "missing_found": ("int", 0, MAX_PIECES),
    "missing_lost": ("int", 0, MAX_PIECES),
    "missing_adjacent": ("int", 0, MAX_PIECES),
    "placed": ("int", 0, MAX_PIECES),
    "remaining": ("int", 0, MAX_PIECES),
    "offset_ms": ("int", -DAY_MS, DAY_MS),
    "packed": ("int", 1, 1000),
    "opened": ("int", 1, 1000),
    "conflict": ("int", 1, MAX_MS),
    "phase": ("text", 1, 16),
    "ready": ("int", 0, 1),
    "present": ("int", 0, 1),                  # check_in: 1 here, 0 the check-in undone
    "report": ("text", 0, MAX_REPORT),
    "clock_limit": ("int", 1, 60_000),         # the hall check's limits (ms, dBm), at its beginning
    "rssi_min": ("int", -120, 0),
    "set": ("object", 1, 16),                  # settings: 1..16 "part.key": value
    "trial": ("int", 10, 3600),
    "fw": ("text", 1, 16),                     # firmware: the version
    "pkg": ("text", 1, 80),                    # ... its package's folder
    "sha": ("text", 64, 64),                   # ... its manifest's sha256
    "older": ("int", 0, 1),                    # ... 1: allowed older than the board's (--allow-older)
    "seed": ("int", 0, MAX_MS),                # a draw's or a seating's seed
    "size": ("int", 1, MAX_MEMBERS),
    "teams": ("teams", 1, MAX_ENTRANTS),       # a draw's teams
    "apart_by": ("text", 0, MAX_TEXT),
    "balance_by": ("text", 0, MAX_TEXT),
    "registered": ("int", 0, MAX_ENTRANTS),
    "by": ("text", 1, 16),
    "rank_of": ("text", 0, MAX_TEXT),
    "seated": ("int", 0, MAX_ENTRANTS),
    "objection": ("text", 1, MAX_TEXT),        # the objection's reason
    "sources": ("texts", 1, 50),               # advance: the source rounds' names
    "hash": ("text", 64, 64),                  # ... the sha256 of their results
    "entrants": ("texts", 0, MAX_ENTRANTS),    # ... the round's entrants, in seating order
    "reserves": ("texts", 0, MAX_ENTRANTS),    # ... the reserves, in order
    "taken": ("texts", 0, MAX_ENTRANTS),       # ... the desk's choices at ties
    "as_they_are": ("int", 0, 1),
    "withdrawn": ("text", 1, MAX_TEXT),
    "reserve": ("text", 1, MAX_TEXT),
}

# fields without which the action means nothing
_REQUIRED: dict[str, tuple[str, ...]] = {
    "round_start": ("at",),
    "press": ("entrant", "at"),
    "void": ("press_id",),
    "correct": ("press_id", "at"),
    "count": ("entrant",),
    "start_offset": ("entrant", "offset_ms"),
    "swap": ("entrant", "at", "packed", "opened"),
    "dns": ("entrant",),
    "dq": ("entrant", "reason"),
    "reinstate": ("entrant",),
    "replace": ("absent", "entrant"),
    "check_in": ("entrant",),
    "identify": ("board",),
    "reset_board": ("board",),
    "resolve": ("conflict",),
    "hall_check": ("phase",),
    "settings": ("board", "set"),
    "firmware": ("board", "fw", "pkg", "sha"),
    "draw": ("seed", "size", "teams"),
    "seat": ("by", "seated"),
    "advance": ("phase", "hash", "entrants"),
}


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _field_problem(action: str, k: str, v: Any) -> str | None:
    kind, lo, hi = _SHAPES[k]
    if kind == "int":
        if not _is_int(v):
            return f"{action}: {k} must be a whole number, not {v!r}"
        if not lo <= v <= hi:
            return f"{action}: {k} = {v} is outside {lo}..{hi}"
    elif kind == "text":
        if not isinstance(v, str):
            return f"{action}: {k} must be text, not {v!r}"
        if not lo <= len(v.strip()) <= hi:
            return (f"{action}: {k} is needed" if not v.strip()
                    else f"{action}: {k} is longer than {hi} characters")
    elif kind == "teams":
        return _teams_problem(action, k, v, lo, hi)
    elif kind == "texts":
        if not isinstance(v, list) or not lo <= len(v) <= hi or not all(
                isinstance(x, str) and 1 <= len(x) <= MAX_TEXT for x in v):
            return f"{action}: {k} must be a list of {lo}..{hi} texts of 1..{MAX_TEXT} characters"
    elif kind == "object":
        if not isinstance(v, dict) or not lo <= len(v) <= hi or not all(isinstance(x, str) for x in v):
            return f"{action}: {k} must be an object of {lo}..{hi} named values, not {v!r}"
    else:
        if not isinstance(v, list) or len(v) > MAX_WARNINGS or not all(_is_int(w) for w in v):
            return (f"{action}: {k} must be a list of at most {MAX_WARNINGS} whole numbers "
                    f"(ms before the end), not {v!r}")
        bad = [w for w in v if not lo <= w <= hi]
        if bad:
            return f"{action}: {k} {bad[0]} is outside {lo}..{hi}"
    return None


def _teams_problem(action: str, k: str, v: Any, lo: int, hi: int) -> str | None:
    """A draw's teams: lo..hi of {"id": text, "name": text, "members": [text, ...]}."""
    if not isinstance(v, list) or not lo <= len(v) <= hi:
        return f"{action}: {k} must be a list of {lo}..{hi} teams, not {str(v)[:80]}"
    for t in v:
        if not (isinstance(t, dict) and set(t) == {"id", "name", "members"}
                and all(isinstance(t[f], str) and 0 < len(t[f]) <= MAX_TEXT for f in ("id", "name"))
                and isinstance(t["members"], list) and 1 <= len(t["members"]) <= MAX_MEMBERS
                and all(isinstance(m, str) and 0 < len(m) <= MAX_TEXT for m in t["members"])):
            return (f"{action}: each of {k} must be {{\"id\": text, \"name\": text, \"members\": [1..{MAX_MEMBERS} "
                    f"names]}}, not {str(t)[:80]}")
    return None


def shape_problem(action: Any, payload: Any) -> str | None:
    """What is wrong with an action's fields whatever the event (None: the
    shape is right).  META may be in the payload (a stored row's)."""
    if not isinstance(action, str) or action not in FIELDS:
        return f"unknown action {action!r}; known: {', '.join(FIELDS)}"
    if not isinstance(payload, dict):
        return f"{action}: the fields must be an object, not {type(payload).__name__}"
    fields = set(FIELDS[action])
    unknown = sorted(str(k) for k in payload if k not in fields and k not in META)
    if unknown:
        return f"{action}: unknown field(s) {', '.join(unknown)}; it takes {', '.join(FIELDS[action])}"
    for k in ("who", "why"):
        v = payload.get(k)
        if v is not None and (not isinstance(v, str) or len(v) > MAX_TEXT):
            return f"{action}: {k} must be text of at most {MAX_TEXT} characters"
    r = payload.get("request")
    if r is not None and (not isinstance(r, str) or not 1 <= len(r) <= MAX_REQUEST):
        return f"{action}: request must be an idempotency key of 1..{MAX_REQUEST} characters"
    seen = payload.get("seen")
    if seen is not None and (not _is_int(seen) or not 0 <= seen <= MAX_MS):
        return f"{action}: seen must be a log row id (a whole number, 0 for none), not {seen!r}"
    for k in _REQUIRED.get(action, ()):
        if payload.get(k) is None:
            return f"{action}: {'at (hub time, ms)' if k == 'at' else k} is needed"
    for k in FIELDS[action]:
        v = payload.get(k)
        if v is not None:
            problem = _field_problem(action, k, v)
            if problem:
                return problem
    if action == "confirm" and payload.get("press_id") is None and payload.get("entrant") is None:
        return "confirm: press_id (or entrant and puzzle) is needed"
    if action == "agree" and payload.get("press_id") is None and payload.get("entrant") is None:
        return "agree: press_id (a confirmed finish) or entrant and puzzle (a recorded count) is needed"
    if action == "count" and (payload.get("placed") is None) == (payload.get("remaining") is None):
        return "count: give either placed or remaining"
    if action == "replace" and payload["absent"] == payload["entrant"]:
        return "replace: absent and entrant are the same entrant (entrant: who takes the station)"
    if action == "hall_check" and (payload["phase"] not in HALL_CHECK_PHASES
                                   or (payload["phase"] == "verdict") != (payload.get("ready") is not None)):
        return (f"hall_check: phase is {' or '.join(HALL_CHECK_PHASES)} (a verdict with ready 0 or 1, "
                f"a beginning without), not {payload['phase']!r}")
    if action == "seat" and payload["by"] not in SEAT_ORDERS:
        return f"seat: by is one of {', '.join(SEAT_ORDERS)}, not {payload['by']!r}"
    if action == "advance" and (payload["phase"] not in ADVANCE_PHASES or (payload["phase"] == "withdraw")
                                != (payload.get("withdrawn") is not None)):
        return (f"advance: phase is {' or '.join(ADVANCE_PHASES)} (a withdrawal names who withdrew), "
                f"not {payload['phase']!r}")
    if action == "swap" and payload["packed"] == payload["opened"]:
        return "swap: packed and opened must be two different puzzles"
    if action == "round_start" and payload.get("duration") is not None:
        over = [w for w in payload.get("warnings") or () if w >= payload["duration"]]
        if over:
            return f"round_start: a warning {over[0]} ms before the end is not within the limit"
    return None
