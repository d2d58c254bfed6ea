"""The files of a round whose entrants advance from earlier rounds
(`tabletimer advance`, rules/advancement.py): the source rounds'
entrants.csv rows read as they are (their country column too), and the
round's entrants.csv and stations.csv written, each whole and atomically.

- entrants.csv: the advancing entrants' rows copied from their source
  round's entrants.csv (id, name, kind, members, eligible, country; notes
  say where each came from), in seating order.
- stations.csv: seated as `tabletimer seat` seats (core/before_start.py
  seats_in_hall: the hall's tables, hall.csv or the round's stations.csv),
  in seating order (the previous rounds' positions); not here.
- a withdrawal: the reserve takes the withdrawn's row and seat.

Paths and text only; what is read is checked again by event_folder.load."""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path

from .csv_cells import csv_text, read_cell
from .event_folder import ENTRANT_COLUMNS, STATION_COLUMNS, EventFolderError

COUNTRY = "country"


def read_rows(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    """(header, rows) of a CSV file as event_folder reads it (UTF-8 with or
    without BOM, comma or semicolon, cells trimmed, neutralised cells read
    back); EventFolderError naming the file."""
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except OSError as e:
        raise EventFolderError(f"{path}: cannot read ({e.strerror})") from e
    except UnicodeDecodeError as e:
        raise EventFolderError(f"{path}: not UTF-8 text (save it as UTF-8 CSV)") from e
    first = text.splitlines()[0] if text.strip() else ""
    delim = ";" if first.count(";") > first.count(",") else ","
    try:
        rows = list(csv.reader(io.StringIO(text), delimiter=delim))
    except csv.Error as e:
        raise EventFolderError(f"{path}: not CSV as a spreadsheet saves it ({e})") from None
    if not rows:
        raise EventFolderError(f"{path}: empty")
    header = [h.strip().lower() for h in rows[0]]
    out = [{h: read_cell(r[i].strip()).strip() if i < len(r) else "" for i, h in enumerate(header) if h}
           for r in rows[1:] if any(c.strip() for c in r)]
    return header, out


def countries(path: Path) -> dict[str, str] | None:
    """Each entrant's country (entrants.csv's country column); None: the
    file has no such column."""
    header, rows = read_rows(path)
    if COUNTRY not in header:
        return None
    return {r.get("id", ""): r.get(COUNTRY, "") for r in rows}


def entrants_text(picked: list[tuple[dict[str, str], str]]) -> str:
    """entrants.csv of the advancing: (their source row, where they came
    from), in seating order."""
    lines: list[list[object]] = [list(ENTRANT_COLUMNS)]
    for row, came in picked:
        note = "; ".join(x for x in (came, row.get("notes", "")) if x)
        lines.append([row.get(c, "") if c != "notes" else note for c in ENTRANT_COLUMNS])
    return csv_text(lines, "\n")


def withdrawal_texts(entrants: Path, stations: Path, withdrawn: str,
                     reserve: tuple[dict[str, str], str] | None) -> tuple[str, str | None]:
    """entrants.csv and stations.csv (None: unchanged) after a withdrawal:
    the reserve (its source row, where it came from) in the withdrawn's
    row and seat; without a reserve, the withdrawn's row taken out."""
    _, rows = read_rows(entrants)
    picked: list[tuple[dict[str, str], str]] = []
    for r in rows:
        if r.get("id") != withdrawn:
            picked.append((r, ""))
        elif reserve is not None:
            picked.append(reserve)
    try:
        header, seats = read_rows(stations)
    except EventFolderError:
        return entrants_text(picked), None
    if not any(s.get("entrant") == withdrawn for s in seats):
        return entrants_text(picked), None
    lines: list[list[object]] = [list(STATION_COLUMNS)]
    for s in seats:
        eid = s.get("entrant", "")
        if eid == withdrawn:
            if reserve is None:
                continue
            eid = reserve[0].get("id", "")
        lines.append([s.get("board", ""), s.get("button", ""), s.get("table", ""), eid, s.get("puzzle", "")])
    return entrants_text(picked), csv_text(lines, "\n")


def write_whole(path: Path, text: str) -> None:
    """A file written whole: a temporary beside it, then renamed over it."""
    tmp = path.with_name(f".{path.name}.new")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
