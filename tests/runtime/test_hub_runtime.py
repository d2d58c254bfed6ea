"""The hub's composition root (hub/runtime/hub_runtime.py): HubRuntime
starts a hub's parts in order (broker, link, web server with the referees'
pages, simulated boards) and stops every one of them once, in reverse, at
the end of a run; the measured main loop ran its passes between.  Run in a
process of its own: a run takes the process's signals (SIGINT ignored at
its end, as a hub's must be)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from brokers import free_port

SCRIPT = r'''
import json, sys, threading, types, socket
from pathlib import Path
from tabletimer.hub.core.service import HubService
from tabletimer.hub.event.fold.competition import Competition
from tabletimer.hub.event.log.store import EventStore
from tabletimer.hub.protocol.keys import BoardKeys
from tabletimer.hub.rules.formats import load_format
from tabletimer.hub.runtime.hub_runtime import HubRuntime

data, port, web = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
store = EventStore(data / "events.sqlite")
service = HubService(store, BoardKeys(data / "board-keys.json"),
                     Competition(load_format("cz-championship-individuals"), [], [], auto_stations=True))
options = types.SimpleNamespace(broker=None, broker_kind="embedded", listen="127.0.0.1", port=port,
                                duration=None, web_listen=f"127.0.0.1:{web}", hall_pages="off",
                                hall_listen=None, demo_referee=False)
said, seen = [], {}
stop = threading.Event()

def start_sims(address, stop_event):
    # the broker, the link and the web server are up when the boards start
    seen["broker"] = (address.host, address.port)
    seen["web"] = socket.create_connection(("127.0.0.1", web), 5).close() is None
    seen["linked"] = runtime.link.connected.is_set()
    threading.Timer(1.0, stop.set).start()
    return []

runtime = HubRuntime(options, service, data, event={"name": "runtime test", "title": "Runtime Cup"},
                     start_sims=start_sims, stop=stop, say=said.append)
ran = runtime.run()
try:
    socket.create_connection(("127.0.0.1", web), 1).close()
    web_after = True
except OSError:
    web_after = False
print(json.dumps({"failed": ran.failed, "fenced": ran.fenced, "seen": seen, "passes": runtime.loop.passes,
                  "again": runtime.shut_down(), "web_after": web_after, "said": said}))
'''


def test_the_runtime_starts_every_part_runs_its_loop_and_stops_them_once(tmp_path: Path):
    port, web = free_port(), free_port()
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path), str(port), str(web)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.splitlines()[-1])
    assert got["failed"] is None and got["fenced"] is None
    assert got["seen"] == {"broker": ["127.0.0.1", port], "web": True, "linked": True}
    assert got["passes"] >= 2                        # the measured loop ran while it served
    assert got["again"] is False                     # stopped once: a second shut-down does nothing
    assert got["web_after"] is False                 # the web server is stopped with it
    assert got["said"][0].startswith(f"broker: embedded (amqtt) on 127.0.0.1:{port}")
    assert any(line.startswith("remote console") for line in got["said"])
