"""A desk's console that is not the hub (`tabletimer console`): on the
event's log beside the running hub, or on a remote hub's service, with the
same measured loop as the hub's (main_loop.py) catching the rows up."""

from __future__ import annotations

from pathlib import Path

from ..core.service import HubService
from ..fleet.firmware_build import installed_firmware_version
from ..rules.timetext import fmt_clock
from .main_loop import MainLoop


def run_desk_console(service: HubService, title: str, beside: Path | None = None) -> None:
    """A desk's console that is not the hub (`tabletimer console`): on the
    event's log beside the running hub (beside: that log; its operator
    actions go into it, the hub picks them up), or on a remote hub's
    service; the rows caught up each pass of the measured loop."""
    from ..console.app import run_console

    if beside is not None:
        watch_the_hub(service, beside)
    loop = MainLoop(service.note)
    run_console(service, title, tick=lambda: loop.run_pass(service.catch_up), hub_fw=installed_firmware_version())


def watch_the_hub(service, log: Path) -> None:
    """A console beside the hub (the same folder) shows the log as the hub
    wrote it: when the hub is not running, the boards' state in it is
    history, and the console says so (an alert, and "boards online ?")."""
    from ..event.folder.folder_lock import hub_running

    since: list[int] = []

    def stopped() -> bool:
        down = hub_running(log) is False
        if not down:
            since.clear()
        elif not since:
            since.append(service.clock.now_ms())
        return down

    service.queries.add_blind("the hub", lambda: "the hub is not running" if stopped() else None)
    service.queries.add_alerts("the hub", lambda: [
        f"THE HUB IS NOT RUNNING on {log.parent} (seen at {fmt_clock(since[0])}): this console shows the "
        f"log as it was; boards, calls and signals are not followed until `tabletimer run {log.parent}` "
        "runs again"] if stopped() else [])
