"""An event folder: everything one competition needs, in files an organizer
can read and edit.

    DIR/format.toml       the competition format (copied from a preset by `tabletimer init`)
    DIR/entrants.csv      id, name, kind, members, eligible, notes
    DIR/stations.csv      board, button, table, entrant, puzzle
    DIR/title             the event's title (one line: the projector, cards, badges and
                          results show it; set by `tabletimer init`; default the folder's name)
    DIR/language          the event's language (one code: en, cs, da or nb; set by `tabletimer
                          init --language`, changed by `tabletimer language DIR CODE`): the
                          projector, the hall's pages and the sheets speak it; default English
    DIR/board-keys.json   the boards' secret keys (written by `tabletimer board flash`)
    DIR/events.sqlite     the event log: the record of the competition
    DIR/broker/           the embedded broker's files

That is an event of one round; an event of several (a competition day:
individuals, pairs, teams on the same boards) keeps each round's format,
entrants, stations and log in DIR/rounds/NAME/ and the hall's files (title,
keys, logins, referees) in DIR once (rounds.py).

CSV files may come from registration tools: UTF-8 with or without BOM, comma,
semicolon or tab separated (`tabletimer entrants import` reads other code pages and
XLSX: entrant_import.py).  Errors name the file and line; warnings (capacity,
duplicate names) do not stop the event.  A cell holds at most MAX_CELL
characters (a longer one is an error naming its line: the wrong file, or a
cell that swallowed the rest of the file through an unclosed quote).  A cell neutralised against formula
injection (`'=...`, as the hub writes its CSV files and some tools export
them: csv_cells.py) is read without that quote; a cell's spaces are trimmed.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from tabletimer.shared.protocol import ProtocolError, check_board_id

from ...i18n.catalogue import SOURCE, UnknownLanguage, language
from ...rules.formats import Format, format_text, load_format
from ...rules.speed import faster
from ...rules.standings import Entrant, Member
from . import rounds
from .csv_table import EventFolderError, read_utf8_csv, table

ENTRANT_COLUMNS = ("id", "name", "kind", "members", "eligible", "notes", "country",   # country: advancement.py
                   "publish")                                                    # publish: the public site
STATION_COLUMNS = ("board", "button", "table", "entrant", "puzzle")
# yes and no in the seeds' languages, each as a word and a letter: English, Norwegian and Danish
# (ja; nei, nej), Czech (ano, ne); x ticks a box, an empty cell is no
YES = ("yes", "y", "true", "1", "ja", "j", "ano", "x")
NO = ("no", "n", "false", "0", "nei", "nej", "ne", "")
YES_NO_WORDS = "yes or no (ja, nei or nej; ano or ne)"


TITLE_FILE = "title"
LANGUAGE_FILE = "language"
MAX_TITLE = 120
REHEARSAL = "rehearsal"     # `tabletimer rehearse DIR`'s own event folder, DIR/rehearsal (cli/rehearse.py)
SPEED_FILE = "speed"        # in a rehearsal: how many times faster its rounds play (`rehearse --speed N`)
REHEARSING = "running"      # in a rehearsal, while it runs: the rehearsing hub's pid, and "day", "round" or "drill"


def clean_title(text: str) -> str:
    """A title as stored: one line, spaces trimmed; EventFolderError for one
    too long."""
    t = " ".join(str(text).split())
    if len(t) > MAX_TITLE:
        raise EventFolderError(f"the event's title is {len(t)} characters; at most {MAX_TITLE}")
    return t


def event_title(path: str | Path) -> str:
    """The event's title: DIR/title; for a rehearsal (DIR/rehearsal of an
    event folder, without a title of its own) the event's, marked
    "(rehearsal)"; else the folder's name."""
    p = Path(path).resolve()
    try:
        t = " ".join((p / TITLE_FILE).read_text(encoding="utf-8-sig").split())
    except (OSError, UnicodeDecodeError):
        t = ""
    if t:
        return t
    if p.name == REHEARSAL and rounds.names(p) and rounds.names(p.parent):
        return f"{event_title(p.parent)} (rehearsal)"
    return p.name


