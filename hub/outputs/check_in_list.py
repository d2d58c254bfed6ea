"""The door's check-in list (issue 47, item 3): every entrant of the round
in alphabetical order, its table and a QR code that opens the check-in page
on it (`check_in_path`: PUBLIC_URL/checkin?entrant=ID, read by
hub/web/check_in_view.py's page), with a box to tick on paper should the
phones fail.  One self-contained HTML page, styles inline, no scripts."""

from __future__ import annotations

import html
from typing import Iterable, Sequence
from urllib.parse import quote

from ..event.folder.event_folder import Station
from ..i18n.catalogue import words
from ..rules.facts import Entrant
from .table_cards import qr_svg


def check_in_path(entrant: str) -> str:
    """The check-in page's path for one entrant (what its QR code opens)."""
    return "/checkin?entrant=" + quote(entrant, safe="")


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


_CSS = """
*{box-sizing:border-box}
body{margin:0;padding:16px;font:13px/1.3 "Liberation Sans","DejaVu Sans",Arial,sans-serif;color:#111}
h1{font-size:20px;margin:0 0 2mm}
.hint{font-size:10px;color:#555;margin:0 0 3mm}
table{border-collapse:collapse;width:100%}
td,th{border-bottom:0.2mm solid #bbb;padding:1.5mm 2mm;text-align:left;vertical-align:middle}
td.qr svg.qr{width:18mm;height:18mm}
.name{font-size:15px;font-weight:bold}
.members,.id{font-size:10px;color:#444}
.box{width:8mm;height:8mm;border:0.4mm solid #111}
tr{break-inside:avoid;page-break-inside:avoid}
@page{size:A4 portrait;margin:10mm}
"""


def check_in_list_html(event: str, entrants: Sequence[Entrant], stations: Iterable[Station],
                       public_url: str | None, title: str = "", lang: str = "en") -> str:
    """The list: every entrant by name (a reserve's table "no station"),
    each with a QR code when public_url is known; in lang (the event's language)."""
    w = words(lang)
    tables: dict[str, list[str]] = {}
    for s in stations:
        if s.table not in tables.setdefault(s.entrant, []):
            tables[s.entrant].append(s.table)
    rows = []
    for e in sorted(entrants, key=lambda e: ((e.name or e.id).casefold(), e.id)):
        code = qr_svg(public_url + check_in_path(e.id)) if public_url else ""
        members = ", ".join(m.name for m in e.members)
        rows.append(
            f'<tr data-entrant="{_e(e.id)}"><td class="qr">{code}</td>'
            f'<td><div class="name">{_e(e.name or e.id)}</div>'
            + (f'<div class="members">{_e(members)}</div>' if members else "")
            + f'<div class="id">{_e(e.id)}</div></td>'
            + ('<td>' + (_e(", ".join(tables.get(e.id, [])) or w.t("no station (reserve)"))) + '</td>')
            + f'<td><div class="box"></div></td></tr>')
    hint = (w.t("Scan an entrant's code with a signed-in staff phone: the check-in page opens on them.")
            if public_url else w.t("No QR codes: give --public-url (the hub's address as phones reach it)."))
    heading = _e(w.t("Check-in: {title}", title=title or event))
    return (f'<!doctype html><html lang="{w.lang}"><head><meta charset="utf-8"><title>{heading}'
            f'</title><style>{_CSS}</style></head><body><h1>{heading}</h1>'
            + (f'<p class="hint">{_e(hint)}</p><table><thead><tr><th></th><th>' + _e(w.t("entrant")) + '</th>')
            + ('<th>' + _e(w.t("table")) + '</th><th>' + _e(w.t("here")) + f'</th></tr></thead><tbody>{"".join(rows)}</tbody>')
            + '</table></body></html>\n')
