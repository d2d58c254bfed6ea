"""The results as an XLSX workbook for the organizer's spreadsheet
(`tabletimer results DIR --xlsx FILE`; the command is hub/cli/outputs.py).

One worksheet per round (the rounds of day_results.load_day, in order; one
round with --round) and, in an event of several rounds, the day's
podiums first ("The day": day_results.DAY_COLUMNS).  A round's sheet:

    row 1   the title (an event of several rounds: "Hall Cup — pairs (CZJPA - pairs)")
    row 2   its state: "Final results", "Provisional: ...", "In progress: provisional, ...",
            "Not started: no results yet", "Cannot be read: ..." (STATE_ROW)
    row 3   the format, its pieces and limit, when the sheet was made
    row 4   what the marks mean
    row 5   the columns (HEADER_ROW): results.csv_columns without the _ms ones
            (pN_penalty_ms is pN_penalty): a time is a time value here
    row 6-  one row per entrant, in place order

Times (time, penalty, net_time, pN_time, pN_lap, pN_penalty) are time
values (a fraction of a day, as spreadsheets keep them) with the number
format [h]:mm:ss, and .0/.00/.000 when the format's resolution is finer
than a second: a spreadsheet sorts and adds them.  Places, award places and
pieces are numbers; an empty cell is no value.  Award places are marked: the
row in bold, its award_place cell filled gold, silver, bronze (4th and later
award places pale yellow); a provisional row is in italics, and its
provisional cell says yes.  Text cells are text, never formulas: a name
"=HYPERLINK(...)" is stored as a text cell, and one that begins with = + -
@, a tab or a CR also has the spreadsheet's quote prefix (it stays text when
the cell is edited); characters XML cannot hold are left out.  The header
row is frozen and has an autofilter.

Pure: `workbook` builds it (openpyxl's Workbook, in memory); `xlsx_bytes`
is the file's content.
"""

from __future__ import annotations

import io
from datetime import datetime, timedelta
from typing import Iterable, Sequence

from openpyxl import Workbook
from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE
from openpyxl.styles import Font, PatternFill
from openpyxl.worksheet.worksheet import Worksheet

from ..event.folder import rounds
from ..event.folder.csv_cells import DANGEROUS
from ..i18n.catalogue import N_, Words, words
from ..i18n.local_format import clock
from ..rules.formats import Format, fmt_duration
from ..rules.score_model import PuzzleSplit
from ..rules.standings import StandingRow
from . import day_results as day
from .results import RANKED, csv_columns, in_progress_text, member_names, round_heading, stamp, unofficial_words

STATE_ROW, HEADER_ROW = 2, 5
DAY_SHEET = N_("The day")             # a round's name has no space: never a round's sheet (nor in cs, da, nb)
RESULTS_SHEET = N_("Results")
# the header row's names in a language: the column keys are the msgids (English keeps them as
# the CSV has them), a puzzle's with {n}
COLUMN_WORDS = {c: c for c in (
    N_("round"), N_("format_title"), N_("state"), N_("place"), N_("award_place"), N_("entrant"), N_("name"),
    N_("members"), N_("official"), N_("status"), N_("reason"), N_("provisional"), N_("time"), N_("penalty"),
    N_("net_time"), N_("pieces"), N_("deducted_pieces"))}
SPLIT_WORDS = {k: k for k in (
    N_("p{n}_status"), N_("p{n}_time"), N_("p{n}_lap"), N_("p{n}_confirmed"), N_("p{n}_missing_found"),
    N_("p{n}_missing_lost"), N_("p{n}_missing_adjacent"), N_("p{n}_penalty"), N_("p{n}_pieces"))}
TIME_COLUMNS = ("time", "penalty", "net_time")
SPLIT_TIMES = ("time", "lap", "penalty")
AWARD_FILLS = {1: "F5C518", 2: "CFD4DA", 3: "D99A5B"}      # the HTML sheet's medals
OTHER_AWARD_FILL = "FEF3C7"
MS_PER_DAY = 86_400_000


