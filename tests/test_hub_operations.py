"""What an operator, a laptop or a reused board does to a hub at an event
(issue 14): two hubs started on one folder, a laptop clock stepped back
between runs, a log that cannot be written.  The hub runs as organizers run
it (`tabletimer run DIR`, its own process) wherever that is what matters,
against a real broker, with real boards (the firmware in micropython)."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

from hall import TT, Hub, act, replay_json
from tabletimer.hub import event_folder
from tabletimer.hub.broker import free_port
from tabletimer.hub.keys import BoardKeys
from waiting import until


def make_event(tmp: Path, boards: int = 1) -> Path:
    ev = event_folder.init(tmp / "event", "czjpa-individuals")
    (ev / "entrants.csv").write_text("id,name,eligible\n" + "".join(
        f"{b}{s},Puzzler {b}{s},yes\n" for b in range(1, boards + 1) for s in (1, 2)))
    (ev / "stations.csv").write_text("board,button,table,entrant\n" + "".join(
        f"B{b},{s},Table {b},{b}{s}\n" for b in range(1, boards + 1) for s in (1, 2)))
    keys = BoardKeys(ev / "board-keys.json")
    for b in range(1, boards + 1):
        keys.ensure(f"B{b}")
    return ev


# ------------------------------------------------------------ 5: one hub per folder

def test_a_second_hub_on_an_event_folder_is_refused_and_named(tmp_path, embedded_broker):
    ev = make_event(tmp_path)
    port = embedded_broker.port
    hub = Hub(ev, port)
    try:
        second = subprocess.run([TT, "run", str(ev), "--broker", f"mqtt://127.0.0.1:{port}",
                                 "--console-listen", "off", "--duration", "5"],
                                capture_output=True, text=True, timeout=60)
        assert second.returncode == 2, second.stdout + second.stderr
        err = second.stderr
        assert "another hub is already running on" in err and f"pid {hub.pid}" in err, err
        assert f"started {time.strftime('%Y-%m-%d')}" in err and f"kill {hub.pid}" in err, err
        assert "broker on" not in second.stdout          # refused before it touched anything
        # a demo writing into the same log: refused the same way
        demo = subprocess.run([TT, "demo", "--data", str(ev), "--boards", "1", "--duration", "5",
                               "--port", str(free_port()), "--console-listen", "off"],
                              capture_output=True, text=True, timeout=60)
        assert demo.returncode == 2 and f"pid {hub.pid}" in demo.stderr, demo.stdout + demo.stderr
        # what operators do beside a running hub still works, and the hub applies it
        act(ev, "round_start", at=int(time.time() * 1000))
        until(lambda: any(line.startswith("operator round_start") for line in hub.lines),
              "the running hub to apply the action", seen=lambda: hub.lines[-5:])
        assert [r["status"] for r in replay_json(ev)] == ["unfinished", "unfinished"]   # final: time is up
        res = subprocess.run([TT, "results", str(ev), "--json", "-"], capture_output=True, text=True,
                             timeout=60)
        assert res.returncode == 0 and json.loads(res.stdout)["rows"], res.stderr
    finally:
        hub.stop()
    # the lock goes with its process, however it ends (here: SIGKILL)
    hub = Hub(ev, port)
    hub.kill()
    hub = Hub(ev, port)
    assert hub.proc.poll() is None
    hub.stop()
