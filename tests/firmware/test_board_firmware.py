"""The board firmware on the competition floor: gestures, scheduled signals,
authenticity, clock wrap -- real micropython processes with the simulated
hardware, the embedded broker and the real hub."""

from __future__ import annotations

import threading

import paho.mqtt.client as mqtt
import pytest

from rig import TICK_MS, ready, synced, within_stated_error
from tabletimer.hub.core.changes import MessageRejected
from tabletimer.hub.protocol import hub_protocol as H
from tabletimer.hub.protocol.hub_protocol import press, schedule
from tabletimer.hub.event.time.clock import HubClock
from tabletimer.shared import protocol as P
from tabletimer.shared.auth import Signer
from tabletimer.tools.bench.signal_skew import played_signal

FAST = {"debounce_ms": 30, "confirm_ms": 600, "void_ms": 1500}
PERIOD = 1 << 30


def then(sim, command, pred, timeout=10.0):
    """Send one gesture (ending released) and wait until the board has seen
    the release settle and the expected effect happened."""
    start = len(sim.records)
    sim.command(command)
    station = int(command.split()[1])
    sim.wait_for(lambda r: r.get("input") == [station, 0], timeout=timeout, start=start)
    return sim.wait_for(pred, timeout=timeout, start=start)


def journaled_as(seq, type_):
    return lambda r: r.get("journaled", [0, 0])[1] == seq and r["type"] == type_


def buzz(freq):
    return lambda r: r.get("sim") == "buzz" and r["freq"] == freq


def test_gestures_with_bounce_noise(rig):
    hub = rig.start_hub()
    hub.start_round()
    sim = rig.board("g1", stations=2, timings=dict(FAST, quiet_ms=1))
    ready(sim)
    # station 1: a bouncy press (closing and opening contacts), held 200 ms
    first = len(sim.records)
    then(sim, "edges 1 0:1 3:0 5:1 9:0 12:1 200:0 203:1 206:0", journaled_as(1, "press"))
    true_ms = sim.wait_for(lambda r: r.get("sim") == "press", start=first)["true"]  # the first edge
    sim.wait_for(lambda r: r.get("acked") == [1, 1], start=first)    # the hub has the call: counts count
    # station 2: a 2 ms glitch, which must come to nothing
    sim.command("edges 2 0:1 2:0")
    # the referee at station 1: two counted missing pieces, then a confirming hold
    then(sim, "press 1 100", buzz(1800))
    then(sim, "press 1 100", buzz(1800))
    held = len(sim.records)
    then(sim, "press 1 900", journaled_as(4, "confirm"))
    # the hold says what its release records: the armed tick, then a blip per missing piece
    sim.wait_for(buzz(1500), start=held)                       # the confirmed sound's first tone
    tones = [r["freq"] for r in sim.records[held:] if r.get("sim") == "buzz" and r["freq"]]
    tones = [f for f in tones[tones.index(3000):] if f != 2500]     # (the counts' acks: 2500)
    assert tones[:4] == [3000, 1800, 1800, 1500], tones
    # station 2: a call, then the referee voids it
    then(sim, "press 2 80", journaled_as(5, "press"))
    then(sim, "press 2 1800", journaled_as(6, "void"))
    # each count told to the hub (the phone shows it): a stray at the call with the count so far
    assert [(r["journaled"][1], r["type"]) for r in sim.records if "journaled" in r] == [
        (1, "press"), (2, "stray"), (3, "stray"), (4, "confirm"), (5, "press"), (6, "void")]
    conf = rig.wait_event(lambda ev: ev["type"] == "confirm")
    counts = [ev["payload"] for ev in hub.store.events() if ev["type"] == "stray"]
    assert [(p["state"], p["missing"]) for p in counts] == [("called", 1), ("called", 2)]
    # the station hears back what was recorded: provisional, then confirmed
    sim.wait_for(lambda r: r.get("recorded", [0])[0] == 1 and r["recorded"][2] is False)
    sim.wait_for(lambda r: r.get("recorded", [0])[0] == 1 and r["recorded"][2] is True)
    assert conf["payload"]["call"] == [1, 1] and conf["payload"]["missing"] == 2
    rig.wait_event(lambda ev: ev["type"] == "void")
    st = {s.entrant: s for s in hub.standings()}
    assert st["g1/1"].status == "finished" and not st["g1/1"].provisional
    assert st["g1/1"].penalty_ms == 20_000           # 2 missing pieces, 10 s each
    assert within_stated_error(rig.press_event("g1", 1), true_ms)
    assert st["g1/2"].status == "running"            # voided: still competing
    sounds = [r["freq"] for r in sim.records if r.get("sim") == "buzz" and r["freq"]]
    assert 1800 in sounds and 3000 in sounds and 800 in sounds   # count, confirm/void armed