def time_format(resolution_ms: int) -> str:
    """The number format of a time at the format's resolution."""
    places = 0 if resolution_ms % 1000 == 0 else 1 if resolution_ms % 100 == 0 else 2 if resolution_ms % 10 == 0 else 3
    return "[h]:mm:ss" + ("." + "0" * places if places else "")


def round_columns(fmt: Format) -> list[str]:
    """A round sheet's columns: the CSV's, times as values (no _ms twin)."""
    return [("p" + c[1:-3] if c.endswith("_penalty_ms") else c)
            for c in csv_columns(fmt) if not c.endswith("_ms") or c.endswith("_penalty_ms")]


def column_label(column: str, w: Words) -> str:
    """A column's name in the header row, in w's language (English: the CSV's key)."""
    if column in COLUMN_WORDS:
        return w.t(COLUMN_WORDS[column])
    head, _, rest = column.partition("_")
    template = "p{n}_" + rest
    if head[:1] == "p" and head[1:].isdigit() and template in SPLIT_WORDS:
        return w.t(SPLIT_WORDS[template], n=head[1:])
    return column


# the statuses in the cells: English keeps the CSV's codes
STATUS_CODES = {c: c for c in (N_("finished"), N_("unfinished"), N_("running"), N_("waiting"), N_("packed"),
                               N_("dns"), N_("dq"))}


def code_word(status: str, w: Words) -> str:
    return w.t(STATUS_CODES[status]) if status in STATUS_CODES else status


def _yn(b: bool, w: Words = words("en")) -> str:
    return w.t("yes") if b else w.t("no")


def _time(ms: int | None) -> timedelta | None:
    return None if ms is None else timedelta(milliseconds=ms)


def round_values(r: StandingRow, fmt: Format, members: list[str], w: Words = words("en")) -> list[object]:
    """A row's cells in round_columns' order (None: empty); yes/no and the
    status in w's language."""
    ranked = r.status in RANKED
    out: list[object] = [
        r.place, r.award_place, r.entrant, r.name, "|".join(members), _yn(r.official, w), code_word(r.status, w),
        r.reason, _yn(r.provisional, w), _time(r.time_ms), _time(r.penalty_ms) if ranked else None,
        _time(r.net_time_ms), r.pieces if ranked else None, r.deducted_pieces if ranked else None]
    splits = {sp.puzzle: sp for sp in r.splits}
    for pz in range(1, len(fmt.puzzles) + 1):
        sp = splits.get(pz)
        out += [None] * 9 if sp is None else _split_values(sp, sp.status == "finished", w)
    return out


def _split_values(sp: PuzzleSplit, fin: bool, w: Words) -> list[object]:
    """A puzzle's cells: status, time, lap, confirmed, missing found, lost,
    adjacent, penalty, pieces."""
    return [code_word(sp.status, w), _time(sp.time_ms), _time(sp.lap_ms), _yn(sp.confirmed, w) if fin else None,
            sp.missing_found if fin else None, sp.missing_lost if fin else None,
            sp.missing_adjacent if fin else None, _time(sp.penalty_ms) if fin else None, sp.credited]


def set_cell(ws: Worksheet, row: int, col: int, value: object, time_fmt: str) -> None:
    """A cell: a time as a time value, a number as a number, text as text
    (never a formula: the module docstring)."""
    cell = ws.cell(row=row, column=col)
    if value is None or value == "":
        return
    if isinstance(value, timedelta):
        cell.value = value.total_seconds() * 1000 / MS_PER_DAY
        cell.number_format = time_fmt
        return
    if isinstance(value, int) and not isinstance(value, bool):
        cell.value = value
        return
    text = ILLEGAL_CHARACTERS_RE.sub("", str(value))
    cell.value = text
    cell.data_type = "s"                  # "=..." stays text: openpyxl would take it for a formula
    if text[:1] in DANGEROUS:
        cell.quotePrefix = True


