"""The "find your table" list (`tabletimer seat`): every competitor's name in
alphabetical order with the table and the buttons, for the door and the
hall's walls -- a team's members each under their own name, with their
team.  A printable A4 HTML page (the results sheet's style) or plain text.
With the hub's public URL each line carries its entrant's check-in QR code
(check_in_list.check_in_path: the staff phone's check-in page opens on that
entrant), so the list at the door is also the scan-in list."""

from __future__ import annotations

from typing import Iterable, NamedTuple

from ..event.folder.event_folder import Station
from ..i18n.catalogue import words
from ..rules.seating import name_key
from ..rules.standings import Entrant
from .check_in_list import check_in_path
from .sheet_style import CSS, esc, page_head
from .table_cards import qr_svg

# the code's size on paper: scannable by a phone held over the list, a line of the list high
QR_CSS = "td.qr{width:16mm;padding:1mm}td.qr svg.qr{width:15mm;height:15mm;display:block}tr{break-inside:avoid}"


class Line(NamedTuple):
    name: str          # the competitor's name
    team: str          # the entrant's name when it is a pair or team ("" for an individual)
    table: str
    buttons: str       # "T07 2" / "T07 1-8"
    entrant: str = ""  # the entrant's id (its check-in code's)


def lines(entrants: Iterable[Entrant], stations: Iterable[Station]) -> list[Line]:
    """One line per competitor with a station, alphabetically."""
    at: dict[str, list[Station]] = {}
    for s in stations:
        at.setdefault(s.entrant, []).append(s)
    out = []
    for e in entrants:
        mine = at.get(e.id)
        if not mine:
            continue
        buttons = sorted(s.button for s in mine)
        where = f"{mine[0].board} {buttons[0]}" + (f"-{buttons[-1]}" if len(buttons) > 1 else "")
        people = [m.name for m in e.members] or [e.name]
        for p in people:
            out.append(Line(p, e.name if e.members else "", mine[0].table, where, e.id))
    return sorted(out, key=lambda ln: (name_key(ln.name), ln.table))


def find_table_text(found: list[Line]) -> str:
    width = max((len(ln.name) for ln in found), default=4)
    return "".join(f"{ln.name:<{width}}  {ln.table}" + (f"  ({ln.team})" if ln.team else "") + "\n"
                   for ln in found)


def find_table_html(title: str, round_name: str, found: list[Line], public_url: str | None = None,
                    lang: str = "en") -> str:
    """The list as a page, in lang (the event's language); with public_url
    (the hub's address as phones reach it) a check-in QR code on each line,
    one code made per entrant."""
    w = words(lang)
    heading = w.t("{title}: find your table", title=title)
    head = page_head(heading, heading, CSS + (QR_CSS if public_url else ""), lang=w.lang)
    with_team = any(ln.team for ln in found)
    codes: dict[str, str] = {}
    if public_url:
        for ln in found:
            if ln.entrant not in codes:
                codes[ln.entrant] = qr_svg(public_url + check_in_path(ln.entrant))
    rows = [f"<tr><td>{esc(ln.name)}</td>" + (f"<td>{esc(ln.team)}</td>" if with_team else "")
            + f'<td class="place">{esc(ln.table)}</td><td>{esc(ln.buttons)}</td>'
            + (f'<td class="qr">{codes[ln.entrant]}</td>' if public_url else "") + "</tr>" for ln in found]
    return "\n".join(head + [
        f'<p class="meta"><span>{esc(round_name)}</span>'
        + ('<span>' + esc(w.n("{count} name, alphabetically", "{count} names, alphabetically", len(found))) + '</span>')
        + (("<span>" + esc(w.t('the code: check-in at the door')) + "</span>") if public_url else "") + "</p>",
        "</header>", ("<table><thead><tr><th>" + esc(w.t('Name')) + "</th>")
        + (("<th>" + esc(w.t('Team')) + "</th>") if with_team else "")
        + ("<th>" + esc(w.t('Table')) + "</th><th>" + esc(w.t('Board, button')) + "</th>")
        + (("<th>" + esc(w.t('Check-in')) + "</th>") if public_url else "")
        + "</tr></thead><tbody>", *rows, "</tbody></table>",
        "</main>", "</body>", "</html>", ""])
