"""The day's results for the prize-giving: every round of an event folder,
in order (rounds.names), with its podium, on one printable page and in one
file (`tabletimer results DIR --day`; the command is hub/cli/outputs.py).

    tabletimer results DIR --day [--html FILE|-] [--csv FILE|-] [--json FILE|-] [--title TEXT]

Each round is read as `tabletimer results DIR --round NAME` reads it
(results.load_results, at the same moment for all) and is in one state:

    final          its time is up and every result on it is confirmed
    provisional    its time is up, but a finish is not confirmed or a piece count is missing
    in progress    its time is not up yet: the podium as it stands (places will change)
    not started    no event log yet, or no round start in it
    cannot be read its files do not load (the error says which and why)

Who went on (a later round fed by it, `[advancement]`): each such round
and who of this one it holds since its `advance --apply` (in its seating
order); an event of groups, semi-finals and a final shows each round, who
went on, and the final's podium.

Its podium: the award places its format gives (each round's own `awards`;
the rows' award_place: equal results share one, and the next is skipped,
1, 2, 2, 4), and the unofficial entrants ranked among them, as the round's
sheet shows them (an "unofficial" badge, their overall place, no award).

HTML: one self-contained A4 portrait page (the round's sheet's style:
sheet_style.py): the event's title, then one section per round (its name,
its format's title, its state; a provisional or in-progress round has a
banner and its state says "provisional", never "final"; one not started
says so), and a banner on top while not every round is final.

JSON: {"title", "generated_at", "final" (every round final), "rounds": [{"round",
"format", "format_title", "awards", "state", "final", "provisional",
"in_progress", "left_ms", "round_start_ms", "problem" (why it cannot be read,
or null), "podium": [results.public_row: row_dict + "members"], "went_on":
[{"round", "entrants": [{"entrant", "name"}]}]}]}.

CSV (as results.py writes it: text cells quoted and neutralised, CRLF; a
BOM in a file): one row per podium entry, and one for a round with nobody
on its podium (its state, the rest empty): DAY_COLUMNS.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from ..event.folder import event_folder, rounds
from ..event.folder.csv_cells import csv_text
from ..i18n.catalogue import N_, Words, words
from ..i18n.local_format import clock, day as local_day, duration as local_duration
from ..rules.formats import Format, FormatError, fmt_duration
from ..rules.standings import StandingRow
from .advancement_plan import went_on
from .results import (EventResults, in_progress_text, iso_time, load_results, member_names, public_row,
                      stamp, status_text)
from .sheet_style import CSS, esc, medal, page_head

FINAL, PROVISIONAL, IN_PROGRESS, NOT_STARTED, UNREADABLE = (
    "final", "provisional", "in progress", "not started", "cannot be read")
# a round's state as the sheets say it (the JSON and CSV keep the codes)
STATE_WORDS = {FINAL: N_("final"), PROVISIONAL: N_("provisional"), IN_PROGRESS: N_("in progress"),
               NOT_STARTED: N_("not started"), UNREADABLE: N_("cannot be read")}
EVERY_PODIUM = N_("Every round's podium")
DAY_COLUMNS = ["round", "format_title", "state", "award_place", "place", "entrant", "name", "members",
               "official", "status", "provisional", "time", "time_ms", "net_time", "net_time_ms", "pieces"]


@dataclass
class RoundPodium:
    name: str
    state: str
    format: Format | None = None
    results: EventResults | None = None
    problem: str | None = None         # why it cannot be read
    went_on: list[tuple[str, list[tuple[str, str]]]] = field(default_factory=list)   # (round, [(id, name)])

    @property
    def podium(self) -> list[StandingRow]:
        return podium(self.results.rows) if self.results is not None else []

    @property
    def left_ms(self) -> int | None:
        return self.results.left_ms if self.results is not None else None


@dataclass
class DayResults:
    path: Path
    title: str
    rounds: list[RoundPodium]

    @property
    def final(self) -> bool:
        return all(r.state == FINAL for r in self.rounds)


def podium(rows: list[StandingRow]) -> list[StandingRow]:
    """A round's podium, in place order: the rows with an award place (ties
    share it) and the unofficial ones placed among them (no award)."""
    awarded = [r for r in rows if r.award_place is not None]
    last = max((r.place for r in awarded if r.place is not None), default=None)
    if last is None:
        return awarded
    return [r for r in rows if r.award_place is not None
            or (not r.official and r.place is not None and r.place <= last)]


def load_day(path: str | Path, now_ms: int | None = None) -> DayResults:
    """Every round of the event folder at path, each with its state and
    standings at now_ms (default: this machine's clock, the same moment for
    all); EventFolderError for a folder with no round."""
    from ..event.time.clock import HubClock

    hall = Path(path)
    names = rounds.names(hall)
    if not names:
        event_folder.load(hall)               # raises: says what is missing and what to do
    now = HubClock().now_ms() if now_ms is None else now_ms
    out: list[RoundPodium] = []
    for name in names:
        try:
            ev = event_folder.load(hall, name)
        except (event_folder.EventFolderError, FormatError) as e:
            out.append(RoundPodium(name, UNREADABLE, problem=str(e)))
            continue
        if not ev.db.exists():
            out.append(RoundPodium(name, NOT_STARTED, ev.format))
            continue
        res = load_results(hall, now, name)
        if res.start_ms is None:
            state = NOT_STARTED
        elif res.in_progress:
            state = IN_PROGRESS
        elif any(r.provisional for r in res.rows):
            state = PROVISIONAL
        else:
            state = FINAL
        out.append(RoundPodium(name, state, ev.format, res))
    _went_on(hall, out)
    return DayResults(hall, event_folder.event_title(hall), out)


def _went_on(hall: Path, day: list[RoundPodium]) -> None:
    """Each round's who went on: the later rounds whose [advancement] takes
    from it, and who of its entrants each holds since its apply."""
    by_name = {r.name: r for r in day}
    for later in day:
        rule = later.format.advancement if later.format is not None else None
        if rule is None:
            continue
        try:
            held = went_on(event_folder.load(hall, later.name))
        except (event_folder.EventFolderError, FormatError):
            continue
        for src in rule.sources:
            r = by_name.get(src)
            if r is None or r.format is None:
                continue
            names = {e.id: e.name for e in event_folder.load(hall, src).entrants}
            r.went_on.append((later.name, [(e, names[e]) for e in held if e in names]))


def state_word(state: str, w: Words) -> str:
    return w.t(STATE_WORDS[state]) if state in STATE_WORDS else state


def state_text(r: RoundPodium, lang: str = "en") -> str:
    """The round's state as the page and the command say it."""
    w = words(lang)
    if r.state == IN_PROGRESS and r.left_ms is not None:
        return w.t("provisional: {state}",
                   state=in_progress_text(r.left_ms, r.results.starts_in_ms if r.results else None, w.lang))
    if r.state == PROVISIONAL:
        return w.t("provisional: finishes not confirmed or piece counts missing")
    if r.state == UNREADABLE:
        return w.t("cannot be read: {problem}", problem=r.problem)
    return state_word(r.state, w)


