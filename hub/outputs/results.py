"""`tabletimer results` and `tabletimer cards`: an event's final results as
CSV, JSON and a printable HTML sheet, and printable table cards with a QR code
per station (hub/outputs/table_cards.py); the commands themselves are
hub/cli/outputs.py.

    tabletimer results DIR [--csv FILE|-] [--json FILE|-] [--html FILE|-] [--title TEXT] [--round NAME]
                           [--dialect excel|excel-semicolon] [--xlsx FILE|-]
    tabletimer results DIR --day ...   every round's podium for the prize-giving (day_results.py)
    tabletimer cards DIR --html FILE [--title TEXT]

`results` rebuilds the final standings from DIR/events.sqlite (as `replay`
does: every entrant still unfinished at the end is ranked as after time-up)
and writes each output asked for; without any it prints the standings table.
In an event of several rounds each output names its round (the sheet's
heading "Hall Cup — pairs (CZJPA - pairs)", a first CSV column `round`, the
JSON's "round"); every round's podium on one page: day_results.py.
`-` writes to standard output.  Results that are not final yet (a finish not
confirmed, a piece count missing) are written all the same, marked
provisional, with a warning on standard error.

CSV (one row per entrant, in place order; UTF-8 with a byte order mark in a
file so spreadsheet programs read the names right, none on standard output;
comma separated, CRLF line ends).  `--dialect excel-semicolon`: semicolon
separated, with the byte order mark on standard output too: what Excel opens
in columns where the list separator is ';' (Czech, Danish, Norwegian ...
locales).  XLSX (times as time values, one sheet per round): results_xlsx.py.  Times are H:MM:SS (with .f/.ff/.fff when
the format's resolution is finer than a second) since the entrant's start,
truncated to the resolution as the ranking compares them; each has an exact
`_ms` column too.  Empty cell: no value (no time, a dns row's pieces, ...).
Text cells are in double quotes, and one that begins with = + - @, tab or CR
(a name `=HYPERLINK(...)`, a dq reason, a negative time) gets a `'` in front:
shown, never run (formula injection: event/folder/csv_cells.py); numbers are bare.

    round            (an event of several rounds only) the round's name, on every row
    place            overall place (equal results share it); empty for dns/dq and for
                     entrants still running (before their time-up nobody unfinished is ranked)
    award_place      place among official entrants, when it is within the format's awards
    entrant          entrant id (entrants.csv)
    name             entrant name
    members          member names separated by '|' (as in entrants.csv)
    official         yes | no (no: may not take an award place, see the format's eligibility)
    status           finished | unfinished | running (time not up yet) | dns | dq | waiting (the round never started)
    reason           the dq reason; a dns one's when its station went to another
                     ("absent: the station went to Jana Nová (R1)": `tabletimer act DIR replace`)
    provisional      yes | no (a finish not confirmed by a referee, a piece count missing)
    time, time_ms    finish of the last puzzle (pieces-first formats, and the
                     last-complete-puzzle tie-break: of the last whole puzzle)
    penalty, penalty_ms          time added for missing pieces (finishers)
    net_time, net_time_ms        time + penalty: what finishers are ranked by
    pieces           counted pieces (finished puzzles credited, unfinished ones as counted)
    deducted_pieces  pieces subtracted for missing ones (formats that subtract)
    then for each puzzle N of the round (1..):
    pN_status        finished | unfinished | packed (in its box after a swap)
    pN_time, pN_time_ms          its finish since the entrant's start
    pN_lap           since the puzzle could be worked (its part's start, or the previous finish/swap)
    pN_confirmed     yes | no (a referee checked the finished puzzle)
    pN_missing_found, pN_missing_lost, pN_missing_adjacent   missing pieces by kind
    pN_penalty_ms    penalty for its missing pieces
    pN_pieces        the pieces it adds to the total

The ranking's remarks for the desk (a confirmation with no finish to
confirm, a press after time-up ignored, ...) are not in the results (CSV,
JSON, HTML): `tabletimer results` prints them on standard error, the
console lists them among its alerts (standings.desk_notes).

JSON: {"title", "round" (its name in an event of several rounds, else null),
"format", "format_title", "resolution_ms", "order", "awards",
"generated_at" (ISO 8601 with offset), "round_start_ms", "provisional",
"in_progress" (the round's time is not up yet), "left_ms" (until the last
time-up, or null), "rows": [standings.row_dict(row) without its "notes" +
{"members": [names]}]}.

Before time-up the results are the standings as they stand: entrants still
within their time are "running" (provisional), the JSON says
"in_progress": true, the HTML sheet has a "round in progress, 1:55 left"
banner, and the command warns on standard error.

HTML: one self-contained page (inline CSS, no scripts, no external files)
laid out for A4 portrait: title, format, date; place, award place (a
gold/silver/bronze disc, bold row), name (an "unofficial" badge for entrants
who may not take an award place), members, status, time, penalty, net time,
pieces (per-puzzle splits under the name in multi-puzzle rounds); a
"provisional" badge and banner while results may still change; a footer that
explains the marks; the public site's QR code and address when one is set.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Iterable, Sequence

from ..event.folder import event_folder
from ..event.folder.csv_cells import csv_text
from ..i18n.catalogue import N_, Words, words
from ..i18n.local_format import clock, day as local_day, duration as local_duration
from ..rules.formats import Format, fmt_duration
from ..rules.standings import Entrant, StandingRow, row_dict
from .result_marks import ResultMarks, agreed_badge, marks_json, objections_html, official_banner, \
    result_marks
from .round_log import folded_log
from .sheet_legend import footer, stamp, unofficial_text, unofficial_words
from .sheet_style import CSS, esc, medal, page_head
from .site_link import site_link_html

RANKED = ("finished", "unfinished", "running")
# a row's or a puzzle's status as the sheets say it (the CSV keeps the codes)
STATUS_WORDS = {"finished": N_("finished"), "unfinished": N_("unfinished"), "running": N_("running"),
                "waiting": N_("waiting"), "packed": N_("packed"), "dns": N_("DNS"), "dq": N_("DQ")}


def status_word(status: str, w: Words) -> str:
    """A status code (finished, dns, ...) in w's language."""
    return w.t(STATUS_WORDS[status]) if status in STATUS_WORDS else status