def test_press_outside_the_round_is_reported_as_stray(rig):
    hub = rig.start_hub()                             # no round started
    sim = rig.board("g2")
    sim.wait_for(lambda r: "sync" in r)
    sim.press(1)
    ev = rig.wait_event(lambda ev: ev["type"] == "stray")
    assert ev["payload"]["state"] == "idle"
    assert [s.status for s in hub.standings()] == ["waiting"]   # no round: nobody started


def test_signals_fire_on_the_synchronised_clock_while_the_broker_is_down(rig):
    hub = rig.start_hub()
    hub.start_round()
    sim = rig.board("s1", clock_offset_ms=-2 * 3_600_000, drift_ppm=50)
    ready(sim)
    synced(sim, 6)                                    # the whole burst after connecting
    t = hub.clock.now_ms() + 2500
    plan = [[t, "start"], [t + 1500, "rotate"], [t + 3000, "warn"], [t + 4500, "time_up"]]
    hub.state.publish([hub.commands.to_board("s1", P.SCHED, schedule(10 ** 9, t, t + 4500, plan), 1, True)])
    got = sim.records.index(sim.wait_for(lambda r: r.get("sched") == 10 ** 9))
    rig.broker.stop()                                 # the hall's WiFi dies
    for at, name in plan:
        rec = sim.wait_for(lambda r: r.get("signal") == name, timeout=15, start=got)
        i = sim.records.index(rec)
        # the buzzer starts just before the board reports the signal
        buzz = [r for r in sim.records[:i] if r.get("sim") == "buzz" and r["freq"] > 0][-1]
        assert rec["at"] == at
        # on the synchronised clock: the true instant less the board's own
        # lateness (its process woken late on a busy test machine, which it
        # measures and reports; an ESP32 has its core to itself) is the
        # scheduled instant within the error the board states for its clock
        # (half its best sync round trip: a loaded machine lengthens it)
        assert 0 <= rec["delay"] < 1000 and 1 <= rec["err"] < 1000, rec
        assert abs(buzz["true"] - rec["delay"] - at) <= rec["err"] + TICK_MS, (
            name, buzz["true"] - at, rec["delay"], rec["err"])


class AheadClock(HubClock):
    """The hub's clock ahead of this machine's (the true clock) by ahead_ms."""

    def __init__(self, ahead_ms: int) -> None:
        super().__init__()
        self.ahead_ms = ahead_ms

    def now_ms(self) -> int:
        return super().now_ms() + self.ahead_ms


@pytest.mark.parametrize("ahead_ms", [0, 400])
def test_signal_skew_parts_measure_the_known_clocks(rig, ahead_ms):
    """The signal skew's two parts as `tabletimer bench --only skew` takes
    them (played_signal): a board whose own clock is hours off and drifting,
    synced to a hub whose clock is ahead_ms ahead of the true one, plays
    scheduled signals; the clock error it is measured with is what its
    synchronised clock is known to be off by (ahead_ms, within the error the
    board states plus rounding), its lateness is what the board says, and
    the true start is near the hub's instant (generous bounds: this is not
    the speed target, which the benchmark reports)."""
    hub = rig.start_hub(clock=AheadClock(ahead_ms))
    sim = rig.board("k1", clock_offset_ms=-3 * 3_600_000 + 777, drift_ppm=-40)
    synced(sim, 6)
    t = hub.clock.now_ms() + 2000
    plan = [[t + 1200 * k, "start"] for k in range(4)]
    hub.state.publish([hub.commands.to_board("k1", P.SCHED, schedule(10 ** 9, t, plan[-1][0], plan), 1, True)])
    mark = sim.records.index(sim.wait_for(lambda r: r.get("sched") == 10 ** 9))
    played = 0
    for at, name in plan:
        # played, or skipped as more than LATE_MS late (said: a board woken 168 ms late on a
        # saturated test machine skips it, as it should; 2026-12-06)
        rec = sim.wait_for(lambda r: r.get("at") == at and name in (r.get("signal"), r.get("late")),
                           timeout=15, start=mark)
        mark = sim.records.index(rec)
        if "late" in rec:
            assert rec["delay"] > 150, rec
            continue
        played += 1
        true, error, late = played_signal(sim, name, mark, timeout=1)
        assert 1 <= rec["err"] < 1000, rec
        assert abs(error - ahead_ms) <= rec["err"] + TICK_MS, (error, rec)
        # woken late on a busy test machine, said, not hidden; a generous bound
        assert late == rec["delay"] and 0 <= late < 500, rec
        # the hub's instant `at` is at - ahead_ms on the true clock
        assert abs(true - (at - ahead_ms)) < 500 + rec["err"] + TICK_MS, (true, at, rec)
    assert played >= 2, "fewer than 2 of the 4 signals played on time"


