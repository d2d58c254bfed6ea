"""`tabletimer publish`: the event's public site on a remote of the
organizer's rclone (hub/web/public_site.py, site_outbox.py, rclone_remote.py).

    tabletimer publish DIR --to REMOTE [--url URL]   every round's pages, sent now
    tabletimer publish DIR --all                     the running hub (run --publish) sends everything again
    tabletimer publish DIR --status                  the running hub's publishing, in one line
    tabletimer publish DIR --url URL                 the followers' address (site-url), for the QR codes

Without a running hub that publishes, `publish --to` renders every round
from its log and sends every file (trying again for --wait seconds);
exit 0: published, 1: not (the line says why), 2: bad input."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from ..event.folder import event_folder
from ..event.folder.site_address import save_site_url, site_url
from ..rules.formats import FormatError

RUNNING_S = 15.0        # a status file written this recently: a running hub publishes


def add_parser(sub) -> None:
    p = sub.add_parser("publish", help="the event's public pages (standings, results) on a web host, "
                                       "through rclone (docs/operations.md, Results online)")
    p.add_argument("dir", help="the event folder")
    p.add_argument("--to", metavar="REMOTE", help="rclone's remote and path, e.g. site:bucket/cup "
                                                  "(`rclone config` makes one)")
    p.add_argument("--all", action="store_true", help="everything again (a running hub's publishing: it "
                                                      "sends every file at once)")
    p.add_argument("--status", action="store_true", help="the running hub's publishing, in one line")
    p.add_argument("--url", help="the followers' address of the published site (for the QR code on the "
                                 "projector and the results sheet); saved in DIR/site-url")
    p.add_argument("--wait", type=float, default=30.0, help="try this long before giving up (default 30 s)")
    p.set_defaults(func=cmd_publish)


def _running(status: dict | None) -> dict | None:
    """The status of a running hub that publishes (None: none runs)."""
    fresh = status is not None and time.time() - status.get("written", 0) < RUNNING_S and not status.get("stopped")
    return status if fresh else None


def cmd_publish(args) -> int:
    from ..web import site_publisher as sp

    folder = Path(args.dir)
    if args.url is not None:
        if not folder.is_dir():
            print(f"error: {folder}: no such event folder", file=sys.stderr)
            return 2
        try:
            url = save_site_url(folder, args.url)
        except ValueError as e:                    # nothing written
            print(f"error: --url: {e}", file=sys.stderr)
            return 2
        print(f"followers' address: {url} (the projector and the results sheet show it with its QR code)")
    status = sp.read_status(folder)
    if args.status:
        if status is None:
            print(f"{folder}: not published by a running hub (`tabletimer run {folder} --publish REMOTE`)")
            return 2
        age = time.time() - status.get("written", 0)
        hub = "the hub publishes" if _running(status) else f"the hub stopped publishing {age:.0f} s ago"
        print(f"{status['remote']}: {status['line']} ({hub})")
        return 0 if status.get("problem") is None else 1
    running = _running(status)
    if running is not None and not args.to:
        status = running
        if not args.all:
            print(f"the running hub publishes to {status['remote']}: {status['line']}")
            return 0
        token = sp.request_all(folder)
        print(f"asked the running hub to send everything again to {status['remote']} ...", flush=True)
        deadline = time.monotonic() + args.wait
        while time.monotonic() < deadline:
            now = sp.read_status(folder)
            if now and now.get("all_done") == token:       # the remote has every file of it
                print(now["line"])
                return 0
            if now and now.get("stopped"):
                print(f"the hub stopped before it sent everything: {now['line']}")
                return 1
            time.sleep(0.5)
        print((sp.read_status(folder) or status)["line"])
        return 1
    if not args.to and args.url is not None and not args.all:
        return 0                                   # only the address given: saved
    if not args.to:
        print("error: give --to REMOTE (rclone's NAME:PATH), or run the hub with --publish REMOTE",
              file=sys.stderr)
        return 2
    return _publish_once(folder, args.to, args.wait)


def _publish_once(folder: Path, remote: str, wait: float) -> int:
    from ..web.rclone_remote import RcloneRemote
    from ..web.site_outbox import Outbox
    from ..web.site_publisher import SiteSource

    try:
        event_folder.load(folder)
    except (event_folder.EventFolderError, FormatError) as e:
        if not (folder / "rounds").is_dir():
            print(f"error: {e}", file=sys.stderr)
            return 2
    source = SiteSource(folder)
    try:
        files, version = source.files(site_url(folder))
    finally:
        source.close()
    outbox = Outbox(RcloneRemote(remote).send)
    outbox.put(files, version, force=True)
    deadline = time.monotonic() + wait
    while not outbox.send_once():
        due = outbox.due_in() or 0.0
        if outbox.status().kind != "unreachable" or time.monotonic() + due > deadline:
            break
        time.sleep(due)
    status = outbox.status()
    print(f"{remote}: {status.line()}" + (f" · {sum(len(b) for b in files.values())} bytes in {len(files)} files"
                                           if status.problem is None else f" · {status.problem}"))
    return 0 if status.problem is None else 1
