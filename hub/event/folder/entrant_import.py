"""Entrants imported from a registration form's export: an XLSX workbook (its
first sheet) or CSV in any usual dialect, checked by the same rules as the
round's entrants.csv (event_folder.entrants_from_records) and written as
that file only when every row is right (`tabletimer entrants import`, the
command is hub/cli/entrants.py).

What is read (docs/operations.md, "Importing entrants from a form's export"):

- XLSX: the first worksheet, opened read-only; its first non-empty row
  names the columns as entrants.csv does (id, name, kind, members, eligible,
  notes; any case).  Row numbers in errors are the sheet's own.  A number
  is read as its text (1, not 1.0), TRUE/FALSE as yes/no.  A formula's
  value as the spreadsheet program last saved it (what the organizer sees);
  a formula without a saved value (a file written by a program that does
  not calculate), or with an error (#REF!, #N/A), is an error naming its
  row.  A merged range, and a date or a time in any cell (no column of
  entrants.csv is one: the spreadsheet took a text for a date, or the
  columns are shifted), is an error naming its row.
- CSV: comma, semicolon or tab separated, with or without a byte order
  mark; UTF-8 when it decodes as UTF-8 (the only test that can tell), else
  UTF-16 with its BOM (Excel's "Unicode text"), else the Windows code page
  Excel writes: Windows-1250 (Czech) or Windows-1252 (Danish, Norwegian),
  whichever reads more of those languages' letters (guess_code_page);
  which one was used is said, and --encoding overrides it.
- Limits, checked before the file is parsed: MAX_FILE_BYTES for the file,
  MAX_UNPACKED for what an XLSX unpacks to (a zip bomb); then at most
  MAX_ROWS rows, and a cell at most csv_table.MAX_CELL characters.

Nothing is written unless the whole file is right: the new entrants.csv
is written to a file beside it and renamed over it (one step), after the
round's stations.csv is checked against the new ids and the file written
is read back to the same entrants.  A round that has an event log keeps
its entrants: the log's records name them (`tabletimer act DIR replace`
adds one).
"""

from __future__ import annotations

import codecs
import datetime as dt
import os
import re
import zipfile
from xml.etree import ElementTree
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from ...rules.formats import Format, load_format
from ...rules.standings import Entrant
from . import csv_table, event_folder, rounds
from .csv_cells import csv_text
from .csv_table import EventFolderError
from .event_folder import ENTRANT_COLUMNS

MAX_FILE_BYTES = 8 * 1024 * 1024      # the file as given: thousands of entrants fit in far less
MAX_UNPACKED = 32 * 1024 * 1024       # an XLSX's parts unpacked
MAX_ROWS = 10_000                     # entrants (rows after the header)

# letters only the language's own code page reads right from a Windows file:
# Czech (Windows-1250), Danish and Norwegian (Windows-1252)
CODE_PAGES = (("cp1250", "Windows-1250 (Central European: Czech)", "áčďéěíňóřšťúůýžÁČĎÉĚÍŇÓŘŠŤÚŮÝŽ"),
              ("cp1252", "Windows-1252 (Western European: Danish, Norwegian)", "æøåÆØÅéäöüÉÄÖÜ"))


@dataclass
class ImportedFile:
    """A file's records as read, before the entrants' checks."""
    source: str                                 # the file as errors name it
    records: list[tuple[int, list[str]]]        # (row or record number, cells), the header first
    how: str                                    # what was read: "sheet 'X' of XLSX", "CSV, ..., UTF-8"
    notes: list[str] = field(default_factory=list)


@dataclass
class EntrantImport:
    """What an import understood, and where it is to go."""
    file: ImportedFile
    round: str
    target: Path                                # the round's entrants.csv
    entrants: list[Entrant]
    rows: list[tuple[int, dict[str, str]]]      # the cells as understood, by column
    warnings: list[str]
    stations_problem: str | None = None         # stations.csv seats someone not imported


# ----------------------------------------------------------------------- pure