def _header(ws: Worksheet, title: str, state: str, about: str, legend: str, columns: Sequence[str],
            w: Words) -> None:
    for row, text, font in ((1, title, Font(bold=True, size=14)), (STATE_ROW, state, Font(bold=True)),
                            (3, about, None), (4, legend, Font(italic=True, size=9))):
        set_cell(ws, row, 1, text, "")
        if font is not None:
            ws.cell(row=row, column=1).font = font
    for i, name in enumerate(columns, start=1):
        set_cell(ws, HEADER_ROW, i, column_label(name, w), "")
        ws.cell(row=HEADER_ROW, column=i).font = Font(bold=True)
    ws.freeze_panes = f"A{HEADER_ROW + 1}"


def _mark(ws: Worksheet, row: int, ncols: int, award: int | None, award_col: int, provisional: bool) -> None:
    """Award rows bold, the award place filled; provisional rows italic."""
    if award is None and not provisional:
        return
    for col in range(1, ncols + 1):
        ws.cell(row=row, column=col).font = Font(bold=award is not None, italic=provisional)
    if award is not None:
        color = AWARD_FILLS.get(award, OTHER_AWARD_FILL)
        ws.cell(row=row, column=award_col).fill = PatternFill("solid", start_color=color, end_color=color)


def _finish(ws: Worksheet, ncols: int, last_row: int, widths: dict[int, int]) -> None:
    from openpyxl.utils import get_column_letter

    ws.auto_filter.ref = f"A{HEADER_ROW}:{get_column_letter(ncols)}{max(last_row, HEADER_ROW)}"
    for col in range(1, ncols + 1):
        ws.column_dimensions[get_column_letter(col)].width = min(max(widths.get(col, 8), 8) + 2, 40)


def state_line(r: day.RoundPodium, generated_at: datetime, w: Words = words("en")) -> str:
    """Row 2 of a round's sheet: final, provisional (and why), or why not."""
    if r.state == day.FINAL:
        return w.t("Final results")
    if r.state == day.IN_PROGRESS and r.results is not None and r.left_ms is not None:
        return w.t("Provisional: {state} (at {time}): entrants still solving are running; places will change",
                   state=in_progress_text(r.left_ms, r.results.starts_in_ms, w.lang).capitalize(),
                   time=clock(generated_at, w.lang))
    if r.state == day.PROVISIONAL:
        return w.t("Provisional: some finishes are not confirmed or piece counts are missing; places may still change")
    if r.state == day.NOT_STARTED:
        return w.t("Not started: no results yet")
    return day.state_text(r, w.lang).capitalize()


def legend(fmt: Format | None, w: Words = words("en")) -> str:
    return w.t("award_place: the place among entrants who may take an award (bold row, gold, silver, bronze); "
               "official no: {unofficial} provisional yes: may still change. Times are time values ([h]:mm:ss), "
               "from the entrant's start, truncated to the format's resolution.",
               unofficial=unofficial_words(fmt, w.lang) if fmt else w.t("not eligible for an award place"))


def add_round_sheet(wb: Workbook, name: str, r: day.RoundPodium, title: str, generated_at: datetime,
                    w: Words = words("en")) -> None:
    ws = wb.create_sheet(name)
    fmt = r.format
    if fmt is None:
        _header(ws, title, state_line(r, generated_at, w), "", legend(None, w), ["place"], w)
        return
    cols = round_columns(fmt)
    about = w.t("Format: {format}; {pieces} pieces, limit {limit}; made {time} by TableTimer from the event log",
                format=fmt.title, pieces=fmt.puzzles_text(), limit=fmt_duration(fmt.time_limit_ms),
                time=stamp(generated_at, w.lang))
    _header(ws, title, state_line(r, generated_at, w), about, legend(fmt, w), cols, w)
    tf = time_format(fmt.resolution_ms)
    rows = r.results.rows if r.results is not None else []
    members = member_names(r.results.event.entrants) if r.results is not None else {}
    widths = {i: len(c) for i, c in enumerate(cols, start=1)}
    for n, row in enumerate(rows, start=HEADER_ROW + 1):
        values = round_values(row, fmt, members.get(row.entrant, []), w)
        for i, v in enumerate(values, start=1):
            set_cell(ws, n, i, v, tf)
            if isinstance(v, str):
                widths[i] = max(widths[i], len(v))
        _mark(ws, n, len(cols), row.award_place, 2, row.provisional)
    _finish(ws, len(cols), HEADER_ROW + len(rows), widths)