# --------------------------------------------------------------------- loading

@dataclass
class EventResults:
    event: event_folder.EventFolder
    rows: list[StandingRow]
    start_ms: int | None              # the round start (hub ms since 1970), None: never started
    left_ms: int | None = None        # the round is in progress: this long until the last time-up
    starts_in_ms: int | None = None   # its start is armed: this long until it comes
    marks: ResultMarks | None = None  # agreed, objections, official (result_marks.py)

    @property
    def format(self) -> Format:
        return self.event.format

    @property
    def in_progress(self) -> bool:
        return self.left_ms is not None


class NoEventLog(event_folder.EventFolderError):
    """A round without an event log yet: nothing to show."""


def load_results(path: str | Path, now_ms: int | None = None, round: str | None = None) -> EventResults:
    """The standings of an event folder, from its event log (nothing is
    added to the log; a folder without one is refused, not given an empty
    one): final once the round's time is up, else as they stand at now_ms
    (default: this machine's clock), entrants still within their time
    shown as running and the whole marked as in progress."""
    from ..event.time.clock import HubClock

    ev = event_folder.load(path, round)
    if not ev.db.exists():
        raise NoEventLog(f"{ev.db}: no event log yet (nothing was recorded: `tabletimer run "
                         f"{ev.path}` or `tabletimer act {ev.path} round_start` first)")
    comp = folded_log(ev)
    now = HubClock().now_ms() if now_ms is None else now_ms
    rows, left = comp.standings_as_they_stand(now)
    return EventResults(ev, rows, comp.start_ms, left, starts_in_ms(comp.start_ms, now), result_marks(comp))


# ------------------------------------------------------------------ formatting

def _t(ms: int | None, fmt: Format) -> str:
    return "" if ms is None else fmt_duration(ms, fmt.resolution_ms)


def _yn(b: bool) -> str:
    return "yes" if b else "no"


