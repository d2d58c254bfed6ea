"""`tabletimer entrants import DIR FILE`: a registration form's export (XLSX
or CSV in any usual dialect) as the round's entrants.csv, with a preview of
what was understood; written only when every row is right
(hub/event/folder/entrant_import.py)."""

from __future__ import annotations

import sys

from ..event.folder import entrant_import
from ..event.folder.event_folder import ENTRANT_COLUMNS, EventFolderError
from ..rules.formats import FormatError
from .options import ROUND_HELP

PREVIEW_WIDTH = 28          # characters of a cell the preview shows


def preview(imp: entrant_import.EntrantImport) -> list[str]:
    """The rows understood, as a table: the file's row number, then each
    column of entrants.csv the file has."""
    cols = [c for c in ENTRANT_COLUMNS if any(r.get(c) for _, r in imp.rows)] or ["id"]

    def cut(text: str) -> str:
        return text if len(text) <= PREVIEW_WIDTH else text[:PREVIEW_WIDTH - 1] + "\u2026"

    table = [["row"] + cols] + [[str(n)] + [cut(r.get(c, "")) for c in cols] for n, r in imp.rows]
    widths = [max(len(line[i]) for line in table) for i in range(len(table[0]))]
    return ["  " + "  ".join(cell.ljust(w) for cell, w in zip(line, widths)).rstrip() for line in table]


def cmd_import(args) -> int:
    try:
        imp = entrant_import.understand(args.dir, args.file, args.round, args.encoding)
    except (EventFolderError, FormatError) as e:
        print(f"error: {e}", file=sys.stderr)
        print("nothing written", file=sys.stderr)
        return 2
    f = imp.file
    print(f"{f.source}: {f.how}; {len(imp.entrants)} entrant(s) for round {imp.round}:")
    for line in preview(imp):
        print(line)
    for note in f.notes:
        print(f"note: {note}", file=sys.stderr)
    for w in imp.warnings:
        print(f"warning: {w}", file=sys.stderr)
    if args.dry_run:
        if imp.stations_problem:
            print(f"warning: {imp.stations_problem} (the import would be refused without --clear-stations)",
                  file=sys.stderr)
        print(f"dry run: nothing written ({imp.target} is as it was)", file=sys.stderr)
        return 0
    try:
        entrant_import.write(imp, args.clear_stations)
    except EventFolderError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"error: {e.filename or ''}: {e.strerror or e}: nothing written", file=sys.stderr)
        return 2
    cleared = " and emptied stations.csv (seat the entrants again)" if args.clear_stations else ""
    print(f"wrote {len(imp.entrants)} entrant(s) to {imp.target}{cleared}", file=sys.stderr)
    return 0


def add_subcommands(sub) -> None:
    """Register `entrants` on the subparsers object of the `tabletimer` command."""
    e = sub.add_parser("entrants", help="the round's entrants: import a registration form's export")
    esub = e.add_subparsers(dest="entrants_cmd", required=True)
    i = esub.add_parser(
        "import", help="the round's entrants.csv from an XLSX (its first sheet) or a CSV export",
        description="Read a registration form's export -- XLSX (the first sheet) or CSV (comma, semicolon "
                    "or tab; UTF-8, UTF-16 or the Windows code page Excel writes) -- with the columns of "
                    "entrants.csv (id, name, kind, members, eligible, notes), print what was understood, "
                    "and write the round's entrants.csv only when every row is right.")
    i.add_argument("dir", help="the event folder")
    i.add_argument("file", help="the export: .xlsx or .csv")
    i.add_argument("--round", help=ROUND_HELP)
    i.add_argument("--dry-run", action="store_true", help="print what was understood; write nothing")
    i.add_argument("--encoding", help="a CSV's encoding, e.g. cp1250 or cp1252 (default: found: UTF-8, "
                                      "else the Windows code page that reads its letters)")
    i.add_argument("--clear-stations", action="store_true",
                   help="when stations.csv seats entrants the import does not have: leave it with its "
                        "header only (nobody seated: seat the entrants again)")
    i.set_defaults(func=cmd_import)
