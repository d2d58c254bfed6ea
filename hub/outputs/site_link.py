"""The way to the event's public site (issue 49) on what the hall sees and
what is printed: its QR code (inline SVG, table_cards.qr_svg: segno) and
its address, one self-contained block with its own inline style, for the
projector's header (web/hall_pages.py) and the results sheet's foot
(results.py).  The address: event/folder/site_address.py."""

from __future__ import annotations

from urllib.parse import urlsplit

from .sheet_style import esc
from .table_cards import qr_svg

INTRO = "Results online"


def shown_address(url: str) -> str:
    """The address as people type it: without https:// and a last slash."""
    parts = urlsplit(url)
    text = url[len(parts.scheme) + 3:] if parts.scheme and url.lower().startswith(parts.scheme.lower() + "://") \
        else url
    return text.rstrip("/") if text.count("/") <= 1 else text


def site_link_html(url: str, where: str) -> str:
    """The block for `where`: "projector" (light on the dark header, sized
    in em) or "sheet" (printed: the code 24 mm)."""
    size = "3.1em" if where == "projector" else "24mm"
    colours = ("background:#fff;color:#111;border-radius:.2em;padding:.08em" if where == "projector" else "")
    text_style = ("font-size:.65em;line-height:1.2;max-width:14em;overflow-wrap:anywhere" if where == "projector"
                  else "font-size:12px;overflow-wrap:anywhere")
    svg = qr_svg(url).replace('class="qr"', f'class="qr" style="width:{size};height:{size};display:block"', 1)
    return (f'<div class="site-link" data-url="{esc(url)}" style="display:flex;align-items:center;gap:.5em;'
            f'margin:{"0 .5em" if where == "projector" else "10px 0 0"}">'
            f'<div style="flex:none;{colours}">{svg}</div>'
            f'<div style="{text_style}">{INTRO}:<br><a href="{esc(url)}" style="color:inherit;font-weight:bold">'
            f'{esc(shown_address(url))}</a></div></div>')
