"""The hub that took over (`tabletimer takeover`, a standby's --auto-after)
watching the old primary's address: hubs watch each other, not only the
boards.  A standby that took over on a network cut between the two laptops
leaves the primary running (a split brain): the primary may still ack the
boards it reaches, and its desk records actions this hub never gets.  So
this hub asks the old primary's address every RETRY_S, as a hub (with the
hub secret: protocol/hub_secret.py), to take its proven term (POST /hub/fence,
web/console_api.py): the old primary fences itself, stops with its broker,
and answers with its desk actions after the row the takeover's copy ended
at, which this hub keeps in its log for the desk to redo in one step
(core/split_brain.py, `tabletimer redo`).  A dead primary never answers:
nothing happens; one started again later is fenced when it answers."""

from __future__ import annotations

import threading
from typing import Callable

from ..core.service import HubService
from ..core.split_brain import SELF
from .client import HubClient, NotTheHub, RemoteError, Unreachable

RETRY_S = 2.0


class OldPrimaryWatch:
    def __init__(self, service: HubService, say: Callable[[str], None], retry_s: float = RETRY_S) -> None:
        takeover = service.split.takeover
        assert takeover is not None and service.hub_auth is not None
        p = takeover["payload"]
        self.service, self.say, self.retry_s = service, say, retry_s
        self.url: str = p["primary"]
        self.after: int = p["copied_up_to"]
        self.client = HubClient(self.url, None, auth=service.hub_auth)
        self.done = False
        self.said: str | None = None            # the last thing said of a failed try (said once each)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @staticmethod
    def wanted(service: HubService) -> bool:
        """Whether this hub took over from a primary it has not heard since."""
        t = service.split.takeover
        return (t is not None and service.hub_auth is not None and service.split.fenced_row is None
                and isinstance(t["payload"].get("primary"), str) and type(t["payload"].get("copied_up_to")) is int
                and not any(r["payload"].get("primary") == t["payload"]["primary"]
                            and r["payload"].get("after") == t["payload"]["copied_up_to"]
                            for r in service.split.split_rows()))

    def start(self) -> "OldPrimaryWatch":
        self.say(f"this hub took over from {self.url} (its log up to row #{self.after}): it asks that address "
                 f"every {self.retry_s:g} s; if the old primary still runs (the laptops were cut off from each "
                 "other, not a dead laptop), it is told of this hub's term when it answers, and stops")
        self._thread = threading.Thread(target=self._run, name="old-primary-watch", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(5)

    def _run(self) -> None:
        while not self.done and not self._stop.is_set():
            self.once()
            self._stop.wait(self.retry_s)

    def once(self) -> bool:
        """Ask the old primary once; True once it has been fenced (and its
        desk actions kept)."""
        svc = self.service
        body = {"term": svc.term, "hash": svc.term_proof(), "after": self.after, "from": svc.instance,
                "by": f"the hub that took over from this log's row #{self.after}"}
        try:
            reply = self.client.request("POST", "/hub/fence", body)
        except Unreachable:
            return False                    # dead, or still cut off: asked again
        except (NotTheHub, RemoteError) as e:
            if SELF in str(e):              # this hub's web server took the old primary's address
                self._said(f"the old primary's address {self.url} is this hub's own now: it is not watched")
                self.done = True
                return True
            self._said(f"the old primary {self.url} was told of this hub's term {svc.term} and did not take it: {e}")
            return False
        try:
            row = svc.split.store_split(self.url, reply.get("term") if isinstance(reply, dict) else None,
                                        self.after, reply.get("actions") if isinstance(reply, dict) else None)
        except ValueError as e:
            self._said(f"the old primary {self.url} is fenced, but its answer is not kept: {e}")
            self.done = True
            return True
        said = f"the old primary {self.url} answered: it is fenced (it stops, its broker with it)"
        if row is None:
            said += "; its desk actions were kept before"
        elif row["payload"]["actions"]:
            said += (f"; {len(row['payload']['actions'])} desk action(s) it recorded after row #{self.after} are "
                     f"not in this log (kept in row #{row['id']}): redo them here in one step: tabletimer redo")
        else:
            said += f"; it recorded no desk action after row #{self.after}"
        self.say(said)
        self.done = True
        return True

    def _said(self, text: str) -> None:
        if text != self.said:
            self.said = text
            self.say(text)
