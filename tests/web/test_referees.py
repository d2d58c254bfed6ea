"""The referees' book (hub/web/referees.py): names and tokens in the event
folder's referees.json (0600), who signs in with a token, revoking, and a
running hub seeing another process's changes at its next request."""

from __future__ import annotations

import json
import logging
import os

import pytest

from tabletimer.hub.web import referees as rf
from tabletimer.hub.web.referees import RefereeBook


class Clock:
    def __init__(self, t: int = 1_796_000_000_000) -> None:
        self.t = t

    def __call__(self) -> int:
        self.t += 1000
        return self.t


def test_add_gives_a_token_that_signs_in_as_that_referee(tmp_path):
    book = RefereeBook(tmp_path, now_ms=Clock())
    anna = book.add("  Anna  ")
    bob = book.add("Bob Novák")
    assert anna != bob and len(anna) >= 32
    assert book.who(anna) == "Anna" and book.who(bob) == "Bob Novák"
    assert book.who("") is None and book.who(anna + "x") is None and book.who(anna[:-1]) is None
    assert book.who("ünïcode") is None
    assert [(n, a) for n, a, _, _ in book.referees()] == [("Anna", True), ("Bob Novák", True)]
    r = book.identify(anna)
    assert r is not None and r.tag == rf.tag_of(anna) and len(r.tag) == 6 and r.tag not in anna


def test_the_file_is_private_from_the_first_byte_and_holds_tags(tmp_path, monkeypatch):
    opened = []
    real_open = os.open

    def spy(path, flags, mode=0o777, *a, **kw):
        opened.append((str(path), mode))
        return real_open(path, flags, mode, *a, **kw)

    monkeypatch.setattr(os, "open", spy)
    book = RefereeBook(tmp_path, now_ms=Clock())
    token = book.add("Anna")
    path = tmp_path / "referees.json"
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    assert opened and all(mode == 0o600 for _, mode in opened)          # created 0600
    data = json.loads(path.read_text())
    assert data["version"] == 1
    (entry,) = data["referees"]
    assert entry == {"name": "Anna", "token": token, "tag": rf.tag_of(token),
                     "added_ms": 1_796_000_001_000, "revoked_ms": None}
    assert not list(tmp_path.glob("*.tmp"))


def test_a_name_in_use_is_refused_until_revoked(tmp_path):
    book = RefereeBook(tmp_path, now_ms=Clock())
    first = book.add("Anna")
    with pytest.raises(ValueError, match="already a referee called 'Anna': revoke theirs first"):
        book.add("anna")                                  # case does not make another referee
    assert len(book.referees()) == 1
    book.revoke("ANNA ")
    assert book.who(first) is None
    second = book.add("Anna")
    assert book.who(second) == "Anna" and book.who(first) is None
    # the revoked one stays, with the time of the revoke
    # (the refused add read the clock too)
    assert book.referees() == [("Anna", False, 1_796_000_001_000, 1_796_000_003_000),
                               ("Anna", True, 1_796_000_004_000, None)]


@pytest.mark.parametrize("name, words", [("", "needs a name"), ("   ", "needs a name"),
                                         ("x" * 61, "at most 60"), ("Anna\nBob", "one line"),
                                         ("A\x07", "control character")])
def test_bad_names_are_refused_in_words(tmp_path, name, words):
    book = RefereeBook(tmp_path)
    with pytest.raises(ValueError, match=words):
        book.add(name)
    assert not (tmp_path / "referees.json").exists()
    assert RefereeBook(tmp_path).add("x" * 60)                   # 60 is fine


def test_revoking_an_unknown_name_lists_the_known_ones(tmp_path):
    book = RefereeBook(tmp_path, now_ms=Clock())
    book.add("Anna")
    book.add("Bob")
    with pytest.raises(ValueError, match=r"no referee called 'Cid' \(active referees: Anna, Bob\)"):
        book.revoke("Cid")
    book.revoke("Bob")
    with pytest.raises(ValueError, match=r"'Bob' is already revoked \(active referees: Anna\)"):
        book.revoke("Bob")


