"""A referee's printable badge (hub/outputs/referee_badge.py): the QR code
holds the sign-in address with the token and nothing else; the token is
printed nowhere else on the page; names are text, not markup."""

from __future__ import annotations

import re

import pytest

from rendering import qr_codes_of_page
from tabletimer.hub.outputs import referee_badge

URL = "http://192.168.1.10:8765"
TOKEN = "q3Zt-8_xYk2LmN0pQrStUvWxYz012345"


def test_the_badges_code_decodes_to_the_signin_address(tmp_path):
    page = tmp_path / "anna.html"
    page.write_text(referee_badge.badge_html("hall-2027", "Anna Nováková", URL + "/", TOKEN),
                    encoding="utf-8")
    assert qr_codes_of_page(page, tmp_path, window="600,800") == [f"{URL}/signin?token={TOKEN}"]


def test_the_page_says_what_the_code_is_and_shows_no_token():
    page = referee_badge.badge_html("hall-2027", "Anna", URL, TOKEN)
    assert page.count("<svg") == 1
    assert "<script" not in page and "<link" not in page and "src=" not in page
    assert TOKEN not in page                            # only in the code's modules
    text = re.sub(r"<[^>]+>", " ", page)
    assert "Scan with the phone's camera to sign in as a referee." in page.replace("&#x27;", "'")
    assert "Keep this card: whoever holds it can record results." in text
    assert f'<p class="url">{URL}/signin</p>' in page
    assert "<h1>Anna</h1>" in page and "hall-2027" in page and "size:105mm 148mm" in page


def test_a_name_with_markup_stays_text():
    page = referee_badge.badge_html("<i>hall</i>", '<b>Bob</b> & "Co"', URL, TOKEN)
    assert "<b>Bob</b>" not in page and "<i>hall</i>" not in page
    assert "<h1>&lt;b&gt;Bob&lt;/b&gt; &amp; &quot;Co&quot;</h1>" in page
    assert "<title>sign-in code for referee &lt;b&gt;Bob&lt;/b&gt; &amp; \"Co\"</title>" in page


@pytest.mark.parametrize("token", [TOKEN, "a+b/c=d&e", "Stůl"])
def test_signin_url_and_back(token):
    url = referee_badge.signin_url(URL + "/", token)
    assert url.startswith(URL + "/signin?token=") and " " not in url
    assert referee_badge.signin_token(url) == token
    assert referee_badge.signin_token(url.replace("/signin", "/t")) is None
    assert referee_badge.signin_token(URL + "/signin?token=") is None


def test_the_badge_prints_on_one_a6_page(tmp_path):
    """Issue 45 item 13: the badge's page printed (Chromium to PDF) is one A6
    page (105 x 148 mm: 297.6 x 419.5 pt), not Letter."""
    import re as _re

    from rendering import chromium_or_skip, run_chromium
    page, pdf = tmp_path / "anna.html", tmp_path / "anna.pdf"
    page.write_text(referee_badge.badge_html("Hall Cup 2027 — individuals", "Anna Nováková", URL, TOKEN),
                    encoding="utf-8")
    run_chromium(chromium_or_skip(), tmp_path / "profile", f"--print-to-pdf={pdf}", "--no-pdf-header-footer",
                 page.resolve().as_uri())
    boxes = _re.findall(rb"/MediaBox \[0 0 ([\d.]+) ([\d.]+)\]", pdf.read_bytes())
    assert len(boxes) == 1, boxes
    w, h = (float(x) for x in boxes[0])
    assert abs(w - 297.6) < 2 and abs(h - 419.5) < 2, (w, h)
