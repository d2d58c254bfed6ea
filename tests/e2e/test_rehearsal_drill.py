"""The hub laptop's death rehearsed on one laptop (issue 28: "The rehearsal
(`tabletimer rehearse DIR --standby`) shows the whole drill on one
laptop"): the primary and a standby as processes of their own on two
loopback addresses, the simulated boards knowing both; from another
terminal the desk starts the round, a table calls, `--kill-primary` kills
the hub laptop, a second call is made with no hub, `--takeover` hands over
to the standby: both calls are in the new hub's log, once each, and its web
server is where the dead primary's was."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from brokers import free_port
from tabletimer.hub.event.folder import event_folder
from tabletimer.hub.event.log.store import EventStore
from test_rehearsal import TT, press, signin_status
from waiting import Output

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="two loopback addresses (127.0.0.2): Linux has the whole 127/8")


def _rehearse(ev, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([TT, "rehearse", str(ev), *args], capture_output=True, text=True, timeout=60)


def test_the_standby_drill_runs_on_one_laptop_and_loses_no_call(tmp_path):
    ev = event_folder.init(tmp_path / "event", "czjpa-individuals", "Drill")
    (ev / "entrants.csv").write_text("id,name,eligible\n1,Anna,yes\n2,Bea,yes\n")
    (ev / "stations.csv").write_text("board,button,table,entrant\nD1,1,T1,1\nD1,2,T1,2\n")
    assert _rehearse(ev, "--kill-primary").returncode == 2                 # no drill runs
    # an event's referee, her badge printed (issue 45, item 12): valid in the drill, before and after the takeover
    assert subprocess.run([TT, "referees", str(ev), "add", "Anna", "--public-url", "http://192.168.1.10:8765"],
                          capture_output=True).returncode == 0
    token = json.loads((ev / "referees.json").read_text())["referees"][0]["token"]
    drill = subprocess.Popen([TT, "rehearse", str(ev), "--standby", "--port", str(free_port()),
                              "--web-listen", "127.0.0.1:0"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True)
    out = Output(drill.stdout)
    try:
        out.wait_for(lambda ln: ln.startswith("drill: the hub laptop (pid"), "the drill's help", timeout=90)
        out.wait_for(lambda ln: ln.startswith("primary: board D1 online"), "the board on the primary")
        subprocess.run([TT, "act", str(ev / "rehearsal"), "round_start"], check=True, capture_output=True)
        out.wait_for(lambda ln: ln.startswith("primary: press 1 (boot 1 seq") or "primary: operator round_start" in ln,
                     "the round started")
        assert press(ev, "D1", "1").returncode == 0
        out.wait_for(lambda ln: ln.startswith("primary: press 1 (boot 1 seq 1)"), "the first call on the primary")
        assert _rehearse(ev, "--takeover").returncode == 0                   # refused: the primary lives
        out.wait_for(lambda ln: "the primary still runs: kill it first" in ln, "the refusal")
        assert _rehearse(ev, "--kill-primary").returncode == 0
        out.wait_for(lambda ln: ln.startswith("standby: PRIMARY SILENT"), "the standby's alert", timeout=60)
        assert press(ev, "D1", "2").returncode == 0                         # journaled: no hub
        assert _rehearse(ev, "--takeover").returncode == 0
        out.wait_for(lambda ln: ln.startswith("new hub: takeover: this laptop is the hub now (term 2"), "the takeover",
                     timeout=60)
        out.wait_for(lambda ln: ln.startswith("new hub: press 2 (boot 1 seq 2)"), "the second call on the new hub",
                     timeout=60)
        url = [ln.split("tabletimer console ")[1].split()[0] for ln in out.lines if "tabletimer console http" in ln][0]
        assert signin_status(url, token) == 303                  # the event's badge signs a phone in to the new hub
        assert signin_status(url, "not-a-badge") == 401
    finally:
        drill.terminate()
        drill.wait(60)
    out.wait_for(lambda ln: ln.startswith("drill over"), "the drill's end")
    assert any(ln.startswith("drill over: the boards made 2 press(es); the new hub's log has 2") for ln in out.lines), \
        out.lines[-20:]
    urls = [ln.split("tabletimer console ")[1].split()[0] for ln in out.lines if "tabletimer console http" in ln]
    assert len(urls) == 2 and urls[0] == urls[1], urls             # the new hub's pages where the old ones were
    store = EventStore(ev / "rehearsal-standby" / "events.sqlite")
    try:
        calls = [(e["payload"]["boot"], e["payload"]["seq"]) for e in store.events() if e["type"] == "press"]
    finally:
        store.close()
    assert sorted(calls) == [(1, 1), (1, 2)]
    assert not (ev / "events.sqlite").exists()                              # the event's own log untouched

    # issue 45, item 6: a rehearsal after the drill, --fresh or not, is not fenced by the drill's term 2
    for fresh in ([], ["--fresh"]):
        again = subprocess.Popen([TT, "rehearse", str(ev), *fresh, "--port", str(free_port()), "--console-listen",
                                  "off", "--web-listen", "off"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                 text=True)
        said = Output(again.stdout)
        try:
            said.wait_for(lambda ln: ln.startswith("board D1 online"), f"the board online ({fresh or 'kept'})")
            assert not any("FENCED" in ln for ln in said.lines), said.lines
        finally:
            again.terminate()
            again.wait(30)
        assert again.returncode == 0, said.lines[-20:]

