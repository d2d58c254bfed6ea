"""Check-in at the door from the command line: `tabletimer check-in-list DIR
--html FILE` (the door's printable list, a QR code per entrant that opens the
check-in page on it: hub/outputs/check_in_list.py), and
`tabletimer absent DIR [--round R] [--dns-all] [--give ABSENT=ENTRANT ...]`:
the entrants at a station who are not checked in (hub/event/fold/check_in.py),
listed, and after the format's window decided in one step: each made DNS, or
its station given to another participant (hub/event/actions/absentees.py
plans and checks every row first; refused means nothing written).  A running
hub applies the rows within a quarter of a second, as `act`'s."""

from __future__ import annotations

import sys

from ..event.actions.absentees import absent_entrants, plan, window_end
from ..event.log.log_health import LogWriteFailed, STORE_ERRORS, write_failure_advice
from ..event.log.store import EventStore
from ..rules.durations import fmt_duration
from ..rules.timetext import fmt_clock
from .common import open_event, service_for
from .options import LOG_FAILED, ROUND_HELP


def add_parser(sub) -> None:
    c = sub.add_parser("check-in-list", help="the door's printable check-in list: every entrant by name, "
                                             "its table, a QR code that opens the check-in page on it")
    c.add_argument("dir", help="the event folder")
    c.add_argument("--html", metavar="FILE", required=True, help="the list to write ('-': stdout)")
    c.add_argument("--public-url", metavar="URL", help="the hub's address as phones reach it (saved; "
                                                        "default: the saved one)")
    c.add_argument("--round", help=ROUND_HELP)
    c.set_defaults(func=cmd_check_in_list)
    a = sub.add_parser("absent", help="the entrants not checked in: list them, then (after the format's "
                                      "window) make them DNS or give their stations to others in one step")
    a.add_argument("dir", help="the event folder")
    a.add_argument("--round", help=ROUND_HELP)
    a.add_argument("--dns-all", action="store_true", help="every absent entrant (but those --give names) is DNS")
    a.add_argument("--give", action="append", default=[], metavar="ABSENT=ENTRANT",
                   help="the absent entrant's station goes to a listed participant (entrants.csv id); repeat it")
    a.add_argument("--who", default="operator", help="who decides (recorded)")
    a.add_argument("--why", default="", help="the reason (recorded; default: not checked in by the window's end)")
    a.add_argument("--force", action="store_true", help="decide before the format's window is up")
    a.set_defaults(func=cmd_absent)


def cmd_check_in_list(args) -> int:
    from ..outputs.check_in_list import check_in_list_html
    from ..web import public_url as hub_url
    from .outputs import sheet_language, write_output

    opened = open_event(args.dir, args.round)
    if opened is None:
        return 2
    ev = opened[0]
    try:
        url, saved = hub_url.resolve(ev.path, args.public_url)
        if saved:
            print(f"saved the public URL {url} in {hub_url.path(ev.path)}", file=sys.stderr)
        write_output(args.html, check_in_list_html(ev.path.resolve().name, ev.entrants, ev.stations, url,
                                                       lang=sheet_language(ev.path)))
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"error: {e.filename or ''}: {e.strerror or e}", file=sys.stderr)
        return 2
    if args.html != "-":
        print(f"wrote the check-in list of {len(ev.entrants)} entrant(s) to {args.html}"
              + (f", QR codes opening {url}/checkin?entrant=..." if url else ""), file=sys.stderr)
    if not url:
        print(f"note: the list has no QR codes: {hub_url.NO_URL_ADVICE}", file=sys.stderr)
    return 0


def _gives(words: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for w in words:
        a, sep, e = w.partition("=")
        if not sep or not a.strip() or not e.strip():
            raise ValueError(f"absent: --give takes ABSENT=ENTRANT (entrant ids), not {w!r}")
        if a.strip() in out:
            raise ValueError(f"absent: --give names {a.strip()} twice")
        out[a.strip()] = e.strip()
    return out


def cmd_absent(args) -> int:
    opened = open_event(args.dir, args.round)
    if opened is None:
        return 2
    ev, keys = opened
    try:
        store = EventStore(ev.db)
        try:
            svc = service_for(ev, keys, store)
            comp, now = svc.competition, svc.clock.now_ms()
            summary = comp.check_in_summary()
            missing = absent_entrants(comp)
            print(f"{summary.text()}; not checked in: {len(missing)}")
            for a in missing:
                print(f"  {a.entrant}  {a.name}  ({a.table})")
            end = window_end(comp)
            if end is not None and comp.format.no_show_after_ms is not None:
                print(f"their time to arrive {'was' if now >= end else 'is'} up at {fmt_clock(end)} "
                      f"({fmt_duration(comp.format.no_show_after_ms)} after the start)")
            if not args.dns_all and not args.give:
                return 0
            rows = plan(comp, now, args.dns_all, _gives(args.give), args.force)
            why = args.why or "absent: not checked in" + (
                f" within {fmt_duration(comp.format.no_show_after_ms)} of the start"
                if comp.format.no_show_after_ms is not None else "")
            done = [svc.act(action, p, who=args.who, why=why) for action, p in rows]
        finally:
            store.close()
    except (ValueError, TypeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except LogWriteFailed as e:
        print(f"error: {e}. Rows recorded before it stand; run the command again for the rest.", file=sys.stderr)
        return LOG_FAILED
    except STORE_ERRORS as e:
        print(f"error: {write_failure_advice(ev.db, e, 'open')}. Nothing was recorded.", file=sys.stderr)
        return LOG_FAILED
    for (action, p), row in zip(rows, done):
        what = f"{p['absent']}'s station goes to {p['entrant']}" if action == "replace" else f"{p['entrant']} is DNS"
        print(f"recorded #{row['id']}: {action}: {what}")
    return 0
