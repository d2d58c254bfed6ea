"""`tabletimer run DIR --publish REMOTE` as organizers run it (issue 49):
the real CLI in a child process (tools/testing/hub_process.py, as the other
end-to-end tests start the hub) with its embedded broker, publishing to
`rclone serve webdav` on 127.0.0.1 (site_rig.py) with the organizer's
rclone configuration in its environment.  What it does end to end: the
site on the remote at the start, with the followers' address (`publish
--url`); a finish recorded by `tabletimer act` on the remote within
seconds; `publish --status` answered from the running hub; `publish
--all` sent to it bringing back files deleted on the remote behind its
back (which a change alone never re-sends: the outbox believes the remote
has them); the hall's projector and results sheet showing the address's
QR code; a new address given while it runs on the remote and the hall's
pages; and a clean stop on SIGTERM: exit 0, its last status marked
stopped, no rclone left running."""

from __future__ import annotations

import json
import os
import subprocess
import time
import urllib.request
from pathlib import Path

from brokers import free_port
from hall import Hub, act
from site_rig import Static, make_event, rclone, webdav  # noqa: F401  (webdav: a fixture)
from tabletimer.hub.cli import main as cli
from tabletimer.hub.web.site_publisher import read_status
from tabletimer.tools.testing.hub_process import TT
from waiting import until

M = 60_000
URL = "https://cup.example.org/live/"
URL2 = "https://results.example.net/cup"
REMOTE, PATH = "site:hall-e2e", "hall-e2e"


def row(static: Static, name: str) -> dict | None:
    data = static.get("rounds/main.json")
    rows = json.loads(data)["rows"] if data else []
    return next((r for r in rows if r["name"] == name), None)


def rclones(remote: str) -> list[int]:
    """The rclone processes sending to remote (from /proc)."""
    pids = []
    for d in Path("/proc").iterdir():
        try:
            cmd = (d / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if cmd and cmd[0].endswith(b"rclone") and any(a.startswith(remote.encode()) for a in cmd):
            pids.append(int(d.name))
    return pids


def tt(env: dict, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([TT, *args], env=env, capture_output=True, text=True, timeout=timeout)


def test_a_hub_run_with_publish_publishes_answers_publish_all_and_stops_cleanly(tmp_path, webdav):
    folder, _ = make_event(tmp_path)
    assert cli.main(["publish", str(folder), "--url", URL]) == 0
    env = {**os.environ, **webdav.env()}
    remote = webdav.folder / PATH
    static = Static(remote)
    now = int(time.time() * 1000)
    act(folder, "round_start", at=now - 20 * M)
    hub = Hub(folder, None, "--broker-kind", "embedded", "--port", str(free_port()), "--publish", REMOTE,
              web_port=free_port(), env=env, timeout=60)
    try:
        until(lambda: any(f"public site: published to {REMOTE} on every change (followers open {URL})" in ln
                          for ln in hub.lines), "the hub saying it publishes", timeout=30, seen=hub.said)
        until(lambda: row(static, "Jana Novakova"), "the site on the remote", timeout=60, seen=hub.said)
        assert json.loads(static.get("event.json") or b"{}")["url"] == URL
        assert (row(static, "Jana Novakova") or {})["status"] == "solving"

        act(folder, "press", entrant="1", puzzle=1, at=now - 5 * M)          # the desk, on the running hub
        until(lambda: (row(static, "Jana Novakova") or {}).get("time_ms") == 15 * M,
              "her finish on the remote", timeout=60, seen=lambda: row(static, "Jana Novakova"))

        status = tt(env, "publish", str(folder), "--status")
        assert status.returncode == 0, status
        assert status.stdout.startswith(f"{REMOTE}: published ") and "(the hub publishes)" in status.stdout

        # behind the hub's back (rclone, as an organizer clears a remote): two files gone; a change
        # re-sends only what changed
        for name in ("index.html", "site.css"):
            gone = subprocess.run([rclone(), "deletefile", f"{REMOTE}/{name}"], env=env, capture_output=True,
                                  text=True, timeout=60)
            assert gone.returncode == 0 and not (remote / name).exists(), gone
        act(folder, "press", entrant="2", puzzle=1, at=now - 3 * M)
        until(lambda: (row(static, "Petr Dvorak") or {}).get("time_ms") == 17 * M,
              "his finish on the remote", timeout=60, seen=lambda: row(static, "Petr Dvorak"))
        assert not (remote / "index.html").exists() and not (remote / "site.css").exists()
        again = tt(env, "publish", str(folder), "--all", "--wait", "60")
        assert again.returncode == 0, again
        assert f"asked the running hub to send everything again to {REMOTE}" in again.stdout
        assert again.stdout.strip().splitlines()[-1].startswith("published ")
        assert (remote / "index.html").exists() and (remote / "site.css").exists()
        assert not (folder / "publish-all").exists()                          # the request taken

        moved = tt(env, "publish", str(folder), "--url", URL2)                # a new address while it runs
        assert moved.returncode == 0, moved
        act(folder, "press", entrant="3", puzzle=1, at=now - 2 * M)
        until(lambda: json.loads(static.get("event.json") or b"{}").get("url") == URL2,
              "the new address on the remote", timeout=60, seen=lambda: static.get("event.json"))

        base = hub.hall_url()                                                 # the hall's own pages
        for path in ("/hall", "/results"):
            with urllib.request.urlopen(base + path, timeout=10) as r:
                page = r.read().decode()
            assert page.count('class="site-link"') == 1 and f'href="{URL2}"' in page, path
    finally:
        began = time.monotonic()
        out = hub.stop(timeout=30)
        stopped_in = time.monotonic() - began
        static.stop()
    assert hub.proc.returncode == 0, out[-2000:]
    assert "Traceback" not in out, out[-3000:]
    assert stopped_in < 20, f"the hub took {stopped_in:.1f} s to stop"
    last = read_status(folder)
    assert last is not None and last["stopped"] and last["remote"] == REMOTE and last["problem"] is None
    said = tt(env, "publish", str(folder), "--status")
    assert said.returncode == 0 and "the hub stopped publishing" in said.stdout, said
    assert rclones(REMOTE) == []                                              # no sender left behind
