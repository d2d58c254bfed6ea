"""The printed and exported outputs in the event's language (issue 48, item 1):
the results sheet, the day's podiums, the XLSX, table cards, a referee's
badge, find-your-table and the check-in list, each rendered in cs, da, nb
and en, with the rule texts' words and Czech's three plural forms; and the
catalogue's check for them: every text they show goes through the catalogue
(a literal English text left in one fails here, as one in a page fails in
test_catalogues.py), and every text they look up is in messages.pot."""

from __future__ import annotations

import html
import io
import re
from datetime import datetime, timezone
from pathlib import Path

import pytest
from babel.messages.pofile import read_po
from openpyxl import load_workbook

from tabletimer import repo_root
from tabletimer.hub.event.folder import event_folder
from tabletimer.hub.i18n import catalogue
from tabletimer.hub.outputs import day_results
from tabletimer.hub.outputs.check_in_list import check_in_list_html
from tabletimer.hub.outputs.find_table import find_table_html, lines
from tabletimer.hub.outputs.referee_badge import badge_html
from tabletimer.hub.outputs.results import load_results, results_html
from tabletimer.hub.outputs.results_xlsx import workbook, xlsx_bytes
from tabletimer.hub.outputs.table_cards import cards_html
from event_log import finish, record

M = 60_000
NOW = 1_796_300_000_000
GENERATED = datetime(2026, 12, 3, 18, 5, 9, tzinfo=timezone.utc)
TITLE = "Hall Cup"
URL = "http://192.168.1.10:8765"
LANGS = ("cs", "da", "nb", "en")




@pytest.fixture(scope="module")
def hall(tmp_path_factory) -> Path:
    """indiv (final: an unofficial entrant, equal award places, one counted);
    pairs (in progress, a finish unconfirmed); teams (not started)."""
    hall = tmp_path_factory.mktemp("lang") / "hall"
    for name, preset in (("indiv", "czjpa-individuals"), ("pairs", "czjpa-pairs"), ("teams", "czjpa-teams")):
        event_folder.add_round(hall, name, preset, TITLE)
    indiv = hall / "rounds" / "indiv"
    (indiv / "entrants.csv").write_text(
        "id,name,eligible\n1,Jana Nováková,yes\n2,Guest Star,no\n3,Petr Dvořák,yes\n4,Eva Svobodová,yes\n"
        "5,Karel Veselý,yes\n6,Lucie Malá,yes\n", encoding="utf-8")
    (indiv / "stations.csv").write_text("board,button,table,entrant\n" + "".join(
        f"T0{i},1,Stul {i},{i}\n" for i in range(1, 7)), encoding="utf-8")
    (hall / "rounds" / "pairs" / "entrants.csv").write_text(
        "id,name,kind,members,eligible\nP1,The Edges,pair,Anna|Ben,yes|yes\nP2,Mixed Up,pair,Cid|Dan,yes|no\n",
        encoding="utf-8")
    (hall / "rounds" / "pairs" / "stations.csv").write_text(
        "board,button,table,entrant\nT01,1,Stul 1,P1\nT02,1,Stul 2,P2\n", encoding="utf-8")
    start = NOW - 5 * 3_600_000
    record(hall, "indiv", [("round_start", {"at": start})] + finish("2", start + 40 * M) + finish("1", start + 45 * M)
           + finish("3", start + 50 * M) + finish("4", start + 50 * M) + finish("5", start + 55 * M)
           + [("count", {"entrant": "6", "puzzle": 1, "placed": 300})], NOW)
    start = NOW - 30 * M
    record(hall, "pairs", [("round_start", {"at": start})] + finish("P1", start + 20 * M)
           + finish("P2", start + 25 * M, confirm=False), NOW)
    return hall


