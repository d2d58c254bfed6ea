"""The catalogues' checks (issue 48 item 3): every text the pages show goes
through the catalogue (the template extracted now equals the one kept; no
literal text left in the pages' HTML or in their scripts' usual places),
every language has every entry (none empty, none fuzzy, every plural form),
placeholders match; plurals, refusals and the event's language."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from babel.messages.pofile import read_po

from tabletimer import repo_root
from tabletimer.hub.event.folder import event_folder
from tabletimer.hub.i18n.catalogue import LANGUAGES, PLACEHOLDER, SOURCE, UnknownLanguage, from_accept_language, \
    language, po_path, script_catalogue, words
from tabletimer.hub.i18n.local_format import clock, duration, number

ROOT = repo_root()
POT = ROOT / "hub" / "i18n" / "locales" / "messages.pot"
PAGES = ROOT / "hub" / "web" / "pages"
TRANSLATED = [code for code in LANGUAGES if code != SOURCE]


def ids(path) -> set:
    with open(path, "rb") as f:
        return {m.id for m in read_po(f) if m.id}


def test_the_kept_template_is_what_the_sources_mark_now(tmp_path):
    """A text marked in a page, a script or the hub's Python but not in
    messages.pot (or one kept there that is gone) fails: run
    `python tools/i18n.py extract` and `update`, then translate."""
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        from i18n import extract_command
    finally:
        sys.path.pop(0)
    fresh = tmp_path / "now.pot"
    subprocess.run([sys.executable, "-m", "babel.messages.frontend", *extract_command(fresh)], cwd=ROOT,
                   check=True, capture_output=True)
    now, kept = ids(fresh), ids(POT)
    assert now == kept, f"new: {sorted(map(str, now - kept))}; gone: {sorted(map(str, kept - now))}"


# the words of a page's HTML that need no translation: the product's name and a command's
UNTRANSLATED = re.compile(r"TableTimer|tabletimer referees DIR add NAME|/rotate\?screens=\S+|#|&larr;|·")


@pytest.mark.parametrize("page", sorted(p.name for p in PAGES.glob("*.html")))
def test_a_pages_html_has_no_text_outside_the_catalogue(page):
    text = (PAGES / page).read_text()
    text = re.sub(r"<(script|style)\b.*?</\1>", "", text, flags=re.S)
    text = re.sub(r"\{\{t:.+?\}\}", "", text, flags=re.S)
    text = re.sub(r"\{\{\w+\}\}", "", text)
    attrs = re.findall(r'(?:placeholder|aria-label|title)="([^"{]*[A-Za-z][^"]*)"', text)
    bare = [t for t in re.split(r"<[^>]*>", text) if re.search(r"[A-Za-z]", UNTRANSLATED.sub("", t))]
    assert not attrs and not bare, f"{page}: text not through the catalogue: {attrs + bare}"


# a script's texts shown to a reader: as an element's text, a message, a placeholder, a label
SHOWN = re.compile(r'''(?:\btext:|textContent\s*[+]?=|placeholder:|"aria-label":|title:|message\(|say\(|setLink\([^,]+,)\s*'''
                   r'''\(?\s*"([^"]*[A-Za-z][^"]*)"''')


@pytest.mark.parametrize("script", sorted(p.name for p in PAGES.glob("*.js")))
def test_a_pages_script_shows_no_literal_text(script):
    found = SHOWN.findall((PAGES / script).read_text())
    assert not found, f"{script}: texts shown without TT.t: {found}"


@pytest.mark.parametrize("lang", TRANSLATED)
def test_every_language_has_every_entry_none_empty_or_fuzzy(lang):
    with open(po_path(lang), "rb") as f:
        cat = read_po(f, locale=lang)
    kept = ids(POT)
    have = {m.id: m for m in cat if m.id}
    assert set(have) == kept, f"{lang}: missing {sorted(map(str, kept - set(have)))}"
    for m in have.values():
        assert not m.fuzzy, f"{lang}: fuzzy {m.id!r}"
        forms = [m.string] if isinstance(m.string, str) else list(m.string)
        if isinstance(m.id, tuple):
            assert len(forms) == cat.num_plurals, f"{lang}: {m.id!r} has {len(forms)} forms, not {cat.num_plurals}"
        assert all(forms), f"{lang}: empty {m.id!r}"


@pytest.mark.parametrize("lang", TRANSLATED)
def test_placeholders_match(lang):
    with open(po_path(lang), "rb") as f:
        cat = read_po(f, locale=lang)
    for m in cat:
        if not m.id:
            continue
        source = m.id if isinstance(m.id, tuple) else (m.id,)
        want = set(PLACEHOLDER.findall(source[-1])) - {"count"}
        for form in ([m.string] if isinstance(m.string, str) else m.string):
            got = set(PLACEHOLDER.findall(form)) - {"count"}
            assert got == want, f"{lang}: {m.id!r} -> {form!r}: placeholders {got} not {want}"


def test_czech_has_three_plural_forms_and_danish_and_norwegian_two():
    n = ("{count} entrant", "{count} entrants")
    assert [words("cs").n(*n, c) for c in (1, 3, 5)] == ["1 soutěžící", "3 soutěžící", "5 soutěžících"]
    assert [words("cs").n("{count} piece deducted", "{count} pieces deducted", c) for c in (1, 2, 5)] == \
        ["odečten 1 dílek", "odečteny 2 dílky", "odečteno 5 dílků"]
    assert [words("da").n(*n, c) for c in (1, 2)] == ["1 deltager", "2 deltagere"]
    assert [words("nb").n(*n, c) for c in (1, 2)] == ["1 deltaker", "2 deltakere"]
    assert [words("en").n(*n, c) for c in (1, 2)] == ["1 entrant", "2 entrants"]
    assert "plural: function (n) { return Number(((n==1) ? 0 : (n>=2 && n<=4) ? 1 : 2)); }" in script_catalogue("cs")


def test_the_rules_words_for_time_up_and_missing_pieces():
    assert words("nb").t("time up") == "tiden er ute"                 # seed 004
    assert words("da").t("time up") == "tiden er gået"
    assert words("nb").t("missing pieces") == words("da").t("missing pieces") == "manglende brikker"
    assert words("da").t("piles of 10") == "bunker af 10" and words("nb").t("piles of 10") == "hauger på 10"
    assert words("cs").t("missing pieces") == "chybějící dílky"


def test_times_and_numbers_as_each_language_writes_them():
    from datetime import datetime
    at = datetime(2026, 6, 14, 14, 5, 9)
    assert [clock(at, lang) for lang in ("en", "cs", "da", "nb")] == ["14:05:09", "14:05:09", "14.05.09", "14:05:09"]
    assert duration("1:02:03.4", "cs") == "1:02:03,4" and duration("1:02:03.4", "en") == "1:02:03.4"
    assert number(1234.5, "nb") == "1\xa0234,5" and number(1234.5, "en") == "1,234.5"


def test_a_language_code_we_do_not_have_is_refused_naming_those_we_do():
    assert language("nb_NO") == language("no") == language("NB") == "nb"
    with pytest.raises(UnknownLanguage, match=r"'de'.*en \(English\), cs \(Čeština\), da \(Dansk\), nb"):
        language("de")
    assert from_accept_language("de-DE,da;q=0.8,en;q=0.5") == "da"
    assert from_accept_language("fr-FR", default="cs") == "cs"


def test_the_events_language_is_set_at_init_changed_later_and_checked(tmp_path):
    with pytest.raises(event_folder.EventFolderError, match="cs \\(Čeština\\)"):
        event_folder.init(tmp_path / "x", "czjpa-individuals", lang="de")
    assert not (tmp_path / "x").exists()                                   # refused: nothing written
    p = event_folder.init(tmp_path / "hall", "czjpa-individuals", lang="nb")
    assert event_folder.event_language(p) == "nb"
    assert event_folder.save_language(p, "cs") == "cs" and event_folder.event_language(p) == "cs"
    with pytest.raises(UnknownLanguage):
        event_folder.save_language(p, "xx")
    assert event_folder.event_language(p) == "cs"
    (p / "language").write_text("klingon\n")
    with pytest.raises(event_folder.EventFolderError, match="language: no language 'klingon'"):
        event_folder.event_language(p)
    assert event_folder.event_language(event_folder.init(tmp_path / "plain", "czjpa-individuals")) == "en"


def test_the_language_command(tmp_path):
    p = event_folder.init(tmp_path / "hall", "czjpa-individuals")
    run = [sys.executable, "-m", "tabletimer.hub.cli.main", "language", str(p)]
    out = subprocess.run(run + ["da"], capture_output=True, text=True)
    assert out.returncode == 0 and (p / "language").read_text() == "da\n"
    out = subprocess.run(run + ["de"], capture_output=True, text=True)
    assert out.returncode == 2 and "da (Dansk)" in out.stderr and (p / "language").read_text() == "da\n"
    assert subprocess.run(run, capture_output=True, text=True).stdout.startswith("da (Dansk)")
