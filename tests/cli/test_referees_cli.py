"""`tabletimer referees DIR add|list|revoke` as an organizer types it: a
badge per referee (0600, the token in its code only), no token on the
screen, the public URL asked for once and saved, names in use refused."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tabletimer.hub.cli import main as cli
from tabletimer.hub.event.folder import event_folder
from tabletimer.hub.outputs import referee_badge
from tabletimer.hub.web.referees import RefereeBook

URL = "http://192.168.1.10:8765"


@pytest.fixture
def ev(tmp_path) -> Path:
    return event_folder.init(tmp_path / "hall-2027", "cz-championship-individuals")


def tokens(ev: Path) -> list[str]:
    return [r["token"] for r in json.loads((ev / "referees.json").read_text())["referees"]]


def test_add_writes_a_private_badge_and_shows_no_token(ev, capsys):
    assert cli.main(["referees", str(ev), "add", "Anna", "--public-url", URL]) == 0
    out, err = capsys.readouterr()
    badge = ev / "badges" / "anna.html"
    assert f"referee Anna added; badge: {badge} (print it; its QR code signs a phone in)" in out
    assert f"saved the public URL {URL}" in out and err == ""
    (token,) = tokens(ev)
    assert token not in out + err
    assert oct(badge.stat().st_mode & 0o777) == "0o600"
    assert oct((ev / "referees.json").stat().st_mode & 0o777) == "0o600"
    page = badge.read_text(encoding="utf-8")
    assert "<h1>Anna</h1>" in page and "hall-2027" in page
    assert page == referee_badge.badge_html("hall-2027", "Anna", URL, token)
    assert RefereeBook(ev).who(token) == "Anna"


def test_without_a_public_url_it_says_what_to_give_and_adds_nobody(ev, capsys):
    assert cli.main(["referees", str(ev), "add", "Anna"]) == 2
    err = capsys.readouterr().err
    assert "--public-url http://192.168.1.10:8765" in err and "hall network" in err
    assert not (ev / "referees.json").exists() and not (ev / "badges").exists()


def test_the_saved_url_serves_later_adds_and_a_new_one_replaces_it(ev, capsys, tmp_path):
    assert cli.main(["referees", str(ev), "add", "Anna", "--public-url", URL + "/"]) == 0
    assert (ev / "public-url").read_text() == URL + "\n"
    capsys.readouterr()
    own = tmp_path / "bob-badge.html"
    assert cli.main(["referees", str(ev), "add", "Bob", "--badge", str(own)]) == 0
    out = capsys.readouterr().out
    assert "saved the public URL" not in out and f"badge: {own}" in out
    assert f'<p class="url">{URL}/signin</p>' in own.read_text()
    assert oct(own.stat().st_mode & 0o777) == "0o600"
    assert cli.main(["referees", str(ev), "add", "Cid", "--public-url", "https://hub.lan"]) == 0
    assert "saved the public URL https://hub.lan" in capsys.readouterr().out
    assert '<p class="url">https://hub.lan/signin</p>' in (ev / "badges" / "cid.html").read_text()


def test_a_name_in_use_is_refused_and_a_revoked_one_comes_back_with_a_new_badge(ev, capsys):
    assert cli.main(["referees", str(ev), "add", "Anna", "--public-url", URL]) == 0
    assert cli.main(["referees", str(ev), "add", " anna "]) == 2
    assert "revoke theirs first" in capsys.readouterr().err
    assert len(tokens(ev)) == 1
    assert cli.main(["referees", str(ev), "revoke", "anna"]) == 0
    assert "referee Anna revoked" in capsys.readouterr().out
    assert cli.main(["referees", str(ev), "add", "Anna"]) == 0
    assert f"badge: {ev / 'badges' / 'anna-2.html'}" in capsys.readouterr().out
    old, new = tokens(ev)
    book = RefereeBook(ev)
    assert book.who(old) is None and book.who(new) == "Anna"
    assert (ev / "badges" / "anna.html").exists()          # the old badge is not overwritten


def test_list_shows_names_states_and_tags_but_no_token(ev, capsys):
    assert cli.main(["referees", str(ev), "list"]) == 0
    out = capsys.readouterr().out
    assert "no referees yet" in out and "public URL: none saved" in out
    for name in ("Anna", "Bob"):
        assert cli.main(["referees", str(ev), "add", name, "--public-url", URL]) == 0
    assert cli.main(["referees", str(ev), "revoke", "Bob"]) == 0
    capsys.readouterr()
    assert cli.main(["referees", str(ev), "list"]) == 0
    out = capsys.readouterr().out
    anna, bob = tokens(ev)
    assert anna not in out and bob not in out
    assert f"public URL: {URL}" in out
    lines = [ln for ln in out.splitlines() if ln.startswith(("Anna", "Bob"))]
    assert re.match(r"Anna +added \d{4}-\d\d-\d\d \d\d:\d\d +active +tag [0-9a-f]{6}$", lines[0])
    assert re.match(r"Bob +added .* revoked \d{4}-\d\d-\d\d \d\d:\d\d$", lines[1])
    assert RefereeBook(ev).identify(anna).tag in lines[0]


def test_revoking_an_unknown_name_lists_the_active_ones(ev, capsys):
    assert cli.main(["referees", str(ev), "add", "Anna", "--public-url", URL]) == 0
    assert cli.main(["referees", str(ev), "revoke", "Zoe"]) == 2
    assert "no referee called 'Zoe' (active referees: Anna)" in capsys.readouterr().err


def test_a_badge_that_cannot_be_written_leaves_no_active_referee(ev, capsys, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    assert cli.main(["referees", str(ev), "add", "Anna", "--public-url", URL,
                     "--badge", str(blocker / "anna.html")]) == 2
    assert "revoked again" in capsys.readouterr().err
    assert [a for _, a, _, _ in RefereeBook(ev).referees()] == [False]


def test_a_folder_that_is_not_an_event_is_refused(tmp_path, capsys):
    assert cli.main(["referees", str(tmp_path), "list"]) == 2
    assert "not an event folder" in capsys.readouterr().err
