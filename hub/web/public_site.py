"""The event's public site (issue 49): what followers outside the hall see,
as static files pushed to any web host (site_outbox.py, rclone_remote.py).
Pure: each round's hall view (hall_view.py, as the hall's pages are sent
it) and its results sheet's inputs (round_views.RoundView.results) in, a
set of files {path: bytes} out.

    index.html              the event: its rounds, each with its state and podium,
                            the live round's standings; polls event.json
    event.json              {"title", "version", "changed_ms", "live", "url", "rounds": [...]}
    rounds/NAME.html        a round's standings with its clock; polls rounds/NAME.json
    rounds/NAME.json        the round's view: hall_view's fields, nothing else
    rounds/NAME-results.html   the round's results sheet (results_html)
    site.js, site.css       the pages' script and style (hub/web/pages/), translate.js
                            their gettext
    words.js                the site's language's catalogue (i18n/catalogue.py: the
                            event's language, as the hall's pages speak it)

Every link is relative: the site works under any prefix of any host.  A
page polls its JSON every POLL_S (no-store, and a ?v= against caches);
the JSON's "version" is the live round's last log row, "changed_ms" when
the last row was stored: a file's bytes change only when what it shows
does (so the outbox sends only what changed).

Only what is public: the hall view's fields (names, places, times, tables,
the round's clock), copied by name; never a board id, token, note, alert
or referee.  An entrant whose entrants.csv row says `publish` no is shown
without a name: "(name not published)", no members, an id of the site's
own (its place in the round's list), and its name taken out of the other
rows' reasons (a replacement's "the station went to ...")."""

from __future__ import annotations

import html
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..i18n.catalogue import N_, Words, script_catalogue, words
from ..outputs.result_marks import ResultMarks
from ..outputs.results import results_html
from ..rules.standings import Entrant, StandingRow

PAGES = Path(__file__).parent / "pages"
HIDDEN_NAME = N_("(name not published)")
POLL_S = 5
ASSETS = ("translate.js", "site.js", "site.css")
# a standings row's fields the site shows (hall_view.standing's, but "entrant": the site's own id)
ROW_FIELDS = ("place", "award", "entrant", "name", "members", "official", "status", "time_ms", "penalty_ms",
              "net_ms", "pieces", "deducted", "provisional", "table", "part")
# not "now" nor a time of rendering: a file changes only when what it shows does (the outbox sends it then)
VIEW_FIELDS = ("title", "category", "kind", "order", "tie_break", "unofficial", "resolution_ms", "awards",
               "start", "end", "state", "next_signal", "provisional", "finished", "ranked", "solving",
               "changed_ms")


@dataclass(frozen=True)
class RoundPage:
    """One round as the site shows it: view (hall_view's dict), results
    (RoundView.results()'s tuple, None: no sheet), hidden (the entrant ids
    not to be published)."""
    name: str
    view: dict
    results: tuple | None = None
    hidden: frozenset[str] = field(default_factory=frozenset)


def site_id(index: int) -> str:
    return f"n{index + 1}"


def _hidden_names(page: RoundPage, entrants: list[Entrant]) -> list[str]:
    names = []
    for e in entrants:
        if e.id in page.hidden:
            names += [n for n in (e.name, *(m.name for m in e.members)) if n]
    for r in page.view.get("rows", []):
        if r.get("entrant") in page.hidden:
            names += [n for n in (r.get("name"), *r.get("members", [])) if n]
    return sorted(set(names), key=len, reverse=True)


def _scrub(text: str, names: list[str]) -> str:
    for n in names:
        text = text.replace(n, HIDDEN_NAME)
    return text


def public_view(page: RoundPage, version: int, hidden_name: str = HIDDEN_NAME) -> dict:
    """The round's JSON: the hall view's public fields by name, each row's
    too, the hidden entrants without a name."""
    view = page.view
    ids = {r.get("entrant"): site_id(i) for i, r in enumerate(view.get("rows", []))}
    rows = []
    for r in view.get("rows", []):
        line = {k: r[k] for k in ROW_FIELDS if k in r}
        line["entrant"] = ids[r.get("entrant")]
        if r.get("entrant") in page.hidden:
            line["name"] = hidden_name
            line.pop("members", None)
        rows.append(line)
    out = {k: view.get(k) for k in VIEW_FIELDS}
    out.update(round=page.name, version=version, rows=rows)
    return out


