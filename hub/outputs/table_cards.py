"""Printable table cards (`tabletimer cards DIR --html FILE`): one card per
table of stations.csv, listing each station (board button, entrant, members,
relay puzzle) with a QR code, laid out for A4 portrait, several cards per
page, dashed cut lines around each card.  One self-contained HTML page: the
QR codes are inline SVG (made by segno), the styles inline, no scripts.

QR payload (text, one per station):

    tabletimer:<event>:<board>:<button>:<entrant>

    event    the event folder's name (e.g. hall-2027)
    board    the board id (letters, digits, '-' and '_')
    button   the station's button number, 1 = the first button
    entrant  the entrant id of entrants.csv

`event` and `entrant` are percent-encoded (RFC 3986: everything but ASCII
letters, digits and -._~, as urllib.parse.quote(text, safe="")), so no field
ever holds a ':' and `payload.split(":")` always gives the five fields;
`parse_payload` undoes it.  The text is printed under each station.

With the hub's public URL (`--public-url`, or the event folder's saved
one), each card carries ONE QR code: the table's page for referees' phones,

    PUBLIC_URL/t/<table>        (table percent-encoded: quote(table, safe=""))

with that address printed under it as people read it (`PUBLIC_URL/t/Stůl 1`,
not `St%C5%AFl%201`); the stations are listed, each with its text but no
code of its own (a phone's camera facing a card with several codes opens
whichever it sees first).  Without it the cards have no code at all, and
say why at the top: a code of a station's text opens nothing on a phone.
`table_url` makes the address, `parse_table_url` gives the table back (the
web server's side).
"""

from __future__ import annotations

import html
from typing import Iterable, Sequence
from urllib.parse import quote, unquote, urlsplit

import segno

from ..event.folder.event_folder import Station
from ..i18n.catalogue import N_, words
from ..rules.formats import Format
from ..rules.standings import Entrant

SCHEME = "tabletimer"


def station_payload(event: str, board: str, button: int, entrant: str) -> str:
    """The QR text that identifies one station of one event."""
    return f"{SCHEME}:{quote(event, safe='')}:{board}:{button}:{quote(entrant, safe='')}"


def parse_payload(text: str) -> tuple[str, str, int, str]:
    """(event, board, button, entrant) from a station payload; ValueError
    for anything else."""
    parts = text.split(":")
    if len(parts) != 5 or parts[0] != SCHEME or not parts[3].isdigit():
        raise ValueError(f"not a TableTimer station code: {text!r}")
    return unquote(parts[1]), parts[2], int(parts[3]), unquote(parts[4])


TABLE_PATH = "/t/"


def table_url(public_url: str, table: str) -> str:
    """The address of a table's page for referees' phones."""
    return f"{public_url.rstrip('/')}{TABLE_PATH}{quote(table, safe='')}"


def readable_table_url(public_url: str, table: str) -> str:
    """A table page's address as printed for people: the table's name as it
    is written (the code holds table_url's, which every phone reads)."""
    return f"{public_url.rstrip('/')}{TABLE_PATH}{table}"


NO_CODES = N_("No codes on these cards: a phone's camera opens a table's page only with the hub's"
              " address on the hall network, which this event folder does not have yet (print them again"
              " with {command}: the address {run} prints for phones). A code of a station's text"
              " would open nothing on a phone.")


def no_codes(lang: str = "en") -> str:
    """NO_CODES in lang, as HTML (the commands in <code>)."""
    return html.escape(words(lang).t(NO_CODES, command="\0", run="\1"), quote=False).replace(
        "\0", "<code>tabletimer cards DIR --html FILE --public-url http://192.168.1.10:8765</code>").replace(
        "\1", "<code>tabletimer run</code>")


def parse_table_url(url: str) -> str:
    """The table of a table page's address or path (table_url's inverse):
    'http://hub:8765/t/St%C5%AFl%203' or '/t/St%C5%AFl%203' -> 'Stůl 3';
    ValueError for anything else."""
    path = urlsplit(url).path
    at = path.rfind(TABLE_PATH)
    rest = path[at + len(TABLE_PATH):] if at >= 0 else ""
    if not rest or "/" in rest:
        raise ValueError(f"not a TableTimer table address: {url!r}")
    table = unquote(rest, errors="strict")
    if not table.strip():
        raise ValueError(f"not a TableTimer table address: {url!r}")
    return table


def qr_svg(payload: str, title: str | None = None) -> str:
    """The payload as a QR code (not Micro QR: phones read it), inline SVG
    without a fixed size (the page's CSS sizes it), titled with the text
    (or with title: a code that holds a secret says what it is, not the secret)."""
    qr = segno.make(payload, micro=False, error="m")
    return qr.svg_inline(scale=1, border=2, omitsize=True, title=payload if title is None else title,
                         svgclass="qr", lineclass=None)


