"""`tabletimer publish`'s bad input (issue 49), as the organizer types it:
the followers' address (`--url`) checked before it is saved (refused:
nothing written, the old one kept), saved alone, then on the printed
results sheet with its QR code (`results --html`); an entrants.csv whose
`publish` column holds something that is not yes or no refused with its
file, line and column before anything is rendered or sent (exit 2)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tabletimer.hub.cli import main as cli
from tabletimer.hub.event.folder import event_folder
from tabletimer.hub.event.folder.site_address import SITE_URL_FILE, check_site_url, site_url
from tabletimer.hub.outputs.table_cards import qr_svg


def event(path: Path, publish: str = "") -> Path:
    assert cli.main(["init", str(path), "--format", "czjpa-individuals", "--title", "Cup"]) == 0
    (path / "entrants.csv").write_text(f"id,name,eligible,publish\n1,Anna,yes,yes\n2,Ben,yes,{publish}\n")
    (path / "stations.csv").write_text("board,button,table,entrant\nB1,1,Table 1,1\nB1,2,Table 1,2\n")
    return path


@pytest.mark.parametrize("bad, why", [
    ("cup.example.org", "https://"), ("ftp://cup.example.org/", "https://"), ("https://", "https://"),
    ("https://cup.example.org/a b", "space"), ("https://cup.example.org/\x07", "control"),
    ("https://x.org/" + "a" * 400, "characters long"), ("   ", "empty"), ("javascript:alert(1)", "https://")])
def test_a_bad_address_is_refused_and_nothing_written(tmp_path, capsys, bad, why):
    ev = event(tmp_path / "cup")
    assert cli.main(["publish", str(ev), "--url", "https://old.example.org/"]) == 0
    capsys.readouterr()
    assert cli.main(["publish", str(ev), "--url", bad]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --url: ") and why in err, err
    assert site_url(ev) == "https://old.example.org/"                       # the old one kept
    with pytest.raises(ValueError):
        check_site_url(bad)


def test_the_address_alone_is_saved_and_a_hand_edited_bad_one_is_not_shown(tmp_path, capsys):
    ev = event(tmp_path / "cup")
    assert cli.main(["publish", str(ev), "--url", "  https://cup.example.org/live/ "]) == 0
    assert "https://cup.example.org/live/" in capsys.readouterr().out
    assert (ev / SITE_URL_FILE).read_text() == "https://cup.example.org/live/\n"
    assert site_url(ev) == "https://cup.example.org/live/"
    (ev / SITE_URL_FILE).write_text("not an address\n")
    assert site_url(ev) is None
    (ev / SITE_URL_FILE).unlink()
    assert site_url(ev) is None
    assert cli.main(["publish", str(tmp_path / "nosuch"), "--url", "https://cup.example.org/"]) == 2
    assert not (tmp_path / "nosuch").exists()


def test_the_printed_results_sheet_has_the_sites_code_only_when_one_is_set(tmp_path):
    ev = event(tmp_path / "cup")
    now = int(time.time() * 1000)
    assert cli.main(["act", str(ev), "round_start", f"at={now - 30 * 60_000}"]) == 0
    assert cli.main(["results", str(ev), "--html", str(tmp_path / "plain.html")]) == 0
    plain = (tmp_path / "plain.html").read_text()
    assert "site-link" not in plain and "<svg" not in plain
    assert cli.main(["publish", str(ev), "--url", "https://cup.example.org/live/"]) == 0
    assert cli.main(["results", str(ev), "--html", str(tmp_path / "sheet.html")]) == 0
    sheet = (tmp_path / "sheet.html").read_text()
    assert sheet.count('class="site-link"') == 1
    assert 'href="https://cup.example.org/live/"' in sheet and ">cup.example.org/live/</a>" in sheet
    code = qr_svg("https://cup.example.org/live/")
    path = code[code.index(' d="'):].split('"', 2)[1]
    assert f'd="{path}"' in sheet                                        # the code is the address's
    assert sheet.index("</footer>") < sheet.index('class="site-link"') < sheet.index("</main>")   # at its foot
    assert "width:24mm;height:24mm" in sheet                             # printed large enough to scan


@pytest.mark.parametrize("value", ["maybe", "2", "nein?"])
def test_a_bad_publish_value_is_refused_with_its_line_and_nothing_is_sent(tmp_path, capsys, value):
    ev = event(tmp_path / "cup", publish=value)
    with pytest.raises(event_folder.EventFolderError) as e:
        event_folder.load(ev)
    assert "entrants.csv:3 (publish)" in str(e.value) and repr(value) in str(e.value)
    # the remote is never reached: a name rclone does not know would say so, not this
    assert cli.main(["publish", str(ev), "--to", "nosuch:cup", "--wait", "0"]) == 2
    err = capsys.readouterr().err
    assert "entrants.csv:3 (publish)" in err and repr(value) in err and "expected" in err
    assert not (ev / "publish-status.json").exists()


@pytest.mark.parametrize("value", ["no", "No", "n", "nej", "ne", ""])
def test_every_no_of_the_seeds_languages_hides_the_name_and_empty_publishes(tmp_path, value):
    ev = event(tmp_path / "cup", publish=value)
    event_folder.load(ev)
    assert event_folder.unpublished(ev / "entrants.csv") == (frozenset() if value == "" else {"2"})
