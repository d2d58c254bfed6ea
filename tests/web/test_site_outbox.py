"""The public site's outbox (hub/web/site_outbox.py): latest wins, what the
remote has is not sent again, bounded, a failed batch kept and tried again
with backoff, the status line an organizer reads."""

from __future__ import annotations

from datetime import datetime

from tabletimer.hub.web.rclone_remote import failure
from tabletimer.hub.web.site_outbox import UNREACHABLE, Outbox, PublishFailed, order


class Remote:
    def __init__(self) -> None:
        self.batches: list[list[tuple[str, bytes]]] = []
        self.down: PublishFailed | None = None

    def send(self, batch):
        if self.down is not None:
            raise self.down
        self.batches.append(list(batch))


class Clock:
    def __init__(self) -> None:
        self.t = 1_000.0

    def __call__(self) -> float:
        return self.t


def at(h: int, m: int, s: int = 0) -> float:
    return datetime(2027, 5, 1, h, m, s).timestamp()


def test_the_newest_version_of_a_file_wins_and_what_the_remote_has_is_not_sent_again():
    remote = Remote()
    box = Outbox(remote.send)
    box.put({"rounds/a.json": b"1", "index.html": b"i"}, 1)
    box.put({"rounds/a.json": b"2", "index.html": b"i"}, 2)
    assert box.send_once()
    assert remote.batches == [[("rounds/a.json", b"2"), ("index.html", b"i")]]    # JSON first, index last
    assert box.put({"rounds/a.json": b"2", "index.html": b"i"}, 3) == 0          # unchanged: nothing waits
    assert box.put({"rounds/a.json": b"2", "index.html": b"i"}, 3, force=True) == 2   # --all: everything


def test_a_failed_batch_waits_with_backoff_and_the_newest_state_goes_when_the_link_returns():
    remote, mono = Remote(), Clock()
    wall = [at(10, 40, 5)]
    box = Outbox(remote.send, wall=lambda: wall[0], monotonic=mono)
    box.put({"a.json": b"1"}, 1)
    assert box.send_once()
    wall[0] = at(10, 42, 5)
    remote.down = PublishFailed("unreachable", "the remote 'site' cannot be reached")
    box.put({"a.json": b"2", "b.json": b"x", "c.html": b"y"}, 7)
    assert not box.send_once()
    assert box.due_in() == 1.0
    mono.t += 1
    assert not box.send_once()
    assert box.due_in() == 2.0                    # backing off
    box.put({"a.json": b"3"}, 9)                  # newer meanwhile: replaces, nothing more waits
    st = box.status()
    assert st.waiting == 3 and not st.ok
    assert st.line() == "published 10:40:05 (v1) · internet down since 10:42 · 3 files waiting"
    remote.down = None
    mono.t += 2
    assert box.send_once()
    assert remote.batches[-1] == [("a.json", b"3"), ("b.json", b"x"), ("c.html", b"y")]
    st = box.status()
    assert st.ok and st.waiting == 0 and st.version == 9


def test_other_failures_are_said_as_they_are():
    remote = Remote()
    remote.down = PublishFailed("login refused", "the remote 'site' refuses rclone's login")
    box = Outbox(remote.send, wall=lambda: at(9, 5))
    box.put({"a.json": b"1"}, 1)
    box.send_once()
    assert box.status().line() == ("not published yet · the remote 'site' refuses rclone's login (since 09:05) "
                                   "· 1 file waiting")


def test_the_outbox_is_bounded():
    box = Outbox(Remote().send, max_files=3)
    assert box.put({f"{i}.json": b"x" for i in range(5)}, 1) == 3
    st = box.status()
    assert st.dropped == 2 and "2 files dropped" in st.line() and not st.ok
    assert box.put({"0.json": b"y"}, 2) == 3      # a waiting path takes its newest version still


def test_the_order_of_a_batch():
    assert sorted(["index.html", "rounds/a.html", "event.json", "site.js"], key=order) == \
        ["event.json", "rounds/a.html", "site.js", "index.html"]


def test_a_put_is_taken_only_once_a_batch_holding_all_of_its_files_is():
    """What `publish --all` waits for (site_publisher: the status file's all_done):
    not any batch taken after it asked, but one that held every file of its put."""
    remote = Remote()
    box = Outbox(remote.send)
    box.put({"rounds/a.json": b"1"}, 1)
    assert box.send_once() and box.status().taken_put == 1
    remote.down = PublishFailed("unreachable", "the remote 'site' cannot be reached")
    box.put({"rounds/a.json": b"1", "index.html": b"i"}, 2, force=True)      # everything again
    forced = box.last_put()
    assert not box.send_once() and box.status().taken_put == 1               # failed: not taken
    remote.down = None
    box.put({"rounds/a.json": b"2"}, 3)                                       # a change meanwhile
    assert box.send_once()
    assert box.status().taken_put == 3 >= forced                               # held index.html too
    assert dict(remote.batches[-1]) == {"rounds/a.json": b"2", "index.html": b"i"}
    assert box.send_once() and box.status().taken_put == 3                    # nothing waits: no change


def test_rclone_s_errors_said_in_an_organizer_s_words():
    """rclone_remote.failure: an HTTP status counts as a word, never the
    digits of a port or a size (a cut link to 127.0.0.1:40317 once read as
    a refused login)."""
    said = [(e.kind, str(e)) for e in (failure(":webdav,url='http://127.0.0.1:40317/':", err) for err in (
        "Failed to copy: Put \"http://127.0.0.1:40317/a.json\": dial tcp 127.0.0.1:40317: connect: connection refused",
        "Failed to copy: 401 Unauthorized",
        "Failed to copy: couldn't list files: 403 Forbidden: AccessDenied",
        "Failed to copy: 507 Insufficient Storage",
        "Failed to copy: wrote 4031 bytes: something odd"))]
    assert [k for k, _ in said] == [UNREACHABLE, "login refused", "login refused", "remote full", "failed"]
    assert "connection refused" in said[0][1] and said[4][1] == "rclone: Failed to copy: wrote 4031 bytes: something odd"
