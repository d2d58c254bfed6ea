"""A console on a second laptop: a HubService that mirrors the hub's log
over its console API (hub/web/console_api.py) instead of reading SQLite.

`RemoteLog` has the EventStore interface HubService uses: `events(after)`
answers from a local copy that a thread keeps up to date (GET /rows four
times a second), so the console never waits for the network to draw;
`append` of an operator action is POST /act, the hub's own `act`, and
returns the row the hub stored.  `RemoteClock` is hub time on this laptop
(the laptops' clocks need not agree).  `RemoteHubService` says in the
console's alerts and event log when the hub cannot be reached, and keeps
trying.
"""

from __future__ import annotations

import bisect
import json
import threading
import urllib.error
import urllib.request
from collections import Counter, deque
from typing import Any
from urllib.parse import urlsplit

from ..event.time.clock import HubClock
from ..event.fold.competition import Competition
from ..event.fold.description import DescriptionError, competition_of
from ..protocol.hub_secret import HEADER, PROOF_HEADER, HubAuth
from ..protocol.keys import BoardKeys
from ..core.service import HubService

POLL_S = 0.25
RETRY_S = 1.0
TIMEOUT_S = 3.0


class RemoteError(ValueError):
    """The hub refused a request (the message says why); a ValueError, so the
    console shows it in the action's form."""


class Unreachable(RemoteError):
    """No answer from the hub."""


class NotTheHub(RemoteError):
    """An answer to a hub's request (HubClient with auth) that does not
    prove it comes from this event's hub: something else answers at the
    address, or its hub secret is not this folder's."""