def test_another_process_adding_and_revoking_takes_effect_at_once(tmp_path):
    """The hub's book sees `tabletimer referees add/revoke` (another book on
    the same file) at its next lookup."""
    hub = RefereeBook(tmp_path)
    assert hub.referees() == []
    cli = RefereeBook(tmp_path)
    token = cli.add("Anna")
    assert hub.who(token) == "Anna"
    RefereeBook(tmp_path).revoke("Anna")
    assert hub.who(token) is None


def test_a_change_of_the_same_size_and_time_is_seen_by_its_inode(tmp_path):
    path = tmp_path / "referees.json"
    a, b = "a" * 32, "b" * 32
    path.write_text(rf.render((rf.Referee("Anna", a, rf.tag_of(a), 1),)))
    hub = RefereeBook(path)
    assert hub.who(a) == "Anna"
    st = path.stat()
    other = tmp_path / "other.json"
    other.write_text(rf.render((rf.Referee("Anna", b, rf.tag_of(b), 1),)))
    os.utime(other, ns=(st.st_atime_ns, st.st_mtime_ns))
    os.replace(other, path)
    assert path.stat().st_size == st.st_size and path.stat().st_mtime_ns == st.st_mtime_ns
    assert hub.who(b) == "Anna" and hub.who(a) is None


def test_a_corrupt_file_keeps_the_last_good_state_and_warns(tmp_path, caplog):
    hub = RefereeBook(tmp_path)
    token = RefereeBook(tmp_path).add("Anna")
    assert hub.who(token) == "Anna"
    path = tmp_path / "referees.json"
    for junk in ('{"version": 1, "referees": [', '{"version": 9, "referees": []}', "\xff\xfe",
                 '{"version": 1, "referees": [{"name": "X"}]}'):
        path.write_text(junk, encoding="latin-1")
        with caplog.at_level(logging.WARNING, logger="tabletimer.hub.web.referees"):
            caplog.clear()
            assert hub.who(token) == "Anna"
            assert hub.who(token) == "Anna"
        warnings = [r.getMessage() for r in caplog.records]
        assert len(warnings) == 1 and "keeping the 1 referee(s) read before" in warnings[0], warnings
    # a change made on top of a corrupt file is refused, not written over it
    with pytest.raises(ValueError, match="does not read as a referees file"):
        RefereeBook(tmp_path).add("Bob")
    # a new book on a corrupt file is empty, and does not raise
    assert RefereeBook(tmp_path).who(token) is None


def test_a_deleted_file_signs_nobody_in(tmp_path):
    hub = RefereeBook(tmp_path)
    token = RefereeBook(tmp_path).add("Anna")
    assert hub.who(token) == "Anna"
    (tmp_path / "referees.json").unlink()
    assert hub.who(token) is None and hub.referees() == []


def test_find_compares_every_active_token(monkeypatch):
    """Each token is compared in constant time: a match early in the book
    does not stop the loop, and a revoked token never matches."""
    calls = []
    real = rf.hmac.compare_digest
    monkeypatch.setattr(rf.hmac, "compare_digest", lambda a, b: calls.append(b) or real(a, b))
    t1, t2, t3 = "t1" * 16, "t2" * 16, "t3" * 16
    book = (rf.Referee("A", t1, rf.tag_of(t1), 1), rf.Referee("B", t2, rf.tag_of(t2), 1, 5),
            rf.Referee("C", t3, rf.tag_of(t3), 1))
    assert rf.find(book, t1).name == "A"
    assert rf.find(book, t2) is None
    assert rf.find(book, t3).name == "C"
    assert len(calls) == 9


@pytest.mark.parametrize("name, stem", [("Anna", "anna"), ("Åse Øvrebø", "ase-ovrebo"),
                                        ("Jiří Král", "jiri-kral"), ("<b>&Co", "b-co"),
                                        ("山田", "referee")])
def test_slug(name, stem):
    assert rf.slug(name) == stem
