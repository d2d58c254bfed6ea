"""`tabletimer advance DIR --round NAME`: a round's entrants from earlier
rounds, by its format's [advancement] rule (rules/advancement.py; the plan
read from the folder: outputs/advancement_plan.py; its files:
event/folder/advance_files.py).

    tabletimer advance DIR --round final                      the plan: writes nothing
    tabletimer advance DIR --round final --apply CODE         entrants.csv, stations.csv, the log's row
    tabletimer advance DIR --round final --withdraw ID        the next reserve takes ID's place

CODE is the plan's (its source results' hash, printed with it): a result
changed since the plan was printed changes it, and the apply is refused.
Refused means nothing written.  Before the round starts only."""

from __future__ import annotations

import sys

from ..core.before_start import seats_in_hall
from ..event.folder import advance_files, event_folder
from ..event.folder.seat_files import stations_text
from ..event.log.log_health import STORE_ERRORS, DamagedLog, LogWriteFailed
from ..outputs.advancement_plan import RoundAdvance, load_advance, plan_text
from ..rules.advancement import replacements
from ..rules.formats import FormatError
from ..rules.seating import SeatingError
from .options import LOG_FAILED, ROUND_HELP


def _now() -> int:
    from ..event.time.clock import HubClock
    return HubClock().now_ms()


def _refuse(text: str) -> int:
    print(f"error: {text}. Nothing was written.", file=sys.stderr)
    return 2


def _fixed(ra: RoundAdvance) -> str | None:
    """Why the round's entrants can no longer change (None: they can)."""
    from ..event.folder.folder_lock import hub_running

    if ra.started:
        return (f"round {ra.event.round} has started: its entrants are fixed (a late withdrawal is a DNS, "
                f"`tabletimer act {ra.event.path} --round {ra.event.round} dns entrant=ID`; a reserve takes an "
                f"absent entrant's station with `act ... replace`)")
    if ra.event.db.exists() and hub_running(ra.event.db):
        return (f"a hub runs on round {ra.event.round} ({ra.event.db}): it read its entrants when it started; "
                f"stop it, advance, then run it again")
    return None


def cmd_advance(args) -> int:
    try:
        ra = load_advance(args.dir, args.round, _now(), tuple(args.take or ()))
    except (event_folder.EventFolderError, FormatError) as e:
        return _refuse(str(e))
    except (DamagedLog, *STORE_ERRORS) as e:
        print(f"error: {e}", file=sys.stderr)
        return LOG_FAILED
    if args.withdraw:
        return _withdraw(args, ra)
    print(plan_text(ra))
    for w in ra.plan.warnings:
        print(f"warning: {w}", file=sys.stderr)
    _say_applied(ra)
    for p in ra.problems:
        print(f"problem: {p}", file=sys.stderr)
    if ra.not_official:
        print(f"note: the results of {', '.join(ra.not_official)} are not official (`tabletimer results DIR "
              f"--round NAME --official` makes a round's results official), or the desk applies the plan "
              f"with --as-they-are to take them as they are (recorded with it)", file=sys.stderr)
    if not args.apply:
        cmd = (f"tabletimer advance {args.dir} --round {ra.event.round} --apply {ra.code}"
               + (" --as-they-are" if ra.not_official else "") + "".join(f" --take {t}" for t in args.take or ()))
        print(f"this is the plan: nothing was written. Apply it: {cmd}")
        return 0
    return _apply(args, ra)


def _say_applied(ra: RoundAdvance) -> None:
    last = ra.last
    if last is None:
        return
    print(f"applied already: log row #{last['id']} ({last.get('phase')}, source results "
          f"{str(last.get('hash'))[:12]}): {len(last.get('entrants') or ())} entrants")
    if last.get("hash") != ra.plan.source_hash:
        now, then = set(ra.plan.ids), set(last.get("entrants") or ())
        print(f"warning: the source results changed since (now {ra.code}): the plan now adds "
              f"{', '.join(sorted(now - then)) or 'nobody'} and drops {', '.join(sorted(then - now)) or 'nobody'}; "
              f"before the round starts the desk may apply it again (--apply {ra.code} --again)", file=sys.stderr)


