"""What the results say of the time after time-up (issue 47, item 4): which
entrants agreed to their recorded times and counts, the objections the
head referee decided (with their reasons), and whether the results are
official (who made them so, and every reopening with who and why): read
from the fold's book (event/fold/official.py), for the results sheet
(results.py), its JSON and the hall's pages."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..event.fold.competition import Competition
from ..i18n.catalogue import N_, words
from ..rules.timetext import fmt_clock
from .sheet_style import esc


@dataclass(frozen=True)
class ObjectionLine:
    entrant: str
    puzzle: int
    action: str
    who: str
    reason: str
    at_ms: int | None


@dataclass
class ResultMarks:
    official: str | None = None                 # "made official by Head at 14:05 (log row #88)"; None: not
    reopened: list[str] = field(default_factory=list)       # every reopening, "reopened by ...: why"
    agreed: set[str] = field(default_factory=set)           # entrants who agreed to every result of theirs
    objections: list[ObjectionLine] = field(default_factory=list)
    official_at: str = "checks"                 # the format's moment (results.official_at)


def result_marks(comp: Competition) -> ResultMarks:
    """The marks of a round as its log has them now."""
    book = comp.official_book()
    calls = comp.call_book()
    items: dict[str, list[bool]] = {}          # entrant -> agreed?, one per confirmed finish and count
    for press in calls.presses():
        if calls.confirmed_missing(press.press_id) is not None:
            items.setdefault(press.entrant, []).append(book.call_agreed(press.press_id))
    for e in comp.entrant_ids():
        for puzzle in calls.recorded_counts(e):
            items.setdefault(e, []).append(book.count_agreed(e, puzzle))
    done = book.official()
    return ResultMarks(
        official=done.text() if done is not None else None,
        reopened=[m.text() for m in book.marks if m.kind == "reopen"],
        agreed={e for e, ok in items.items() if ok and all(ok)},
        objections=[ObjectionLine(o.entrant, o.puzzle, o.action, o.who, o.reason, o.at_ms)
                    for o in book.objections],
        official_at=comp.format.official_at)


def marks_json(marks: ResultMarks) -> dict:
    """The JSON document's keys: official, reopened, objections."""
    return {"official": marks.official, "reopened": marks.reopened,
            "objections": [{"entrant": o.entrant, "puzzle": o.puzzle, "action": o.action, "who": o.who,
                            "reason": o.reason} for o in marks.objections]}


def official_banner(marks: ResultMarks, lang: str = "en") -> str:
    """The sheet's banner (HTML): official, or when they will be (in lang;
    who made them official and when is the fold's text, as the log has it)."""
    w = words(lang)
    if marks.official is not None:
        return ('<p class="banner official">' + esc(w.t("Official results: {how}.", how=marks.official)) + '</p>')
    text = (w.t("Not official yet: the results are made official at the prize-giving (objections at the desk"
                " until then).") if marks.official_at == "prize-giving"
            else w.t("Not official yet: the results are made official once time is up and every check is done."))
    return f'<p class="banner">{esc(text)}</p>'


def agreed_badge(lang: str = "en") -> str:
    return ('<span class="badge agreed">' + esc(words(lang).t(LEGEND[0])) + '</span>')


def objections_html(marks: ResultMarks, names: dict[str, str], lang: str = "en") -> str:
    """The objections and reopenings under the table (empty: none)."""
    w = words(lang)
    out = []
    if marks.objections:
        out.append(("<section class=\"objections\"><h2>" + esc(w.t('Objections')) + "</h2><ul>"))
        for o in marks.objections:
            when = " " + w.t("at {time}", time=fmt_clock(o.at_ms)) if o.at_ms is not None else ""
            out.append("<li>" + esc(w.t("Objection: {name}, puzzle {puzzle}: {reason} ({action} by {who}{when})",
                                        name=names.get(o.entrant, o.entrant), puzzle=o.puzzle, reason=o.reason,
                                        action=o.action, who=o.who, when=when)) + "</li>")
        out.append("</ul></section>")
    if marks.reopened:
        out.append(("<section class=\"reopened\"><h2>" + esc(w.t('Reopened')) + "</h2><ul>")
                   + "".join(f"<li>{esc(r)}</li>" for r in marks.reopened) + "</ul></section>")
    return "\n".join(out)


LEGEND = (N_("agreed"), N_("the competitor saw the recorded time (or count) and agreed to it; a later change is "
          "an objection, decided by the head referee and listed under the table"))
