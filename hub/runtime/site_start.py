"""The public site as a running hub starts it (`run DIR --publish REMOTE`,
issue 49): the live round read from the hub's own service (a RoundView,
as the hall's pages read it), the other rounds from their logs; published
on every stored row (a RowApplied subscriber that only sets an event),
debounced, rendered and sent on threads of their own
(web/site_publisher.py); an alert while it cannot be, and its line on the
console's header (a Queries status source) and the head referee's calls
page, at all times."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from ..core.changes import RowApplied
from ..core.service import HubService
from ..web.rclone_remote import RcloneRemote
from ..web.round_views import RoundView, hall_title
from ..web.site_outbox import Outbox
from ..event.folder.site_address import site_url
from ..web.site_publisher import SitePublisher, SiteSource


class RunningSite:
    """The publisher with its subscription and alert, stopped once."""

    def __init__(self, publisher: SitePublisher, service: HubService, view: RoundView) -> None:
        self.publisher, self.service, self.view = publisher, service, view
        self.sub = service.changes.subscribe(RowApplied, publisher.changed)
        service.queries.add_alerts("the public site", publisher.alerts)
        # the console's header, at all times: the line the calls page and `publish --status` show
        service.queries.add_status("the public site", publisher.status_line)

    def line(self) -> str:
        return self.publisher.line()

    def check(self) -> str | None:
        return self.publisher.check()

    def stop(self) -> None:
        self.sub.cancel()
        self.service.queries.drop_alerts("the public site")
        self.service.queries.drop_status("the public site")
        self.publisher.stop()
        self.view.close()
        self.publisher.source.close()


def start_site(remote: str | None, service: HubService, data: Path, event: dict | None,
               say: Callable[[str], None], remote_env: dict[str, str] | None = None) -> RunningSite | None:
    """None without --publish, or for a hub without an event folder (the demo)."""
    if not remote or event is None or "files" not in event or not (Path(data) / "format.toml").exists() \
            and not (Path(data) / "rounds").is_dir():
        if remote:
            say("warning: --publish needs an event folder: nothing is published")
        return None
    live = event.get("round")
    view = RoundView(service, hall_title(event, service.competition.format.title), live)
    source = SiteSource(data, live, live_view=view)
    outbox = Outbox(RcloneRemote(remote, env=remote_env).send)
    publisher: Any = SitePublisher(source, outbox, remote).start()     # the address: DIR/site-url, at each rendering
    url = site_url(data)
    say(f"public site: published to {remote} on every change"
        + (f" (followers open {url})" if url else "")
        + f"; `tabletimer publish {data} --status` says how it goes")
    return RunningSite(publisher, service, view)
