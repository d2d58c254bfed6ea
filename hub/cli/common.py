"""What the commands that open an event share: its folder and keys, its log (writable, one
hub per log), its service, the final standings."""

from __future__ import annotations

import sys
from pathlib import Path

from ..protocol.keys import BoardKeys, KeyFileError
from ..core.service import HubService
from ..event.log.log_health import DamagedLog, LogWriteFailed, STORE_ERRORS, write_failure_advice
from ..event.fold.competition import Competition
from ..event.log.store import EventStore
from ..rules.formats import FormatError
from .options import LOG_FAILED
from tabletimer.hub.event.folder import event_folder


def print_final(service: HubService) -> None:
    """The standings on standard output, final once the round's time is up;
    before, as they stand (entrants still solving "running", without a
    place), with a warning that says so, as `results` does; the ranking's
    remarks for the desk apart, on standard error (never in what is
    published)."""
    from ..outputs.results import in_progress_text, starts_in_ms
    from .formats import standings_table

    rows, left = service.standings_as_they_stand()
    if left is not None:
        ahead = starts_in_ms(service.competition.start_ms, service.clock.now_ms())
        print(f"warning: {in_progress_text(left, ahead)}: "
              "these standings are provisional (entrants still solving are shown as running, without "
              "a place; places will change)", file=sys.stderr)
    print(standings_table(rows, service.competition.format, notes=False))
    print_desk_notes(rows)


def print_desk_notes(rows) -> None:
    """The ranking's remarks (a confirmation with no finish to confirm, ...)
    on standard error, for the operator: not part of the standings (a
    piece count still to come: the row says provisional)."""
    from ..rules.standings import desk_notes

    for line in desk_notes(rows, routine=False):
        print(f"note (for the desk, not in the results): {line}", file=sys.stderr)




def load_event(path: str, round: str | None = None):
    ev = event_folder.load(path, round)
    for w in ev.warnings:
        print(f"warning: {w}", file=sys.stderr)
    return ev


def open_event(path: str, round: str | None = None):
    """(event folder, board keys), or None after saying what is wrong."""
    try:
        ev = load_event(path, round)
        return ev, BoardKeys(ev.keys_file)
    except (event_folder.EventFolderError, FormatError, KeyFileError) as e:
        print(f"error: {e}", file=sys.stderr)
        return None




def open_log(path: Path, then: str) -> EventStore | None:
    """The event log at path; None after saying why it cannot be opened
    (damaged, or refused by the system) and then what that means for the
    command ("Nothing was changed."), which exits LOG_FAILED."""
    try:
        return EventStore(path)
    except (DamagedLog, *STORE_ERRORS) as e:
        print(f"error: {e}. {then}", file=sys.stderr)
        return None


def on_log(ev, work) -> int:
    """work(store)'s exit code, with the event's log open (closed after);
    LOG_FAILED after saying what failed: the log damaged, a write that
    failed, or the system refusing it."""
    try:
        store = EventStore(ev.db)
        try:
            return work(store)
        finally:
            store.close()
    except (LogWriteFailed, DamagedLog) as e:
        print(f"error: {e}", file=sys.stderr)
        return LOG_FAILED
    except STORE_ERRORS as e:
        print(f"error: the event log {ev.db}: {e}", file=sys.stderr)
        return LOG_FAILED


def boards_of_a_running_hub(ev, named: list, every: bool, what: str) -> bool:
    """True if the command names its boards or says --all (not both) and a
    hub runs on the event (the boards get `what` from it); else False,
    after saying what to do."""
    from ..event.folder.folder_lock import hub_running

    if bool(named) == bool(every):
        print("error: name the boards (T01 T02 ...) or give --all", file=sys.stderr)
        return False
    if not ev.db.exists() or not hub_running(ev.db):
        from ..event.folder.event_folder import rehearsal_hint
        command = "boards update" if what == "firmware" else "boards set"
        print(f"error: no hub runs on {ev.files}: the boards get their {what} from it; start it with "
              f"`tabletimer run {ev.path}`, then ask again" + rehearsal_hint(ev.path, command), file=sys.stderr)
        return False
    return True


def every_board_checked(svc, action: str, payloads: dict, who: str) -> bool:
    """True if the operator action's request for every board (payloads:
    board -> payload) passes the hub's checks; else False, after printing
    each problem and that nothing was sent (a request to many boards is
    stored for all of them or for none)."""
    problems = []
    for p in payloads.values():
        try:
            svc.check_action(action, dict(p, who=who), who=who)
        except ValueError as e:
            problems.append(str(e))
    for line in problems:
        print(f"error: {line}", file=sys.stderr)
    if problems:
        print("nothing was sent to any board", file=sys.stderr)
    return not problems