def guess_code_page(data: bytes) -> tuple[str, str]:
    """(codec, its description) of non-UTF-8 bytes: the code page that reads
    more of its languages' letters, less the other non-ASCII characters
    it reads; Windows-1252 on a tie (Danish and Norwegian names that differ
    only in ø: Windows-1250 reads it as ř).  EventFolderError: neither."""
    best: tuple[int, str, str] | None = None
    for codec, what, letters in CODE_PAGES:
        try:
            text = data.decode(codec)
        except UnicodeDecodeError:
            continue
        odd = [c for c in text if ord(c) > 127]
        score = sum(1 if c in letters else -1 for c in odd)
        if best is None or score >= best[0]:
            best = (score, codec, what)
    if best is None:
        raise EventFolderError("neither UTF-8 nor Windows-1250/1252 text: save it again as CSV UTF-8")
    return best[1], best[2]


def decode(data: bytes, encoding: str | None = None) -> tuple[str, str]:
    """(text, which encoding read it): `encoding` if given, else UTF-8 (with
    or without its BOM), UTF-16 with its BOM, else guess_code_page's."""
    if encoding:
        try:
            codecs.lookup(encoding)
            return data.decode(encoding).lstrip("\ufeff"), f"{encoding} (as asked)"
        except LookupError:
            raise EventFolderError(f"no encoding {encoding!r}: give e.g. utf-8, cp1250 or cp1252") from None
        except UnicodeDecodeError as e:
            raise EventFolderError(f"not {encoding} text (byte {e.start}): leave --encoding out to have "
                                   f"it found") from None
    if data.startswith(codecs.BOM_UTF8):
        try:
            return data.decode("utf-8-sig"), "UTF-8 (with a byte order mark)"
        except UnicodeDecodeError as e:
            raise EventFolderError(f"marked UTF-8, but byte {e.start} is not: save it again as CSV "
                                   f"UTF-8") from None
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return data.decode("utf-16"), "UTF-16 (Excel's Unicode text)"
    try:
        return data.decode("utf-8"), "UTF-8"
    except UnicodeDecodeError:
        codec, what = guess_code_page(data)
    other = "cp1252" if codec == "cp1250" else "cp1250"
    return data.decode(codec), (f"{what}: not UTF-8; if the names look wrong, import it again with "
                                f"--encoding {other}")


def sheet_text(value: object) -> str | None:
    """A spreadsheet cell's value as the text entrants.csv holds: a number
    as written (1, not 1.0), TRUE/FALSE as yes/no; None for a date or a
    time (no column of entrants.csv is one)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (dt.datetime, dt.date, dt.time, dt.timedelta)):
        return None
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def column_letter(i: int) -> str:
    """The spreadsheet's letter of the 0-based column i: A, ..., Z, AA, ..."""
    s = ""
    i += 1
    while i:
        i, r = divmod(i - 1, 26)
        s = chr(65 + r) + s
    return s


def entrants_csv(rows: Iterable[dict[str, str]]) -> str:
    """entrants.csv's text of the rows (every column of ENTRANT_COLUMNS),
    neutralised against formulas as every CSV the hub writes (csv_cells)."""
    return csv_text([list(ENTRANT_COLUMNS)] + [[r.get(c, "") for c in ENTRANT_COLUMNS] for r in rows])


# ------------------------------------------------------------------ reading

def _size_checked(path: Path) -> int:
    try:
        size = path.stat().st_size
    except OSError as e:
        raise EventFolderError(f"{path}: cannot read ({e.strerror})") from None
    if size > MAX_FILE_BYTES:
        raise EventFolderError(f"{path}: {size / 2**20:.1f} MB; an entrants file is at most "
                               f"{MAX_FILE_BYTES // 2**20} MB: is this the right file?")
    return size


def _rows_checked(source: str, records: list[tuple[int, list[str]]]) -> None:
    if len(records) > MAX_ROWS + 1:
        raise EventFolderError(f"{source}: more than {MAX_ROWS} rows; an entrants file has at most "
                               f"{MAX_ROWS} (one per entrant): is this the right file?")