def member_names(entrants: Iterable[Entrant] | None) -> dict[str, list[str]]:
    return {e.id: [m.name for m in e.members] for e in entrants or ()}


def csv_columns(fmt: Format) -> list[str]:
    cols = ["place", "award_place", "entrant", "name", "members", "official", "status", "reason",
            "provisional", "time", "time_ms", "penalty", "penalty_ms", "net_time", "net_time_ms",
            "pieces", "deducted_pieces"]
    for n in range(1, len(fmt.puzzles) + 1):
        cols += [f"p{n}_{k}" for k in ("status", "time", "time_ms", "lap", "confirmed", "missing_found",
                                       "missing_lost", "missing_adjacent", "penalty_ms", "pieces")]
    return cols


def results_csv(rows: Sequence[StandingRow], fmt: Format,
                entrants: Iterable[Entrant] | None = None, round: str | None = None, delimiter: str = ",") -> str:
    """The results as CSV text (columns: `csv_columns`, described in the
    module docstring; round: a first column naming the round, on every
    row; delimiter ";": the excel-semicolon dialect).  No byte order mark:
    `write_output` adds it to files."""
    members = member_names(entrants)
    lines: list[list[object]] = [list(csv_columns(fmt))]
    n = len(fmt.puzzles)
    for r in rows:
        ranked = r.status in RANKED
        line: list[object] = [
            "" if r.place is None else r.place, "" if r.award_place is None else r.award_place,
            r.entrant, r.name, "|".join(members.get(r.entrant, ())), _yn(r.official), r.status,
            r.reason, _yn(r.provisional), _t(r.time_ms, fmt), "" if r.time_ms is None else r.time_ms,
            _t(r.penalty_ms, fmt) if ranked else "", r.penalty_ms if ranked else "",
            _t(r.net_time_ms, fmt), "" if r.net_time_ms is None else r.net_time_ms,
            r.pieces if ranked else "", r.deducted_pieces if ranked else ""]
        splits = {sp.puzzle: sp for sp in r.splits}
        for pz in range(1, n + 1):
            sp = splits.get(pz)
            if sp is None:
                line += [""] * 10
                continue
            fin = sp.status == "finished"
            line += [sp.status, _t(sp.time_ms, fmt), "" if sp.time_ms is None else sp.time_ms,
                     _t(sp.lap_ms, fmt), _yn(sp.confirmed) if fin else "",
                     sp.missing_found if fin else "", sp.missing_lost if fin else "",
                     sp.missing_adjacent if fin else "", sp.penalty_ms if fin else "", sp.credited]
        lines.append(line)
    if round is not None:
        lines = [["round" if i == 0 else round] + line for i, line in enumerate(lines)]
    return csv_text(lines, delimiter=delimiter)


def public_row(r: StandingRow, members: list[str]) -> dict:
    """A row of the published results: row_dict without the desk's notes."""
    d = row_dict(r)
    del d["notes"]
    d["members"] = members
    return d


def iso_time(when: datetime) -> str:
    if when.tzinfo is None:
        when = when.astimezone()
    return when.isoformat(timespec="seconds")


