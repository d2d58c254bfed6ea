"""The printed sheets' look, shared by a round's results sheet (results.py)
and the day's podiums (day_results.py): the style sheet (A4 portrait,
award discs, badges, banner) and the HTML bits both draw."""

from __future__ import annotations

import html

from ..i18n.catalogue import words

CSS = """
*{box-sizing:border-box}
html{-webkit-print-color-adjust:exact;print-color-adjust:exact}
body{margin:0;padding:24px;font:14px/1.35 "Liberation Sans","DejaVu Sans",Arial,Helvetica,sans-serif;
  color:#111;background:#fff}
.sheet{max-width:1120px;margin:0 auto}
h1{font-size:26px;margin:0 0 4px}
.meta{margin:0 0 12px;color:#333}
.meta span+span:before{content:" \\00b7  ";color:#888}
.banner{border:2px solid #b45309;background:#fef3c7;color:#78350f;padding:6px 10px;margin:0 0 12px;
  font-weight:bold}
table{width:100%;border-collapse:collapse}
th{text-align:left;font-size:12px;text-transform:uppercase;letter-spacing:.03em;color:#444;
  border-bottom:2px solid #111;padding:4px 6px}
td{border-bottom:1px solid #ccc;padding:5px 6px;vertical-align:top}
tbody tr:nth-child(even) td{background:#f5f5f5}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.place{font-weight:bold}
tr.awarded td{font-weight:bold}
tr.out td{color:#555}
.medal{display:inline-block;min-width:20px;height:20px;line-height:18px;border-radius:10px;
  font-size:12px;text-align:center;font-weight:bold;background:#e5e7eb;border:1px solid #6b7280;
  color:#111;vertical-align:middle}
.medal.m1{background:#f5c518;border-color:#a17f00}
.medal.m2{background:#cfd4da;border-color:#7b838c}
.medal.m3{background:#d99a5b;border-color:#8a5a2b}
.badge{display:inline-block;font-size:10px;font-weight:bold;text-transform:uppercase;
  letter-spacing:.04em;border-radius:3px;padding:1px 4px;margin-left:6px;vertical-align:1px}
.badge.unofficial{border:1px solid #1d4ed8;color:#1d4ed8;background:#eff6ff}
.badge.provisional{border:1px solid #b45309;color:#92400e;background:#fef3c7}
.badge.agreed{border:1px solid #15803d;color:#166534;background:#f0fdf4}
.banner.official{border-color:#15803d;background:#f0fdf4;color:#14532d}
.members,.splits{font-size:12px;color:#444;font-weight:normal}
.splits{margin-top:2px}
footer{margin-top:16px;font-size:12px;color:#333;border-top:1px solid #999;padding-top:8px}
footer dl{display:grid;grid-template-columns:max-content 1fr;gap:3px 10px;margin:0 0 8px}
footer dt{text-align:right}
footer dd{margin:0}
@page{size:A4 portrait;margin:12mm 10mm 14mm}
@media print{
  body{padding:0;font-size:10pt}
  .sheet{max-width:none}
  h1{font-size:18pt}
  th{font-size:8pt}
  td{padding:3px 5px}
  tr{break-inside:avoid}
  thead{display:table-header-group}
  footer{break-inside:avoid;font-size:8.5pt}
}
"""


def esc(text: object) -> str:
    """Text as HTML (quotes too)."""
    return html.escape(str(text), quote=True)


def medal(award: int, lang: str = "en") -> str:
    """An award place's disc: gold, silver, bronze, then grey."""
    cls = f"medal m{award}" if award <= 3 else "medal"
    return (f'<span class="{cls}" title="' + esc(words(lang).t("award place {place}", place=award)) + f'">{award}</span>')


def page_head(heading: str, page_title: str, css: str, main_class: str = "sheet", lang: str = "en") -> list[str]:
    """A sheet's HTML up to its heading (the page's <header> left open), in lang."""
    return ["<!DOCTYPE html>", f'<html lang="{esc(lang)}">', "<head>", '<meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            '<meta name="generator" content="TableTimer">',
            f"<title>{esc(page_title)}</title>", f"<style>{css}</style>", "</head>",
            "<body>", f'<main class="{main_class}">', "<header>", f"<h1>{esc(heading)}</h1>"]