def read_csv_file(path: Path, encoding: str | None = None) -> ImportedFile:
    """A CSV file's records (decode; event_folder's reading of the cells)."""
    _size_checked(path)
    source = str(path)
    try:
        text, used = decode(path.read_bytes(), encoding)
    except EventFolderError as e:
        raise EventFolderError(f"{source}: {e}") from None
    delimiter = csv_table.sniff_delimiter(text)
    records = csv_table.csv_records(text, source, delimiter)
    _rows_checked(source, records)
    said = {",": "comma", ";": "semicolon", "\t": "tab"}[delimiter]
    return ImportedFile(source, records, f"CSV, {said} separated, {used}")


MERGE = re.compile(rb'<(?:\w+:)?mergeCell\b[^>]*?\bref="([A-Za-z]+[0-9]+(?::[A-Za-z]+[0-9]+)?)"')
ROW = re.compile(rb"<(?:\w+:)?row\b")
RELS = "{http://schemas.openxmlformats.org/package/2006/relationships}Relationship"
R_ID = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id"


def _first_sheet(archive: zipfile.ZipFile) -> tuple[str, str]:
    """(name, XML part) of the workbook's first sheet, from its small
    parts: the package's relationships, the workbook's, workbook.xml."""
    def rels(part: str) -> list[tuple[str, str, str]]:
        folder, _, name = part.rpartition("/")
        root = ElementTree.fromstring(archive.read(f"{folder}/_rels/{name}.rels".lstrip("/")))
        return [(r.get("Id", ""), r.get("Type", ""), _joined(folder, r.get("Target", ""))) for r in root.iter(RELS)]

    book = next(t for _, kind, t in rels("") if kind.endswith("/officeDocument"))
    sheet = next(e for e in ElementTree.fromstring(archive.read(book)).iter() if e.tag.endswith("}sheet"))
    return sheet.get("name", ""), next(t for i, _, t in rels(book) if i == sheet.get(R_ID))


def _joined(folder: str, target: str) -> str:
    """A relationship's target as a path in the package."""
    if target.startswith("/"):
        return target[1:]
    out: list[str] = []
    for x in (folder.split("/") if folder else []) + target.split("/"):
        if x == "..":
            out = out[:-1]
        elif x not in (".", ""):
            out.append(x)
    return "/".join(out)


def _scan(archive: zipfile.ZipFile, part: str) -> tuple[int, list[str]]:
    """(rows, merged ranges) of a worksheet's XML part, found in its bytes
    as they stream, before any XML parser reads it (openpyxl's read-only
    mode does not give the merged ranges, and reads a whole sheet without
    a <dimension> to size it: seconds for 100,000 rows).  Each piece is cut
    before a '<': no tag is split."""
    rows, found = 0, []
    rest = b""
    with archive.open(part) as f:
        while True:
            chunk = f.read(1 << 20)
            buf = rest + chunk
            cut = buf.rfind(b"<") if chunk else len(buf)
            if cut <= 0 and chunk:
                rest = buf
                continue
            done, rest = buf[:cut], buf[cut:]
            rows += len(ROW.findall(done))
            found += [m.group(1).decode() for m in MERGE.finditer(done)]
            if not chunk:
                return rows, found


def _unpacked_checked(path: Path) -> None:
    try:
        with zipfile.ZipFile(path) as z:
            unpacked = sum(i.file_size for i in z.infolist())
    except (zipfile.BadZipFile, OSError):
        raise EventFolderError(f"{path}: not an XLSX workbook (an .xls of Excel 97-2003, or an .ods? save it "
                               f"as .xlsx or as CSV)") from None
    if unpacked > MAX_UNPACKED:
        raise EventFolderError(f"{path}: unpacks to {unpacked / 2**20:.1f} MB; an entrants workbook is at most "
                               f"{MAX_UNPACKED // 2**20} MB unpacked: is this the right file?")


