"""The hub's words in the languages it speaks: gettext catalogues made with
Babel (docs/operations.md, "Languages"), loaded per language.

    hub/i18n/locales/messages.pot                  the template (`pybabel extract`)
    hub/i18n/locales/LANG/LC_MESSAGES/messages.po  one language's translations

Only the .po files are kept (in git and in the package): `words(lang)`
compiles a language's .po with Babel's own compiler (what `pybabel compile`
writes to a .mo) into memory on first use, and Babel's support.Translations
reads that.  So a fresh clone, the tests and an installed hub never read a
stale .mo, and no build step is needed.  A fuzzy entry is left out (the
English text shows), as `pybabel compile` leaves it out.

A text is an English msgid with {name} placeholders, the same in Python and
in the pages' scripts (`Words.t("called {time} ago", time=...)`); plurals go
through ngettext with the language's own forms (Czech has three).  The
pages' scripts get their language's catalogue from the server
(`script_catalogue`), never a list of their own.
"""

from __future__ import annotations

import gettext
import json
import re
from dataclasses import dataclass
from functools import lru_cache
from io import BytesIO
from pathlib import Path

from babel.core import Locale
from babel.messages.catalog import Catalog
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.support import Translations

from .local_format import decimal_mark

LOCALES = Path(__file__).parent / "locales"
DOMAIN = "messages"
SOURCE = "en"
# the languages the hub speaks: code -> its own name (for a page's chooser)
LANGUAGES = {"en": "English", "cs": "Čeština", "da": "Dansk", "nb": "Norsk bokmål"}
# codes that mean one of them (a browser's "no" is Norwegian, and most say Bokmål)
ALIASES = {"no": "nb", "nn": "nb", "cz": "cs", "dk": "da", "en-gb": "en", "en-us": "en"}
PLACEHOLDER = re.compile(r"\{([a-z_][a-z0-9_]*)\}")


class UnknownLanguage(ValueError):
    """A language code the hub has no catalogue for."""


def known() -> str:
    return ", ".join(f"{code} ({name})" for code, name in LANGUAGES.items())


def language(code: str) -> str:
    """The hub's code for a language code (nb, nb-NO, nb_NO, no: nb);
    UnknownLanguage, naming those it has, for any other."""
    c = code.strip().lower().replace("_", "-")
    c = ALIASES.get(c, c)
    if c not in LANGUAGES:
        c = ALIASES.get(c.split("-")[0], c.split("-")[0])
    if c not in LANGUAGES:
        raise UnknownLanguage(f"no language {code.strip()!r} here: the hub speaks {known()}")
    return c


def from_accept_language(header: str | None, default: str = SOURCE) -> str:
    """The best of the hub's languages for a browser's Accept-Language
    header ("da-DK,da;q=0.9,en;q=0.8"); default when none of them is asked for."""
    asked = []
    for i, part in enumerate((header or "").split(",")):
        tag, _, params = part.strip().partition(";")
        q = 1.0
        if params.strip().startswith("q="):
            try:
                q = float(params.strip()[2:])
            except ValueError:
                q = 0.0
        if tag and tag != "*" and q > 0:
            asked.append((-q, i, tag))
    for _q, _i, tag in sorted(asked):
        try:
            return language(tag)
        except UnknownLanguage:
            continue
    return default


def po_path(lang: str) -> Path:
    return LOCALES / lang / "LC_MESSAGES" / f"{DOMAIN}.po"


@lru_cache(maxsize=None)
def catalog(lang: str) -> Catalog:
    """A language's .po as Babel reads it."""
    with po_path(lang).open("rb") as f:
        return read_po(f, locale=lang, domain=DOMAIN)


@lru_cache(maxsize=None)
def _translations(lang: str) -> gettext.NullTranslations:
    if lang == SOURCE:
        return gettext.NullTranslations()          # the msgids are the English texts
    mo = BytesIO()
    write_mo(mo, catalog(lang), use_fuzzy=False)
    mo.seek(0)
    return Translations(mo, domain=DOMAIN)


@dataclass(frozen=True)
class Words:
    """One language's words: t (gettext) and n (ngettext), with {name}
    placeholders filled."""
    lang: str

    def t(self, text: str, **values: object) -> str:
        out = _translations(self.lang).gettext(text)
        return out.format(**values) if values else out

    def n(self, singular: str, plural: str, count: int, **values: object) -> str:
        out = _translations(self.lang).ngettext(singular, plural, count)
        return out.format(count=count, **values)

    @property
    def locale(self) -> Locale:
        return Locale.parse(self.lang)


def words(lang: str) -> Words:
    """A language's words (UnknownLanguage for a code the hub does not speak)."""
    return Words(language(lang))


def N_(text: str) -> str:
    """A text marked for the catalogue but translated later, where its
    reader's language is known (a page's script: `TT.t(label)`)."""
    return text


def plural_expression(lang: str) -> str:
    """The language's gettext plural expression (C syntax, which is
    JavaScript's too): n -> the index of its form."""
    if lang == SOURCE:
        return "n != 1"
    return catalog(lang).plural_expr


def script_catalogue(lang: str) -> str:
    """The pages' scripts' catalogue of a language, as a script that sets
    TT_WORDS: {lang, plural (a function), messages {msgid: text or [forms]},
    decimal} (common.js reads it)."""
    lang = language(lang)
    messages: dict[str, str | list[str]] = {}
    if lang != SOURCE:
        for m in catalog(lang):
            if not m.id or m.fuzzy:
                continue
            if isinstance(m.id, (tuple, list)):
                forms = [str(f) for f in m.string or ()] if not isinstance(m.string, str) else []
                if forms and all(forms):
                    messages[str(m.id[0])] = forms
            elif isinstance(m.string, str) and m.string:
                messages[str(m.id)] = m.string
    return ("var TT_WORDS = {lang: %s, plural: function (n) { return Number(%s); }, decimal: %s, messages: %s};\n"
            % (json.dumps(lang), plural_expression(lang), json.dumps(decimal_mark(lang)),
               json.dumps(messages, ensure_ascii=False, sort_keys=True)))
