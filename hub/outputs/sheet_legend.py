"""The results sheet's legend (results.py's footer): what its marks mean
(award place, unofficial, provisional, agreed, DNS / DQ), how the round is
ranked, and when and how the sheet was made, in the event's language; and
what "unofficial" means, also for the projector's legend (hall_view.py) and
the XLSX (results_xlsx.py)."""

from __future__ import annotations

from datetime import datetime

from ..i18n.catalogue import N_, Words, words
from ..i18n.local_format import clock, day as local_day, duration as local_duration
from ..rules.formats import Format, fmt_duration
from .result_marks import LEGEND, agreed_badge
from .sheet_style import esc, medal

KIND_WORDS = {"pair": N_("a pair"), "team": N_("a team")}


def stamp(when: datetime, lang: str) -> str:
    """When a sheet was made, as lang writes a date and a clock time: 14 June 2026 14:05."""
    return f"{local_day(when.date(), lang)} {clock(when, lang, seconds=False)}"


def unofficial_text(fmt: Format, lang: str = "en") -> str:
    """What "unofficial" means, for the sheet's legend (HTML): unofficial_words."""
    return esc(unofficial_words(fmt, lang))


def unofficial_parts(fmt: Format) -> dict:
    """What "unofficial" means, as data: the format's eligibility text
    (None: none), and when a pair or team is eligible by its members, its
    kind's words (an English msgid), how many members (at least) and
    whether all must be.  unofficial_words says it; the hall's pages say it
    in their reader's language (hall_view's `unofficial`, common.js)."""
    n = fmt.eligible_members_min if fmt.eligibility and fmt.kind != "individual" else None
    return {"eligibility": fmt.eligibility or None, "kind": KIND_WORDS.get(fmt.kind, fmt.kind) if n else None,
            "members": n or None, "all": bool(n and n >= fmt.max_members)}


def unofficial_words(fmt: Format, lang: str = "en") -> str:
    """What "unofficial" means (plain text: the sheet's legend): not
    eligible for an award place, yet ranked; then who is eligible, said
    apart (the eligibility text right after the mark read as if it
    described the unofficial ones: "(participants from the Czech
    Republic)")."""
    w, p = words(lang), unofficial_parts(fmt)
    text = w.t("not eligible for an award place: takes part and is ranked all the same.")
    if p["eligibility"]:
        text += " " + w.t("Who is eligible for awards: {who}", who=p["eligibility"])
        if p["members"]:
            said = p["kind"]                  # (its own line: the catalogue's extractor reads t(...)'s literals)
            kind = w.t(said)
            text += " " + (w.t("({kind}: all its members)", kind=kind) if p["all"]
                           else w.n("({kind}: at least one of its members)", "({kind}: at least {count} of its members)",
                                    p["members"], kind=kind))
        text += "."
    return text


RUN_FROM = N_("Times run from the entrant's start, in {resolution} (truncated).")


def footer(fmt: Format, provisional: bool, has_unofficial: bool, generated_at: datetime,
            agreed: bool = False, w: Words = words("en")) -> str:
    res = (w.t("whole seconds") if fmt.resolution_ms == 1000
           else w.t("steps of {step}", step=local_duration(fmt_duration(fmt.resolution_ms, fmt.resolution_ms), w.lang)))
    marks: list[tuple[str, str]] = []
    award = (w.t("award place: the place among official entrants; prizes go to places 1-{awards} (shown in bold)",
                 awards=fmt.awards) if fmt.eligible_members_min else
             w.t("award place: the place among entrants; prizes go to places 1-{awards} (shown in bold)",
                 awards=fmt.awards))
    marks.append((medal(1, w.lang) + " " + medal(2, w.lang) + " " + medal(3, w.lang), esc(award)))
    if fmt.eligible_members_min or has_unofficial:
        marks.append((('<span class="badge unofficial">' + esc(w.t("unofficial")) + '</span>'), unofficial_text(fmt, w.lang)))
    if provisional:
        marks.append((('<span class="badge provisional">' + esc(w.t("provisional")) + '</span>'),
                      esc(w.t("a finish not yet confirmed by a referee, or a piece count still missing:"
                              " the result may change"))))
    if agreed:
        marks.append((agreed_badge(w.lang), esc(w.t(LEGEND[1]))))
    marks.append(("DNS / DQ", esc(w.t("did not start / disqualified (with the reason)"))))
    if fmt.order == "pieces":
        rule = (w.t("Ranked by pieces placed (finished puzzles in full, unfinished ones as counted);"
                    " equal pieces by the time of the last whole puzzle.") if fmt.tie_break != "none"
                else w.t("Ranked by pieces placed; equal results share a place."))
    elif fmt.missing_action == "time" and fmt.penalty_per_piece_ms:
        rule = w.t("Finishers are ranked by net time (time plus {seconds} s per missing piece), then the others by"
                   " pieces placed (groups of at least {group}); equal results share a place.",
                   seconds=fmt.penalty_per_piece_ms // 1000, group=fmt.min_group)
    else:
        rule = w.t("Finishers are ranked by net time (time), then the others by pieces placed"
                   " (groups of at least {group}); equal results share a place.", group=fmt.min_group)
    lines = "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in marks)
    return (f"<footer><dl>{lines}</dl>"
            + (f"<p>{esc(rule)} " + esc(w.t(RUN_FROM, resolution=res)) + "</p>")
            + ("<p>" + esc(w.t('Generated {time} by TableTimer from the event log.', time=stamp(generated_at, w.lang))))
            + "</p></footer>")
