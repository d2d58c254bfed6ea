"""`tabletimer results` and `cards`: the results (CSV, JSON, the HTML sheet, an XLSX
workbook) and the table cards of an event folder."""

from __future__ import annotations

import sys
from datetime import datetime
from pathlib import Path

from ..event.folder.site_address import site_url
from ..outputs.results import in_progress_text, load_results, results_csv, results_html, results_json
from ..rules.formats import FormatError
from .common import print_desk_notes
from .options import ROUND_HELP
from tabletimer.hub.event.folder import event_folder


DIALECTS = {"excel": ",", "excel-semicolon": ";"}     # --dialect: the CSV's delimiter


def write_output(target: str, text: str, bom: bool = False, bom_on_stdout: bool = False) -> None:
    """Write text to a file (UTF-8; with a byte order mark when `bom`), or
    to standard output for '-' (with the mark only when `bom_on_stdout`)."""
    if target == "-":
        sys.stdout.write(("\ufeff" if bom_on_stdout else "") + text)
        sys.stdout.flush()
        return
    p = Path(target)
    with open(p, "w", encoding="utf-8-sig" if bom else "utf-8", newline="") as f:
        f.write(text)


def sheet_language(path: str | Path) -> str:
    """The event's language for its sheets, cards and badges (a language
    file the hub cannot read: a warning, and English)."""
    try:
        return event_folder.event_language(path)
    except event_folder.EventFolderError as e:
        print(f"warning: {e}: the sheets are in English", file=sys.stderr)
        return "en"


def _title(args, ev: event_folder.EventFolder) -> str:
    return args.title or ev.title


def _csv_out(args, text: str) -> None:
    """The CSV to its target: a BOM in a file; on standard output too in
    the excel-semicolon dialect (the locales whose Excel needs it)."""
    write_output(args.csv, text, bom=True, bom_on_stdout=_dialect(args) == "excel-semicolon")


def _dialect(args) -> str:
    return getattr(args, "dialect", None) or "excel"