def _apply(args, ra: RoundAdvance) -> int:
    fixed = _fixed(ra)
    if fixed:
        return _refuse(fixed)
    last = next((r for r in reversed(ra.applied) if r.get("phase") == "apply"), None)
    if last is not None and not args.again:
        if last.get("hash") == ra.plan.source_hash and list(last.get("entrants") or ()) == list(ra.plan.ids):
            print(f"already applied (log row #{last['id']}): nothing to do, nothing written")
            return 0
        return _refuse(f"round {ra.event.round}'s entrants were applied already (log row #{last['id']}); to "
                       f"apply this plan instead, before the round starts: --apply {ra.code} --again")
    if args.apply != ra.code:
        return _refuse(f"the source results changed since the plan {args.apply} (the plan now is {ra.code}): "
                       f"print it again (`tabletimer advance {args.dir} --round {ra.event.round}`), check it, and "
                       f"apply it with --apply {ra.code}")
    if ra.problems:
        return _refuse("the plan cannot be applied: " + "; ".join(ra.problems))
    if ra.not_official and not args.as_they_are:
        return _refuse(f"the results of {', '.join(ra.not_official)} are not official: add --as-they-are to take "
                       f"them as they are (recorded in the round's log)")
    if not ra.plan.advancing:
        return _refuse("nobody advances by this plan")
    picked = [(ra.sources[p.candidate.source].entrant_rows.get(p.candidate.entrant, {"id": p.candidate.entrant,
                                                                                  "name": p.candidate.name}),
               f"{p.candidate.source} place {p.candidate.place}: {p.why}") for p in ra.plan.advancing]
    files = ra.event.files
    entrants = advance_files.entrants_text(picked)
    try:        # seated as `seat --by rank-of` seats: the plan's order is the sources' places, then results
        seats, hall = seats_in_hall(ra.event.path, files, ra.event.format, list(ra.plan.ids))
    except (event_folder.EventFolderError, SeatingError) as e:
        return _refuse(f"the plan's {len(ra.plan.ids)} entrants cannot be seated: {e}")
    stations = stations_text(seats)
    seat_note = (f"{len(ra.plan.ids)} seated in the previous rounds' positions at the tables of {hall} "
                 f"(`tabletimer seat {args.dir} --round {ra.event.round} --by ...` seats them otherwise)")
    payload = {"phase": "apply", "sources": list(ra.rule.sources), "hash": ra.plan.source_hash,
               "entrants": list(ra.plan.ids), "reserves": [c.entrant for c in ra.plan.reserves],
               "taken": sorted({e for t in ra.plan.ties for e in t.taken}),
               "as_they_are": int(bool(ra.not_official))}
    code = _write_and_log(args, ra, entrants, stations, payload)
    if code == 0:
        print(f"applied: {len(ra.plan.advancing)} entrants of round {ra.event.round} in {files / 'entrants.csv'}"
              + f"; stations: {seat_note}")
    return code


def _withdraw(args, ra: RoundAdvance) -> int:
    who = args.withdraw
    last = ra.last
    if last is None:
        return _refuse(f"round {ra.event.round}'s plan is not applied yet: apply it first (`tabletimer advance "
                       f"{args.dir} --round {ra.event.round}` prints it), then withdraw")
    fixed = _fixed(ra)
    if fixed:
        return _refuse(fixed)
    before = list(last.get("entrants") or ())
    if who not in before:
        return _refuse(f"{who} is not one of round {ra.event.round}'s entrants ({len(before)}: "
                       f"{', '.join(before[:10])}{' ...' if len(before) > 10 else ''})")
    if last.get("hash") != ra.plan.source_hash:
        return _refuse(f"the source results changed since the plan was applied (log row #{last['id']}): "
                       f"`tabletimer advance {args.dir} --round {ra.event.round}` shows the plan now; apply it "
                       f"again (--again) before the withdrawal, or leave the round as it is")
    again = load_advance(args.dir, args.round, _now(), (), (who,))
    came, left = replacements(again.plan, before, who)
    if left or len(came) > 1 or again.plan.undecided:
        return _refuse(f"withdrawing {who} changes more than one place ({', '.join(came)} in, "
                       f"{', '.join(left) or 'nobody'} out{', a tie for the desk' if again.plan.undecided else ''}): "
                       f"the desk decides; apply the plan again with --again and --take")
    reserve = came[0] if came else None
    pick = None
    if reserve is not None:
        c = next(p.candidate for p in again.plan.advancing if p.candidate.entrant == reserve)
        row = ra.sources[c.source].entrant_rows.get(reserve, {"id": reserve, "name": c.name})
        pick = (row, f"{c.source} place {c.place}: in for {who} (withdrew)")
    files = ra.event.files
    entrants, stations = advance_files.withdrawal_texts(files / "entrants.csv", files / "stations.csv", who, pick)
    after = [reserve if e == who else e for e in before if e != who or reserve is not None]
    payload = {"phase": "withdraw", "sources": list(ra.rule.sources), "hash": ra.plan.source_hash,
               "entrants": after, "reserves": [c.entrant for c in again.plan.reserves], "withdrawn": who,
               "as_they_are": int(bool(ra.not_official))}
    if reserve is not None:
        payload["reserve"] = reserve
    code = _write_and_log(args, ra, entrants, stations, payload)
    if code == 0:
        print(f"{who} withdrew from round {ra.event.round}: "
              + (f"{reserve} takes the place (and the seat)" if reserve else "no reserve left: the place stays empty"))
    return code


