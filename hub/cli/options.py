"""The command line's options that several commands share, and its exit
code for a log that failed.  Imports nothing: the parser of every command
is built from here and main.py without loading what the commands do
(main.py: a command imports only its own module)."""

from __future__ import annotations

import argparse
import os

ROUND_HELP = ("which of the event's rounds (`tabletimer round list DIR`; default: its only one, "
              "else the one `run` last ran)")

LOG_FAILED = 3        # exit code: the event log could not be opened or written
FENCED = 4            # exit code: another hub took over from this one's log (a higher term)

BROKER_KINDS = ("auto", "mosquitto", "embedded")


def serve_options(p: argparse.ArgumentParser) -> None:
    """The options of the commands that run a hub (demo, run, rehearse,
    standby, takeover): its broker and its web servers."""
    p.add_argument("--broker", help="an external broker's URL, e.g. mqtt://192.168.1.10:1883: none is "
                                    "started (default: one is, see --broker-kind)")
    p.add_argument("--broker-kind", choices=BROKER_KINDS, default="auto",
                   help="the broker the hub starts: mosquitto (a child process with the event's "
                        "configuration, DIR/mosquitto/child), embedded (amqtt, for a small hall), or "
                        "auto: Mosquitto if it is installed, else embedded (default auto)")
    p.add_argument("--listen", default="127.0.0.1",
                   help="address the broker the hub starts binds (default 127.0.0.1; 0.0.0.0: reachable "
                        "by boards on the LAN)")
    p.add_argument("--port", type=int, default=1883, help="its port (default 1883)")
    p.add_argument("--duration", type=float, default=None, help="stop by itself after this many seconds")
    p.add_argument("--web-listen", "--console-listen", dest="web_listen", metavar="HOST:PORT",
                   default=os.environ.get("TABLETIMER_WEB_LISTEN",
                                          os.environ.get("TABLETIMER_CONSOLE_LISTEN", "127.0.0.1:8765")),
                   help="address of the hub's web server: the referees' and the hall's pages and the "
                        "API for consoles on other laptops "
                        "(default 127.0.0.1:8765, this machine only, or $TABLETIMER_WEB_LISTEN; "
                        "0.0.0.0:8765: reachable on the LAN; port 0: any free port; off: none; "
                        "--console-listen is its old name)")
    p.add_argument("--hall-pages", choices=("on", "off"), default="on",
                   help="the hall's public pages: /hall (projector), /standings (spectators' phones), "
                        "/results, served by a process of their own (default on; off: not served)")
    p.add_argument("--publish", metavar="REMOTE", default=None,
                   help="the event's public pages pushed on every change to this rclone remote (NAME:PATH; "
                        "docs/operations.md, Results online); the hub never waits on it")
    p.add_argument("--hall-listen", metavar="HOST:PORT", default=None,
                   help="address of the hall's pages' own server (so that a crowd on them cannot slow "
                        "the boards; the web server sends /hall, /standings, /results there): default "
                        "the web server's host and its port + 1 (127.0.0.1:8766); port 0: any free port")
