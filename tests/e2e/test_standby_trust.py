"""Issue 44, item 5: a standby trusted whatever answered at the primary's
URL.  An impostor there received the console token and had a forged "dq"
row copied into the standby's log.  Now the standby sends no token: it
proves itself with the event's hub secret, and takes an answer only if it
proves it comes from a hub that holds the same secret (bound to the
request's own nonce: a replayed answer does not pass).  The impostor is a
real HTTP server on its own port that answers as a hub would (the event's
own description, a row that follows on) and writes down what it was sent;
the primary is `tabletimer run`, the standby `tabletimer standby`."""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from brokers import free_port
from hall import TT, Hub, act
from tabletimer.hub.protocol.hub_secret import ensure_secret, secret_path
from tabletimer.hub.event.folder import event_folder
from tabletimer.hub.event.log.store import EventStore
from tabletimer.hub.web.console_api import console_token, folder_event
from waiting import until


def _event(tmp_path):
    ev = event_folder.init(tmp_path / "primary", "czjpa-individuals", "Trust cup")
    (ev / "entrants.csv").write_text("id,name,eligible\n1,Anna,yes\n2,Ben,yes\n")
    ensure_secret(ev)                                  # as `tabletimer init` makes it
    console_token(ev)                                  # as the primary's first run makes it
    copy = tmp_path / "standby"
    shutil.copytree(ev, copy)
    return ev, copy