def outputs(hall: Path, lang: str) -> dict[str, str]:
    """Every output of the event in lang, as text (the XLSX: its cells' text, row by row)."""
    res = load_results(hall, NOW, "indiv")
    pairs = load_results(hall, NOW, "pairs")
    ev = res.event
    day = day_results.load_day(hall, NOW)
    wb = load_workbook(io.BytesIO(xlsx_bytes(workbook(day, GENERATED, TITLE, lang=lang))))
    cells = "\n".join(f"[{ws.title}] " + " | ".join(str(v) for v in row if isinstance(v, str))
                      for ws in wb.worksheets for row in ws.iter_rows(values_only=True))
    return {
        "results": results_html(TITLE, ev.format, res.rows, GENERATED, ev.entrants, res.start_ms, marks=res.marks,
                                lang=lang),
        "results in progress": results_html(TITLE, pairs.format, pairs.rows, GENERATED, pairs.event.entrants,
                                            pairs.start_ms, pairs.left_ms, round="pairs", marks=pairs.marks,
                                            lang=lang),
        "day": day_results.day_html(day, GENERATED, lang=lang),
        "xlsx": cells,
        "cards": cards_html("hall", ev.format, ev.entrants, ev.stations, TITLE, URL, lang=lang),
        "cards without codes": cards_html("hall", ev.format, ev.entrants, ev.stations, TITLE, None, lang=lang),
        "badge": badge_html(TITLE, "Ola Nordmann", URL, "secret-token", lang=lang),
        "find table": find_table_html(TITLE, "indiv", lines(ev.entrants, ev.stations), URL, lang=lang),
        "check-in": check_in_list_html("hall", ev.entrants, ev.stations, URL, TITLE, lang=lang),
    }


# the rule texts' and the languages' own words, in each output
WORDS = {
    "cs": {"results": ["Místo", "Výsledný čas", "neoficiální", "cenové místo", "Datum: 3. prosince 2026",
                       "Ti, kdo dokončili", "10 s za každý chybějící dílek", "nedokončeno"],
           "results in progress": ["Předběžné: Kolo probíhá, zbývá", "předběžné", "Členové"],
           "day": ["Stupně vítězů všech kol", "3 kola", "Nezačalo", "Konečné", "Výsledek"],
           "xlsx": ["[Celý den]", "Konečné výsledky", "cenové místo", "výsledný čas", "P1 mezičas", "ano", "ne",
                    "dokončeno", "Nezačalo: zatím žádné výsledky"],
           "cards": ["karty stolů", "Tlačítko 1", "rozhodčí: stránka tohoto stolu", "deska T01"],
           "cards without codes": ["Na těchto kartách nejsou kódy"],
           "badge": ["Rozhodčí", "Kartu si uschovejte"],
           "find table": ["najděte svůj stůl", "6 jmen, abecedně", "Deska, tlačítko", "Prezence"],
           "check-in": ["Prezence: Hall Cup", "soutěžící", "přítomen"]},
    "da": {"results": ["Placering", "Nettotid", "uofficiel", "præmieplacering", "Dato: 3. december 2026",
                       "manglende brik", "lige resultater deler placering"],
           "results in progress": ["Foreløbig: Runden er i gang", "tilbage", "Medlemmer"],
           "day": ["Alle runders podium", "3 runder", "Ikke startet", "Endelig"],
           "xlsx": ["[Hele dagen]", "Endelige resultater", "præmieplacering", "nettotid", "ja", "nej", "færdig"],
           "cards": ["bordkort", "Knap 1", "dommere: dette bords side", "boks T01"],
           "cards without codes": ["Ingen koder på disse kort"],
           "badge": ["Dommer", "Pas på kortet"],
           "find table": ["find dit bord", "6 navne, alfabetisk", "Boks, knap", "Indtjekning"],
           "check-in": ["Indtjekning: Hall Cup", "deltager", "til stede"]},
    "nb": {"results": ["Plassering", "Nettotid", "uoffisiell", "premieplassering", "Dato: 3. desember 2026",
                       "manglende brikke", "like resultater deler plassering"],
           "results in progress": ["Foreløpig: Runden pågår", "igjen", "Medlemmer"],
           "day": ["Alle rundenes pall", "3 runder", "Ikke startet", "Endelig"],
           "xlsx": ["[Hele dagen]", "Endelige resultater", "premieplassering", "nettotid", "ja", "nei", "ferdig"],
           "cards": ["bordkort", "Knapp 1", "dommere: dette bordets side", "boks T01"],
           "cards without codes": ["Ingen koder på disse kortene"],
           "badge": ["Dommer", "Ta vare på kortet"],
           "find table": ["finn bordet ditt", "6 navn, alfabetisk", "Boks, knapp", "Innsjekking"],
           "check-in": ["Innsjekking: Hall Cup", "deltaker", "til stede"]},
    "en": {"results": ["Place", "Net time", "unofficial", "award place", "Date: 3 December 2026",
                       "10 s per missing piece"],
           "results in progress": ["Provisional: Round in progress", "left"],
           "day": ["Every round's podium", "3 rounds", "Not started"],
           "xlsx": ["[The day]", "Final results", "award_place", "net_time", "p1_lap", "yes", "no", "finished"],
           "cards": ["table cards", "Button 1", "referees: this table's page", "board T01"],
           "cards without codes": ["No codes on these cards"],
           "badge": ["Referee", "Keep this card"],
           "find table": ["find your table", "6 names, alphabetically", "Board, button", "Check-in"],
           "check-in": ["Check-in: Hall Cup", "entrant", "here"]},
}