def test_forged_and_replayed_messages_are_rejected(rig):
    hub = rig.start_hub()
    hub.start_round()
    sim = rig.board("a1")
    ready(sim)
    captured: list[bytes] = []
    got = threading.Event()
    spy = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2)
    evt = P.board_topic("a1", P.EVENT)
    delivered: list[str] = []

    def on_message(c, u, m) -> None:
        delivered.append(m.topic)
        captured.append(m.payload)
        got.set()
    spy.on_message = on_message
    spy.connect(rig.broker.host, rig.broker.port)
    spy.loop_start()
    rejected: list[str] = []
    two = threading.Event()
    hub.changes.subscribe(MessageRejected, lambda n: (rejected.append(n.category), len(rejected) >= 2 and two.set()))
    try:
        sub_ok = threading.Event()
        spy.on_subscribe = lambda *a: sub_ok.set()
        spy.subscribe(evt, 1)
        assert sub_ok.wait(5)
        sim.press(1)
        sim.wait_for(lambda r: r.get("acked") == [1, 1])
        assert got.wait(5)
        assert delivered == [evt], delivered        # the broker hands out only what was subscribed
        topic = P.board_topic("a1", P.EVENT)
        spy.publish(topic, captured[0], qos=1).wait_for_publish(5)          # replay
        forged = P.stamp(press(1, 2, 1, hub.clock.now_ms()), 10 ** 6, 99)
        spy.publish(topic, Signer("ab" * 32).sign(topic, P.encode(forged)), qos=1).wait_for_publish(5)
        assert two.wait(10), rejected
    finally:
        spy.loop_stop()
        spy.disconnect()
    assert sorted(rejected) == ["forged", "replayed"]
    assert len([e for e in hub.store.events() if e["type"] == "press"]) == 1
    assert [s.entrant for s in hub.standings() if s.status == "finished"] == ["a1/1"]


def test_a_press_is_answered_by_one_ack_and_the_board_follows_what_an_ack_carries(rig):
    """The firmware's birth says "ack": 2: the hub answers its press with
    one command, the ack with the recorded time and the stations' state in
    it; the board reports the time and follows the state an ack carries,
    also in an ack that retires none of its entries (a copy's)."""
    hub = rig.start_hub()
    hub.start_round()
    sim = rig.board("c1", stations=2, timings=FAST)
    ready(sim)
    assert hub.registry.get("c1").answers_in_ack
    cmd = P.board_topic("c1", P.CMD)
    signer = Signer(rig.keys.key("c1"))
    bodies: list[dict] = []
    identified = threading.Event()
    spy = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2)

    def on_message(c, u, m) -> None:
        bodies.append(P.decode(signer.open(m.topic, m.payload)))
        if bodies[-1]["type"] == P.T_IDENTIFY:
            identified.set()
    spy.on_message = on_message
    subscribed = threading.Event()
    spy.on_subscribe = lambda *a: subscribed.set()
    spy.connect(rig.broker.host, rig.broker.port)
    spy.loop_start()
    try:
        spy.subscribe(cmd, 1)
        assert subscribed.wait(5)
        k = len(sim.records)
        sim.press(1)
        boot, seq = sim.wait_for(lambda r: "acked" in r, start=k)["acked"]
        rec = sim.wait_for(lambda r: "recorded" in r, start=k)["recorded"]
        hub.act("identify", {"board": "c1"})          # a command after the answers: they are all in
        assert identified.wait(5)
    finally:
        spy.loop_stop()
        spy.disconnect()
    (answer,) = [b for b in bodies if b["type"] not in (P.T_IDENTIFY, P.T_SYNC)]   # one command, not three
    assert (answer["type"], answer["boot"], answer["seq"]) == ("ack", boot, seq)
    got = answer["recorded"]
    assert (got["station"], got["call"]) == (1, [boot, seq]) and rec == [1, got["time"], False]
    called, idle = answer["st"]
    assert called[:2] == [2, [boot, seq]] and idle[:2] == [1, None]
    # an ack of no entry of the board's, with the call closed as confirmed in it
    k = len(sim.records)
    st = [[3, [boot, seq], called[2], 1], idle]
    hub.state.publish([hub.commands.to_board("c1", P.CMD, H.ack(boot, seq + 100, None, None, st), 1)])
    sim.wait_for(lambda r: r.get("station") == 1 and r.get("sound") == "confirmed", start=k)