_CSS = """
*{box-sizing:border-box}
html{-webkit-print-color-adjust:exact;print-color-adjust:exact}
body{margin:0;padding:16px;font:13px/1.3 "Liberation Sans","DejaVu Sans",Arial,Helvetica,sans-serif;
  color:#111;background:#fff}
.page{max-width:190mm;margin:0 auto}
.hint{margin:0 0 3mm;font-size:10px;color:#555}
.hint .nocodes{display:block;margin:1mm 0;font-size:12px;color:#900}
.cards{display:grid;grid-template-columns:1fr 1fr;padding:0.3mm 0 0 0.3mm}
.card{border:0.3mm dashed #777;margin:-0.3mm 0 0 -0.3mm;padding:4mm 5mm;break-inside:avoid;
  page-break-inside:avoid}
.card.wide{grid-column:1 / -1}
.card h2{font-size:22px;margin:0}
.card .event{font-size:11px;color:#444;margin:0 0 2mm}
.stations{display:grid;grid-template-columns:1fr;gap:2mm}
.card.wide .stations{grid-template-columns:1fr 1fr}
figure.station{display:flex;gap:3mm;align-items:center;margin:0}
figure.station svg.qr{width:26mm;height:26mm;flex:none}
.card.wide figure.station svg.qr{width:22mm;height:22mm}
figcaption{min-width:0}
.button{font-size:18px;font-weight:bold}
.who{font-size:15px;font-weight:bold;overflow-wrap:anywhere}
.members,.board{font-size:11px;color:#444}
.card .head{display:flex;gap:4mm;align-items:flex-start;justify-content:space-between}
.tableqr{margin:0;text-align:center;flex:none;width:40mm}
.tableqr svg.qr{width:30mm;height:30mm}
.tableqr figcaption{font-size:9px;color:#333}
.tableqr .url{font:9px/1.2 "DejaVu Sans Mono","Liberation Mono",monospace;overflow-wrap:anywhere}
.nocode figure.station{display:block;padding:1mm 0;border-top:0.2mm solid #ddd}
.payload{font:9px/1.2 "DejaVu Sans Mono","Liberation Mono",monospace;color:#555;overflow-wrap:anywhere}
@page{size:A4 portrait;margin:10mm}
@media print{
  body{padding:0}
  .page{max-width:none}
}
"""


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def tables(stations: Iterable[Station]) -> dict[str, list[Station]]:
    """Stations by table, tables in stations.csv order, stations by board and button."""
    out: dict[str, list[Station]] = {}
    for s in stations:
        out.setdefault(s.table, []).append(s)
    return {t: sorted(ss, key=lambda s: (s.board, s.button)) for t, ss in out.items()}


def cards_html(event: str, fmt: Format, entrants: Sequence[Entrant], stations: Iterable[Station],
               title: str | None = None, public_url: str | None = None, lang: str = "en") -> str:
    """The printable cards page.  event: the event folder's name (in the QR
    payload); title: shown on each card (default: event); public_url: the
    hub's address for phones (one code per table, for its page), or None
    (a code per station); lang: the event's language."""
    w = words(lang)
    by_id = {e.id: e for e in entrants}
    heading = title or event
    hint = (" " + html.escape(w.t("Scan a table's code with a phone's camera to open its page on the hub."), quote=False) if public_url
            else f' <b class="nocodes">{no_codes(w.lang)}</b>')
    hint += " " + _e(w.t("Under each station its text {code}.",
                         code="tabletimer:<event>:<board>:<button>:<entrant>"))
    out = ["<!DOCTYPE html>", f'<html lang="{w.lang}">', "<head>", '<meta charset="utf-8">',
           '<meta name="generator" content="TableTimer">',
           ("<title>" + _e(w.t('{title} - table cards', title=heading)) + "</title>"), f"<style>{_CSS}</style>", "</head>",
           "<body>", '<div class="page">', '<p class="hint">' + _e(w.t(
               "{title}: table cards. Print on A4 at 100 %, cut along the dashed lines, put each card on its table.",
               title=heading)) + f"{hint}</p>",
           '<main class="cards">']
    for table, sts in tables(stations).items():
        wide = " wide" if len(sts) > 4 else ""
        out.append(f'<section class="card{wide} nocode">')
        head = f"<h2>{_e(table)}</h2>" + f'<p class="event">{_e(heading)} &middot; {_e(fmt.title)}</p>'
        if public_url:
            url = table_url(public_url, table)
            out.append('<div class="head"><div>' + head + "</div>"
                       '<figure class="tableqr">' + qr_svg(url) +
                       "<figcaption>" + _e(w.t("referees: this table's page")) +
                       f'<div class="url">{_e(readable_table_url(public_url, table))}</div>'
                       "</figcaption></figure></div>")
        else:
            out.append(head)
        out.append('<div class="stations">')
        for s in sts:
            e = by_id.get(s.entrant)
            payload = station_payload(event, s.board, s.button, s.entrant)
            name = (e.name if e and e.name else s.entrant)
            members = ", ".join(m.name for m in e.members) if e else ""
            puzzle = (" &middot; " + _e(w.t('puzzle {puzzle}', puzzle=s.puzzle))) if s.puzzle is not None else ""
            out.append('<figure class="station"><figcaption>'
                       + ('<div class="button">' + _e(w.t("Button {button}", button=s.button)) + f'{puzzle}</div>')
                       + f'<div class="who">{_e(name)}</div>'
                       + (f'<div class="members">{_e(members)}</div>' if members else "")
                       + ('<div class="board">' + _e(w.t("board {board}", board=s.board)) + ' &middot; ')
                       + (_e(w.t("entrant {entrant}", entrant=s.entrant)) + '</div>')
                       + f'<div class="payload">{_e(payload)}</div>'
                       "</figcaption></figure>")
        out.append("</div></section>")
    out.append("</main></div></body></html>")
    return "\n".join(out) + "\n"