def save_title(path: str | Path, title: str) -> str:
    """Write DIR/title (a blank one removes it: the folder's name again)."""
    t = clean_title(title)
    f = Path(path) / TITLE_FILE
    if t:
        f.write_text(t + "\n", encoding="utf-8")
    else:
        f.unlink(missing_ok=True)
    return t


def event_language(path: str | Path) -> str:
    """The event's language: DIR/language (a rehearsal without one: its
    event's), else English; EventFolderError for a code the hub does not
    speak (the message names those it does)."""
    p = Path(path).resolve()
    try:
        code = (p / LANGUAGE_FILE).read_text(encoding="utf-8-sig").strip()
    except (OSError, UnicodeDecodeError):
        code = ""
    if not code:
        if p.name == REHEARSAL and rounds.names(p) and rounds.names(p.parent):
            return event_language(p.parent)
        if p.parent.name == rounds.ROUNDS:          # a round's folder: the hall's language
            return event_language(p.parent.parent)
        return SOURCE
    try:
        return language(code)
    except UnknownLanguage as e:
        raise EventFolderError(f"{p / LANGUAGE_FILE}: {e}") from None


def save_language(path: str | Path, code: str) -> str:
    """Write DIR/language (checked first: UnknownLanguage writes nothing)."""
    lang = language(code)
    (Path(path) / LANGUAGE_FILE).write_text(lang + "\n", encoding="utf-8")
    return lang


@dataclass(frozen=True)
class Station:
    board: str
    button: int
    table: str
    entrant: str
    puzzle: int | None       # None: the entrant's next puzzle (one-at-a-time rounds)


@dataclass
class EventFolder:
    path: Path                # the hall: the event folder (its title, keys, logins, referees)
    format: Format
    entrants: list[Entrant]
    stations: list[Station]
    warnings: list[str] = field(default_factory=list)
    round: str = rounds.MAIN  # which of its rounds this is (rounds.py)
    round_path: Path | None = None    # where the round's files are (None: path itself)
    # entrants without a station (reserves, the documented way to prepare a replacement): said
    # where a hub starts (without_station_note), not as a warning of every command
    without_station: tuple[str, ...] = ()

    def without_station_note(self) -> str | None:
        """What the hub's start says of the entrants without a station (None: none)."""
        ids = self.without_station
        if not ids:
            return None
        return (f"{self.files / 'stations.csv'}: no station for " + ", ".join(ids[:10])
                + (" ..." if len(ids) > 10 else "")
                + " (reserves? `tabletimer act DIR replace absent=ID entrant=...` gives one an absent"
                  " entrant's station)")

    @property
    def files(self) -> Path:
        """The round's folder: its format, entrants, stations and log."""
        return self.round_path or self.path

    @property
    def db(self) -> Path:
        return self.files / "events.sqlite"

    @property
    def several_rounds(self) -> bool:
        return len(rounds.names(self.path)) > 1

    @property
    def keys_file(self) -> Path:
        return self.path / "board-keys.json"

    @property
    def title(self) -> str:
        """The event's title (event_title: DIR/title, else the folder's name)."""
        return event_title(self.path)

    def station(self, board: str, button: int) -> Station | None:
        for s in self.stations:
            if s.board == board and s.button == button:
                return s
        return None


# --------------------------------------------------------------------------- CSV

def read_csv(path: Path, columns: tuple[str, ...] | None, required: tuple[str, ...],
             why: dict[str, str] | None = None) -> list[tuple[int, dict]]:
    """Rows as (line number, {column: value}); header names are matched
    case-insensitively (columns None: any column); the delimiter is sniffed
    (comma, semicolon or tab).
    why: for a required column, why it is needed (said when it is missing)."""
    return table(read_utf8_csv(path), str(path), columns, required, why)


