"""`tabletimer act` and `replay`: operator actions into an event's log, the standings
rebuilt from it; `tabletimer log check` and `log recover`: a damaged log checked, and what of
it reads recovered into a new one (docs/operations.md, "A damaged event log")."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ..core.service import HubService, with_defaults
from ..event.log.log_health import DamagedLog, LogWriteFailed, STORE_ERRORS, write_failure_advice
from ..event.folder import event_folder
from ..event.log.store import EventStore
from ..rules.formats import fmt_duration
from .options import LOG_FAILED
from .common import open_event, print_final, service_for


def _value(text: str):
    """A field's value as JSON, else as the text it is (what the action's
    checks then refuse or take: a list nested a thousand deep is text)."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return text


def cmd_act(args) -> int:
    """Append an operator action to an event's log; a running hub applies it
    within a quarter of a second."""
    opened = open_event(args.dir, getattr(args, "round", None))
    if opened is None:
        return 2
    ev, keys = opened
    try:
        store = EventStore(ev.db)
        try:
            svc = service_for(ev, keys, store)
            from ..console.follower import StandbyLog
            if isinstance(svc.store, StandbyLog):     # a standby's copy (service_for's): said before anything else
                svc.store.refuse()
            for line in svc.clock.chosen.warnings if svc.clock.chosen else ():
                print(f"warning: {line}", file=sys.stderr)     # its times are the log's, said why
            hint = event_folder.rehearsal_hint(ev.path, "act")
            if hint:          # the event's own log, not the rehearsal's: said before anything is recorded
                print(f"note: this records into the event's own log{hint}", file=sys.stderr)
            payload = _act_payload(args.action, args.fields, svc)
            if getattr(args, "objection", None) is not None:
                payload["objection"] = args.objection
            if payload.get("objection") is not None and args.who == "operator":
                raise ValueError(f"{args.action}: an objection is the head referee's decision: give --who "
                                 "\"HEAD REFEREE'S NAME\"; nothing recorded")
            svc.check_action(args.action, payload, who=args.who, why=args.why)
            print(f"about to record: {args.action} {_described(payload, svc)} (who: {args.who}"
                  + (f", why: {args.why}" if args.why else "") + ")")
            doubt = _start_doubt(args.action, args.fields, payload, svc)
            if doubt is not None:
                print(f"warning: {doubt}", file=sys.stderr)
                if not args.force and not _ask("record it anyway? [y/N] "):
                    print(f"error: not recorded; add --force to record it as read, or give the start "
                          f"exactly as hub ms (at={payload['at']})", file=sys.stderr)
                    return 2
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
            unseen = svc.split.unseen_warning()      # the standby lost: a split brain may be under way
        finally:
            store.close()
    except (ValueError, TypeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except LogWriteFailed as e:
        print(f"error: {e}. Nothing was recorded: fix this and run the command again.", file=sys.stderr)
        return LOG_FAILED
    except DamagedLog as e:
        print(f"error: {e}. Nothing was recorded.", file=sys.stderr)
        return LOG_FAILED
    except STORE_ERRORS as e:       # opening or reading the log
        print(f"error: {write_failure_advice(ev.db, e, 'open')}. Nothing was recorded.", file=sys.stderr)
        return LOG_FAILED
    print(f"recorded #{row['id']}: {args.action} {json.dumps(row['payload'])}")
    for c in changes:             # what the desk has just changed, said after it too
        print(f"  this {c}")
    if unseen:
        print(f"warning: {unseen}", file=sys.stderr)
    return 0


def _start_doubt(action: str, fields: list[str], payload: dict, svc: HubService) -> str | None:
    """Why a round start typed as a clock time is asked about first (one far
    in the past, or read as far ahead: timetext.start_clock_doubt)."""
    from ..rules.timetext import start_clock_doubt
    typed = [v for k, _, v in (f.partition("=") for f in fields) if k == "at"]
    if action != "round_start" or not typed or ":" not in typed[-1]:
        return None
    return start_clock_doubt(typed[-1], payload["at"], svc.clock.now_ms())


def _act_payload(action: str, fields: list[str], svc: HubService) -> dict:
    """key=value words as an action's fields: text for names, ids, members
    and eligibility;
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
        if k in ("entrant", "press_id", "reason", "board", "absent", "name", "members", "eligible", "objection"):
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
    """`replay --json`: the standings ranked as after time-up (every entrant
    still unfinished by its count: what a check compares with a ranking
    from scratch), "in_progress" and "left_ms" (until the last time-up, or
    null) saying whether they are final yet, and every station's state and
    the relay as they are now (hub ms)."""
    from ..rules.relay import relay_view
    from ..rules.standings import row_dict
    comp = service.competition
    now = service.clock.now_ms()
    left = comp.time_left_ms(now)
    return {"now": now, "in_progress": left is not None, "left_ms": left,
            "standings": [row_dict(r) for r in service.standings(final=True)],
            "stations": [s.as_dict() for s in service.station_states(now)],
            "relay": relay_view(comp.format, comp.entrants, comp.facts(), now, comp.round_end_ms())
            if comp.format.relay is not None and comp.start_ms is not None else []}


def cmd_replay(args) -> int:
    """The standings rebuilt offline from an event's log."""
    opened = open_event(args.dir, getattr(args, "round", None))
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


# ------------------------------------------------------------ a damaged log

def _log_at(where: str, round: str | None = None) -> Path | None:
    """The event log of a folder (its round's events.sqlite: rounds.py), or
    the log file itself; None after saying there is none."""
    from ..event.folder import rounds

    p = Path(where)
    if p.is_file():
        log = p
    else:
        try:
            log = rounds.resolve(p, round)[1] / "events.sqlite"
        except rounds.RoundError as e:
            if round is not None or rounds.names(p):
                print(f"error: {e}", file=sys.stderr)
                return None
            log = p / "events.sqlite"
    if not log.is_file():
        print(f"error: no event log at {log}", file=sys.stderr)
        return None
    return log


def _ids(ids: list[int]) -> str:
    """Ids as ranges: #1-#60, #91-#303."""
    runs: list[list[int]] = []
    for i in sorted(ids):
        if runs and runs[-1][1] == i - 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    return ", ".join(f"#{a}" if a == b else f"#{a}-#{b}" for a, b in runs) or "none"


def _what_it_was(seen: dict) -> str:
    from ..rules.timetext import fmt_clock

    said = " ".join(str(seen[k]) for k in ("source", "type", "board") if k in seen)
    if "received_ms" in seen:
        try:
            said += f", stored at {fmt_clock(seen['received_ms'])}"
        except (OverflowError, OSError, ValueError):
            pass
    return f" ({said.strip(', ')})" if said else ""


def _lost_lines(lost) -> list[str]:
    """The rows lost, those in a run with the same damage as one line."""
    lines: list[tuple[list[int], str, dict]] = []
    blanks: dict[tuple[int, str], int] = {}
    for d in lost:
        if d.id is None:
            blanks[(d.after, d.what)] = blanks.get((d.after, d.what), 0) + 1
        elif lines and lines[-1][1] == d.what and lines[-1][0][-1] == d.id - 1 and not d.seen:
            lines[-1][0].append(d.id)
        else:
            lines.append(([d.id], d.what, d.seen))
    out = [f"  row{'s' if len(ids) > 1 else ''} {_ids(ids)}{f' ({len(ids)})' if len(ids) > 1 else ''}"
           f"{_what_it_was(seen)}: {what}" for ids, what, seen in lines]
    out += [f"  {n} row{'s' if n > 1 else ''} after #{after}: {what}" for (after, what), n in blanks.items()]
    return out


def _flagged(log: Path, rows: list[dict]) -> list[str] | None:
    """The readable rows the fold cannot use (kept, flagged and alerted
    at the desk): folded as the hub folds them, when log is an event
    folder's; None: no event folder to fold them with."""
    from ..event.folder import event_folder
    from ..event.fold.competition import Competition
    from ..rules.formats import FormatError

    if not (log.parent / "format.toml").is_file():
        return None
    hall, round = log.parent, None
    if log.parent.parent.name == "rounds":        # DIR/rounds/NAME/events.sqlite
        hall, round = log.parent.parent.parent, log.parent.name
    try:
        ev = event_folder.load(hall, round)
    except (event_folder.EventFolderError, FormatError):
        return None
    comp = Competition(ev.format, ev.entrants, ev.stations)
    for row in rows:
        comp.apply(row)
    return [f"  row #{rid}: {why}" for rid, why in sorted(comp.flagged.items())]


def _say_health(log: Path, health) -> None:
    from ..event.log import log_rows

    files = ", ".join(f"{p.name} {size:,} bytes" for p, size in health.files)
    print(f"event log {log} ({files}; schema version {health.version if health.version is not None else '?'}, "
          f"event id {health.event_id() if health.event_id() is not None else 'unreadable'})")
    rows = health.scan.rows
    print(f"rows read whole: {len(rows)} ({_ids(list(rows))}); the highest id given: #{health.scan.highest}")
    lost = health.lost()
    if lost:
        print(f"DAMAGED: {len(lost)} row{'s' if len(lost) != 1 else ''} cannot be read:")
        for line in _lost_lines(lost):
            print(line)
    print("SQLite's own check (PRAGMA integrity_check): " + (
        "ok" if not health.problems else f"{len(health.problems)}{' or more' if len(health.problems) >= 50 else ''}"
        " problem(s): " + "; ".join(health.problems[:3])
        + ("; ..." if len(health.problems) > 3 else "")))
    if health.meta is None:
        print("the event id (table meta) cannot be read")
    if health.counters is None:
        print("the hub's command counters (table counters) cannot be read")
    flagged = _flagged(log, [log_rows.decoded(rows[i]) for i in sorted(rows)])
    if flagged:
        print(f"rows the fold cannot use: {len(flagged)} (not damage: they stay in the log, flagged and alerted "
              "at the desk, and the event goes on):")
        for line in flagged[:20]:
            print(line)
        if len(flagged) > 20:
            print(f"  ... and {len(flagged) - 20} more")


def cmd_log_check(args) -> int:
    """An event log read row by row, without writing it: what reads, what
    is damaged.  0: sound; LOG_FAILED: damaged."""
    from ..event.log import log_repair

    log = _log_at(args.dir, getattr(args, "round", None))
    if log is None:
        return 2
    health = log_repair.check(log)
    _say_health(log, health)
    if health.sound:
        print("the log is sound")
        return 0
    print(f"the log is damaged. Stop the hub if it runs on it, then `tabletimer log recover {log.parent}`: it "
          f"copies the {len(health.scan.rows)} readable rows into a new log, under their own ids, and keeps "
          "the damaged file beside it")
    return LOG_FAILED


def cmd_log_recover(args) -> int:
    """Every readable row of a damaged log into a new log in its place,
    the damaged file kept beside it; what was lost said.  Under the hub's
    lock: not while a hub runs on it."""
    from ..event.log import log_repair
    from .common import hub_lock

    log = _log_at(args.dir, getattr(args, "round", None))
    if log is None:
        return 2
    lock = hub_lock(log)
    if lock is None:
        print(f"Nothing was changed: stop the hub, then `tabletimer log recover {log.parent}` again.",
              file=sys.stderr)
        return 2
    try:
        health = log_repair.check(log)
        if health.sound:
            _say_health(log, health)
            print("the log is sound: nothing to recover, nothing was changed")
            return 0
        try:
            done = log_repair.recover(log)
        except log_repair.NothingReadable as e:
            print(f"error: {e}", file=sys.stderr)
            return LOG_FAILED
    finally:
        lock.release()
    health = done.health
    _say_health(log, health)
    kept = done.damaged_files
    print(f"the damaged log is kept as it was: {kept[0]}" + (f" (with {kept[1].name})" if len(kept) > 1 else ""))
    print(f"{log} is a new log with the {len(done.kept)} readable rows ({_ids(done.kept)}), each under its "
          f"own id; " + ("a NEW event id (the old one did not read): the boards take the next schedules as a "
                         "new event's" if done.new_event_id else "the same event id")
          + ("; the hub's command counters kept" if health.counters else "" if health.counters is not None else
             "; the hub's command counters did not read: the hub numbers its next commands from its clock"))
    print(f"the next row is #{health.scan.highest + 1}: no lost row's id is given to another")
    lost = health.lost()
    if lost:
        print(f"LOST: {len(lost)} row{'s' if len(lost) != 1 else ''} (listed above) "
              f"{'are' if len(lost) != 1 else 'is'} not in the new log: "
              f"check what {'they' if len(lost) != 1 else 'it'} held against the desk's and the tables' notes and record it again with "
              f"`tabletimer act {log.parent} ...`")
    print(f"next: `tabletimer log check {log.parent}`, then `tabletimer run {log.parent}`")
    return 0
