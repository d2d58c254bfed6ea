"""`tabletimer takeover DIR --primary URL`: the standby laptop carries on as
the hub, on its copy of the primary's log (`tabletimer standby`), once the
primary is dead.  Refused while the primary still answers (two hubs would
both ack the boards; --force when it is known not to reach them); it names
the last desk action the copy holds (what the desk did after it on the
primary is not here: redo it), records the takeover in the log, and runs the
hub as `tabletimer run` does.  Boards flashed with both addresses come to it
after their failover time; others when this laptop takes the primary's
address.  The takeover's term (one more than the log's) goes into every
command: a board that has heard this hub refuses the old primary's, and
the old primary, started again, fences itself when a board's birth says
it has seen a higher term (HubService.fenced, terms.py: it sends nothing)."""

from __future__ import annotations

import argparse
import sys

from ..console.client import HubClient, NotTheHub, RemoteError, Unreachable
from ..event.time.clock import HubClock
from ..event.log.replica import last_desk_action, log_term
from ..rules.timetext import fmt_clock
from .options import LOG_FAILED
from ..protocol.hub_secret import TERMS, HubAuth, TermProofs
from .common import hub_secret, open_event, open_log


def cmd_takeover(args) -> int:
    from .event import run_folder

    opened = open_event(args.dir, getattr(args, "round", None))
    if opened is None:
        return 2
    ev, keys = opened
    if not ev.db.exists():
        print(f"error: {ev.db} does not exist: this folder holds no copy of a primary's log (`tabletimer "
              "standby` makes one); to start an event here, `tabletimer run`", file=sys.stderr)
        return 2
    secret = hub_secret(ev.path, make=False)     # the primary's: the term's proof, which the boards check
    if secret is None:
        return 2
    # whether the primary answers at all, and what its log holds: asked as the standby asks, with a
    # hub's proof (no token sent), its answer taken only if it proves it is this event's hub
    try:
        reply = HubClient(args.primary, None, auth=HubAuth(secret)).request("GET", "/rows?after=0")
        answers = f"answers (its log up to row #{reply.get('last')})"
    except Unreachable:
        answers = None
    except NotTheHub as e:
        answers = f"answers, without proving it is this event's hub ({e})"
    except RemoteError as e:
        answers = f"answers, refusing: {e}"
    if answers and not args.force:
        print(f"error: the primary at {args.primary} {answers}: two hubs would both ack the boards. Stop "
              "it first (or, if it certainly cannot reach the boards, --force)", file=sys.stderr)
        return 2
    store = open_log(ev.db, "Nothing was changed.")
    if store is None:
        return LOG_FAILED
    try:
        rows = store.events()
        desk = last_desk_action(rows)
        last = rows[-1]["id"] if rows else 0
        now = HubClock.for_log(rows).now_ms()
        proofs = TermProofs(secret, store.event_id)
        # one above every term a hub proved in this log (a takeover's, one a board reported): a term
        # nobody proved (a forged birth's 999) is no hub's, and is not counted
        term = 1 + log_term(rows, proofs.proven)
        tp = proofs.proof(term)
        if tp is None:
            print(f"error: term {term} is beyond the {TERMS} takeovers an event log's proofs hold: no board "
                  "would take it. Nothing was changed.", file=sys.stderr)
            return 2
        store.append("hub", "takeover", {"primary": args.primary, "copied_up_to": last, "who": args.who,
                                         "primary_answered": bool(answers), "term": term, "hash": tp}, now)
    finally:
        store.close()
    print(f"takeover: this laptop is the hub now (term {term}: the boards refuse the old primary's "
          f"commands once they hear this hub), on its copy up to row #{last} of {args.primary}'s log",
          flush=True)
    if desk is None:
        print("the copy holds no desk action", flush=True)
    else:
        fields = {k: v for k, v in desk["payload"].items() if k not in ("who", "why", "request", "seen")}
        print(f"the last desk action copied: #{desk['id']} {desk['type']} {fields} by "
              f"{desk['payload'].get('who', 'operator')} at {fmt_clock(desk['received_ms'])}; any made on the "
              "primary after it is not here: redo it at the desk", flush=True)
    return run_folder(args, ev, keys)


def add_parser(sub, serve_options, round_help: str) -> None:
    t = sub.add_parser("takeover", help="the standby laptop carries on as the hub, on its copy of the dead "
                                        "primary's log (after `tabletimer standby`)")
    t.add_argument("dir", help="the standby's copy of the event folder")
    t.add_argument("--primary", required=True, metavar="URL", help="the primary's web server, as the standby had it")
    # (the primary is asked with a hub's proof, DIR/hub-secret, never the console token; --token-file of
    # older scripts is accepted and not used)
    t.add_argument("--token-file", metavar="PATH", default=None, help=argparse.SUPPRESS)
    t.add_argument("--force", action="store_true",
                   help="take over even though the primary answers (it certainly cannot reach the boards)")
    t.add_argument("--who", default="operator", help="who takes over (in the log)")
    t.add_argument("--round", help=round_help)
    serve_options(t)
    t.set_defaults(func=cmd_takeover, token=None)