def read_xlsx_file(path: Path) -> ImportedFile:
    """The first worksheet's rows (the module docstring: what is refused)."""
    from openpyxl import load_workbook

    _size_checked(path)
    _unpacked_checked(path)
    source = str(path)
    try:
        with zipfile.ZipFile(path) as z:
            first, part = _first_sheet(z)
            rows, merged = _scan(z, part)
    except (KeyError, StopIteration, ElementTree.ParseError, zipfile.BadZipFile):
        raise EventFolderError(f"{path}: not an XLSX workbook as a spreadsheet program saves it: save it again "
                               f"from the spreadsheet program") from None
    if rows > MAX_ROWS + 1:
        raise EventFolderError(f"{source}: more than {MAX_ROWS} rows ({rows} in the first sheet, {first!r}); an "
                               f"entrants file has at most {MAX_ROWS} (one per entrant): is this the right file? "
                               f"(if the rows below the entrants are empty, delete them)")
    if merged:
        row = "".join(c for c in merged[0].split(":")[0] if c.isdigit())
        raise EventFolderError(f"{source}:{row}: merged cells {', '.join(merged[:5])}"
                               f"{' ...' if len(merged) > 5 else ''}: a merged range holds its value "
                               f"in its first cell only, the others read empty; unmerge them and write "
                               f"the value in every row")
    try:
        values = load_workbook(path, read_only=True, data_only=True)
        formulas = load_workbook(path, read_only=True, data_only=False)
    except Exception as e:             # openpyxl's errors of a damaged file are of many kinds
        raise EventFolderError(f"{path}: cannot be read as XLSX ({type(e).__name__}: {e}): save it "
                               f"again from the spreadsheet program") from None
    try:
        names = values.sheetnames
        ws, wf = values.worksheets[0], formulas.worksheets[0]
        ws.reset_dimensions()
        wf.reset_dimensions()
        records, notes = _sheet_records(source, ws.iter_rows(), wf.iter_rows())
    finally:
        values.close()
        formulas.close()
    if not records:
        others = f" (the workbook's sheets: {', '.join(names)}: move the entrants' sheet first)" if len(names) > 1 else ""
        raise EventFolderError(f"{source}: the first sheet, {names[0]!r}, is empty{others}; its first row "
                               f"must name the columns: {', '.join(ENTRANT_COLUMNS)}")
    more = f", the first of {len(names)}" if len(names) > 1 else ""
    return ImportedFile(source, records, f"XLSX, sheet {names[0]!r}{more}", notes)


def _sheet_records(source: str, value_rows, formula_rows) -> tuple[list[tuple[int, list[str]]], list[str]]:
    """(row number, cells) from the first non-empty row on, each cell's
    text checked (sheet_text, formulas, MAX_CELL); notes: formulas read."""
    records: list[tuple[int, list[str]]] = []
    header: list[str] = []
    from_formulas = 0
    for n, (vrow, frow) in enumerate(zip(value_rows, formula_rows), start=1):
        cells: list[str] = []
        for i, (v, f) in enumerate(zip(vrow, frow)):
            where = f"{source}:{n}: column {column_letter(i)}" + (
                f" ({header[i]})" if i < len(header) and header[i] else "")
            if getattr(f, "data_type", None) == "f":
                if v.value is None:
                    raise EventFolderError(f"{where}: a formula ({f.value}) with no value saved: open the "
                                           f"file in the spreadsheet program and save it again (or paste the "
                                           f"values instead of the formulas)")
                from_formulas += 1
            if getattr(v, "data_type", None) == "e":
                raise EventFolderError(f"{where}: the error {v.value} where a value should be: correct the "
                                       f"formula, or write the value")
            text = sheet_text(v.value)
            if text is None:
                raise EventFolderError(f"{where}: a date or time ({v.value}) where a text should be: the "
                                       f"spreadsheet took what was typed for a date, or the columns are "
                                       f"shifted; format the column as text and type it again")
            cells.append(text)
        while cells and not cells[-1].strip():
            cells.pop()
        if not records and not cells:
            continue                        # empty rows above the header
        csv_table.check_cells(source, n, cells)
        if not records:
            header = [c.strip().lower() for c in cells]
        records.append((n, cells))
        _rows_checked(source, records)
    notes = [f"{from_formulas} cell(s) hold a formula: read as the values the spreadsheet saved"] if from_formulas else []
    return records, notes