class RemoteClock(HubClock):
    """Hub time on another laptop: this one's clock plus the offset to the
    hub's, from the hub's `now` in each reply (of the last 20, the reply
    with the shortest round trip)."""

    def __init__(self) -> None:
        super().__init__()
        self.offset_ms = 0
        self._samples: deque[tuple[int, int]] = deque(maxlen=20)   # (round trip, offset)
        self._lock = threading.Lock()

    def local_ms(self) -> int:
        return super().now_ms()

    def sample(self, sent_ms: int, received_ms: int, hub_ms: int) -> None:
        with self._lock:
            self._samples.append((received_ms - sent_ms, hub_ms - (sent_ms + received_ms) // 2))
            self.offset_ms = min(self._samples)[1]

    def now_ms(self) -> int:
        return self.local_ms() + self.offset_ms


class HubClient:
    """JSON requests to a hub's console API: with the console's token, or
    (auth: the event's hub secret, another hub laptop: a standby, a hub
    that took over) with a hub's proof instead, the token never sent, and
    every answer taken only if it proves it is this event's hub's
    (NotTheHub otherwise; protocol/hub_secret.py)."""

    def __init__(self, url: str, token: str | None, clock: RemoteClock | None = None,
                 auth: HubAuth | None = None) -> None:
        self.url = url.rstrip("/")
        self.token = token
        self.clock = clock or RemoteClock()
        self.auth = auth

    def request(self, method: str, path: str, body: dict | None = None) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Content-Type": "application/json"}
        nonce = None
        if self.auth is not None:
            parts = urlsplit(self.url + path)
            target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
            nonce, headers[HEADER] = self.auth.request_header(method, target, data or b"")
        else:
            headers["Authorization"] = f"Bearer {self.token}"
        req = urllib.request.Request(self.url + path, data=data, method=method, headers=headers)
        sent = self.clock.local_ms()
        try:
            with urllib.request.urlopen(req, timeout=TIMEOUT_S) as resp:
                raw = resp.read()
                proof = resp.headers.get(PROOF_HEADER)
        except urllib.error.HTTPError as e:
            raise RemoteError(self._refusal(e)) from None
        except (urllib.error.URLError, OSError, ValueError) as e:
            reason = getattr(e, "reason", e)
            raise Unreachable(f"no answer from the hub at {self.url}: {reason}") from None
        if self.auth is not None and nonce is not None and not self.auth.answer_proven(nonce, raw, proof):
            raise NotTheHub(f"the answer at {self.url} does not prove it comes from this event's hub (no "
                            f"{PROOF_HEADER} made with this folder's hub-secret): something else answers at "
                            "that address (an impostor?), or the primary's hub-secret is not this folder's "
                            "(copy it from the primary's event folder). Nothing of it was taken, and no "
                            "token was sent")
        try:
            reply = json.loads(raw)
        except ValueError as e:
            raise Unreachable(f"no answer from the hub at {self.url}: {e}") from None
        if isinstance(reply, dict) and "now" in reply and not reply.get("waited_ms"):
            # (an answer that waited for a row, a long poll, is no clock sample)
            self.clock.sample(sent, self.clock.local_ms(), reply["now"])
        return reply

    def _refusal(self, e: urllib.error.HTTPError) -> str:
        try:
            text = json.loads(e.read())["error"]
        except (ValueError, KeyError, TypeError, OSError):
            text = e.reason
        if e.code == 401 and self.auth is not None:
            return f"the hub at {self.url} refused this laptop's hub proof: {text}"
        if e.code == 401:
            return f"the hub refused the token: {text} (use the event folder's console-token: the hub prints its path)"
        return str(text) if e.code == 400 else f"the hub answered {e.code}: {text}"


class RemoteLog:
    """The hub's event log, mirrored: what HubService needs of an EventStore.
    For one service: rows it has read are dropped from the copy."""

    def __init__(self, client: HubClient) -> None:
        self.client = client
        self.path = client.url
        self.event_id: int | None = None     # for schedules, which a remote console never sends
        self.down: str | None = None         # why the hub cannot be reached, while it cannot
        self.rejected: dict[str, int] = {}   # the hub's counters, from its last reply
        self.duplicates = 0
        self.write_failure: dict | None = None   # the hub's failing log writes, if they fail
        self.network_alerts: list[str] = []      # what the hub sees on the network (not in the log)
        self._rows: list[dict] = []
        self._last = 0                       # the last row id fetched
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._fetch()                        # RemoteError at once if the hub cannot be read
        self._thread = threading.Thread(target=self._poll, name="remote-log", daemon=True)
        self._thread.start()

    def events(self, after: int = 0) -> list[dict]:
        with self._lock:
            i = bisect.bisect_right(self._rows, after, key=lambda r: r["id"])
            del self._rows[:i]
            return list(self._rows)

    def append(self, source: str, type_: str, payload: dict, received_ms: int,
               board: str | None = None) -> dict:
        """An operator action, recorded by the hub (its time, its checks):
        the row it stored."""
        assert source == "operator", "a remote console records operator actions only"
        fields = {k: v for k, v in payload.items() if k not in ("who", "why")}
        try:
            return self.client.request("POST", "/act", {"action": type_, "payload": fields,
                                                        "who": payload.get("who", "operator"),
                                                        "why": payload.get("why", "")})
        except Unreachable as e:
            self.down = str(e)
            raise Unreachable(f"{e}. Not confirmed by the hub: watch the event log "
                              "before you try again") from None

    def close(self) -> None:
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(TIMEOUT_S + 1)

    def _fetch(self) -> None:
        while True:
            reply = self.client.request("GET", f"/rows?after={self._last}")
            with self._lock:
                self._rows += reply["rows"]
                if reply["rows"]:
                    self._last = reply["rows"][-1]["id"]
            self.rejected, self.duplicates = reply.get("rejected", {}), reply.get("duplicates", 0)
            self.write_failure = reply.get("write_failure")
            self.network_alerts = list(reply.get("network_alerts") or [])
            if not reply.get("more"):
                return

    def _poll(self) -> None:
        while not self._stop.wait(RETRY_S if self.down else POLL_S):
            try:
                self._fetch()
                self.down = None
            except RemoteError as e:
                self.down = str(e)


class RemoteHubService(HubService):
    """A HubService on a RemoteLog; the console's tick is `catch_up`."""

    def __init__(self, log: RemoteLog, competition: Competition, round: str | None = None) -> None:
        super().__init__(log, BoardKeys(), competition, log.client.clock)   # type: ignore[arg-type]
        self.round = round           # the round the hub runs, in an event of several (its /event's)
        self.state.checks_seen = False     # the hub's own act checks the desk's `seen` (and stores a conflict)
        self.log = log
        self.was_down: str | None = None
        self.queries.add_blind("the hub", lambda: "the hub cannot be reached" if self.log.down else None)

    def catch_up(self) -> int:
        n = super().catch_up()
        self.counts.rejected, self.counts.duplicates = Counter(self.log.rejected), self.log.duplicates
        self.state.write_failure = self.log.write_failure      # the hub's alert, shown here too
        down = self.log.down
        if down and not self.was_down:
            self.note(f"remote: {down}; trying again")
        elif self.was_down and not down:
            self.note(f"remote: the hub at {self.log.path} answers again")
        self.was_down = down
        return n

    def network_alerts(self) -> list[str]:
        return self.log.network_alerts              # the hub's: this console is not on its broker

    def alerts(self, sync_limit_ms: int = 20) -> list[str]:
        down = self.log.down
        ahead = [f"HUB UNREACHABLE - what you see may be out of date: {down}"] if down else []
        return ahead + super().alerts(sync_limit_ms)


def event_competition(event: dict) -> Competition:
    """The Competition the hub runs, from its /event (event/fold/description.py;
    RemoteError if it is not an event's description)."""
    try:
        return competition_of(event)
    except DescriptionError as e:
        raise RemoteError(str(e)) from None


def connect(url: str, token: str) -> RemoteHubService:
    """A service mirroring the hub at url (RemoteError if it cannot be read;
    FormatError/EventFolderError if its event does not load here)."""
    client = HubClient(url, token)
    event = client.request("GET", "/event")
    competition = event_competition(event)
    log = RemoteLog(client)
    try:
        named = event.get("round")
        return RemoteHubService(log, competition, named if isinstance(named, str) else None)
    except BaseException:
        log.close()
        raise

