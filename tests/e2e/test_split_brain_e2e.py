"""Issue 44, item 4, as the issue found it: with `--auto-after` and the link
between the primary and the standby cut, the standby took over and both
hubs ran; with the link back both still ran, no alert on either side, and
a desk confirmation recorded on the old primary (exit 0) never reached the
new hub's log.  Now hubs watch each other: the hub that took over asks the
old primary's address until it answers, shows it its proven term, and the
old primary stops at once (exit 4, its broker with it), saying which of its
desk actions the event's log lacks; the new hub keeps them, and `tabletimer
redo` records them there in one step.  Meanwhile the primary, not hearing
its standby, flagged the confirmation as it was recorded.

On one machine as on two laptops: the primary `tabletimer run` (its broker
on 127.0.0.2), the standby `tabletimer standby --auto-after 4` (its idle
broker on 127.0.0.1, the same port), the link between them a proxy
(tools/testing/netimpair.py) that is cut and restored, a board of the real
firmware flashed with both addresses."""

from __future__ import annotations

import subprocess
import sys

import pytest

from hall import TT, Hub, act, primary_and_standby_copy
from rig import synced
from tabletimer.hub.broker.broker import free_port
from tabletimer.hub.protocol.keys import mqtt_password
from tabletimer.hub.event.log.store import EventStore
from tabletimer.hub.fleet.simulator import SimBoard
from tabletimer.tools.testing.netimpair import NetImpair
from waiting import Output, until

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="two loopback addresses (127.0.0.2): Linux has the whole 127/8")


def rows(folder) -> list[dict]:
    store = EventStore(folder / "events.sqlite")
    try:
        return store.events()
    finally:
        store.close()


def test_a_split_brain_heals_when_the_link_returns_and_the_desks_action_is_redone(tmp_path):
    ev, copy, key = primary_and_standby_copy(tmp_path, "Split", "D1")
    port, web = free_port(), free_port()
    primary = Hub(ev, None, "--broker-kind", "embedded", "--listen", "127.0.0.2", "--port", str(port),
                  web_port=web)
    standby = sim = None
    with NetImpair(upstream=("127.0.0.1", web)) as net:
        link = f"http://127.0.0.1:{net.port_for('link')}"     # the only way between the two laptops
        try:
            until(lambda: any("tabletimer console http" in ln for ln in primary.lines), "the primary's web server")
            standby = subprocess.Popen([TT, "standby", str(copy), "--primary", link, "--broker-kind", "embedded",
                                        "--listen", "127.0.0.1", "--port", str(port), "--web-listen", "off",
                                        "--hall-pages", "off", "--silent-after", "2", "--auto-after", "4"],
                                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            new = Output(standby.stdout)
            new.wait_for(lambda ln: "(idle: the boards are the primary's)" in ln, "the standby's idle broker")
            sim = SimBoard("D1", "127.0.0.2", port, tmp_path / "boards", key=key, stations=2, broker_user="D1",
                           broker_password=mqtt_password(key))
            sim.config["broker"].update(host=["127.0.0.2", "127.0.0.1"], failover=5)
            sim.start()
            act(ev, "round_start")
            sim.wait_for(lambda r: "sched" in r, timeout=30)
            synced(sim)
            sim.press(1)
            sim.wait_for(lambda r: r.get("acked") == [1, 1], timeout=30)
            until(lambda: [r for r in rows(copy) if r["type"] == "press"], "the press copied", timeout=20)

            # the link between the laptops is cut: the standby takes over, the primary goes on with the board
            net.down("link")
            new.wait_for(lambda ln: ln.startswith("takeover: this laptop is the hub now (term 2"), "the takeover",
                         timeout=30)
            until(lambda: [r for r in rows(ev) if r["type"] == "standby_lost"], "the primary's standby lost",
                  timeout=30)
            confirm = subprocess.run([TT, "act", str(ev), "confirm", "press_id=D1-1", "missing_found=1",
                                      "--who", "Anna"], capture_output=True, text=True, timeout=60)
            assert confirm.returncode == 0, confirm.stdout + confirm.stderr         # recorded on the old primary...
            assert "the standby has not been heard since" in confirm.stderr, confirm.stderr   # ...and flagged
            mark = len(sim.records)
            sim.press(2)
            sim.wait_for(lambda r: r.get("acked") == [1, 2], timeout=30, start=mark)   # the old primary acks it
            assert primary.proc.poll() is None                                       # two hubs run

            # the link is back: the new hub shows the old primary its term; the old one stops at once
            net.up("link")
            code = primary.proc.wait(60)
            said = primary.stop()
            assert code == 4, said[-3000:]
            assert "FENCED: the hub that took over from this log's row #" in said, said[-3000:]
            assert "holds hub term 2, this hub's is 1" in said and "This hub has stopped, and its broker" in said
            assert "1 desk action(s) recorded here after row #" in said and "confirm press_id=D1/1/1" in said
            assert "by Anna" in said and "tabletimer redo" in said, said[-3000:]
            new.wait_for(lambda ln: "answered: it is fenced" in ln and "1 desk action(s)" in ln,
                         "the new hub's line: the old primary fenced, its desk action kept", timeout=30)
            # the board, its hub gone, goes to the new one with what it keeps in flash
            until(lambda: len([r for r in rows(copy) if r["type"] == "press"]) >= 2,
                  "both presses in the new hub's log", timeout=60, seen=lambda: sim.records[-20:])

            # the desk redoes the old primary's action on the new hub in one step
            redo = subprocess.run([TT, "redo", str(copy)], capture_output=True, text=True, timeout=60)
            assert redo.returncode == 0 and "recorded as #" in redo.stdout, redo.stdout + redo.stderr
            until(lambda: [r for r in rows(copy) if r["type"] == "confirm"], "the confirmation in the new log")
        finally:
            if sim is not None:
                sim.stop()
            if standby is not None and standby.poll() is None:
                standby.terminate()
                standby.wait(30)
            if primary.proc.poll() is None:
                primary.kill()
    got = rows(copy)
    presses = sorted((r["payload"]["boot"], r["payload"]["seq"]) for r in got if r["type"] == "press")
    assert presses == [(1, 1), (1, 2)], presses                     # each once
    (redone,) = [r for r in got if r["type"] == "confirm"]
    assert redone["payload"]["press_id"] == "D1/1/1" and redone["payload"]["missing_found"] == 1
    assert redone["payload"]["who"] == "Anna" and "redone from the old primary's row #" in redone["payload"]["why"]
    assert [r["type"] for r in rows(ev) if r["source"] == "hub"].count("fenced") == 1   # the old log says so