def _yes(value: str, where: str) -> bool:
    v = value.strip().lower()
    if v in YES:
        return True
    if v in NO:
        return False
    raise EventFolderError(f"{where}: expected {YES_NO_WORDS}, not {value!r}")


def load_entrants(path: Path, fmt: Format) -> tuple[list[Entrant], list[str]]:
    """Entrants and warnings.  members: names separated by '|'; eligible:
    yes/no for the entrant, or one yes/no per member separated by '|'."""
    return entrants_from_records(read_utf8_csv(path), str(path), fmt)


def entrants_from_records(records: list[tuple[int, list[str]]], source: str,
                          fmt: Format) -> tuple[list[Entrant], list[str]]:
    """Entrants and warnings (load_entrants) from a file's records (number,
    cells; the header first: csv_records, or an imported sheet's rows:
    entrant_import.py); errors name source and the record's number."""
    entrants: list[Entrant] = []
    warnings: list[str] = []
    seen_ids: dict[str, int] = {}
    seen_names: dict[str, int] = {}
    # a format with prizes for eligible entrants only needs the column: read
    # without it, everyone would count as eligible
    needs_eligible = fmt.eligible_members_min > 0
    rule = f"{Path(fmt.path).name} (prizes.eligible_members_min = {fmt.eligible_members_min})"
    why = {"eligible": f"{rule} gives prizes only to eligible entrants"
                       f"{f' ({fmt.eligibility})' if fmt.eligibility else ''}; add the column "
                       f"with yes or no for every entrant (a team: yes|no|... per member)"}
    rows = table(records, source, ENTRANT_COLUMNS,
                 ("id", "name", "eligible") if needs_eligible else ("id", "name"), why)
    for n, row in rows:
        where = f"{source}:{n}"
        eid = row["id"]
        if not eid:
            raise EventFolderError(f"{where}: 'id' is empty")
        if eid in seen_ids:
            raise EventFolderError(f"{where}: id {eid!r} already used on line {seen_ids[eid]}")
        seen_ids[eid] = n
        kind = (row.get("kind") or fmt.kind).lower()
        if kind != fmt.kind:
            raise EventFolderError(f"{where}: kind {kind!r}, but the format {fmt.name} is for {fmt.kind}s")
        names = [m.strip() for m in row.get("members", "").split("|") if m.strip()]
        if fmt.kind == "team" and names and not fmt.min_members <= len(names) <= fmt.max_members:
            raise EventFolderError(f"{where}: {len(names)} members; a team has "
                                   f"{fmt.min_members}-{fmt.max_members}")
        if fmt.kind == "pair" and names and len(names) != 2:
            raise EventFolderError(f"{where}: a pair has 2 members, not {len(names)}")
        elig_text = row.get("eligible", "")
        parts = [p for p in elig_text.split("|")] if "|" in elig_text else None
        if needs_eligible and not all(p.strip() for p in (parts or [elig_text])):
            raise EventFolderError(f"{where}: 'eligible' is empty; {rule} gives prizes only to "
                                   f"eligible entrants: write yes or no"
                                   f"{' for every member' if parts else ''}")
        if parts is not None:
            if len(parts) != len(names):
                raise EventFolderError(f"{where}: 'eligible' has {len(parts)} values for {len(names)} members")
            members = tuple(Member(m, _yes(p, f"{where} (eligible)")) for m, p in zip(names, parts))
            eligible = True
        else:
            eligible = _yes(elig_text, f"{where} (eligible)") if elig_text else True
            members = tuple(Member(m, eligible) for m in names)
        _yes(row.get("publish") or "yes", f"{where} (publish)")     # checked here: unpublished() reads it
        name = row["name"] or eid
        if name.lower() in seen_names:
            warnings.append(f"{where}: name {name!r} also on line {seen_names[name.lower()]}")
        seen_names[name.lower()] = n
        entrants.append(Entrant(eid, name, members, eligible))
    if fmt.capacity is not None and len(entrants) > fmt.capacity:
        warnings.append(f"{source}: {len(entrants)} entrants; the format allows {fmt.capacity}")
    return entrants, warnings