def cmd_results(args) -> int:
    xlsx = getattr(args, "xlsx", None)
    if sum(1 for t in (args.csv, args.json, args.html, xlsx) if t == "-") > 1:
        print("error: only one output can go to standard output (-)", file=sys.stderr)
        return 2
    if getattr(args, "day", False) and getattr(args, "round", None) is not None:
        print(f"error: --day is every round's podium, --round {args.round} one round's results: give "
              f"one of them (`tabletimer results {args.dir} --day`, or `... --round {args.round}`)",
              file=sys.stderr)
        return 2
    if xlsx:
        rc = cmd_xlsx(args)
        if rc or not (args.csv or args.json or args.html):
            return rc
    if getattr(args, "day", False):
        return cmd_day(args)
    if getattr(args, "official", False) or getattr(args, "reopen", False):
        code = _record_official(args)
        if code != 0:
            return code
    try:
        res = load_results(args.dir, round=getattr(args, "round", None))
    except (event_folder.EventFolderError, FormatError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    ev, rows, fmt = res.event, res.rows, res.format
    for w in ev.warnings:
        print(f"warning: {w}", file=sys.stderr)
    pending = [r.entrant for r in rows if r.provisional]
    if res.left_ms is not None:
        print(f"warning: {in_progress_text(res.left_ms, res.starts_in_ms)}: these are not results yet (provisional; "
              f"{sum(r.status == 'running' for r in rows)} entrant(s) still running)", file=sys.stderr)
    elif pending:
        print(f"warning: provisional results: {len(pending)} entrant(s) with an unconfirmed finish or"
              f" a missing piece count ({', '.join(pending[:10])}{' ...' if len(pending) > 10 else ''})",
              file=sys.stderr)
    now = datetime.now().astimezone()
    title = _title(args, ev)
    named = ev.round if ev.several_rounds else None        # an event of several rounds: which one
    try:
        if args.csv:
            _csv_out(args, results_csv(rows, fmt, ev.entrants, round=named, delimiter=DIALECTS[_dialect(args)]))
        if args.json:
            write_output(args.json, results_json(title, fmt, rows, now, ev.entrants, res.start_ms, res.left_ms,
                                                 round=named, marks=res.marks))
        if args.html:
            write_output(args.html, results_html(title, fmt, rows, now, ev.entrants, res.start_ms, res.left_ms,
                                                 round=named, starts_in=res.starts_in_ms, marks=res.marks,
                                                 site_url=site_url(args.dir),
                                                 lang=sheet_language(ev.path)))
    except OSError as e:
        print(f"error: {e.filename or ''}: {e.strerror or e}", file=sys.stderr)
        return 2
    print_desk_notes(rows)
    if res.marks is not None and res.marks.official is not None:
        print(f"official: {res.marks.official}", file=sys.stderr)
    if not (args.csv or args.json or args.html):
        from .formats import standings_table
        print(standings_table(rows, fmt, splits=len(fmt.puzzles) > 1, notes=False))
    else:
        for kind, t in (("CSV", args.csv), ("JSON", args.json), ("HTML", args.html)):
            if t and t != "-":
                print(f"wrote {kind} results to {t}", file=sys.stderr)
    return 0


def _record_official(args) -> int:
    """`--official` / `--reopen --why`: the round's results made official or
    reopened, recorded in its log as an operator action (`act official`,
    `act reopen`: the same checks, nothing written when refused)."""
    import argparse

    from .log import cmd_act

    if args.official and args.reopen:
        print("error: --official or --reopen, not both", file=sys.stderr)
        return 2
    if args.reopen and not (args.why or "").strip():
        print('error: reopen: say why the results are reopened: --why "..." (logged with who reopened them); '
              "nothing recorded", file=sys.stderr)
        return 2
    act = argparse.Namespace(dir=args.dir, round=getattr(args, "round", None),
                             action="official" if args.official else "reopen", fields=[], who=args.who,
                             why=args.why or "", force=False, objection=None)
    return cmd_act(act)


def cmd_day(args) -> int:
    """`results DIR --day`: every round's podium (outputs/day_results.py)."""
    from ..outputs import day_results as day

    try:
        results = day.load_day(args.dir)
    except (event_folder.EventFolderError, FormatError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    for r in results.rounds:
        if r.state != day.FINAL:
            print(f"warning: round {r.name}: {day.state_text(r)}"
                  + ("" if r.state in (day.NOT_STARTED, day.UNREADABLE) else " (its podium is not final)"),
                  file=sys.stderr)
    now = datetime.now().astimezone()
    try:
        if args.csv:
            _csv_out(args, day.day_csv(results, delimiter=DIALECTS[_dialect(args)]))
        if args.json:
            write_output(args.json, day.day_json(results, now, args.title))
        if args.html:
            write_output(args.html, day.day_html(results, now, args.title, sheet_language(args.dir)))
    except OSError as e:
        print(f"error: {e.filename or ''}: {e.strerror or e}", file=sys.stderr)
        return 2
    if not (args.csv or args.json or args.html):
        sys.stdout.write(day.day_text(results))
    else:
        for kind, t in (("CSV", args.csv), ("JSON", args.json), ("HTML", args.html)):
            if t and t != "-":
                print(f"wrote the day's results ({len(results.rounds)} round(s)) as {kind} to {t}",
                      file=sys.stderr)
    return 0


def cmd_xlsx(args) -> int:
    """`results DIR --xlsx FILE`: every round (and the day's podiums, in an
    event of several) as one workbook; with --round, that round's sheet
    only (outputs/results_xlsx.py)."""
    from ..event.folder import rounds
    from ..outputs import day_results as day
    from ..outputs.results_xlsx import workbook, xlsx_bytes

    try:
        results = day.load_day(args.dir)
        if getattr(args, "round", None) is not None:
            rounds.resolve(args.dir, args.round)          # RoundError: says which rounds there are
            results.rounds = [r for r in results.rounds if r.name == args.round]
    except (event_folder.EventFolderError, FormatError, rounds.RoundError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    for r in results.rounds:
        if r.state == day.UNREADABLE and getattr(args, "round", None) is not None:
            print(f"error: {r.problem}", file=sys.stderr)
            return 2
        if r.state != day.FINAL:
            print(f"warning: round {r.name}: {day.state_text(r)}", file=sys.stderr)
    data = xlsx_bytes(workbook(results, datetime.now().astimezone(), args.title,
                                lang=sheet_language(args.dir)))
    try:
        if args.xlsx == "-":
            sys.stdout.buffer.write(data)
            sys.stdout.flush()
        else:
            Path(args.xlsx).write_bytes(data)
    except OSError as e:
        print(f"error: {e.filename or ''}: {e.strerror or e}", file=sys.stderr)
        return 2
    if args.xlsx != "-":
        several = len(results.rounds) > 1
        print(f"wrote the results as XLSX to {args.xlsx}: " + (
            f"the day's podiums and {len(results.rounds)} rounds' sheets" if several
            else f"round {results.rounds[0].name}" if results.rounds else "no round"), file=sys.stderr)
    return 0


def cmd_cards(args) -> int:
    from ..outputs.table_cards import cards_html
    from ..web import public_url as hub_url

    try:
        ev = event_folder.load(args.dir, getattr(args, "round", None))
    except (event_folder.EventFolderError, FormatError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    for w in ev.warnings:
        print(f"warning: {w}", file=sys.stderr)
    if not ev.stations:
        print(f"error: {ev.files / 'stations.csv'}: no stations", file=sys.stderr)
        return 2
    event_name = ev.path.resolve().name
    try:
        url, saved = hub_url.resolve(ev.path, getattr(args, "public_url", None))
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"error: {e.filename or ''}: {e.strerror or e}", file=sys.stderr)
        return 2
    if saved:
        print(f"saved the public URL {url} in {hub_url.path(ev.path)}", file=sys.stderr)
    try:
        write_output(args.html, cards_html(event_name, ev.format, ev.entrants, ev.stations,
                                           title=_title(args, ev), public_url=url,
                                           lang=sheet_language(ev.path)))
    except OSError as e:
        print(f"error: {e.filename or ''}: {e.strerror or e}", file=sys.stderr)
        return 2
    tables = len({s.table for s in ev.stations})
    if args.html != "-":
        codes = (f"a QR code per table for its page at {url}/t/..." if url
                 else "no QR codes (the page says why)")
        print(f"wrote {tables} table card(s), {len(ev.stations)} station(s), {codes}, to {args.html}",
              file=sys.stderr)
    if not url:
        print(f"note: the cards have no QR codes: a code of a station's text opens nothing on a phone. For "
              f"codes a phone opens (each table's page on the hub), {hub_url.NO_URL_ADVICE}", file=sys.stderr)
    return 0


def add_subcommands(sub) -> None:
    """Register `results` and `cards` on the subparsers object of the
    `tabletimer` command."""
    r = sub.add_parser(
        "results", help="an event's final results as CSV, JSON, XLSX or a printable HTML sheet",
        description="The final results of an event folder, rebuilt from its log: CSV (one row per "
                    "entrant, per-puzzle splits), JSON, an XLSX workbook (a sheet per round and the day's "
                    "podiums), or a printable A4 results sheet (HTML). "
                    "Without an output option, prints the standings. '-' writes to standard output.")
    r.add_argument("dir", help="the event folder")
    r.add_argument("--csv", metavar="FILE", help="CSV, one row per entrant (UTF-8 with BOM; '-': stdout)")
    r.add_argument("--dialect", choices=tuple(DIALECTS), default="excel",
                   help="the CSV's dialect: excel (comma separated; default) or excel-semicolon (semicolon "
                        "separated, with a BOM: what Excel opens in columns in Czech, Danish, Norwegian ... "
                        "locales)")
    r.add_argument("--xlsx", metavar="FILE",
                   help="an XLSX workbook: one sheet per round (times as time values, award places marked) "
                        "and, in an event of several rounds, the day's podiums; with --round, that round only")
    r.add_argument("--json", metavar="FILE", help="JSON: a header and the standings rows ('-': stdout)")
    r.add_argument("--html", metavar="FILE", help="the printable results sheet (one self-contained HTML file)")
    r.add_argument("--title", help="the event's title on the sheet (default: the event's, DIR/title, "
                                   "else the folder's name)")
    r.add_argument("--round", help=ROUND_HELP)
    r.add_argument("--day", action="store_true",
                   help="the day's results for the prize-giving: every round in order with its state (final, "
                        "provisional, in progress, not started) and its podium, on one page (--html), in one "
                        "file (--csv with a round column, --json a list of rounds), or printed")
    r.add_argument("--official", action="store_true",
                   help="make the round's results official (logged): once its time is up and every check is "
                        "done, at the moment the format names (results.official_at); after it every change "
                        "is refused until --reopen")
    r.add_argument("--reopen", action="store_true",
                   help="reopen official results (logged with --who and --why; --why is required)")
    r.add_argument("--who", default="operator", help="with --official/--reopen: who does it (recorded)")
    r.add_argument("--why", default="", help="with --reopen: why the results are reopened (recorded)")
    r.set_defaults(func=cmd_results)

    c = sub.add_parser(
        "cards", help="printable table cards: each table's stations, with a QR code of the "
                      "table's page for phones (--public-url)",
        description="Printable A4 table cards (HTML), one per table of stations.csv, listing each "
                    "station's button and entrant and its text "
                    "tabletimer:<event>:<board>:<button>:<entrant>. With the hub's public URL "
                    "(--public-url, or the one saved in the event folder), each card has one QR "
                    "code: the table's page for referees' phones, PUBLIC_URL/t/<table>; without "
                    "it, none (a code of a station's text would open nothing on a phone), and the "
                    "page says so.")
    c.add_argument("dir", help="the event folder")
    c.add_argument("--html", metavar="FILE", required=True, help="the cards page to write ('-': stdout)")
    c.add_argument("--title", help="the event's title on the cards (default: the event's, DIR/title, "
                                   "else the folder's name)")
    c.add_argument("--public-url", metavar="URL",
                   help="the hub's address as phones on the hall network reach it, e.g. "
                        "http://192.168.1.10:8765 (saved in DIR/public-url for later commands)")
    c.add_argument("--round", help=ROUND_HELP)
    c.set_defaults(func=cmd_cards)
