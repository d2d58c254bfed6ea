"""The pages' language: which one a request is answered in, and the
pages' texts put through the catalogue (hub/i18n/catalogue.py).

A referee's phone chooses its own: ?lang=CODE (the chooser on its pages
sets the cookie tt_lang and reloads), else the cookie, else the browser's
Accept-Language, else the event's language.  The hall's pages (the
projector, standings, results, draw) speak the event's (?lang=CODE shows
one in another).

A page file marks its texts {{t:English text}}; `render` puts each through
the catalogue (escaped), and fills {{lang}} and {{chooser}}.  The pages'
scripts load /r/words/LANG.js (or /h/words/LANG.js): their language's
catalogue, and translate with TT.t and TT.n (common.js).
"""

from __future__ import annotations

import re

from starlette.requests import Request
from starlette.responses import Response

from ..i18n.catalogue import LANGUAGES, UnknownLanguage, Words, from_accept_language, language, \
    script_catalogue, words

COOKIE = "tt_lang"
PARAM = "lang"
MARKED = re.compile(r"\{\{t:(.+?)\}\}", re.S)


def asked(request: Request) -> str | None:
    """The language a request asks for by ?lang= or the cookie (None: neither, or not one we have)."""
    for code in (request.query_params.get(PARAM), request.cookies.get(COOKIE)):
        if code:
            try:
                return language(code)
            except UnknownLanguage:
                continue
    return None


def phone_language(request: Request, event_language: str) -> str:
    """A referee's phone's language: its choice, else its browser's, else the event's."""
    return asked(request) or from_accept_language(request.headers.get("accept-language"), event_language)


def hall_language(request: Request, event_language: str) -> str:
    """A hall page's language: the event's, unless its address says ?lang=."""
    code = request.query_params.get(PARAM)
    if code:
        try:
            return language(code)
        except UnknownLanguage:
            pass
    return event_language


def html(text: str) -> str:
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;").replace("'", "&#39;"))


def chooser(lang: str) -> str:
    """The phone's language chooser (common.js sets the cookie and reloads)."""
    options = "".join(f'<option value="{c}"{" selected" if c == lang else ""}>{html(name)}</option>'
                      for c, name in LANGUAGES.items())
    return f'<select id="lang" class="lang" aria-label="language / jazyk / sprog / språk">{options}</select>'


def render(text: str, w: Words) -> str:
    """A page file's marked texts in w's language, its {{lang}} and {{chooser}}."""
    def translated(m: re.Match) -> str:
        marked = " ".join(m.group(1).split())
        return html(w.t(marked))
    text = MARKED.sub(translated, text)
    return text.replace("{{lang}}", w.lang).replace("{{chooser}}", chooser(w.lang))


def catalogue_script(request: Request) -> Response:
    """GET .../words/{lang}.js: the language's catalogue for the pages' scripts."""
    code = request.path_params["lang"]
    try:
        body = script_catalogue(code)
    except UnknownLanguage as e:
        return Response(f"// {e}\n", status_code=404, media_type="text/javascript")
    return Response(body, media_type="text/javascript", headers={"Cache-Control": "no-cache"})


__all__ = ["COOKIE", "PARAM", "asked", "phone_language", "hall_language", "render", "chooser",
           "catalogue_script", "words", "Words"]