def test_ticks_wrap_around_does_not_corrupt_a_press_time(rig):
    hub = rig.start_hub()
    hub.start_round()
    # the ESP32's ticks_ms wraps every 2**30 ms; this board's wraps 200 ms
    # after it boots: while it connects and syncs (a burst of 6, 100 ms apart)
    sim = rig.board("w1", clock_offset_ms=PERIOD - 200)
    ready(sim)
    synced(sim, 6)
    sim.press(1)
    rec = sim.wait_for(lambda r: r.get("sim") == "press")
    assert rec["ticks"] < 60_000                      # after the wrap
    ev = rig.wait_event(lambda ev: ev["type"] == "press")
    assert within_stated_error(ev, rec["true"])


def test_invalid_configuration_is_signalled_not_guessed(tmp_path, embedded_broker):
    from tabletimer.hub.fleet.simulator import SimBoard

    sim = SimBoard("c1", embedded_broker.host, embedded_broker.port, tmp_path, key="not-a-key")
    sim.start()
    try:
        rec = sim.wait_for(lambda r: "config_error" in r)
        assert "key" in rec["config_error"]
        sim.wait_for(lambda r: r.get("sim") == "buzz" and r["freq"] == 500)   # the error pattern
        sim.wait_for(lambda r: r.get("sim") == "buzz" and r["freq"] == 0)
        assert not any("booted" in r or "sched" in r for r in sim.records)
    finally:
        sim.kill()


def test_a_nervous_second_press_while_the_hub_is_away_is_never_a_missing_piece(rig):
    """Issue 45, item 3, on the real firmware: the competitor calls while
    the hub is away (no ack, no beeps) and presses again, twice.  Those
    presses answer with the call's beep, are stored as repeat calls once the
    hub is back, and the referee's confirm (a hold, after the quiet time)
    records no missing piece: no penalty.  The table page says so."""
    from tabletimer.hub.web.table_view import table_view

    hub = rig.start_hub()
    hub.start_round()
    sim = rig.board("g9", timings=dict(FAST, quiet_ms=800))
    ready(sim)
    rig.stop_hub()                                    # the hub laptop away: nothing acked
    then(sim, "press 1 80", journaled_as(1, "press"))
    for seq in (2, 3):                                # no two beeps back: pressed again
        start = len(sim.records)
        then(sim, "press 1 80", journaled_as(seq, "stray"))
        assert sim.wait_for(lambda r: r.get("sim") == "buzz" and r["freq"] > 0, start=start)["freq"] == 2500
    hub = rig.start_hub()                             # back: the journal comes in, acked
    sim.wait_for(lambda r: r.get("acked") == [1, 3], timeout=20)
    reps = [ev["payload"] for ev in hub.store.events() if ev["type"] == "stray"]
    assert [(p["state"], "missing" in p) for p in reps] == [("called", False), ("called", False)]
    view = table_view(hub.competition, "g9", hub.clock.now_ms())
    assert view["stations"][0]["at_board"] == {"repeats": 2, "missing": 0}
    then(sim, "press 1 900", journaled_as(4, "confirm"))     # the referee's hold
    conf = rig.wait_event(lambda ev: ev["type"] == "confirm")
    assert conf["payload"]["missing"] == 0
    (row,) = [r for r in hub.standings() if r.entrant == "g9/1"]
    assert (row.status, row.penalty_ms) == ("finished", 0)
    assert not [a for a in hub.alerts() if "stray" in a]    # a repeat call is no alert