def readable(text: str) -> str:
    text = re.sub(r"<(style|svg)\b.*?</\1>", " ", text, flags=re.S)
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]*>", " ", text)))


@pytest.mark.parametrize("lang", LANGS)
def test_each_output_in_each_language_says_it_in_its_words(hall, lang):
    got = outputs(hall, lang)
    for name, expected in WORDS[lang].items():
        text = readable(got[name]) if name != "xlsx" else got[name]
        missing = [w for w in expected if w not in text]
        assert not missing, f"{lang} {name}: {missing} not in {text[:3000]}"
    for name in ("results", "day", "badge", "find table", "cards", "check-in"):
        assert f'<html lang="{lang}">' in got[name]
    if lang != "en":                                      # and no English left where the words are
        for name, english in (("results", "Net time"), ("day", "Every round"), ("cards", "Button 1"),
                              ("badge", "Keep this card"), ("find table", "alphabetically")):
            assert english not in got[name], f"{lang} {name}: {english!r}"


def test_czech_counts_take_their_three_forms_in_the_outputs(hall):
    day = day_results.load_day(hall, NOW)
    indiv = next(r for r in day.rounds if r.name == "indiv")
    counted = next(row for row in indiv.results.rows if row.entrant == "6")   # type: ignore[union-attr]
    assert day_results.result_text(counted, indiv.format, "cs") == "300 dílků"
    for pieces, said in ((1, "1 dílek"), (3, "3 dílky"), (5, "5 dílků")):
        assert day_results.result_text(counted._replace(pieces=pieces), indiv.format, "cs") == said
    ev = event_folder.load(hall, "indiv")
    found = lines(ev.entrants, ev.stations)
    for n, said in ((1, "1 jméno, abecedně"), (2, "2 jména, abecedně"), (6, "6 jmen, abecedně")):
        assert said in readable(find_table_html(TITLE, "indiv", found[:n], lang="cs"))
    assert "3 kola" in readable(day_results.day_html(day, GENERATED, lang="cs"))


