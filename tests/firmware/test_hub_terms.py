"""Issue 28, item 3: hub terms fence an old primary.  A hub that took over
(`tabletimer takeover`) has a higher term, carried in every command; the
board (the real firmware) takes the higher one (its counters afresh: the
new hub's count from its own clock), keeps it across a reboot (in the
schedule it came with), and refuses a lower term's commands; its birth
says the term it has seen, and a hub of a lower term that hears it fences
itself: it sends nothing more (the board keeps its presses for the hub
that took over)."""

from __future__ import annotations

from rig import Rig, synced
from waiting import until
from tabletimer.hub.event.clock import HubClock
from tabletimer.hub.event.store import EventStore
from tabletimer.shared import protocol as P
from tabletimer.tools.simulator import SimBoard


def rejected(sim: SimBoard, start: int) -> list[str]:
    return [str(r["log"]) for r in sim.records[start:] if "rejected message" in str(r.get("log", ""))]


def test_a_board_takes_a_higher_term_keeps_it_across_a_reboot_and_refuses_the_old_hub(tmp_path, embedded_broker):
    rig = Rig(tmp_path, embedded_broker)
    try:
        hub = rig.start_hub()
        hub.start_round()
        sim = rig.board("K1")
        sim.wait_for(lambda r: "sched" in r, timeout=30)
        synced(sim)
        # the hub that took over: term 2, a new schedule (a row more in its log: a higher id)
        mark = len(sim.records)
        hub.term = 2
        hub.act("identify", {"board": "K1"})
        hub.publish(hub.schedules(force=True))
        sim.wait_for(lambda r: "sched" in r, timeout=30, start=mark)
        synced(sim)                                       # its sync replies (term 2) are taken
        assert rejected(sim, mark) == []
        # an old primary's command (term 1): refused
        mark = len(sim.records)
        hub.term = 1
        hub.act("identify", {"board": "K1"})
        sim.wait_for(lambda r: "an old hub's (term 1, not 2)" in str(r.get("log", "")), timeout=30, start=mark)
        # rebooted, the board still knows term 2 and says so: the term-1 hub fences itself
        sim.stop()
        again = SimBoard("K1", embedded_broker.host, embedded_broker.port, tmp_path, key=rig.keys.ensure("K1"))
        again.start()
        rig.boards.append(again)
        again.wait_for(lambda r: r.get("log") == "mqtt: connected", timeout=30)
        until(lambda: any(e["type"] == P.T_STATUS and e["payload"].get("term") == 2 for e in hub.store.events()),
              "the rebooted board's birth, saying term 2", timeout=30)
        assert hub.fenced and "has seen hub term 2, this hub's is 1" in hub.fenced
        assert any(a.startswith("FENCED: board K1") for a in hub.alerts())
        mark = len(again.records)
        again.press(1)                                     # kept: the fenced hub answers nothing, not even its clock
        again.wait_for(lambda r: "journaled" in r, timeout=30, start=mark)
        assert not any("acked" in r for r in again.records[mark:])
        # the hub that took over (its log: this one's and a takeover of term 2) gets it
        rig.stop_hub()
        store = EventStore(rig.db)
        store.append("hub", "takeover", {"term": 2}, HubClock().now_ms())
        store.close()
        assert rig.start_hub().term == 2
        again.wait_for(lambda r: "acked" in r, timeout=30, start=mark)
    finally:
        rig.close()