def _write_and_log(args, ra: RoundAdvance, entrants: str, stations: str | None, payload: dict) -> int:
    """Check the new files as the round will read them, write them whole,
    then record the row in the round's log (refused: nothing written)."""
    from ..protocol.keys import BoardKeys
    from .common import service_for

    files = ra.event.files
    tmp_e, tmp_s = files / ".entrants.csv.check", files / ".stations.csv.check"
    try:
        tmp_e.write_text(entrants, encoding="utf-8")
        tmp_s.write_text(stations if stations is not None else
                         (files / "stations.csv").read_text(encoding="utf-8-sig"), encoding="utf-8")
        people, _ = event_folder.load_entrants(tmp_e, ra.event.format)
        event_folder.load_stations(tmp_s, ra.event.format, {e.id for e in people})
    except (event_folder.EventFolderError, OSError) as e:
        return _refuse(f"the round's new files would not load: {e}")
    finally:
        tmp_e.unlink(missing_ok=True)
        tmp_s.unlink(missing_ok=True)
    advance_files.write_whole(files / "entrants.csv", entrants)
    if stations is not None:
        advance_files.write_whole(files / "stations.csv", stations)
    try:
        ev = event_folder.load(ra.event.path, ra.event.round)
        from ..event.log.store import EventStore
        store = EventStore(ev.db)
        try:
            svc = service_for(ev, BoardKeys(ev.keys_file), store)
            row = svc.act("advance", payload, who=args.who, why=args.why or "")
        finally:
            store.close()
    except (LogWriteFailed, DamagedLog, *STORE_ERRORS, ValueError) as e:
        print(f"error: the round's files are written but the log did not take the row: {e}. Run the same "
              f"command again once this is fixed (it records the row)", file=sys.stderr)
        return LOG_FAILED
    print(f"recorded #{row['id']}: advance {payload['phase']} (source results {payload['hash'][:12]})")
    return 0


def add_subcommands(sub) -> None:
    a = sub.add_parser("advance", help="a round's entrants from earlier rounds by its [advancement] rule: "
                                       "the plan, then --apply; --withdraw takes the next reserve")
    a.add_argument("dir", help="the event folder")
    a.add_argument("--round", required=True, help=ROUND_HELP)
    a.add_argument("--apply", metavar="CODE", help="apply the plan printed with this code (writes the round's "
                                                   "entrants.csv and stations.csv, records it in its log)")
    a.add_argument("--again", action="store_true", help="apply again a round applied already (before its start)")
    a.add_argument("--as-they-are", action="store_true",
                   help="take the source rounds' results as they are (not official)")
    a.add_argument("--take", action="append", metavar="ID",
                   help="the desk's choice at a tie its rule leaves to the desk (once per entrant)")
    a.add_argument("--withdraw", metavar="ID", help="ID gives up a place: the next reserve takes it")
    a.add_argument("--who", default="desk", help="who decides (recorded)")
    a.add_argument("--why", help="why (recorded)")
    a.set_defaults(func=cmd_advance)