def read_file(path: str | Path, encoding: str | None = None) -> ImportedFile:
    """An import file's records: XLSX by its name (.xlsx, .xlsm) or its zip
    signature, else CSV."""
    p = Path(path)
    try:
        with open(p, "rb") as f:
            magic = f.read(4)
    except OSError as e:
        raise EventFolderError(f"{p}: cannot read ({e.strerror})") from None
    if p.suffix.lower() in (".xlsx", ".xlsm") or magic == b"PK\x03\x04":
        return read_xlsx_file(p)
    if p.suffix.lower() in (".xls", ".ods"):
        raise EventFolderError(f"{p}: an {p.suffix} file; save it as .xlsx or as CSV")
    return read_csv_file(p, encoding)


# --------------------------------------------------------------- the import

def understand(hall: str | Path, file: str | Path, round: str | None = None,
               encoding: str | None = None) -> EntrantImport:
    """Read and check an import for a round (nothing written):
    EventFolderError says the first thing wrong."""
    try:
        name, folder = rounds.resolve(hall, round)
    except rounds.RoundError as e:
        raise EventFolderError(str(e)) from None
    fmt: Format = load_format(folder / "format.toml")
    got = read_file(file, encoding)
    entrants, warnings = event_folder.entrants_from_records(got.records, got.source, fmt)
    rows = csv_table.table(got.records, got.source, ENTRANT_COLUMNS, ())
    out = EntrantImport(got, name, folder / "entrants.csv", entrants, rows, warnings)
    stations = folder / "stations.csv"
    if stations.exists():
        try:
            event_folder.load_stations(stations, fmt, {e.id for e in entrants})
        except EventFolderError as e:
            out.stations_problem = str(e)
    return out


def write(imp: EntrantImport, clear_stations: bool = False) -> None:
    """Write the round's entrants.csv (and, with clear_stations, its
    stations.csv as its header only: nobody seated yet), or nothing:
    EventFolderError when the round has a log, or stations.csv seats
    someone the import does not have."""
    folder = imp.target.parent
    db = folder / "events.sqlite"
    if db.exists():
        raise EventFolderError(f"{db} exists: this round has been run (or its start recorded), and its log names "
                               f"its entrants; the import is refused, nothing written. Add an entrant with "
                               f"`tabletimer act DIR replace ...`, or import into a new round "
                               f"(`tabletimer round add DIR NAME --format PRESET`)")
    if imp.stations_problem and not clear_stations:
        raise EventFolderError(f"{imp.stations_problem}; the import is refused, nothing written: correct "
                               f"stations.csv, or import with --clear-stations (stations.csv is then left with "
                               f"its header only: seat the entrants again)")
    text = entrants_csv(r for _, r in imp.rows)
    tmp, tmp_stations = folder / ".entrants.csv.import", folder / ".stations.csv.import"
    try:
        tmp.write_text(text, encoding="utf-8", newline="")
        back, _ = event_folder.load_entrants(tmp, load_format(folder / "format.toml"))
        if back != imp.entrants:
            raise EventFolderError(f"{tmp}: read back as other entrants than imported (a bug): nothing written")
        if clear_stations:
            tmp_stations.write_text(",".join(event_folder.STATION_COLUMNS) + "\n", encoding="utf-8")
            os.replace(tmp_stations, folder / "stations.csv")
        os.replace(tmp, imp.target)
    finally:
        tmp.unlink(missing_ok=True)
        tmp_stations.unlink(missing_ok=True)