def result_text(row: StandingRow, fmt: Format, lang: str = "en") -> str:
    """What the podium says of an entrant's result: net time, or pieces."""
    w = words(lang)
    time = local_duration(fmt_duration(row.time_ms, fmt.resolution_ms), w.lang) if row.time_ms is not None else ""
    pieces = w.n("{count} piece", "{count} pieces", row.pieces)
    if fmt.order == "pieces":
        return pieces + (", " + w.t("last whole puzzle {time}", time=time) if time else "")
    if row.status == "finished" and row.net_time_ms is not None:
        return local_duration(fmt_duration(row.net_time_ms, fmt.resolution_ms), w.lang)
    if row.status in ("unfinished", "running"):
        return pieces
    return status_text(row, w.lang)


# ------------------------------------------------------------------ JSON, CSV

def day_json(day: DayResults, generated_at: datetime, title: str | None = None) -> str:
    rounds_out = []
    for r in day.rounds:
        res, fmt = r.results, r.format
        members = member_names(res.event.entrants) if res else {}
        rounds_out.append({
            "round": r.name, "format": fmt.name if fmt else None, "format_title": fmt.title if fmt else None,
            "awards": fmt.awards if fmt else None, "state": r.state, "final": r.state == FINAL,
            "provisional": r.state in (PROVISIONAL, IN_PROGRESS), "in_progress": r.state == IN_PROGRESS,
            "left_ms": r.left_ms, "round_start_ms": res.start_ms if res else None, "problem": r.problem,
            "podium": [public_row(row, members.get(row.entrant, [])) for row in r.podium],
            "went_on": [{"round": later, "entrants": [{"entrant": e, "name": n} for e, n in held]}
                        for later, held in r.went_on]})
    doc = {"title": title or day.title, "generated_at": iso_time(generated_at), "final": day.final,
           "rounds": rounds_out}
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def _t(ms: int | None, step: int) -> str:
    return "" if ms is None else fmt_duration(ms, step)


