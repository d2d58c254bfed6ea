"""A referee's printable badge (`tabletimer referees DIR add NAME`): one
self-contained HTML page, an A6 card with the event's name, the referee's
name and a QR code of the sign-in address

    PUBLIC_URL/signin?token=TOKEN

which a phone's camera opens to sign the phone in as that referee.  Under
the code, in words, what it is for and the address without the token (the
token is printed nowhere but in the code: the SVG's title says what the
code is, not what it holds).  Inline SVG (segno) and inline CSS, no scripts.
Takes plain strings: the referees' book lives in the web layer.
"""

from __future__ import annotations

import html
from urllib.parse import parse_qs, quote, urlsplit

from ..i18n.catalogue import N_, words
from .table_cards import qr_svg

SIGNIN = "/signin"

WARNING = N_("Scan with the phone's camera to sign in as a referee. "
             "Keep this card: whoever holds it can record results.")


def signin_url(public_url: str, token: str) -> str:
    """The address a badge's QR code holds."""
    return f"{public_url.rstrip('/')}{SIGNIN}?token={quote(token, safe='')}"


def signin_token(url: str) -> str | None:
    """The token of a sign-in address (signin_url's inverse), or None."""
    parts = urlsplit(url)
    if not parts.path.endswith(SIGNIN):
        return None
    tokens = parse_qs(parts.query).get("token", [])
    return tokens[0] if len(tokens) == 1 and tokens[0] else None


_CSS = """
*{box-sizing:border-box}
html{-webkit-print-color-adjust:exact;print-color-adjust:exact}
body{margin:0;padding:16px;font:13px/1.35 "Liberation Sans","DejaVu Sans",Arial,Helvetica,sans-serif;
  color:#111;background:#fff}
.badge{width:95mm;min-height:138mm;margin:0 auto;border:0.3mm dashed #777;padding:6mm;
  display:flex;flex-direction:column;align-items:center;text-align:center;break-inside:avoid;
  page-break-inside:avoid}
.event{font-size:13px;color:#444;margin:0 0 1mm;overflow-wrap:anywhere}
.role{font-size:12px;letter-spacing:0.2em;text-transform:uppercase;color:#444;margin:0}
h1{font-size:26px;margin:1mm 0 4mm;overflow-wrap:anywhere}
svg.qr{width:62mm;height:62mm;flex:none}
.how{font-size:12px;margin:3mm 0 2mm}
.url{font:11px/1.2 "DejaVu Sans Mono","Liberation Mono",monospace;color:#333;overflow-wrap:anywhere}
@page{size:105mm 148mm;margin:5mm}   /* A6: Chromium knows no "A6" (A5, A4, ... letter), and printed an unknown size on Letter */
@media print{body{padding:0}.badge{margin:0}}
"""


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def badge_html(event: str, name: str, public_url: str, token: str, lang: str = "en") -> str:
    """The badge page of one referee, in lang (the event's language)."""
    w = words(lang)
    url = signin_url(public_url, token)
    plain = public_url.rstrip("/") + SIGNIN
    return "\n".join([
        "<!DOCTYPE html>", f'<html lang="{w.lang}">', "<head>", '<meta charset="utf-8">',
        '<meta name="generator" content="TableTimer">',
        ("<title>" + _e(w.t('{event} - referee {name}', event=event, name=name)) + "</title>"), f"<style>{_CSS}</style>",
        "</head>", "<body>", '<main class="badge">',
        f'<p class="event">{_e(event)}</p>',
        ('<p class="role">' + _e(w.t("Referee")) + '</p>'),
        f"<h1>{_e(name)}</h1>",
        qr_svg(url, title=w.t("sign-in code for referee {name}", name=name)),
        ('<p class="how">' + _e(w.t(WARNING)) + '</p>'),
        f'<p class="url">{_e(plain)}</p>',
        "</main></body></html>"]) + "\n"
