"""`tabletimer run`, `console` and `init`: an event from its folder."""

from __future__ import annotations

import sys
from pathlib import Path

from ..protocol.hub_secret import ensure_secret
from ..event.log.store import EventStore
from ..rules.formats import FormatError
from ..runtime.brokers import broker_problem
from .options import LOG_FAILED
from .common import hub_lock, hub_secret, hub_token, open_event, service_for, writable_log
from .serve import serve
from ..runtime.desk_console import run_desk_console
from tabletimer.hub.event.folder import event_folder, rounds


def cmd_run(args) -> int:
    """A real event from its folder: boards from stations.csv, keys from
    board-keys.json, the log in events.sqlite (of the round asked for)."""
    opened = open_event(args.dir, getattr(args, "round", None))
    if opened is None:
        return 2
    ev, keys = opened
    note = ev.without_station_note()
    if note:
        print(f"note: {note}", file=sys.stderr)
    missing = sorted({s.board for s in ev.stations} - set(keys.boards()))
    if missing:
        print(f"warning: no key for board(s) {', '.join(missing)}: flash them with "
              f"`tabletimer board flash PORT --id ID --keys {ev.keys_file}`", file=sys.stderr)
    return run_folder(args, ev, keys)


def claim_folder(args, log: Path):
    """The lock on an event log (one hub per log) and the checks a hub can
    make before it writes anything (its broker's options, its port free,
    the web server's address): the lock, or None after saying what is
    wrong.  Taken before the hub's first write."""
    from ..web.server import parse_listen

    lock = hub_lock(log)
    if lock is None:
        return None
    problem = broker_problem(args)
    if problem is None:
        try:
            parse_listen(args.web_listen)
        except ValueError as e:
            problem = str(e)
    if problem:
        print(f"error: {problem}. The hub did not start.", file=sys.stderr)
        lock.release()
        return None
    return lock


def other_rounds_boards(ev) -> frozenset[str]:
    """The boards of the event's other rounds that this round does not use
    (in the hall all day: no alert of this round's); a round whose files do
    not load gives none."""
    boards: set[str] = set()
    for name in rounds.names(ev.path):
        if name == ev.round:
            continue
        try:
            boards |= {s.board for s in event_folder.load(ev.path, name).stations}
        except (event_folder.EventFolderError, FormatError, OSError):
            continue
    return frozenset(boards - {s.board for s in ev.stations})


def other_round_logs(ev) -> dict[int, Path]:
    """The logs of the event's other rounds, by event id: where a board's
    press of the round before (left in its journal) is stored."""
    out = {}
    for name in rounds.names(ev.path):
        log = rounds.round_dir(ev.path, name) / "events.sqlite"
        if name != ev.round and log.exists():
            store = EventStore(log)
            try:
                if store.event_id is not None:
                    out[store.event_id] = log
            finally:
                store.close()
    return out


def run_folder(args, ev, keys, start_sims=None, lock=None, stop=None, boards_stay=False) -> int:
    """The hub on an event folder, one per log (its lock: lock, when the
    caller took it with claim_folder and releases it; else taken here), until
    stopped (stop, when given, also ends it); start_sims: simulated boards for
    it (`tabletimer rehearse`), left running when boards_stay (a rehearsed
    day's next round takes them over)."""
    from ..web.console_api import folder_event

    event = folder_event(ev.path, ev.files, ev.round if ev.several_rounds else None)  # for remote consoles
    own = lock is None
    lock = lock or claim_folder(args, ev.db)
    if lock is None:
        return 2
    try:
        secret = hub_secret(ev.path)        # this hub's terms proven to the boards, the standby's answers
        if secret is None:
            return 2
        opened = writable_log(ev.db, lambda store: service_for(ev, keys, store, secret))
        if opened is None:
            return LOG_FAILED
        store, service = opened
        if ev.round_path is not None or ev.several_rounds:
            rounds.set_live(ev.path, ev.round)      # what results, act, console ... mean from now on
            service.follow_rounds(other_round_logs(ev), unused=other_rounds_boards(ev))
        try:
            return serve(args, service, ev.path, start_sims, event=event, stop=stop, boards_stay=boards_stay)
        finally:
            store.close()
    finally:
        if own:
            lock.release()


def cmd_console(args) -> int:
    """The console on an event's log, beside the running hub (a second
    screen): it follows the log, and its operator actions go into the log,
    where the hub picks them up.  Given the hub's address (http://...), the
    same over the network, from another laptop."""
    if "://" in args.dir:
        return _remote_console(args)
    opened = open_event(args.dir, getattr(args, "round", None))
    if opened is None:
        return 2
    ev, keys = opened
    if not ev.db.exists():
        print(f"error: {ev.db} does not exist yet: start the hub with `tabletimer run {ev.path}`",
              file=sys.stderr)
        return 2
    store = EventStore(ev.db)
    try:
        service = service_for(ev, keys, store)
        run_desk_console(service, f"TableTimer - {ev.format.title} (watching {ev.path.name}"
                         + (f", round {ev.round})" if ev.several_rounds else ")"), beside=ev.db)
    finally:
        store.close()
    return 0


def _remote_console(args) -> int:
    from ..console.client import connect

    token = hub_token(args)
    if token is None:
        return 2
    try:
        service = connect(args.dir, token)
    except ValueError as e:          # unreachable, refused, an event that does not load here
        print(f"error: {e}", file=sys.stderr)
        return 2
    try:
        run_desk_console(service, f"TableTimer - {service.competition.format.title} (remote: {service.log.path}"
                         + (f", round {service.round})" if service.round else ")"))
    finally:
        service.log.close()
    return 0


def cmd_init(args) -> int:
    """A new event folder; its title from --title, else asked for when
    standard input is a terminal (blank, or no terminal: the folder's name)."""
    default = Path(args.dir).resolve().name
    title = args.title
    if title is None and sys.stdin.isatty() and not rounds.names(args.dir):
        try:
            title = input(f"The event's title (on the projector, table cards, badges and results) "
                          f"[{default}]: ")
        except EOFError:
            title = None
    try:
        p = event_folder.init(args.dir, args.format, title, getattr(args, "language", None))
    except (event_folder.EventFolderError, FormatError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    ensure_secret(p)             # the hub laptops' own secret: in the folder the standby copies
    where = p / event_folder.TITLE_FILE
    print(f"event folder {p}, titled {event_folder.event_title(p)!r} "
          + (f"({where})" if where.exists() else f"(the folder's name: write another in {where})")
          + f": edit entrants.csv and stations.csv, flash the boards with "
          f"--keys {p / 'board-keys.json'}, then `tabletimer run {p}`")
    return 0


def cmd_language(args) -> int:
    """The event's language: shown, or changed (a running hub's hall pages
    speak it once restarted; the sheets made after it at once)."""
    from ..i18n.catalogue import LANGUAGES, UnknownLanguage
    try:
        if args.code is None:
            lang = event_folder.event_language(args.dir)
            print(f"{lang} ({LANGUAGES[lang]})")
            return 0
        if not Path(args.dir, "format.toml").exists() and not rounds.names(args.dir):
            print(f"error: {args.dir} is not an event folder (no format.toml, no rounds)", file=sys.stderr)
            return 2
        lang = event_folder.save_language(args.dir, args.code)
    except (UnknownLanguage, event_folder.EventFolderError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"the event's language is now {lang} ({LANGUAGES[lang]}): the projector, the hall's pages and "
          "the sheets (a running hub: after its restart)")
    return 0
