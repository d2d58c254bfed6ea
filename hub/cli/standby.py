"""`tabletimer standby DIR --primary URL`: a second laptop that follows the
primary hub live (console/follower.py): the primary's log
copied row for row into DIR's events.sqlite as it is written, the event's
broker started here and left idle (the same logins: the boards' second
address), and a console on the copy with the copy's lag and the primary's
silence.  It never acks a board and records nothing of its own.

DIR is a copy of the event folder (its format, entrants, stations, board
keys, logins, hub secret): the standby refuses a folder whose definition is
not the primary's, and a log that is not a copy of the primary's.  It
proves itself to the primary with the hub secret instead of a token, and
takes only answers the primary proves with it (an impostor at the
primary's address gets no token and has no row copied)."""

from __future__ import annotations

import argparse
import sys

from ..protocol.hub_secret import HubAuth
from ..console.client import HubClient, NotTheHub, RemoteError
from ..console.follower import SILENT_S, Follower, StandbyLog
from ..protocol.keys import BoardKeys
from ..event.log.replica import FOLDER_FILES, differing_files
from ..event.log.store import EventStore
from .options import LOG_FAILED
from ..runtime.hub_runtime import StandbyRuntime
from .common import hub_lock, hub_secret, open_event, open_log, service_for


def cmd_standby(args) -> int:
    opened = open_event(args.dir, getattr(args, "round", None))
    if opened is None:
        return 2
    ev, keys = opened
    # the primary proves it holds the event's hub secret, and so does this laptop: no token is sent
    # (an impostor at the primary's address would have it), no row taken that the primary did not sign
    secret = hub_secret(ev.path, make=False)
    if secret is None:
        return 2
    client = HubClient(args.primary, None, auth=HubAuth(secret))
    try:
        event = client.request("GET", "/event")
    except NotTheHub as e:
        print(f"error: {e}. The standby did not start.", file=sys.stderr)
        return 2
    except RemoteError as e:
        print(f"error: {e}. The standby needs the primary running: start it, check the address "
              "and that this folder's hub-secret is the primary's", file=sys.stderr)
        return 2
    problem = _not_a_copy(ev, event)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    lock = hub_lock(ev.db, f"standby {client.url}")      # one hub (or standby) per log; act, console: read only
    if lock is None:
        return 2
    try:
        store = open_log(ev.db, "The standby did not start.")
        if store is None:
            return LOG_FAILED
        try:
            rc = _follow(args, ev, keys, client, store, event)
        finally:
            store.close()
    finally:
        lock.release()
    if rc != AUTO_TAKEOVER:
        return rc
    from .takeover import cmd_takeover  # as `tabletimer takeover DIR --primary URL` runs it, with these options
    args.force, args.who = False, "standby (--auto-after)"
    return cmd_takeover(args)


AUTO_TAKEOVER = -1           # _follow's answer: the primary was silent for --auto-after


def _not_a_copy(ev, event: dict) -> str | None:
    """Why this folder is not a copy of the primary's event (None: it is)."""
    files = event.get("files") if isinstance(event, dict) else None
    if not isinstance(files, dict) or "demo" in event:
        return "the primary runs no event folder (a demo?): a standby follows `tabletimer run DIR`"
    if (event.get("round") or None) != (ev.round if ev.several_rounds else None):
        return (f"the primary runs round {event.get('round') or 'main'}, this folder's is {ev.round}: "
                f"give --round {event.get('round') or 'main'}")
    here = {n: (ev.files / n).read_bytes().decode("utf-8-sig", errors="replace") for n in FOLDER_FILES}
    differ = differing_files(here, files)
    if differ:
        return (f"{', '.join(str(ev.files / n) for n in differ)} differ from the primary's: copy the "
                "event folder from the primary again (docs/operations.md, 'The hub laptop died')")
    return None


def _follow(args, ev, keys: BoardKeys, client: HubClient, store: EventStore, event: dict) -> int:
    from rich.console import Console

    console = Console()
    follower = Follower(client, store, args.silent_after, f"tabletimer takeover {ev.path} --primary {client.url}"
                        + (f" --round {ev.round}" if ev.several_rounds else ""))
    try:
        n = follower.fetch()                    # the log so far, before anything is shown
    except RemoteError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except ValueError as e:
        print(f"error: {e}. Nothing was copied.", file=sys.stderr)
        return 2
    say = lambda text: console.print(text, markup=False, highlight=False, soft_wrap=True)  # noqa: E731
    say(f"standby of {client.url}: {n} row(s) copied into {store.path}, up to row #{follower.copied}")
    service = service_for(ev, BoardKeys(), StandbyLog(store, client.url))   # type: ignore[arg-type]  # no keys: it signs nothing
    ran = StandbyRuntime(args, service, ev.path, keys, follower, on_terminal=console.is_terminal, say=say,
                         title=f"STANDBY of {client.url} - {event.get('title') or ev.format.title}").run()
    if ran.failed is not None:
        print(f"error: {ran.failed}. The standby did not start.", file=sys.stderr)
        return 2
    if ran.auto is not None:
        say(f"the primary silent for {ran.auto:.0f} s (--auto-after {args.auto_after:g}): this laptop takes "
            f"over, copied up to row #{follower.copied}")
        return AUTO_TAKEOVER
    say(f"standby stopped: copied up to row #{follower.copied} in {store.path}")
    return 0


def add_parser(sub, serve_options, round_help: str) -> None:
    sb = sub.add_parser("standby", help="follow a running hub from a second laptop: its log copied live, "
                                        "a broker idle, never acking a board (the hub laptop may die)")
    sb.add_argument("dir", help="this laptop's copy of the event folder")
    sb.add_argument("--primary", required=True, metavar="URL",
                    help="the primary hub's web server, e.g. http://192.168.1.10:8765")
    # (the standby proves itself with DIR/hub-secret and never sends the console token: an impostor at
    # the primary's address would get it; --token-file of older scripts is accepted and not used)
    sb.add_argument("--token-file", metavar="PATH", help=argparse.SUPPRESS)
    sb.add_argument("--token", help=argparse.SUPPRESS)
    sb.add_argument("--silent-after", type=float, default=SILENT_S, metavar="S",
                    help=f"the primary silent this long: the alert turns red (default {SILENT_S:g})")
    sb.add_argument("--auto-after", type=float, default=None, metavar="S",
                    help="take over by itself once the primary has been silent this long (default: never; "
                         "the risk: a primary cut off from this laptop but not from the boards is not dead, "
                         "and two hubs then ack the boards: docs/operations.md)")
    sb.add_argument("--round", help=round_help)
    serve_options(sb)           # the idle broker here, and the hub's options after a takeover
    sb.set_defaults(func=cmd_standby)
