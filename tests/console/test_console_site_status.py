"""The console's header says how the public site's publishing goes (issue
49), at all times, not only as an alert while it fails: the line the
head referee's calls page and `publish --status` show, from the running
publisher's outbox (a Queries status source, as runtime/site_start.py
registers it), red while the remote cannot be reached."""

from __future__ import annotations

from datetime import datetime

from tabletimer.hub.web.site_outbox import UNREACHABLE, Outbox, PublishFailed
from tabletimer.hub.web.site_publisher import SitePublisher
from test_console import SHOT_SIZE, drive, hub, shown  # noqa: F401  (hub: a fixture)
from waiting import settle


class Link:
    """The remote as the outbox sends to it: up, or the internet down."""

    def __init__(self) -> None:
        self.up = True

    def send(self, batch) -> None:
        if not self.up:
            raise PublishFailed(UNREACHABLE, "the remote 'site' cannot be reached")


def test_the_header_says_published_then_internet_down_and_files_waiting(hub, tmp_path):
    link = Link()
    outbox = Outbox(link.send)
    publisher = SitePublisher(source=None, outbox=outbox, remote="site:cup")   # type: ignore[arg-type]
    hub.queries.add_status("the public site", publisher.status_line)
    outbox.put({"event.json": b"{}", "index.html": b"<p>"}, 7)
    assert outbox.send_once()
    at = datetime.fromtimestamp(outbox.status().published_at).strftime("%H:%M:%S")

    async def script(app, pilot):
        await shown(app, pilot, tmp_path, "published", f"public site: published {at} (v7)")
        assert app.snap.status[0].ok
        link.up = False
        outbox.put({"event.json": b'{"v":8}', "rounds/main.json": b"{}", "index.html": b"<p>8"}, 8)
        assert not outbox.send_once()
        await shown(app, pilot, tmp_path, "down", f"public site: published {at} (v7)",
                           "internet down since", "3 files waiting")
        assert not app.snap.status[0].ok
        link.up = True
        outbox.put({}, 8)
        assert outbox.send_once()
        await settle(pilot, lambda: app.snap.status[0].ok and "(v8)" in app.snap.status[0].text,
                     "the header healthy again", seen=lambda: app.snap.status)
        hub.queries.drop_status("the public site")
        await settle(pilot, lambda: app.snap.status == [], "the line gone with the publisher")
    drive(hub, script, size=SHOT_SIZE)


def test_a_status_source_that_fails_says_so_and_the_header_stays(hub, tmp_path):
    def broken():
        raise RuntimeError("boom")
    hub.queries.add_status("the public site", broken)

    async def script(app, pilot):
        await shown(app, pilot, tmp_path, "broken", "the public site: status unknown", "boards online 2/2")
    drive(hub, script, size=SHOT_SIZE)
