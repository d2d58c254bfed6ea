"""A standby's copy of the primary hub's log (`tabletimer standby`): the
rules a row of the primary's must meet before the standby stores it, row
for row, as the primary has it.  Pure: no I/O (store.copy_rows writes).

The copy is the primary's log, not a log of its own: the same ids, times,
sources and payloads, the same event id (boards tell one event's schedule
from another's by it).  So a row is taken only when it follows on from the
copy (its id above the copy's last), has the shape every stored row has,
and the copy is of the same event; else nothing is stored and the standby
says why (a folder copied from another event, a log that was written here,
a primary whose log was replaced).

What a standby and a takeover (`tabletimer takeover`) read of a log is
here too: its last desk action, its hub's term; and the desk actions two
hubs at once (a split: core/split_brain.py) exchange, in one line each."""

from __future__ import annotations

import json
from typing import Any, Callable

from ...rules.timetext import fmt_clock
from .rows import SOURCES, RowKind, kind_of
FOLDER_FILES = ("format.toml", "entrants.csv", "stations.csv")


def row_problem(row: Any) -> str | None:
    """What is wrong with a row's shape as the primary's /rows gives it
    (None: it is a stored row)."""
    if not isinstance(row, dict):
        return "a row must be an object"
    for k in ("id", "received_ms"):
        if type(row.get(k)) is not int or row[k] < (1 if k == "id" else 0):
            return f"row {row.get('id')!r}: {k} must be a whole number"
    if kind_of(row) is RowKind.UNREADABLE:
        return f"row {row['id']}: source {row.get('source')!r} is none of {', '.join(SOURCES)}"
    if not isinstance(row.get("type"), str) or not row["type"]:
        return f"row {row['id']}: type must be text"
    if row.get("board") is not None and not isinstance(row["board"], str):
        return f"row {row['id']}: board must be text or null"
    if not isinstance(row.get("payload"), dict):
        return f"row {row['id']}: payload must be an object"
    return None


def continuation_problem(last: int, event_id: int | None, primary_event_id: Any, rows: list) -> str | None:
    """Why rows cannot be stored after a copy whose last row is `last`
    (0: empty) and whose event id is event_id (None: ok)."""
    if type(primary_event_id) is not int or primary_event_id < 1:
        return f"the primary gave no event id ({primary_event_id!r}): is it a TableTimer hub of this version?"
    if last and event_id != primary_event_id:
        return (f"this log holds rows of another event (event id {event_id}, the primary's is "
                f"{primary_event_id}): a standby starts from an empty log or its own earlier copy; "
                "move this events.sqlite away and start the standby again")
    before = last
    for r in rows:
        problem = row_problem(r)
        if problem:
            return problem
        if r["id"] <= before:
            return (f"the primary's row #{r['id']} does not follow on from row #{before} of this copy: "
                    "this log was written by another hub (or the primary's log was replaced); move this "
                    "events.sqlite away and start the standby again")
        before = r["id"]
    return None


def stored_columns(row: dict) -> tuple:
    """The columns of the events table for a row as the primary stored it:
    a journaled board event has its identity (install, boot, seq) in columns."""
    p = row["payload"]
    journaled = kind_of(row).from_board and "seq" in p and "boot" in p
    return (row["id"], row["received_ms"], row["source"], row["type"], row["board"],
            (p.get("in") or "") if journaled else "", p["boot"] if journaled else None,
            p["seq"] if journaled else None, json.dumps(p))


def differing_files(here: dict[str, str], primary: dict[str, str]) -> list[str]:
    """The definition files (format, entrants, stations) whose text is not
    the primary's: the standby's folder must be a copy of the event's."""
    return [n for n in FOLDER_FILES if n in primary and here.get(n) != primary[n]]


def takeover_term(payload: dict) -> int:
    """The hub term a `hub` row `takeover` records (its payload): its
    "term"; one recorded before takeovers had terms (no "term"), or with
    one that is not a whole number, counts as the first takeover: 2."""
    term = payload.get("term", 2)
    return term if type(term) is int else 2


def log_term(rows: list[dict], proven: Callable[[int, Any], bool] | None = None) -> int:
    """The term of the hub on a log: 1, or the highest term a takeover in
    it records (hub_state's term once the rows are applied); a takeover
    on the log is one more.  proven(term, proof): whether a term has a
    hub's proof (hub_secret.py); given, only proven terms count, and the
    terms boards reported in their births too (a hub fenced by one carries
    on above it: docs/operations.md, "A fence that was wrong")."""
    if proven is None:
        return max([1] + [takeover_term(r["payload"]) for r in rows if kind_of(r) is RowKind.HUB_TAKEOVER])
    terms = [1]
    for r in rows:
        p, kind = r["payload"], kind_of(r)
        if kind is RowKind.HUB_TAKEOVER:
            term = takeover_term(p)
        elif kind is RowKind.BOARD_STATUS and type(p.get("term")) is int:
            term = p["term"]
        else:
            continue
        if proven(term, p.get("hash")):
            terms.append(term)
    return max(terms)


def last_desk_action(rows: list[dict]) -> dict | None:
    """The last operator action of rows (None: none): on a standby's copy,
    what the desk did after it on the primary is not here."""
    return next((r for r in reversed(rows) if kind_of(r).from_operator), None)


def desk_action_text(row: dict) -> str:
    """A desk action (an operator row) in one line, for a list of them:
    "#412 confirm press_id=T07/1/3 missing_found=2 by Anna at 10:42:03"."""
    p = row["payload"]
    fields = " ".join(f"{k}={json.dumps(v, ensure_ascii=False) if not isinstance(v, str) else v}"
                      for k, v in p.items() if k not in ("who", "why", "request", "seen") and v is not None)
    try:
        at = fmt_clock(row["received_ms"])
    except (ValueError, OverflowError, OSError, TypeError):
        at = str(row.get("received_ms"))
    return f"#{row['id']} {row['type']}" + (f" {fields}" if fields else "") + f" by {p.get('who', 'operator')} at {at}"


def split_action_problem(row: object, after: int) -> str | None:
    """Why a row an old primary gave as one of its desk actions after the
    takeover's copy (its row `after`) is not one (None: it is)."""
    problem = row_problem(row)
    if problem:
        return problem
    assert isinstance(row, dict)
    if not kind_of(row).from_operator:
        return f"row {row['id']}: not a desk action (source {row['source']})"
    if row["id"] <= after:
        return f"row {row['id']}: not after row #{after}, where the takeover's copy ends"
    return None