def day_csv(day: DayResults, delimiter: str = ",") -> str:
    """DAY_COLUMNS, one row per podium entry (a round with nobody on its
    podium: one row with its state).  No byte order mark (write_output's)."""
    lines: list[list[object]] = [list(DAY_COLUMNS)]
    for r in day.rounds:
        head: list[object] = [r.name, r.format.title if r.format else "", r.state]
        rows = r.podium
        if not rows:
            lines.append(head + [""] * (len(DAY_COLUMNS) - len(head)))
            continue
        assert r.format is not None and r.results is not None
        step, members = r.format.resolution_ms, member_names(r.results.event.entrants)
        for row in rows:
            lines.append(head + [
                "" if row.award_place is None else row.award_place, "" if row.place is None else row.place,
                row.entrant, row.name, "|".join(members.get(row.entrant, ())), "yes" if row.official else "no",
                row.status, "yes" if row.provisional else "no", _t(row.time_ms, step),
                "" if row.time_ms is None else row.time_ms, _t(row.net_time_ms, step),
                "" if row.net_time_ms is None else row.net_time_ms, row.pieces])
    return csv_text(lines, delimiter=delimiter)


# ------------------------------------------------------------------------ HTML

DAY_CSS = """
section.round{margin:0 0 18px;break-inside:avoid;page-break-inside:avoid}
section.round h2{font-size:20px;margin:0 0 6px;display:flex;gap:10px;align-items:baseline;flex-wrap:wrap}
section.round h2 .ftitle{font-weight:normal;color:#333;font-size:15px}
.state{font-size:11px;font-weight:bold;text-transform:uppercase;letter-spacing:.04em;border-radius:3px;
  padding:2px 6px;border:1px solid #6b7280;color:#374151;background:#f3f4f6}
.state.final{border-color:#15803d;color:#14532d;background:#dcfce7}
.state.provisional,.state.in-progress{border-color:#b45309;color:#78350f;background:#fef3c7}
.state.cannot-be-read{border-color:#b91c1c;color:#7f1d1d;background:#fee2e2}
section.round.provisional table,section.round.in-progress table{border-left:4px solid #f59e0b}
table.podium td{font-size:15px}
table.podium tr.awarded td{font-weight:bold}
p.empty{color:#444;font-style:italic;margin:4px 0}
p.went-on{margin:4px 0;font-size:13px}
@media print{section.round h2{font-size:14pt}table.podium td{font-size:11pt}}
"""


def _podium_table(r: RoundPodium, w: Words) -> list[str]:
    assert r.format is not None and r.results is not None
    fmt, members = r.format, member_names(r.results.event.entrants)
    rows = r.podium
    show_members = any(members.get(row.entrant) for row in rows)
    out = [('<table class="podium"><thead><tr><th>' + esc(w.t("Award")) + '</th><th>' + esc(w.t("Name")) + '</th>')
           + (("<th>" + esc(w.t('Members')) + "</th>") if show_members else "")
           + ('<th class="num">' + esc(w.t("Result")) + '</th><th class="num">' + esc(w.t("Place")) + '</th></tr></thead><tbody>')]
    for row in rows:
        cls = "awarded" if row.award_place is not None else "unofficial"
        name = f'<span class="name">{esc(row.name or row.entrant)}</span>'
        if not row.official:
            name += ('<span class="badge unofficial">' + esc(w.t("unofficial")) + '</span>')
        if row.provisional:
            name += ('<span class="badge provisional">' + esc(w.t("provisional")) + '</span>')
        cells = [f'<td class="award">{medal(row.award_place, w.lang) if row.award_place is not None else ""}</td>',
                 f'<td class="entrant">{name}</td>']
        if show_members:
            cells.append(f'<td class="members">{esc(", ".join(members.get(row.entrant, ())))}</td>')
        cells += [f'<td class="num">{esc(result_text(row, fmt, w.lang))}</td>',
                  f'<td class="num place">{"" if row.place is None else row.place}</td>']
        out.append(f'<tr class="{cls}">' + "".join(cells) + "</tr>")
    out.append("</tbody></table>")
    return out


def _section(r: RoundPodium, generated_at: datetime, w: Words) -> list[str]:
    cls = r.state.replace(" ", "-")
    label = {FINAL: w.t("Final"), PROVISIONAL: w.t("Provisional"), IN_PROGRESS: w.t("In progress: provisional"),
             NOT_STARTED: w.t("Not started"), UNREADABLE: w.t("Cannot be read")}[r.state]
    ftitle = f'<span class="ftitle">{esc(r.format.title)}</span>' if r.format else ""
    out = [f'<section class="round {cls}" id="round-{esc(r.name)}" data-round="{esc(r.name)}" '
           f'data-state="{esc(r.state)}">',
           f'<h2><span class="rname">{esc(r.name)}</span>{ftitle}<span class="state {cls}">{esc(label)}</span></h2>']
    if r.state == IN_PROGRESS and r.left_ms is not None:
        text = in_progress_text(r.left_ms, r.results.starts_in_ms if r.results else None, w.lang)
        out.append('<p class="banner">' + esc(w.t(
            "Provisional: {state} (at {time}): the podium as it stands; places will change.",
            state=text.capitalize(), time=clock(generated_at, w.lang))) + "</p>")
    elif r.state == PROVISIONAL:
        out.append('<p class="banner">' + esc(w.t("Provisional: some finishes are not confirmed or piece counts are "
                                                  "missing; places may still change.")) + "</p>")
    if r.state == NOT_STARTED:
        out.append(('<p class="empty">' + esc(w.t("Not started: no results yet.")) + '</p>'))
    elif r.state == UNREADABLE:
        out.append(('<p class="empty">' + esc(w.t("Cannot be read: {problem}", problem=r.problem)) + '</p>'))
    elif not r.podium:
        out.append(('<p class="empty">' + esc(w.t("Nobody has an award place yet.")) + '</p>'))
    else:
        out += _podium_table(r, w)
    for later, held in r.went_on:
        said = ", ".join(n or e for e, n in held) if held else w.t("not advanced yet")
        out.append(f'<p class="went-on" data-to="{esc(later)}"><b>'
                   + esc(w.t("Went on to {round} ({count})", round=later, count=len(held)))
                   + f"</b>: {esc(said)}</p>")
    out.append("</section>")
    return out