class Impostor:
    """Answers at an address as a hub would, and keeps what it is sent."""

    def __init__(self, ev) -> None:
        self.seen: list[dict] = []
        event = folder_event(ev)
        forged = {"id": 1, "received_ms": 1_796_000_000_000, "source": "operator", "type": "dq", "board": None,
                  "payload": {"entrant": "1", "reason": "forged", "who": "impostor", "why": ""}}
        impostor = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:                       # noqa: N802 (http.server's name)
                impostor.seen.append({"path": self.path, **{k.lower(): v for k, v in self.headers.items()}})
                if self.path.startswith("/event"):
                    body = event
                else:
                    body = {"rows": [forged], "more": False, "now": 1_796_000_000_000, "last": 1,
                            "event_id": 613920551, "waited_ms": 0}
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.send_header("X-TableTimer-Proof", "00" * 32)      # a proof it cannot make
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args) -> None:
                pass
        self.server = ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def standby(copy, ev, url: str, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([TT, "standby", str(copy), "--primary", url, "--token-file", str(ev / "console-token"),
                           "--broker-kind", "embedded", "--port", str(free_port()), "--web-listen", "off",
                           "--duration", "1", *extra], capture_output=True, text=True, timeout=60)


def test_an_impostor_at_the_primarys_address_gets_no_token_and_has_no_row_copied(tmp_path):
    ev, copy = _event(tmp_path)
    token = console_token(ev)
    impostor = Impostor(ev)
    try:
        r = standby(copy, ev, impostor.url)
    finally:
        impostor.close()
    said = r.stdout + r.stderr
    assert r.returncode == 2, said
    assert "does not prove it comes from this event's hub" in r.stderr and "no token was sent" in r.stderr, said
    assert impostor.seen, "the standby asked nothing"
    for request in impostor.seen:                          # nothing it could use
        assert token not in json.dumps(request), request
        assert "authorization" not in request, request
    rows = []
    if (copy / "events.sqlite").exists():
        store = EventStore(copy / "events.sqlite")
        try:
            rows = store.events()
        finally:
            store.close()
    assert rows == []                                       # the forged dq: not copied


def test_the_real_primary_is_followed_and_a_copy_without_its_secret_is_told_what_to_do(tmp_path):
    ev, copy = _event(tmp_path)
    web = free_port()
    hub = Hub(ev, None, "--broker-kind", "embedded", "--port", str(free_port()), web_port=web)
    url = f"http://127.0.0.1:{web}"
    try:
        until(lambda: any("tabletimer console http" in ln for ln in hub.lines), "the primary's web server")
        act(ev, "round_start")
        followed = standby(copy, ev, url)                    # the primary proves itself: copied
        assert followed.returncode == 0, followed.stdout + followed.stderr
        assert "row(s) copied" in followed.stdout and "STANDBY STOPPED" not in followed.stdout, followed.stdout
        # a copy made before the secret was (or of another event's): the primary refuses its proof, and
        # the standby says what to do
        secret_path(copy).unlink()
        missing = standby(copy, ev, url)
        assert missing.returncode == 2 and "hub-secret does not exist" in missing.stderr, missing.stderr
        ensure_secret(copy)                                   # another secret than the primary's
        other = standby(copy, ev, url)
        assert other.returncode == 2, other.stdout + other.stderr
        assert "refused this laptop's hub proof" in other.stderr and "copy this folder's hub-secret" in other.stderr
    finally:
        hub.stop()


def test_the_hub_api_takes_a_hubs_proof_once_for_reading_and_fencing_only(tmp_path):
    """At the primary's web server (real, on a free port): a hub's request
    is answered with its proof; the same request sent again (read off the
    network, replayed) is refused; a hub's proof is no credential for
    /act, nor the console token for /hub/fence; a fence whose body was
    changed on the way is refused."""
    import urllib.error
    import urllib.request

    from tabletimer.hub.protocol.hub_secret import HubAuth
    from tabletimer.hub.protocol.keys import BoardKeys
    from tabletimer.hub.core.service import HubService
    from tabletimer.hub.event.fold.competition import Competition
    from tabletimer.hub.web.server import start_hub_web

    ev, _ = _event(tmp_path)
    loaded = event_folder.load(ev)
    secret, _ = ensure_secret(ev)
    svc = HubService(EventStore(loaded.db), BoardKeys(loaded.keys_file),
                     Competition(loaded.format, loaded.entrants, loaded.stations), secret=secret)
    srv = start_hub_web(svc, folder_event(ev), console_token(ev), "127.0.0.1", 0)
    auth = HubAuth(secret)

    def ask(method: str, path: str, headers: dict, data: bytes | None = None) -> tuple[int, bytes, Any]:
        req = urllib.request.Request(srv.url() + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                return r.status, r.read(), r.headers
        except urllib.error.HTTPError as e:
            return e.code, e.read(), e.headers
    try:
        nonce, header = auth.request_header("GET", "/rows?after=0")
        status, body, headers = ask("GET", "/rows?after=0", {"X-TableTimer-Hub": header})
        assert status == 200 and auth.answer_proven(nonce, body, headers.get("X-TableTimer-Proof"))
        status, body, _ = ask("GET", "/rows?after=0", {"X-TableTimer-Hub": header})
        assert status == 401 and b"taken once already" in body
        data = json.dumps({"action": "dns", "payload": {"entrant": "1"}}).encode()
        _, header = auth.request_header("POST", "/act", data)
        status, body, _ = ask("POST", "/act", {"X-TableTimer-Hub": header, "Content-Type": "application/json"}, data)
        assert status == 401 and b"reading only" in body
        fence = json.dumps({"term": 2, "hash": svc.state.terms.proofs.proof(2), "after": 0, "by": "x"}).encode()
        status, body, _ = ask("POST", "/hub/fence", {"Authorization": f"Bearer {srv.token}",
                                                     "Content-Type": "application/json"}, fence)
        assert status == 401 and b"only another hub" in body
        _, header = auth.request_header("POST", "/hub/fence", fence.replace(b'"after": 0', b'"after": 1'))
        status, body, _ = ask("POST", "/hub/fence", {"X-TableTimer-Hub": header,
                                                     "Content-Type": "application/json"}, fence)
        assert status == 401 and b"not this hub's" in body
        assert svc.fenced is None and [r["type"] for r in svc.store.events()] == []   # nothing of it recorded
    finally:
        srv.stop()
        svc.store.close()