def in_progress_text(left_ms: int, starts_in_ms: int | None = None, lang: str = "en") -> str:
    """"round in progress, 1:29:59 left"; a start armed ahead (starts_in_ms
    > 0): "round not begun: starts in 0:04:32" (whole seconds, rounded up)."""
    w = words(lang)
    if starts_in_ms is not None and starts_in_ms > 0:
        return w.t("round not begun: starts in {time}", time=fmt_duration(-(-starts_in_ms // 1000) * 1000))
    return w.t("round in progress, {time} left", time=fmt_duration(-(-left_ms // 1000) * 1000))


def starts_in_ms(start_ms: int | None, now_ms: int) -> int | None:
    """How long until an armed start still ahead of now_ms (hub ms); None: no
    start, or it has come."""
    return start_ms - now_ms if start_ms is not None and start_ms > now_ms else None


def results_json(title: str, fmt: Format, rows: Sequence[StandingRow], generated_at: datetime,
                 entrants: Iterable[Entrant] | None = None, start_ms: int | None = None,
                 left_ms: int | None = None, round: str | None = None, marks: ResultMarks | None = None) -> str:
    """The results as a JSON document: a header and `row_dict` rows (each
    with its members' names).  left_ms: the round is still in progress;
    round: its name, in an event of several; marks: agreed (each row's
    "agreed"), objections, official (result_marks.py)."""
    members = member_names(entrants)
    lines = [public_row(r, members.get(r.entrant, [])) for r in rows]
    if marks is not None:
        for d in lines:
            d["agreed"] = d["entrant"] in marks.agreed
    doc: dict = {
        "title": title,
        "round": round,
        "format": fmt.name,
        "format_title": fmt.title,
        "resolution_ms": fmt.resolution_ms,
        "order": fmt.order,
        "awards": fmt.awards,
        "generated_at": iso_time(generated_at),
        "round_start_ms": start_ms,
        "provisional": left_ms is not None or any(r.provisional for r in rows),
        "in_progress": left_ms is not None,
        "left_ms": left_ms,
        "rows": lines,
    }
    if marks is not None:
        doc.update(marks_json(marks))
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


# ------------------------------------------------------------------------ HTML

def _split_text(sp, fmt: Format, w: Words) -> str:
    """A puzzle's split under the name ("P2 0:41:07 (1 missing)"; P: puzzle,
    puslespil, puslespill alike)."""
    if sp.status == "finished":
        miss = sp.missing_found + sp.missing_lost + sp.missing_adjacent
        extra = " " + w.t("({count} missing)", count=miss) if miss else ""
        extra += "" if sp.confirmed else " " + w.t("unconfirmed")
        return f"P{sp.puzzle} {local_duration(fmt_duration(sp.time_ms, fmt.resolution_ms), w.lang)}{extra}"
    if sp.status == "packed":
        return (f"P{sp.puzzle} " + w.t('packed'))
    return (f"P{sp.puzzle} " + w.t('{count} pcs', count=sp.credited))


def status_text(r: StandingRow, lang: str = "en") -> str:
    """A row's status as the sheets say it (a dq's or dns's reason after it)."""
    word = status_word(r.status, words(lang))
    return word + (f": {r.reason}" if r.reason and r.status in ("dq", "dns") else "")


def results_html(title: str, fmt: Format, rows: Sequence[StandingRow], generated_at: datetime,
                 entrants: Iterable[Entrant] | None = None, start_ms: int | None = None,
                 left_ms: int | None = None, round: str | None = None, starts_in: int | None = None,
                 marks: ResultMarks | None = None, site_url: str | None = None,
                 lang: str = "en") -> str:
    """A printable results sheet: one self-contained HTML page (A4), in
    lang (the event's language: event_folder.event_language).
    left_ms: the round is still in progress (a banner says so); starts_in:
    its start is armed, this long ahead (the banner says when it starts);
    round: its name in an event of several (in the heading, with its
    format's title); site_url: the event's public site (its QR code and
    address at the foot: event/folder/site_address.py)."""
    if round is not None:
        title = round_heading(title, round, fmt)
    members = member_names(entrants)
    show_members = any(members.get(r.entrant) for r in rows)
    pieces_first = fmt.order == "pieces"
    multi = len(fmt.puzzles) > 1
    provisional = left_ms is not None or any(r.provisional for r in rows)
    has_unofficial = any(not r.official for r in rows)
    if generated_at.tzinfo is None:
        generated_at = generated_at.astimezone()
    w = words(lang)
    date = local_day((datetime.fromtimestamp(start_ms / 1000).astimezone() if start_ms is not None
                      else generated_at).date(), w.lang)

    head = [w.t("Place"), w.t("Award"), w.t("Name")] + ([w.t("Members")] if show_members else []) + [w.t("Status")]
    num_head = ([w.t("Pieces"), w.t("Deducted"), w.t("Last whole puzzle")] if pieces_first
                else [w.t("Time"), w.t("Penalty"), w.t("Net time"), w.t("Pieces")])
    out = page_head(title, w.t("{title} - results", title=title), CSS, lang=w.lang) + [
        ('<p class="meta"><span>' + esc(w.t("Format: {format}", format=fmt.title)) + '</span>')
        + ("<span>" + esc(w.t('{pieces} pieces, limit {limit}', pieces=fmt.puzzles_text(), limit=fmt_duration(fmt.time_limit_ms))) + "</span>")
        + ("<span>" + esc(w.t('Date: {date}', date=date)) + "</span></p>"),
    ]
    if left_ms is not None:
        out.append('<p class="banner">' + esc(w.t(
            "Provisional: {state} (at {time}); entrants still solving are shown as running, and places will change.",
            state=in_progress_text(left_ms, starts_in, w.lang).capitalize(), time=clock(generated_at, w.lang)))
            + "</p>")
    elif provisional:
        out.append('<p class="banner">' + esc(w.t("Provisional results: some finishes are not confirmed or piece "
                                                  "counts are missing; places may still change.")) + "</p>")
    if marks is not None and left_ms is None:
        out.append(official_banner(marks, w.lang))
    out.append("</header>")
    out.append('<table class="results">')
    out.append("<thead><tr>" + "".join(f"<th>{h}</th>" for h in head)
               + "".join(f'<th class="num">{h}</th>' for h in num_head) + "</tr></thead>")
    out.append("<tbody>")
    for r in rows:
        ranked = r.status in RANKED
        cls = ["awarded"] if r.award_place is not None else []
        if not ranked:
            cls.append("out")
        if not r.official:
            cls.append("unofficial")
        if r.provisional:
            cls.append("provisional")
        name = f'<span class="name">{esc(r.name or r.entrant)}</span>'
        if not r.official:
            name += ('<span class="badge unofficial">' + esc(w.t("unofficial")) + '</span>')
        if multi and ranked and r.splits:
            name += ('<div class="splits">'
                     + " &middot; ".join(esc(_split_text(sp, fmt, w)) for sp in r.splits) + "</div>")
        status = esc(status_text(r, w.lang))
        if r.provisional:
            status += ('<span class="badge provisional">' + esc(w.t("provisional")) + '</span>')
        if marks is not None and r.entrant in marks.agreed:
            status += agreed_badge(w.lang)
        cells = [f'<td class="place">{"" if r.place is None else r.place}</td>',
                 f'<td class="award">{medal(r.award_place, w.lang) if r.award_place is not None else ""}</td>',
                 f'<td class="entrant">{name}</td>']
        if show_members:
            cells.append(f'<td class="members">{esc(", ".join(members.get(r.entrant, ())))}</td>')
        cells.append(f'<td class="status">{status}</td>')
        dash = "&ndash;"
        if pieces_first:
            nums = [str(r.pieces) if ranked else dash,
                    str(r.deducted_pieces) if r.deducted_pieces else dash,
                    esc(local_duration(_t(r.time_ms, fmt), w.lang)) or dash]
        else:
            nums = [esc(local_duration(_t(r.time_ms, fmt), w.lang)) or dash,
                    esc(local_duration(_t(r.penalty_ms, fmt), w.lang)) if r.penalty_ms else dash,
                    esc(local_duration(_t(r.net_time_ms, fmt), w.lang)) or dash,
                    str(r.pieces) if ranked else dash]
        cells += [f'<td class="num">{v}</td>' for v in nums]
        out.append(f'<tr class="{" ".join(cls)}">' + "".join(cells) + "</tr>")
    out.append("</tbody></table>")
    if marks is not None:
        out.append(objections_html(marks, {r.entrant: r.name or r.entrant for r in rows}, w.lang))
    out.append(footer(fmt, provisional, has_unofficial, generated_at, marks is not None and bool(marks.agreed),
                       w))
    if site_url:
        out.append(site_link_html(site_url, "sheet"))
    out.append("</main></body></html>")
    return "\n".join(out) + "\n"


def round_heading(title: str, round: str, fmt: Format) -> str:
    """A round's heading in an event of several: "Hall Cup — pairs (CZJPA - pairs)"."""
    return f"{title} \u2014 {round} ({fmt.title})"
