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
from tabletimer.hub.protocol.hub_protocol import identify
from tabletimer.hub.protocol.hub_secret import TermProofs
from tabletimer.hub.core.hub_state import Outgoing
from tabletimer.hub.event.time.clock import HubClock
from tabletimer.hub.event.log.store import EventStore
from tabletimer.shared import protocol as P
from tabletimer.hub.fleet.simulator import SimBoard


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
        hub.state.terms.term = 2
        hub.act("identify", {"board": "K1"})
        hub.state.publish(hub.schedules(force=True))
        sim.wait_for(lambda r: "sched" in r, timeout=30, start=mark)
        synced(sim)                                       # its sync replies (term 2) are taken
        assert rejected(sim, mark) == []
        # an old primary's command (term 1): refused
        mark = len(sim.records)
        hub.state.terms.term = 1
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
        store.append("hub", "takeover", {"term": 2, "hash": hub.state.terms.proofs.proof(2)}, HubClock().now_ms())
        store.close()
        assert rig.start_hub().term == 2
        again.wait_for(lambda r: "acked" in r, timeout=30, start=mark)
    finally:
        rig.close()


def test_a_higher_term_without_a_hubs_proof_is_refused_and_the_real_hub_still_followed(tmp_path, embedded_broker):
    """Issue 44, item 3: a command of a higher term signed with the board's
    key (anyone who read its config.json) was taken, and every command of
    the real hub refused from then on as an old hub's, its acks too.  A
    board takes a higher term only with its proof, which hashes down to the
    proof of the term it holds (its schedule's): term 999 without one, and
    term 2 with a proof of another secret, are refused; the real hub's acks
    are taken; the real takeover's proof is taken."""
    rig = Rig(tmp_path, embedded_broker)
    try:
        hub = rig.start_hub()
        hub.start_round()
        sim = rig.board("K2", stations=2)
        boot = sim.wait_for(lambda r: "booted" in r)["booted"]
        sim.wait_for(lambda r: "sched" in r, timeout=30)
        synced(sim)
        topic = P.board_topic("K2", P.CMD)
        mark = len(sim.records)
        forged = [(999, None), (2, TermProofs(bytes(32), hub.event_id).proof(2)), (3, hub.state.terms.proofs.proof(1))]
        for term, tp in forged:
            # for the board's boot, as a key holder would send it (a command of another boot is
            # refused before its term is read)
            msg = P.stamp(identify(hub.clock.now_ms() + 10_000), hub.commands.next_ctr(), *hub.state.boots["K2"])
            msg.update({"term": term} if tp is None else {"term": term, "hash": tp})
            hub.state.publish([Outgoing(topic, hub.keys.signer("K2").sign(topic, P.encode(msg)), 1, False)])
        sim.wait_for(lambda r: "term 3 without a hub's proof" in str(r.get("log", "")), timeout=30, start=mark)
        assert len([r for r in rejected(sim, mark) if "without a hub's proof" in r]) == 3, rejected(sim, mark)
        sim.press(1)
        sim.wait_for(lambda r: r.get("acked") == [boot, 1], timeout=30, start=mark)   # the real hub: followed
        assert not [r for r in rejected(sim, mark) if "an old hub's" in r]
        # the real takeover (the secret's term 2) is taken: its commands, its acks
        mark = len(sim.records)
        hub.state.terms.term = 2
        hub.act("identify", {"board": "K2"})
        sim.press(2)
        sim.wait_for(lambda r: r.get("acked") == [boot, 2], timeout=30, start=mark)
        assert rejected(sim, mark) == []
    finally:
        rig.close()
