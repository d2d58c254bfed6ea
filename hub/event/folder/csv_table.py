"""The CSV files of an event folder read as tables: a file's records (its
delimiter sniffed, each cell at most MAX_CELL characters), then its header
checked against the columns a file has (event_folder.py: entrants.csv,
stations.csv; entrant_import.py: a registration form's export, XLSX rows
too).  A cell neutralised against formula injection (csv_cells.py) is read
without its quote; spaces are trimmed."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from .csv_cells import read_cell

MAX_CELL = 500              # characters in a cell: an id, a name, a team's members, a note (docs/formats.md)


class EventFolderError(ValueError):
    """A file of the event folder, or one to go in it, that cannot be used:
    the text says which, where, and what to do (event_folder.py's error)."""


def read_utf8_csv(path: Path) -> list[tuple[int, list[str]]]:
    """The records of a CSV file of the folder (UTF-8, with or without BOM)."""
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except OSError as e:
        raise EventFolderError(f"{path}: cannot read ({e.strerror})") from e
    except UnicodeDecodeError as e:
        raise EventFolderError(f"{path}: not UTF-8 text (save it as UTF-8 CSV, or import it with "
                               f"`tabletimer entrants import`, which reads the Windows code pages)") from e
    return csv_records(text, str(path))


def sniff_delimiter(text: str) -> str:
    """The delimiter of CSV text, from its first line: a semicolon (Excel in
    Czech, Danish, Norwegian ... locales), a tab (Excel's "Unicode text"),
    else a comma."""
    first = text.splitlines()[0] if text.strip() else ""
    counts = {d: first.count(d) for d in (",", ";", "\t")}
    best = max(counts, key=lambda d: counts[d])
    return best if counts[best] > counts[","] else ","


def check_cells(source: str, n: int, cells: list[str]) -> None:
    """EventFolderError for a cell longer than MAX_CELL on line (row) n."""
    longest = max(cells, key=len, default="")
    if len(longest) > MAX_CELL:
        raise EventFolderError(_cell_too_long(source, n, f"of {len(longest)} characters"))


def csv_records(text: str, source: str, delimiter: str | None = None) -> list[tuple[int, list[str]]]:
    """CSV text's records as (number, cells), the first (the header) 1;
    delimiter None: sniffed.  EventFolderError for a cell too long, or text
    that is not CSV."""
    reader = csv.reader(io.StringIO(text), delimiter=delimiter or sniff_delimiter(text))
    rows: list[tuple[int, list[str]]] = []
    try:
        for row in reader:
            check_cells(source, len(rows) + 1, row)
            rows.append((len(rows) + 1, row))
    except csv.Error as e:                    # a cell past the csv module's own limit (128 KB), ...
        if "field limit" in str(e):
            raise EventFolderError(_cell_too_long(source, reader.line_num, "of more than 131072 characters")) from None
        raise EventFolderError(f"{source}:{reader.line_num}: not CSV as a spreadsheet saves it ({e}): save it "
                               f"again as CSV (UTF-8)") from None
    return rows


def table(records: list[tuple[int, list[str]]], source: str, columns: tuple[str, ...] | None,
          required: tuple[str, ...], why: dict[str, str] | None = None) -> list[tuple[int, dict]]:
    """Records (number, cells; the first the header) as (number, {column:
    value}), empty ones left out, checked against the columns: every
    required one there, no unknown one (columns None: any column, as a
    team round's registrations.csv has); names matched case-insensitively."""
    if not records:
        raise EventFolderError(f"{source}: empty; the first line must name the columns: "
                               f"{', '.join(columns or required)}")
    first, head = records[0]
    header = [h.strip().lower() for h in head]
    unknown = [h for h in header if h and columns is not None and h not in columns]
    if unknown:
        raise EventFolderError(f"{source}:{first}: unknown column(s) {', '.join(unknown)}; "
                               f"expected {', '.join(columns or ())}")
    missing = [c for c in required if c not in header]
    if missing:
        reasons = "".join(f": {why[c]}" for c in missing if why and c in why)
        raise EventFolderError(f"{source}:{first}: missing column(s) {', '.join(missing)}{reasons}")
    out = []
    for n, row in records[1:]:
        if not any(c.strip() for c in row):
            continue
        if len(row) > len(header):
            raise EventFolderError(f"{source}:{n}: {len(row)} fields, the header has {len(header)}")
        out.append((n, {h: (read_cell(row[i].strip()).strip() if i < len(row) else "")
                        for i, h in enumerate(header) if h}))
    return out


def _cell_too_long(source: str, line: int, size: str) -> str:
    """The error for a cell longer than MAX_CELL: where, and what to do."""
    return (f"{source}:{line}: a cell {size}; a cell holds at most {MAX_CELL} (an id, a name, the members, "
            f"a note): check that this is the right file, and that no quote \" is left open before this "
            f"line, then shorten the cell")
