"""`tabletimer act` and `replay`: operator actions into an event's log, the standings
rebuilt from it."""

from __future__ import annotations

import json
import sys

from ..boards.service import HubService, with_defaults
from ..event.log_health import LogWriteFailed, STORE_ERRORS, write_failure_advice
from ..event.store import EventStore
from ..rules.formats import fmt_duration
from .common import LOG_FAILED, open_event, print_final, service_for


def _value(text: str):
    try:
        return json.loads(text)
    except ValueError:
        return text


def cmd_act(args) -> int:
    """Append an operator action to an event's log; a running hub applies it
    within a quarter of a second."""
    opened = open_event(args.dir)
    if opened is None:
        return 2
    ev, keys = opened
    try:
        store = EventStore(ev.db)
        try:
            svc = service_for(ev, keys, store)
            payload = _act_payload(args.action, args.fields, svc)
            svc.check_action(args.action, payload, who=args.who, why=args.why)
            print(f"about to record: {args.action} {_described(payload, svc)} (who: {args.who}"
                  + (f", why: {args.why}" if args.why else "") + ")")
            changes = svc.consequences(args.action, payload)
            seen = svc.latest_decision_row(args.action, payload)    # the decision this command looked at
            if seen is not None:
                payload["seen"] = seen
            for c in changes:       # named with who recorded what it replaces, --force or not
                print(f"warning: this {c}", file=sys.stderr)
            if changes and not args.force and not _ask("record it anyway? [y/N] "):
                print("error: not recorded; add --force to record it (it changes what is recorded)",
                      file=sys.stderr)
                return 2
            svc.catch_up()          # what the hub recorded meanwhile: a decision since is a conflict
            row = svc.act(args.action, payload, who=args.who, why=args.why)
        finally:
            store.close()
    except (ValueError, TypeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except LogWriteFailed as e:
        print(f"error: {e}. Nothing was recorded: fix this and run the command again.", file=sys.stderr)
        return LOG_FAILED
    except STORE_ERRORS as e:       # opening or reading the log
        print(f"error: {write_failure_advice(ev.db, e, 'open')}. Nothing was recorded.", file=sys.stderr)
        return LOG_FAILED
    print(f"recorded #{row['id']}: {args.action} {json.dumps(row['payload'])}")
    for c in changes:             # what the desk has just changed, said after it too
        print(f"  this {c}")
    return 0


def _act_payload(action: str, fields: list[str], svc: HubService) -> dict:
    """key=value words as an action's fields: text for names and ids;
    times as an operator types them (round_start at=HH:MM[:SS] local clock
    time or hub ms; other at= as h:mm:ss[.fff] since the round start or hub
    ms; durations, offsets and warnings as h:mm:ss or ms); else JSON."""
    from ..rules.timetext import parse_clock_time, parse_duration_ms, parse_hub_time
    now = svc.clock.now_ms()
    payload: dict = {}
    for kv in fields:
        k, sep, v = kv.partition("=")
        if not sep:
            raise ValueError(f"expected key=value, not {kv!r}")
        if k in ("entrant", "press_id", "reason", "board"):
            payload[k] = v
        elif k == "at" and ":" in v:
            payload[k] = (parse_clock_time(v, now) if action == "round_start"
                          else parse_hub_time(v, svc.competition.start_ms, f"{action}: at"))
        elif k in ("duration", "offset_ms") and ":" in v:
            payload[k] = parse_duration_ms(v, f"{action}: {k}")
        elif k == "warnings" and ":" in v:
            payload[k] = [parse_duration_ms(w, f"{action}: warnings") for w in v.replace(",", " ").split()]
        else:
            payload[k] = _value(v)
    if action == "round_start":
        payload.setdefault("at", now)
        # no warnings named: the format's (10 min and 1 min left, those within the limit), as on
        # every path (service.with_defaults); shown before it is recorded
        payload = with_defaults(svc.competition.format, action, payload)
    return payload


def _described(payload: dict, svc: HubService) -> str:
    """The fields as the operator reads them: times also as a clock time
    and as time since the round start."""
    from ..rules.timetext import fmt_clock
    start = svc.competition.start_ms
    shown = []
    for k, v in payload.items():
        if k == "at" and isinstance(v, int):
            since = f", {fmt_duration(v - start)} since the start" if start is not None and v >= start else ""
            shown.append(f"at={v} ({fmt_clock(v)}{since})")
        else:
            shown.append(f"{k}={json.dumps(v, ensure_ascii=False)}")
    return " ".join(shown)


def _ask(question: str) -> bool:
    """A yes from the operator at a terminal; no terminal (a script): no."""
    if not sys.stdin.isatty():
        return False
    try:
        return input(question).strip().lower() in ("y", "yes")
    except EOFError:
        return False


def replay_document(service: HubService) -> dict:
    """`replay --json`: the final standings, and every station's state and
    the relay as they are now (hub ms)."""
    from ..rules.relay import relay_view
    from ..rules.standings import row_dict
    comp = service.competition
    now = service.clock.now_ms()
    return {"now": now, "standings": [row_dict(r) for r in service.standings(final=True)],
            "stations": [s.as_dict() for s in service.station_states(now)],
            "relay": relay_view(comp.format, comp.entrants, comp.facts(), now, comp.round_end_ms())
            if comp.format.relay is not None and comp.start_ms is not None else []}


def cmd_replay(args) -> int:
    """The standings rebuilt offline from an event's log."""
    opened = open_event(args.dir)
    if opened is None:
        return 2
    ev, keys = opened
    store = EventStore(ev.db)
    try:
        service = service_for(ev, keys, store)
        if args.json:
            print(json.dumps(replay_document(service), indent=2))
        else:
            print_final(service)
    finally:
        store.close()
    return 0
