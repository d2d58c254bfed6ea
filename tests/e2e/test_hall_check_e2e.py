"""Issue 29, item 3: the hall check before the round, end to end: the real
firmware on three simulated boards through Mosquitto, the hub run by
`tabletimer run`, the check by `tabletimer check-hall` beside it.  One
board has every button pressed (ready), one has a button never pressed,
one sits behind a slow link (its clock error over the limit): both of
those are not ready, each with its reason; the check's presses are not
strays, and its beginning and verdict are in the log."""

from __future__ import annotations

import re

import subprocess

from brokers import require_mosquitto
from rig import synced
from tabletimer.hub.protocol.keys import BoardKeys
from tabletimer.hub.event.folder import event_folder
from tabletimer.hub.event.log.store import EventStore
from tabletimer.hub.fleet.simulator import SimBoard
from tabletimer.tools.testing.local_mosquitto import LocalMosquitto
from tabletimer.tools.testing.netimpair import NetImpair
from waiting import Output

from hall import TT


def test_the_hall_check_names_the_button_never_pressed_and_the_board_with_a_bad_clock(tmp_path):
    require_mosquitto()
    ev = event_folder.init(tmp_path / "event", "czjpa-individuals", "Hall check")
    (ev / "entrants.csv").write_text("id,name,eligible\n" + "".join(f"I{n},Entrant {n},yes\n" for n in range(1, 6)))
    (ev / "stations.csv").write_text("board,button,table,entrant\nA1,1,Table A,I1\nA1,2,Table A,I2\n"
                                     "B1,1,Table B,I3\nB1,2,Table B,I4\nC1,1,Table C,I5\n")
    keys = BoardKeys(ev / "board-keys.json")
    mosq = LocalMosquitto().start()
    net = NetImpair(upstream=("127.0.0.1", mosq.port), boards=["C1"], seed=1).__enter__()
    net.set("C1", up_ms=150, down_ms=150)            # a 300 ms round trip: a clock error of 150 ms or more
    sims = {b: SimBoard(b, "127.0.0.1", net.port_for(b) if b == "C1" else mosq.port, tmp_path / "boards",
                        key=keys.ensure(b), stations=2 if b != "C1" else 1) for b in ("A1", "B1", "C1")}
    hub = check = None
    try:
        refused = subprocess.run([TT, "check-hall", str(ev)], capture_output=True, text=True, timeout=60)
        assert refused.returncode == 2 and "no hub runs on" in refused.stderr and "tabletimer run" in refused.stderr
        hub = subprocess.Popen([TT, "run", str(ev), "--broker", f"mqtt://127.0.0.1:{mosq.port}", "--web-listen",
                                "off"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        out = Output(hub.stdout)
        out.wait_for(lambda ln: ln.startswith("broker:"), "the hub")
        for s in sims.values():
            s.start()
        for b, s in sims.items():
            out.wait_for(lambda ln: ln.startswith(f"board {b} online"), f"board {b} online")
            synced(s)
        check = subprocess.Popen([TT, "check-hall", str(ev), "--timeout", "60"], stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True)
        said = Output(check.stdout)
        said.wait_for(lambda ln: ln.startswith("hall check begun"), "the check begun")
        said.wait_for(lambda ln: ln.startswith("B1: not ready: offline") or ln.startswith("B1: not ready: button"),
                      "B1 listed")
        for b, button in (("A1", 1), ("A1", 2), ("B1", 1), ("C1", 1)):      # B1's button 2 never
            sims[b].press(button)
        said.wait_for(lambda ln: ln.strip() == "A1: ready", "A1 ready once both its buttons are pressed")
        said.wait_for(lambda ln: ln.startswith("C1: not ready: clock error"), "C1's bad clock")
        out.wait_for(lambda ln: ln.startswith("hall check: B1 button 1 pressed"), "B1's check press at the hub")
        check.terminate()                                # SIGTERM, as Ctrl-C: the verdict as it stands
        assert check.wait(30) == 1                       # not ready
        report = said.wait_closed()
    finally:
        if check is not None and check.poll() is None:
            check.kill()
        if hub is not None:
            hub.terminate()
            hub.wait(30)
        for s in sims.values():
            s.stop()
        net.__exit__(None, None, None)
        mosq.stop()
    text = out.wait_closed()
    assert "stray" not in text, text                 # the check's presses are not strays
    assert "hall NOT READY: 1/3 boards ready, 4/5 buttons pressed" in report, report
    assert "[x] A1: ready" in report and "[ ] B1: NOT READY" in report and "[ ] C1: NOT READY" in report
    a1 = next(ln for ln in report.splitlines() if ln.startswith("[x] A1: ready"))
    assert re.search(r", flash \d+ KB free, journal \d+, ", a1), a1          # from the board's birth
    assert "- button 2 not pressed yet: press each once" in report
    (c1,) = [ln for ln in report.splitlines() if ln.startswith("[ ] C1")]
    err = int(c1.split("clock \u00b1")[1].split(" ms")[0])
    assert err > 50, c1                              # the slow link's clock error, over the limit
    store = EventStore(ev / "events.sqlite")
    try:
        rows = [r for r in store.events() if r["type"] == "hall_check"]
    finally:
        store.close()
    assert [r["payload"]["phase"] for r in rows] == ["begin", "verdict"]
    assert rows[1]["payload"]["ready"] == 0 and "[ ] B1: NOT READY" in rows[1]["payload"]["report"]
