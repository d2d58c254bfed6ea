"""Table cards that phones open (`tabletimer cards DIR --html FILE
--public-url URL`): one QR code per card, the table's page on the hub, the
stations' texts still printed; the public URL saved in the event folder and
used again; without one, no codes (a station's text opens nothing on a phone) and the page and a
note saying why and how."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from rendering import qr_codes_of_page
from tabletimer.hub.cli import main as cli
from tabletimer.hub.event.folder import event_folder
from tabletimer.hub.outputs import table_cards
from tabletimer.hub.web import public_url

URL = "http://192.168.1.10:8765"
TABLES = ["Stůl 3", "Table 1/2", "A&B <x>"]


def event(path: Path) -> Path:
    event_folder.init(path, "cz-championship-individuals")
    (path / "entrants.csv").write_text("id,name\n1,Jana Nováková\n2,Petr Dvořák\n3,Eva\n4,Karel\n",
                                       encoding="utf-8")
    (path / "stations.csv").write_text("board,button,table,entrant\n"
                                       f"C01,1,{TABLES[0]},1\nC01,2,{TABLES[0]},2\n"
                                       f"C02,1,{TABLES[1]},3\nC03,1,\"{TABLES[2]}\",4\n",
                                       encoding="utf-8")
    return path


@pytest.mark.parametrize("table, path", [("Stůl 3", "/t/St%C5%AFl%203"), ("Table 1/2", "/t/Table%201%2F2"),
                                         ("A&B <x>", "/t/A%26B%20%3Cx%3E"), ("?#%", "/t/%3F%23%25")])
def test_table_url_and_back(table, path):
    url = table_cards.table_url(URL + "/", table)
    assert url == URL + path
    assert table_cards.parse_table_url(url) == table
    assert table_cards.parse_table_url(path) == table                 # the request's path alone


@pytest.mark.parametrize("bad", ["http://h/t/", "/t/a/b", "/x/abc", "/t/%20", "/t/%ff"])
def test_parse_table_url_refuses_what_is_not_one(bad):
    with pytest.raises(ValueError):
        table_cards.parse_table_url(bad)


def test_cards_with_a_public_url_have_one_code_per_table(tmp_path, capsys):
    ev = event(tmp_path / "mcr-2027")
    out = tmp_path / "cards.html"
    assert cli.main(["cards", str(ev), "--html", str(out), "--public-url", URL + "/"]) == 0
    err = capsys.readouterr().err
    assert f"saved the public URL {URL} in {ev / 'public-url'}" in err
    assert "3 table card(s), 4 station(s), a QR code per table" in err and "note:" not in err
    assert (ev / "public-url").read_text() == URL + "\n"
    page = out.read_text(encoding="utf-8")
    cards = re.findall(r'<section class="card[^"]*">(.*?)</section>', page, re.S)
    assert len(cards) == 3 and page.count("<svg") == 3
    for card, table in zip(cards, TABLES):
        url = table_cards.table_url(URL, table)
        assert card.count("<svg") == 1 and f"<title>{html.escape(url)}</title>" in card
        # printed as people read it (issue 45 item 13: "/t/St%C5%AFl%203" read as nothing)
        assert f'<div class="url">{html.escape(URL + "/t/" + table)}</div>' in card
    # the stations' texts stay, as text
    for payload in ("tabletimer:mcr-2027:C01:1:1", "tabletimer:mcr-2027:C01:2:2",
                    "tabletimer:mcr-2027:C02:1:3", "tabletimer:mcr-2027:C03:1:4"):
        assert f'<div class="payload">{payload}</div>' in page
    assert "<h2>A&amp;B &lt;x&gt;</h2>" in page
    # the codes decode to exactly the tables' addresses
    assert qr_codes_of_page(out, tmp_path) == sorted(table_cards.table_url(URL, t) for t in TABLES)


def test_the_saved_url_is_used_again_and_none_gives_a_note(tmp_path, capsys):
    ev = event(tmp_path / "mcr-2027")
    out = tmp_path / "cards.html"
    assert cli.main(["cards", str(ev), "--html", str(out)]) == 0
    err = capsys.readouterr().err
    assert "no QR codes (the page says why)" in err
    assert "note: the cards have no QR codes: a code of a station's text opens nothing on a phone. " \
           "For codes a phone opens" in err and "--public-url http://192.168.1.10:8765" in err
    # issue 45 item 13: no code a phone cannot open (a station's text), and the page says why
    page = out.read_text(encoding="utf-8")
    assert page.count("<svg") == 0 and "No codes on these cards: a phone's camera opens a table's page" in page
    assert '<div class="payload">tabletimer:mcr-2027:C01:1:1</div>' in page
    public_url.save(ev, "https://hub.example:8443/tt")
    assert cli.main(["cards", str(ev), "--html", str(out)]) == 0
    err = capsys.readouterr().err
    assert "note:" not in err and "saved the public URL" not in err
    page = out.read_text(encoding="utf-8")
    assert page.count("<svg") == 3 and "https://hub.example:8443/tt/t/St%C5%AFl%203" in page


@pytest.mark.parametrize("bad", ["192.168.1.10:8765", "ftp://hub", "http://", "http://h:x",
                                 "http://h/?a=1"])
def test_a_public_url_that_is_not_one_is_refused(tmp_path, capsys, bad):
    ev = event(tmp_path / "mcr-2027")
    assert cli.main(["cards", str(ev), "--html", str(tmp_path / "c.html"), "--public-url", bad]) == 2
    assert "e.g. http://192.168.1.10:8765" in capsys.readouterr().err
    assert not (ev / "public-url").exists() and not (tmp_path / "c.html").exists()