def unpublished(path: Path) -> frozenset[str]:
    """The ids whose `publish` is no (entrants.csv, loaded before: checked): the public site names them not."""
    return frozenset(r["id"] for _, r in read_csv(path, ENTRANT_COLUMNS, ("id",))
                     if (r.get("publish") or "y").lower() in NO)


def load_stations(path: Path, fmt: Format, entrant_ids: set[str]) -> list[Station]:
    stations: list[Station] = []
    seen: dict[tuple[str, int], int] = {}
    for n, row in read_csv(path, STATION_COLUMNS, ("board", "button", "entrant")):
        where = f"{path}:{n}"
        try:
            board = check_board_id(row["board"])
        except ProtocolError as e:
            raise EventFolderError(f"{where}: board: {e}") from e
        try:
            button = int(row["button"])
        except ValueError:
            raise EventFolderError(f"{where}: button must be a number (1 = the first button)") from None
        if not 1 <= button <= 64:
            raise EventFolderError(f"{where}: button must be 1..64")
        if (board, button) in seen:
            raise EventFolderError(f"{where}: {board} button {button} already on line {seen[(board, button)]}")
        seen[(board, button)] = n
        if row["entrant"] not in entrant_ids:
            raise EventFolderError(f"{where}: no entrant {row['entrant']!r} in entrants.csv")
        puzzle = None
        if row.get("puzzle"):
            try:
                puzzle = int(row["puzzle"])
            except ValueError:
                raise EventFolderError(f"{where}: puzzle must be a number") from None
            if not 1 <= puzzle <= len(fmt.puzzles):
                raise EventFolderError(f"{where}: puzzle {puzzle}; the format has {len(fmt.puzzles)}")
        stations.append(Station(board, button, row.get("table") or board, row["entrant"], puzzle))
    return stations


# ------------------------------------------------------------------------ folder

def rehearsing(folder: str | Path) -> str | None:
    """What the rehearsal running on the rehearsal folder is ("day",
    "round" or "drill"), None if none runs."""
    try:
        lines = (Path(folder) / REHEARSING).read_text().split()
        os.kill(int(lines[0]), 0)
    except (OSError, ValueError, IndexError):
        return None
    return lines[1] if len(lines) > 1 else "round"


def rehearsal_hint(path: str | Path, command: str) -> str:
    """For a command given an event folder while a rehearsal of it runs:
    where the rehearsal is (its commands take DIR/rehearsal); "" if none
    runs, or path is the rehearsal's."""
    p = Path(path)
    if p.name == REHEARSAL or rehearsing(p / REHEARSAL) is None:
        return ""
    return (f" (a rehearsal of {p} runs: its folder is {p / REHEARSAL}, "
            f"`tabletimer {command} {p / REHEARSAL} ...`)")


def rehearsal_speed(path: str | Path) -> float:
    """How many times faster a rehearsal plays its rounds (`rehearse
    --speed N`, kept in DIR/rehearsal/speed); 1 for any other folder, or a
    rehearsal in real time."""
    p = Path(path)
    if p.name != REHEARSAL or not rounds.names(p.parent):
        return 1
    try:
        text = (p / SPEED_FILE).read_text().strip()
    except FileNotFoundError:
        return 1
    except OSError as e:
        raise EventFolderError(f"{p / SPEED_FILE}: cannot read it ({e.strerror})") from None
    try:
        return float(text)
    except ValueError:
        raise EventFolderError(f"{p / SPEED_FILE}: {text[:40]!r} is not a speed; rehearse again with "
                               "--speed N (or without, in real time)") from None


