"""`tabletimer redo DIR`: the desk actions an old primary recorded while
another hub had taken over from its log (two hubs at once, a split brain),
which this hub got from it when it fenced it (a `split` row:
core/split_brain.py, console/old_primary.py), recorded here in one step.
Each goes through the usual checks, as `act` records it, with who did it
and why ("redone from the old primary's row #N"), and an idempotency key
per action (run again, nothing is recorded twice).  A decision on a call or
count that was decided here since the split is refused as a conflict (the
desk resolves it: a CONFLICT line), never a silent replacement: the `seen`
the old desk sent is kept when it names a row both logs share (at or
before the takeover's copy), and is 0 ("nothing decided") otherwise.

`--from OLD`: the old primary's actions read from a copy of its log (its
event folder or events.sqlite, brought over on a USB stick), for an old
primary that stopped before this hub could ask it (a board told it of this
hub first): its desk actions after the row this hub's takeover copied up
to, kept as a split row, then redone as above."""

from __future__ import annotations

import sys
from pathlib import Path

from ..core.service import StaleDecision
from ..event.log.action_rows import META
from ..event.log.log_health import DamagedLog, LogWriteFailed, STORE_ERRORS, write_failure_advice
from ..event.log.replica import desk_action_text, log_term, split_action_problem
from ..event.log.rows import kind_of
from ..event.log.store import EventStore
from .common import open_event, service_for
from .options import LOG_FAILED


def redo_payload(action: dict, after: int) -> dict:
    """The fields of an old primary's desk action as this log records it
    again: its `seen` kept if both logs share that row, else 0."""
    payload = {k: v for k, v in action["payload"].items() if k not in META}
    seen = action["payload"].get("seen")
    if type(seen) is int:
        payload["seen"] = seen if seen <= after else 0
    return payload


def cmd_redo(args) -> int:
    opened = open_event(args.dir, getattr(args, "round", None))
    if opened is None:
        return 2
    ev, keys = opened
    if not ev.db.exists():
        print(f"error: {ev.db} does not exist: nothing to redo", file=sys.stderr)
        return 2
    try:
        store = EventStore(ev.db)
        try:
            svc = service_for(ev, keys, store)
            from ..console.follower import StandbyLog
            if isinstance(svc.store, StandbyLog):     # a standby's copy: it records nothing
                svc.store.refuse()
            if args.source is not None:
                _from_log(svc, Path(args.source))
            return _redo(svc)
        finally:
            store.close()
    except LogWriteFailed as e:
        print(f"error: {e}. Run the command again once the log can be written: what was redone is not "
              "redone twice.", file=sys.stderr)
        return LOG_FAILED
    except DamagedLog as e:
        print(f"error: {e}. Nothing was recorded.", file=sys.stderr)
        return LOG_FAILED
    except STORE_ERRORS as e:
        print(f"error: {write_failure_advice(ev.db, e, 'open')}. Nothing was recorded.", file=sys.stderr)
        return LOG_FAILED
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


def _from_log(svc, path: Path) -> None:
    """The old primary's desk actions after this hub's takeover, read from a
    copy of its log, kept as a split row (ValueError: not that log)."""
    takeover = svc.split.takeover
    if takeover is None or type(takeover["payload"].get("copied_up_to")) is not int:
        raise ValueError("this log's hub took over from no primary (no takeover of its term): --from is for "
                         "the hub that took over")
    after = takeover["payload"]["copied_up_to"]
    log = path / "events.sqlite" if path.is_dir() else path
    if not log.is_file():
        raise ValueError(f"{log} does not exist: give the old primary's event folder or its events.sqlite")
    old = EventStore(log)
    try:
        event_id, rows = old.event_id, old.events()
    finally:
        old.close()
    if event_id != svc.store.event_id:
        raise ValueError(f"{log} is another event's log (event id {event_id}, this one's {svc.store.event_id})")
    mine = {r["id"]: r for r in svc.store.events() if r["id"] <= after}
    theirs = {r["id"]: r for r in rows if r["id"] <= after}
    if theirs != mine:
        raise ValueError(f"{log} is not the log this hub took over from: its rows up to #{after}, where the "
                         "takeover's copy ended, are not this log's")
    actions = [r for r in rows if r["id"] > after and kind_of(r).from_operator
               and split_action_problem(r, after) is None]
    svc.split.store_split(f"{log} (a copy of the old primary's log)", log_term(rows, svc.state.terms.proven), after, actions)
    svc.catch_up()


def _redo(svc) -> int:
    splits = sorted(svc.split.splits.values(), key=lambda r: r["id"])
    if not splits:
        print("nothing to redo: no old primary's desk actions wait in this log (a hub that took over gets them "
              "when it fences the old primary: its alert SPLIT says so)")
        return 0
    refused = 0
    for split in splits:
        p = split["payload"]
        after, actions = p["after"], [a for a in p["actions"] if isinstance(a, dict)]
        print(f"the old primary {p.get('primary')}'s {len(actions)} desk action(s) after row #{after} "
              f"(log row #{split['id']}):")
        results: dict[str, object] = {}
        for a in actions:
            who = a["payload"].get("who") or "operator"
            why = (f"redone from the old primary's row #{a['id']} (split, log row #{split['id']})"
                   + (f": {a['payload']['why']}" if a["payload"].get("why") else ""))
            text = desk_action_text(a)
            svc.catch_up()              # what the hub recorded meanwhile: a decision since is a conflict
            try:
                row = svc.act(a["type"], redo_payload(a, after), who=who, why=why,
                              request=f"redo {split['id']}/{a['id']}")
            except StaleDecision as e:
                refused += 1
                results[str(a["id"])] = f"conflict #{e.row['id']}"
                print(f"  {text}: CONFLICT, not recorded: {e}")
                continue
            except ValueError as e:
                refused += 1
                results[str(a["id"])] = f"refused: {e}"[:300]
                print(f"  {text}: refused by the checks, not recorded: {e}")
                continue
            results[str(a["id"])] = row["id"]
            print(f"  {text}: recorded as #{row['id']}" + (" (it was already)" if row.get("duplicate") else ""))
        svc.split.store_redone(split["id"], results)
    if refused:
        print(f"{refused} not recorded: each is a CONFLICT line (the desk decides) or was refused as said above",
              file=sys.stderr)
    return 0


def add_parser(sub, round_help: str) -> None:
    r = sub.add_parser("redo", help="record here, in one step, the desk actions an old primary recorded while "
                                    "this hub had taken over (its SPLIT alert)")
    r.add_argument("dir", help="the event folder of the hub that took over")
    r.add_argument("--from", dest="source", metavar="OLD",
                   help="read the old primary's desk actions from a copy of its log (its event folder or "
                        "events.sqlite): an old primary that stopped before this hub could ask it")
    r.add_argument("--round", help=round_help)
    r.set_defaults(func=cmd_redo)