def test_times_and_dates_in_the_outputs_as_each_language_writes_them(hall):
    res = load_results(hall, NOW, "pairs")
    ev = res.event
    page = {lang: readable(results_html(TITLE, ev.format, res.rows, GENERATED, ev.entrants, res.start_ms,
                                        res.left_ms, marks=res.marks, lang=lang)) for lang in LANGS}
    at = GENERATED.astimezone()
    assert f"kl. {at.strftime('%H.%M.%S')}" in page["da"] and f"kl. {at.strftime('%H:%M:%S')}" in page["nb"]
    assert f"v {at.strftime('%H:%M:%S')}" in page["cs"] and f"at {at.strftime('%H:%M:%S')}" in page["en"]


# --------------------------------------------------- the catalogue's check for the outputs

POT = repo_root() / "hub" / "i18n" / "locales" / "messages.pot"
OPEN, CLOSE = "\u27e6", "\u27e7"        # ⟦ ⟧: legal in XML, in a sheet name, in HTML


@pytest.fixture
def marked(monkeypatch):
    """Every text that goes through the catalogue comes out between OPEN and
    CLOSE, and its msgid is recorded."""
    asked: set = set()
    real_t, real_n = catalogue.Words.t, catalogue.Words.n

    def t(self, text, **values):
        asked.add(text)
        return OPEN + real_t(self, text, **values) + CLOSE

    def n(self, singular, plural, count, **values):
        asked.add((singular, plural))
        return OPEN + real_n(self, singular, plural, count, **values) + CLOSE

    monkeypatch.setattr(catalogue.Words, "t", t)
    monkeypatch.setattr(catalogue.Words, "n", n)
    return asked


# what the outputs show that is no text of ours: the product, the sport's marks, commands,
# addresses, codes (the event's own names, titles and ids are taken out first)
NOT_OURS = re.compile(r"TableTimer|DNS / DQ|\bP\d\b|tabletimer[^ ]*|DIR|NAME|--round|https?://\S+|"
                      r"\[h\]:mm:ss|CZJPA[^|]*?(?=\)|\||$| ·)|indiv|pairs|teams")


def data_words(hall: Path) -> list[str]:
    out = {TITLE, "Ola Nordmann", "hall", "secret-token"}
    for name in ("indiv", "pairs", "teams"):
        ev = event_folder.load(hall, name)
        out |= {ev.format.title, ev.format.eligibility or ""}
        out |= {e.name for e in ev.entrants} | {m.name for e in ev.entrants for m in e.members}
        out |= {s.table for s in ev.stations} | {s.board for s in ev.stations}
    return sorted((w for w in out if w), key=len, reverse=True)


@pytest.mark.parametrize("lang", ["cs", "en"])
def test_every_text_of_the_outputs_goes_through_the_catalogue(hall, marked, lang):
    """A literal text added to an output (not through words.t / words.n)
    fails here: the outputs are rendered with every catalogue text marked,
    and what is left unmarked must be the event's data, numbers or marks."""
    data = data_words(hall)
    for name, text in outputs(hall, lang).items():
        text = readable(text) if name != "xlsx" else text
        innermost = re.compile(f"{OPEN}[^{OPEN}{CLOSE}]*{CLOSE}")
        while innermost.search(text):                                    # a text within a text
            text = innermost.sub(" ", text)
        for d in data:
            text = text.replace(d, " ")
        text = NOT_OURS.sub(" ", text)
        left = [w for w in re.findall(r"[^\W\d_]{2,}", text) if w not in ("yes", "no")]
        assert not left, f"{lang} {name}: text not through the catalogue: {left} in {text[:1500]!r}"


def test_every_text_the_outputs_look_up_is_in_the_template(hall, marked):
    """A text looked up but missing from messages.pot (one the extractor
    cannot see, e.g. inside an f-string's braces, or a variable's never
    marked with N_) would stay English in every language."""
    for lang in LANGS:
        outputs(hall, lang)
    with open(POT, "rb") as f:
        kept = {m.id for m in read_po(f) if m.id}
    assert marked and not (marked - kept), f"not in messages.pot: {sorted(map(str, marked - kept))}"