def day_html(day: DayResults, generated_at: datetime, title: str | None = None, lang: str = "en") -> str:
    """The prize-giving's page: every round's podium (one self-contained
    HTML page, A4 portrait), in lang (the event's language)."""
    w = words(lang)
    if generated_at.tzinfo is None:
        generated_at = generated_at.astimezone()
    title = title or day.title
    starts = [r.results.start_ms for r in day.rounds if r.results and r.results.start_ms is not None]
    date = (datetime.fromtimestamp(min(starts) / 1000).astimezone() if starts else generated_at)
    out = page_head(title, w.t("{title} - the day's results", title=title), CSS + DAY_CSS, "sheet day", w.lang) + [
        ('<p class="meta"><span>' + esc(w.t(EVERY_PODIUM)) + '</span>')
        + ('<span>' + esc(w.n("{count} round", "{count} rounds", len(day.rounds))) + '</span>')
        + ('<span>' + esc(w.t("Date: {date}", date=local_day(date.date(), w.lang))) + '</span></p>')]
    pending = [r for r in day.rounds if r.state != FINAL]
    if pending:
        said = ", ".join(f"{r.name} {state_word(r.state, w)}" for r in pending)
        out.append('<p class="banner">' + esc(w.t("Not every round is final ({rounds}): a podium marked provisional "
                                                  "may still change.", rounds=said)) + "</p>")
    out.append("</header>")
    for r in day.rounds:
        out += _section(r, generated_at, w)
    out.append(
        "<footer><dl>"
        f"<dt>{medal(1, w.lang)} {medal(2, w.lang)} {medal(3, w.lang)}</dt><dd>"
        + esc(w.t("award place: the place among the entrants who may take an award, within each round's own award "
                  "places (equal results share a place)")) + "</dd>"
        + ('<dt><span class="badge unofficial">' + esc(w.t("unofficial")) + '</span></dt><dd>')
        + esc(w.t("not eligible for an award place in its round: ranked all the same, shown where it placed among "
                  "the award places")) + "</dd>"
        + ('<dt><span class="badge provisional">' + esc(w.t("provisional")) + '</span></dt><dd>')
        + esc(w.t("not final: a finish not yet confirmed by a referee, a piece count still missing, or the round's "
                  "time not up")) + "</dd></dl>"
        "<p>" + esc(w.t("Each round's full results: {command}. Generated {time} by TableTimer from the rounds' event "
                        "logs.", command="\0", time=stamp(generated_at, w.lang))).replace(
            "\0", "<code>tabletimer results DIR --round NAME</code>") + "</p>"
        "</footer>")
    out.append("</main></body></html>")
    return "\n".join(out) + "\n"


def day_text(day: DayResults) -> str:
    """The podiums as a terminal shows them (`results DIR --day`, no output)."""
    lines = [f"{day.title}: every round's podium"]
    for r in day.rounds:
        lines.append("")
        lines.append(f"{r.name}  {r.format.title if r.format else ''}  [{state_text(r)}]")
        rows = r.podium
        if r.state in (NOT_STARTED, UNREADABLE):
            continue
        if not rows:
            lines.append("   (nobody has an award place yet)")
        assert r.format is not None
        for row in rows:
            award = str(row.award_place) if row.award_place is not None else "-"
            marks = ("" if row.official else " (unofficial)") + (" *provisional" if row.provisional else "")
            lines.append(f"  {award:>3}  {row.name or row.entrant}{marks}  {result_text(row, r.format)}"
                         f"  (place {row.place})")
        for later, held in r.went_on:
            lines.append("   " + N_("Went on to {round} ({count})").format(round=later, count=len(held)) + ": "
                         + (", ".join(n or e for e, n in held) if held else N_("not advanced yet")))
    return "\n".join(lines) + "\n"