def public_results(page: RoundPage, title: str, w: Words = words("en")) -> str | None:
    """The round's results sheet in w's language, the hidden entrants
    without a name (None: no results)."""
    if page.results is None:
        return None
    fmt, rows, when, entrants, start, left, _row, marks = page.results
    # official or not, and who agreed; not who made them official, nor the objections' reasons (the
    # desk's words, which may name referees): the hall's sheet has them
    public_marks = None if marks is None else ResultMarks(
        official=w.t("made official by the head referee") if marks.official else None,
        agreed=set(marks.agreed) - set(page.hidden), official_at=marks.official_at)
    entrants = list(entrants or [])
    names = _hidden_names(page, entrants)
    hidden_name = w.t(HIDDEN_NAME)
    shown: list[StandingRow] = []
    for r in rows:
        if r.entrant in page.hidden:
            shown.append(r._replace(name=hidden_name, reason=_scrub(r.reason, names), notes=()))
        else:
            shown.append(r._replace(reason=_scrub(r.reason, names), notes=()))
    people = [Entrant(e.id, hidden_name, (), e.eligible) if e.id in page.hidden else e for e in entrants]
    text = results_html(title, fmt, shown, when, people, start, left, marks=public_marks, lang=w.lang)
    live, every = html.escape(w.t("live standings")), html.escape(w.t("all rounds"))
    back = f'<p style="font:14px system-ui"><a href="{html.escape(page.name)}.html">{live}</a> · ' \
           f'<a href="../index.html">{every}</a></p>'
    return text.replace("<body>", "<body>" + back, 1)


def _podium(view: dict) -> list[dict]:
    return [r for r in view["rows"] if r.get("award")]


def event_json(title: str, rounds: list[dict], live: str | None, version: int, url: str | None) -> dict:
    changed = [v["changed_ms"] for v in rounds if v.get("changed_ms")]
    return {"title": title, "version": version, "changed_ms": max(changed) if changed else None,
            "live": live, "url": url,
            "rounds": [{"name": v["round"], "category": v["category"], "state": v["state"],
                        "provisional": v["provisional"], "finished": v["finished"], "ranked": v["ranked"],
                        "solving": v["solving"], "standings": f"rounds/{v['round']}.html",
                        "data": f"rounds/{v['round']}.json", "results": f"rounds/{v['round']}-results.html",
                        "podium": _podium(v)} for v in rounds]}


def _page(kind: str, title: str, data: str, base: str, w: Words) -> bytes:
    """A static page in w's language: its title, the JSON it polls, the
    pages' script with the language's catalogue."""
    t = html.escape(title)
    loading, footer = html.escape(w.t("loading…")), html.escape(w.t("Results live from the hall · updated"))
    return (f'<!doctype html><html lang="{w.lang}"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width,initial-scale=1">'
            f'<title>{t}</title><link rel="stylesheet" href="{base}site.css"></head>'
            f'<body data-page="{kind}" data-json="{html.escape(data)}" data-poll="{POLL_S}">'
            f'<header><h1 id="title">{t}</h1><p id="state" class="state">{loading}</p>'
            f'<p id="link" class="link"></p></header><main id="main"></main>'
            f'<footer>{footer} <span id="updated">-</span></footer>'
            f'<script src="{base}words.js"></script><script src="{base}translate.js"></script>'
            f'<script src="{base}site.js"></script></body></html>').encode()


def _json(doc: Any) -> bytes:
    return (json.dumps(doc, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


def render_site(title: str, rounds: list[RoundPage], live: str | None, version: int,
                url: str | None = None, assets: bool = True, lang: str = "en") -> dict[str, bytes]:
    """Every file of the site for the rounds given ({path: bytes}), in
    lang (the event's language); assets: with the pages' scripts and style
    (they change only with the hub)."""
    w = words(lang)
    files: dict[str, bytes] = {"words.js": script_catalogue(w.lang).encode()}
    views = []
    for page in rounds:
        view = public_view(page, version, w.t(HIDDEN_NAME))
        views.append(view)
        files[f"rounds/{page.name}.json"] = _json(view)
        files[f"rounds/{page.name}.html"] = _page("round", view["title"] or page.name, f"{page.name}.json", "../", w)
        sheet = public_results(page, view["title"] or title, w)
        if sheet is not None:
            files[f"rounds/{page.name}-results.html"] = sheet.encode()
    files["event.json"] = _json(event_json(title, views, live, version, url))
    files["index.html"] = _page("event", title, "event.json", "", w)
    if assets:
        for name in ASSETS:
            files[name] = (PAGES / name).read_bytes()
    return files

