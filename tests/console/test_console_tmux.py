"""The real console in a real terminal (tmux), against a running hub with a
simulated board: a press appears in the calls queue; confirming it with the
console's keys makes the entrant's finish confirmed in the standings."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


from needs import require_tool
from rig import synced
from tabletimer.hub.event.folder import event_folder
from tabletimer.hub.protocol.keys import BoardKeys
from tabletimer.hub.event.log.store import EventStore
from tabletimer.hub.fleet.simulator import SimBoard
from waiting import until

TT = str(Path(sys.executable).parent / "tabletimer")


def tmux() -> str:
    return require_tool("tmux", "apt-get install tmux, or brew install tmux")


def screen(session: str) -> str:
    return subprocess.run([tmux(), "capture-pane", "-p", "-t", session], capture_output=True,
                          text=True).stdout


def on_screen(session: str, pred, what: str, timeout: float = 20.0) -> str:
    """Poll the terminal until its text satisfies pred (a screen has no event to await)."""
    last = [""]

    def check() -> str:
        last[0] = screen(session)
        return last[0] if pred(last[0]) else ""
    return until(check, what, timeout, seen=lambda: "\n" + last[0], poll=0.2)


def calls_region(text: str) -> str:
    """The screen from the calls queue's title to the standings' (the hall
    table sits beside it, but never shows press ids)."""
    return text.split("Calls waiting")[1].split("Standings")[0] if "Standings" in text else ""


def line_with(text: str, word: str, section: str) -> str:
    """The first line containing word below the line starting with section."""
    lines = text.splitlines()
    start = next(i for i, l in enumerate(lines) if l.strip().startswith(section))
    return next((l for l in lines[start:] if word in l), "")


def test_press_shows_in_the_queue_and_console_confirmation_moves_standings(tmp_path, embedded_broker):
    tm = tmux()
    ev = event_folder.init(tmp_path / "event", "czjpa-individuals")
    (ev / "entrants.csv").write_text("id,name,eligible\n1,Alice,yes\n2,Bob,yes\n")
    (ev / "stations.csv").write_text("board,button,table,entrant\nB1,1,Table 1,1\nB1,2,Table 1,2\n")
    key = BoardKeys(ev / "board-keys.json").ensure("B1")
    subprocess.run([TT, "act", str(ev), "round_start"], check=True, capture_output=True)
    session = f"tt-console-{os.getpid()}"
    # a shell first, so the console starts in a terminal that already has its size
    subprocess.run([tm, "new-session", "-d", "-s", session, "-x", "160", "-y", "48", "sh"], check=True)
    subprocess.run([tm, "send-keys", "-t", session,
                    f"env -u COLUMNS -u LINES {TT} run {ev} --broker mqtt://127.0.0.1:{embedded_broker.port}",
                    "Enter"], check=True)      # (pytest exports COLUMNS/LINES; a terminal has its own)
    sim = SimBoard("B1", "127.0.0.1", embedded_broker.port, tmp_path, key=key, stations=2)
    try:
        on_screen(session, lambda t: "boards online" in t, "the console's header")
        sim.start()
        sim.wait_for(lambda r: "sched" in r)
        synced(sim)
        sim.press(2)
        on_screen(session, lambda t: "B1/1/1" in calls_region(t)
                  and "provisional" in line_with(t, "Bob", "Standings"), "Bob's call, provisional")
        subprocess.run([tm, "send-keys", "-t", session, "c"], check=True)     # confirm the selected call
        on_screen(session, lambda t: "Confirm the selected call" in t and "missing pieces found" in t,
                  "the confirm form")
        subprocess.run([tm, "send-keys", "-t", session, "Enter"], check=True)
        text = on_screen(session, lambda t: "confirmed" in line_with(t, "Bob", "Standings"),
                         "Bob's finish confirmed")
        assert "B1/1/1" not in calls_region(text)                           # the queue is empty
        subprocess.run([tm, "send-keys", "-t", session, "q"], check=True)
        on_screen(session, lambda t: "standings:" in t, "the hub's final standings", timeout=30)
    finally:
        subprocess.run([tm, "kill-session", "-t", session], capture_output=True)
        sim.kill()
    store = EventStore(ev / "events.sqlite")
    ops = [e for e in store.events() if e["source"] == "operator" and e["type"] == "confirm"]
    store.close()
    assert len(ops) == 1 and ops[0]["payload"]["press_id"] == "B1/1/1"
    assert ops[0]["payload"]["who"] == "head referee"


def test_closing_the_terminal_stops_hub_and_broker(tmp_path):
    """A closed window (tmux session killed) leaves no hub or broker behind."""
    from brokers import free_port

    tm = tmux()
    ev = event_folder.init(tmp_path / "event", "czjpa-individuals")
    (ev / "entrants.csv").write_text("id,name,eligible\n1,Alice,yes\n")
    (ev / "stations.csv").write_text("board,button,entrant\nB1,1,1\n")
    session = f"tt-close-{os.getpid()}"
    subprocess.run([tm, "new-session", "-d", "-s", session, "-x", "160", "-y", "48", "sh"], check=True)
    subprocess.run([tm, "send-keys", "-t", session,
                    f"env -u COLUMNS -u LINES {TT} run {ev} --port {free_port()}", "Enter"], check=True)
    try:
        on_screen(session, lambda t: "Standings" in t, "the console")
        running = subprocess.run(["pgrep", "-f", str(ev)], capture_output=True, text=True).stdout.split()
        assert len(running) >= 2                       # the hub and its broker
    finally:
        subprocess.run([tm, "kill-session", "-t", session], capture_output=True)
    # polling other processes' exit: nothing to await
    until(lambda: subprocess.run(["pgrep", "-f", str(ev)], capture_output=True).returncode != 0,
          "the hub and its broker to exit after the terminal closed", timeout=20, poll=0.2)
