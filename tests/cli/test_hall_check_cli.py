"""`tabletimer check-hall` as an operator runs it beside the hub, when the
round starts while the check runs (issue 44, item 8): the check ends at
the round's start by itself and says so, and its verdict, recorded in the
log, is the check as it stood then."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from tabletimer.hub.cli import main as cli
from tabletimer.hub.event.folder import event_folder
from tabletimer.hub.event.folder.folder_lock import HubLock
from tabletimer.hub.event.log.store import EventStore
from tabletimer.hub.rules.timetext import fmt_clock
from waiting import Output

TT = str(Path(sys.executable).parent / "tabletimer")


def test_check_hall_ends_at_the_rounds_start_and_says_so(tmp_path):
    ev = event_folder.init(tmp_path / "event", "czjpa-individuals")
    EventStore(ev / "events.sqlite").close()
    lock = HubLock(ev / "events.sqlite").acquire()        # a hub runs on the event: this process holds its lock
    check = None
    try:
        check = subprocess.Popen([TT, "check-hall", str(ev), "--timeout", "120"], stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True)
        said = Output(check.stdout)
        said.wait_for(lambda ln: ln.startswith("hall check begun"), "the check begun")
        start = int(time.time() * 1000) + 5000               # the round armed five seconds ahead
        assert cli.main(["act", str(ev), "round_start", f"at={start}"]) == 0
        said.wait_for(lambda ln: ln.strip() == f"the round starts at {fmt_clock(start)}: the check ends then",
                      "the start armed, said")
        ended = said.wait_for(lambda ln: ln.startswith("the check ended at the round's start"),
                              "the check ended by the round's start (not --timeout's 120 s)", timeout=30)
        assert check.wait(30) == 1                            # not ready: its board never came online
        out = said.wait_closed()
    finally:
        if check is not None and check.poll() is None:
            check.kill()
        lock.release()
    assert ended.strip() == (f"the check ended at the round's start ({fmt_clock(start)}): presses from then on "
                             "are calls, not the check's"), out
    store = EventStore(ev / "events.sqlite")
    try:
        verdict = [r for r in store.events() if r["type"] == "hall_check"][-1]
    finally:
        store.close()
    assert verdict["payload"]["phase"] == "verdict" and verdict["payload"]["ready"] == 0
    assert ended.strip() in verdict["payload"]["report"].splitlines()