def load(path: str | Path, round: str | None = None) -> EventFolder:
    """The event folder at path, for one of its rounds (None: its only one,
    else the live one: rounds.resolve)."""
    hall = Path(path)
    try:
        name, p = rounds.resolve(hall, round)
    except rounds.RoundError as e:
        raise EventFolderError(str(e)) from None
    fmt = load_format(p / "format.toml")
    speed = rehearsal_speed(hall)
    if speed != 1:
        try:
            fmt = faster(fmt, speed, "rehearsed")
        except ValueError as e:
            raise EventFolderError(f"{hall / SPEED_FILE}: {e}") from None
    entrants, warnings = load_entrants(p / "entrants.csv", fmt)
    stations = load_stations(p / "stations.csv", fmt, {e.id for e in entrants})
    with_station = {s.entrant for s in stations}
    without = tuple(e.id for e in entrants if e.id not in with_station)
    return EventFolder(hall, fmt, entrants, stations, warnings, name, None if p == hall else p, without)


def init(path: str | Path, preset: str, title: str | None = None, lang: str | None = None) -> Path:
    """A new event folder with the preset's format and example CSV files,
    its title (DIR/title; None or blank: the folder's name) and its language
    (DIR/language; None: English)."""
    p = Path(path)
    if lang is not None:
        try:
            lang = language(lang)        # checked before anything is written
        except UnknownLanguage as e:
            raise EventFolderError(str(e)) from None
    if (p / "format.toml").exists():
        raise EventFolderError(f"{p} already holds an event (format.toml exists)")
    if rounds.names(p):
        raise EventFolderError(f"{p} holds rounds already ({', '.join(rounds.names(p))}): add another "
                               f"with `tabletimer round add {p} NAME --format {preset}`")
    title = clean_title(title or "")     # checked before anything is written
    load_format(preset)                  # FormatError: an unknown preset (the nearest named), a bad file
    p.mkdir(parents=True, exist_ok=True)
    _write_round_files(p, preset)
    if title:
        save_title(p, title)
    if lang is not None:
        save_language(p, lang)
    return p


def add_round(path: str | Path, name: str, preset: str, title: str | None = None) -> Path:
    """A new round in the event folder at path (made if need be, with its
    title): its folder DIR/rounds/NAME with the preset's format and example
    CSV files, as `init` writes them."""
    hall = Path(path)
    title = clean_title(title or "")
    load_format(preset)
    try:
        d = rounds.add(hall, name)
    except rounds.RoundError as e:
        raise EventFolderError(str(e)) from None
    _write_round_files(d, preset)
    if title:
        save_title(hall, title)
    return d


def _write_round_files(p: Path, preset: str) -> None:
    fmt = load_format(preset)
    text = format_text(preset)
    origin = f"TableTimer's preset {fmt.name!r}" if fmt.path.startswith("presets/") else "a format file"
    head = (f"# This event's competition format, copied from {origin} by `tabletimer init`.\n"
            f"# Edit it for your event; `tabletimer formats show format.toml --explain` checks it.\n")
    (p / "format.toml").write_text(head + text)
    fmt = load_format(p / "format.toml")
    if fmt.kind == "individual":
        rows = ["id,name,kind,members,eligible,notes", "1,Anna Example,individual,,yes,",
                "2,Ben Example,individual,,yes,"]
    elif fmt.kind == "pair":
        rows = ["id,name,kind,members,eligible,notes", "P1,The Edges,pair,Anna|Ben,yes|yes,"]
    else:
        members = "|".join(f"Member {i + 1}" for i in range(fmt.max_members))
        elig = "|".join("yes" for _ in range(fmt.max_members))
        rows = ["id,name,kind,members,eligible,notes", f"T1,Team One,team,{members},{elig},"]
    (p / "entrants.csv").write_text("\n".join(rows) + "\n")
    first = rows[1].split(",")[0]
    relay = fmt.relay
    if relay is not None:
        st = ["board,button,table,entrant,puzzle"] + [
            f"T01,{i + 1},Table 1,{first},{n}" for i, n in enumerate(relay.numbers)]
    else:
        st = ["board,button,table,entrant,puzzle", f"T01,1,Table 1,{first},"]
    (p / "stations.csv").write_text("\n".join(st) + "\n")
    shutil.copymode(p / "format.toml", p / "stations.csv")
