"""The files of the draw and the seating (`tabletimer draw`, `seat`):

    ROUND/registrations.csv  the individually registered competitors of a team
                             round: id, name, eligible (optional), notes, and any
                             other column (club, family, town ...) to keep apart by
    DIR/hall.csv             the hall: table, board, buttons -- a row per board at a
                             table, tables in the order they are numbered and walked
                             (a table of two boards: two rows with the same table)

and the round's entrants.csv and stations.csv written from a draw and a seat
plan (each written whole to a new file first, then put in place: a failed
write leaves the old one).  Without hall.csv the hall is the round's
stations.csv as it is (its boards' buttons at their tables): seating again
moves the entrants over the same stations."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable, Sequence

from tabletimer.shared.protocol import ProtocolError, check_board_id

from ...rules.formats import Format
from ...rules.seating import Seat, Table
from ...rules.team_draw import Draw, Person
from .csv_cells import csv_text
from .csv_table import MAX_CELL
from .event_folder import ENTRANT_COLUMNS, NO, STATION_COLUMNS, YES, YES_NO_WORDS, EventFolderError, read_csv

REGISTRATIONS = "registrations.csv"
HALL = "hall.csv"
HALL_COLUMNS = ("table", "board", "buttons")


def load_registrations(path: Path, apart_by: str | None = None,
                       needs_eligible: bool = False) -> tuple[list[Person], bool]:
    """(the registered competitors, whether the file has an eligible
    column); apart_by: the column whose value keeps them apart (an
    error naming the columns there are when it has none); needs_eligible:
    the format gives prizes by eligibility, so every row says yes or no."""
    why = {"eligible": "the round's format gives prizes only to eligible entrants: add the column with yes "
                       "or no for every competitor"}
    rows = read_csv(path, None, ("id", "name", "eligible") if needs_eligible else ("id", "name"), why)
    column = apart_by.strip().lower() if apart_by else None
    if rows and column is not None and column not in rows[0][1]:
        raise EventFolderError(f"{path}: no column {apart_by!r} to keep apart by (its columns: "
                               f"{', '.join(rows[0][1])})")
    has_eligible = bool(rows) and "eligible" in rows[0][1]
    people = []
    for n, row in rows:
        if not row["id"]:
            raise EventFolderError(f"{path}:{n}: 'id' is empty")
        if needs_eligible and not row["eligible"]:
            raise EventFolderError(f"{path}:{n}: 'eligible' is empty; the round's format gives prizes only "
                                   f"to eligible entrants: write yes or no")
        eligible = _yes(row.get("eligible", ""), f"{path}:{n} (eligible)")
        people.append(Person(row["id"], row["name"] or row["id"], row.get(column or "", ""), eligible))
    return people, has_eligible


def load_hall(hall: Path, stations_csv: Path) -> tuple[list[Table], str]:
    """(the hall's tables, where they were read from): hall.csv, else the
    round's stations.csv as it is."""
    f = hall / HALL
    if f.exists():
        return _hall_csv(f), str(f)
    tables: dict[str, list[tuple[str, int]]] = {}
    if stations_csv.exists():
        for n, row in read_csv(stations_csv, STATION_COLUMNS, ("board", "button")):
            board, button = row["board"], _whole(row["button"], f"{stations_csv}:{n}: button")
            tables.setdefault(row.get("table") or board, []).append((board, button))
    if not tables:
        raise EventFolderError(f"{f} does not exist and {stations_csv} names no station: describe the hall in "
                               f"{f} (table,board,buttons: a row per board at a table)")
    return [Table(t, tuple(b)) for t, b in tables.items()], str(stations_csv)


def _hall_csv(f: Path) -> list[Table]:
    tables: dict[str, list[tuple[str, int]]] = {}
    seen: dict[str, int] = {}
    for n, row in read_csv(f, HALL_COLUMNS, HALL_COLUMNS):
        try:
            board = check_board_id(row["board"])
        except ProtocolError as e:
            raise EventFolderError(f"{f}:{n}: board: {e}") from None
        if board in seen:
            raise EventFolderError(f"{f}:{n}: board {board} already on line {seen[board]}")
        seen[board] = n
        buttons = _whole(row["buttons"], f"{f}:{n}: buttons")
        if not 1 <= buttons <= 64:
            raise EventFolderError(f"{f}:{n}: buttons must be 1..64 (a board's stations)")
        tables.setdefault(row["table"] or board, []).extend((board, b) for b in range(1, buttons + 1))
    if not tables:
        raise EventFolderError(f"{f}: no table: a row per board at a table (table,board,buttons)")
    return [Table(t, tuple(b)) for t, b in tables.items()]


def _yes(value: str, where: str) -> bool:
    v = value.strip().lower()
    if v in YES or v in NO:
        return v in YES or v == ""
    raise EventFolderError(f"{where}: expected {YES_NO_WORDS}, not {value!r}")


def _whole(text: str, where: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise EventFolderError(f"{where} must be a whole number, not {text!r}") from None


def entrants_text(fmt: Format, draw: Draw, with_eligible: bool) -> str:
    """entrants.csv of the drawn teams (eligible per member when the
    registrations had it)."""
    rows: list[Sequence[object]] = [ENTRANT_COLUMNS]
    for t in draw.teams:
        members = "|".join(p.name for p in t.members)
        eligible = "|".join("yes" if p.eligible else "no" for p in t.members) if with_eligible else ""
        rows.append((t.id, t.name, fmt.kind, members, eligible, f"drawn, seed {draw.seed}"))
    text = csv_text(rows, "\n")
    if any(len(m) > MAX_CELL for t in draw.teams for m in ["|".join(p.name for p in t.members)]):
        raise EventFolderError(f"a team's members are longer than {MAX_CELL} characters together: shorten the names")
    return text


def stations_text(seats: Iterable[Seat]) -> str:
    return csv_text([STATION_COLUMNS] + [(s.board, s.button, s.table, s.entrant, s.puzzle) for s in seats], "\n")


def write_whole(path: Path, text: str) -> None:
    """The file written whole beside it, then put in its place (the old
    one stays if the write fails)."""
    tmp = path.with_name(path.name + ".new")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