DAY_XLSX_COLUMNS = [c for c in day.DAY_COLUMNS if not c.endswith("_ms")]


def add_day_sheet(wb: Workbook, d: day.DayResults, title: str, generated_at: datetime,
                  w: Words = words("en")) -> None:
    ws = wb.create_sheet(w.t(DAY_SHEET))
    pending = [r for r in d.rounds if r.state != day.FINAL]
    state = (w.t("Final: every round") if not pending else
             w.t("Not every round is final ({rounds}): a podium marked provisional may still change",
                 rounds=", ".join(f"{r.name} {day.state_word(r.state, w)}" for r in pending)))
    _header(ws, title, state, w.t("Every round's podium; made {time} by TableTimer", time=stamp(generated_at, w.lang)),
            legend(None, w), DAY_XLSX_COLUMNS, w)
    n = HEADER_ROW
    widths = {i: len(c) for i, c in enumerate(DAY_XLSX_COLUMNS, start=1)}
    for r in d.rounds:
        head: list[object] = [r.name, r.format.title if r.format else "", day.state_word(r.state, w)]
        podium = r.podium
        if not podium or r.format is None or r.results is None:
            n += 1
            for i, v in enumerate(head, start=1):
                set_cell(ws, n, i, v, "")
            continue
        tf, members = time_format(r.format.resolution_ms), member_names(r.results.event.entrants)
        for row in podium:
            n += 1
            values = head + [row.award_place, row.place, row.entrant, row.name,
                             "|".join(members.get(row.entrant, ())), _yn(row.official, w),
                             code_word(row.status, w), _yn(row.provisional, w), _time(row.time_ms), _time(row.net_time_ms), row.pieces]
            for i, v in enumerate(values, start=1):
                set_cell(ws, n, i, v, tf)
                if isinstance(v, str):
                    widths[i] = max(widths[i], len(v))
            _mark(ws, n, len(DAY_XLSX_COLUMNS), row.award_place, 4, row.provisional)
    _finish(ws, len(DAY_XLSX_COLUMNS), n, widths)


def sheet_names(names: Iterable[str]) -> list[str]:
    """Worksheet names for the rounds: at most 31 characters (a spreadsheet's
    limit), each unique."""
    out: list[str] = []
    for name in names:
        s, k = name[:31], 2
        while s.lower() in (o.lower() for o in out):
            s, k = f"{name[:31 - len(str(k)) - 1]}~{k}", k + 1
        out.append(s)
    return out


def workbook(d: day.DayResults, generated_at: datetime, title: str | None = None,
             with_day: bool | None = None, lang: str = "en") -> Workbook:
    """The workbook: the day's sheet (with_day; default: when there are
    several rounds), then one sheet per round of d.rounds; its words in lang
    (the event's language; English keeps the CSV's column keys)."""
    w = words(lang)
    if generated_at.tzinfo is None:
        generated_at = generated_at.astimezone()
    title = title or d.title
    several = len(d.rounds) > 1
    wb = Workbook()
    default = wb.active
    if with_day if with_day is not None else several:
        add_day_sheet(wb, d, title, generated_at, w)
    names = [w.t(RESULTS_SHEET)] if not several and d.rounds and d.rounds[0].name == rounds.MAIN else sheet_names(
        r.name for r in d.rounds)
    for name, r in zip(names, d.rounds):
        heading = round_heading(title, r.name, r.format) if several and r.format is not None else title
        add_round_sheet(wb, name, r, heading, generated_at, w)
    if default is not None:
        wb.remove(default)
    wb.properties.creator = "TableTimer"
    return wb


def xlsx_bytes(wb: Workbook) -> bytes:
    out = io.BytesIO()
    wb.save(out)
    return out.getvalue()