def writable_log(path: Path, make_service):
    """(store, service) on the log at path, once it has taken a committed
    write; else None, after saying what is wrong and what to do."""
    try:
        store = EventStore(path)
    except STORE_ERRORS as e:
        print(f"error: {write_failure_advice(path, e, 'open')}. The hub did not start.", file=sys.stderr)
        return None
    except DamagedLog as e:
        print(f"error: {e}. The hub did not start.", file=sys.stderr)
        return None
    try:
        service = make_service(store)
        service.check_writable()
    except DamagedLog as e:
        print(f"error: {e}. The hub did not start.", file=sys.stderr)
    except LogWriteFailed as e:
        print(f"error: {e}. The hub did not start: it would acknowledge nothing.", file=sys.stderr)
    except STORE_ERRORS as e:
        print(f"error: {write_failure_advice(path, e, 'read')}. The hub did not start.", file=sys.stderr)
    else:
        return store, service
    store.close()
    return None


def hub_lock(log: Path, role: str | None = None):
    """One hub per event log: the lock held for the process's lifetime
    (None after saying who holds it); role: what it says of its holder
    ("standby URL")."""
    from ..event.folder.folder_lock import FolderLocked, HubLock

    try:
        lock = HubLock(log, role).acquire()
    except FolderLocked as e:
        print(f"error: {e}", file=sys.stderr)
        return None
    if not lock.supported:
        print(f"warning: this system has no file locks: make sure no other hub runs on {log}",
              file=sys.stderr)
    return lock


def service_for(ev, keys: BoardKeys, store: EventStore, secret: bytes | None = None) -> HubService:
    """The service on an event's log; on a log a running standby copies
    into, one that records nothing (console/follower.py's StandbyLog).
    secret: the event's hub secret (default: the folder's, if it has one
    that reads: the terms in the log judged as the hub judges them)."""
    from ..protocol.hub_secret import SecretError, read_secret
    from ..event.folder.folder_lock import standby_of

    primary = standby_of(store.path) if isinstance(store, EventStore) else None
    if primary is not None:
        from ..console.follower import StandbyLog
        store = StandbyLog(store, primary)      # type: ignore[assignment]
    if secret is None:
        try:
            secret = read_secret(ev.path)
        except SecretError:
            secret = None
    return HubService(store, keys, Competition(ev.format, ev.entrants, ev.stations), secret=secret)


def hub_secret(folder: Path, make: bool = True) -> bytes | None:
    """The event folder's hub secret (protocol/hub_secret.py), made now if it
    has none and make (said, with where it must go: the standby's copy of
    the folder); None after saying what is wrong."""
    from ..protocol.hub_secret import SecretError, ensure_secret, read_secret, secret_path

    try:
        if not make:
            secret = read_secret(folder)
            if secret is None:
                print(f"error: {secret_path(folder)} does not exist: this folder holds no hub secret, "
                      "which only the event's hub laptops hold (the primary makes it when it first runs); "
                      "copy it from the primary's event folder (docs/operations.md, 'The hub laptop died')",
                      file=sys.stderr)
            return secret
        secret, made = ensure_secret(folder)
    except SecretError as e:
        print(f"error: {e}", file=sys.stderr)
        return None
    if made:
        print(f"made the event's hub secret {secret_path(folder)} (readable by its owner only): the hub "
              "laptops' own, never a board's; copy it with the folder to the standby laptop, which refuses "
              "to follow a primary that does not prove it holds the same", flush=True)
    return secret


def hub_token(args, hub: str = "hub") -> str | None:
    """The hub's console token from --token-file (a copy of the event
    folder's console-token) or --token / $TABLETIMER_CONSOLE_TOKEN; None
    after saying what is wrong (hub: what the command calls the hub)."""
    token = getattr(args, "token", None)
    if args.token_file:
        try:
            token = Path(args.token_file).read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as e:
            print(f"error: cannot read the console token from {args.token_file}: "
                  f"{getattr(e, 'strerror', None) or e}", file=sys.stderr)
            return None
        if not token:
            print(f"error: {args.token_file} is empty: the console token is in the {hub}'s event "
                  "folder, console-token", file=sys.stderr)
            return None
    if not token:
        print(f"error: give the {hub}'s console token: --token-file PATH (the event folder's "
              "console-token, or a copy of it; the hub prints its path when it starts), or "
              "--token TOKEN, or $TABLETIMER_CONSOLE_TOKEN", file=sys.stderr)
        return None
    return token
