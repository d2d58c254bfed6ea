"""The serving command's front (`tabletimer run`, `demo`, `rehearse`,
`takeover`): the hub run by the composition root (runtime/hub_runtime.py),
and what is printed when it ends: the error, the fence, or the standings."""

from __future__ import annotations

import threading
from pathlib import Path

from ..core.service import HubService
from ..runtime.hub_runtime import HubRuntime
from .common import print_final
from .options import FENCED


def console_title(event: dict | None, format_title: str) -> str:
    """The hub's console's title: the event's and the format's, and the
    round's name in an event of several (its /event's "round")."""
    title = (f"{event['title']} - {format_title}" if event and event.get("title")
             else f"TableTimer - {format_title}")
    return title + (f" (round {event['round']})" if event and event.get("round") else "")


def serve(args, service: HubService, data: Path, start_sims=None, event: dict | None = None,
          stop: threading.Event | None = None, boards_stay: bool = False) -> int:
    """The hub on its service until Ctrl-C / SIGTERM / SIGHUP / --duration,
    or stop set (a rehearsed day's next round): HubRuntime (broker, MQTT,
    the web server with --web-listen, event: its /event, the hall's pages,
    the console or a line per row off a terminal).  start_sims(address,
    stop): the simulated boards, stopped at the end unless boards_stay."""
    from rich.console import Console

    console = Console()

    def say(text: str) -> None:
        console.print(text, markup=False, highlight=False, soft_wrap=True)   # a command or URL to copy: no wrapping
    ran = HubRuntime(args, service, data, event=event, start_sims=start_sims, stop=stop, boards_stay=boards_stay,
                     title=console_title(event, service.competition.format.title),
                     on_terminal=console.is_terminal, say=say).run()
    if ran.failed is not None:
        console.print(f"[red]error:[/red] {ran.failed}")
        return 2
    if ran.fenced is not None:
        say(f"FENCED: {ran.fenced}.\nThis hub has stopped, and its broker with it: the boards that "
            "reached it go to the hub that took over (after their failover time), which holds the "
            "event's log now; this laptop's log stays as it was. To follow that hub from here: "
            "`tabletimer standby` on this event folder, --primary its address "
            "(docs/operations.md, \"The hub laptop died\")")
        for line in ran.fenced_lines:       # its desk actions the event's log lacks
            say(line)
        return FENCED
    console.print("\nstopped; standings:")
    print_final(service)
    return 0
