"""The signal skew: when the boards' buzzers start a scheduled signal.  What
a board played and its clock error then (played_signal), the wake-up
lateness of one board on an idle machine (bench_signal_lateness), and the
two combined into the skew the hall hears (report_hall_skew); the press
benchmark (presses.bench_press) measures the hall's boards at one signal."""

from __future__ import annotations

import statistics
from pathlib import Path

from tabletimer.tools.bench.broker_client import paho_client
from tabletimer.tools.bench.hall_rig import Hall
from tabletimer.tools.bench.report import Report, now_ms, pct, spread
from tabletimer.hub.fleet.simulator import SimBoard


def played_signal(sim: SimBoard, name: str, start: int, timeout: float) -> tuple[int, int, int] | None:
    """The first scheduled signal `name` the board played after record
    `start`: (true instant its buzzer started, host ms; its clock error then,
    ms; its lateness, ms), or None if it did not play it in time.

    The board's signal line says when the signal was due on its synchronised
    clock ("at", hub ms) and how many ms of its own clock later it started
    the buzzer ("delay"); the simulated hardware's buzz line just before it
    says the true instant ("true").  So at the buzzer's start the board's
    clock read at + delay, and its clock error (its estimate of hub time
    minus the true hub time, host ms here) is at + delay - true; the
    lateness is delay, and played - scheduled = lateness - clock error.
    Whole ms each (ticks and host ms): +-1 ms of rounding."""
    try:
        sig = sim.wait_for(lambda r: r.get("signal") == name, start=start, timeout=timeout)
    except TimeoutError:
        return None
    i = sim.records.index(sig)
    buzz = next((r for r in reversed(sim.records[:i + 1]) if r.get("sim") == "buzz" and r["freq"] > 0), None)
    if buzz is None:
        return None
    return buzz["true"], sig["at"] + sig["delay"] - buzz["true"], sig["delay"]


ROTATE_GAP_MS = 1537      # the idle board's rotations: the pattern lasts 1.3 s; off the
                          # board's own periods (250 ms, 1 s, 30 s), so their phase sweeps


def bench_signal_lateness(port: int, root: Path, report: Report, count: int = 60) -> list[float]:
    """One board, synced, with nothing else heavy on the machine (the hub
    and the broker idle): `count` relay rotations ROTATE_GAP_MS apart, sent
    to it directly as a schedule signed with its key (as the hub signs one;
    an id above any of the hub's; rotations: a schedule of 60 separate
    signals would not fit the board's MQTT packet limit).  Returns its
    wake-up lateness per signal: from the instant its own synchronised clock
    said to play to the buzzer's start (played_signal)."""
    from tabletimer.shared import protocol as P
    from tabletimer.shared.auth import Signer
    from tabletimer.hub.protocol.hub_protocol import schedule
    hall = Hall(root / "lateness", port, 1, seed=17)
    try:
        hall.start_hub()
        hall.start_boards()
        hall.wait_synced()
        (sim,) = hall.boards
        first = int(now_ms()) + 2000
        plan = [first + k * ROTATE_GAP_MS for k in range(count)]
        msg = schedule(10 ** 9, first, plan[-1] + 1, [], rot=[first, ROTATE_GAP_MS, plan[-1] + 1])
        P.stamp(msg, 1)
        topic = P.board_topic(sim.board_id, P.SCHED)
        mark = len(sim.records)
        c = paho_client("bench-lateness")
        c.connect("127.0.0.1", port)
        c.loop_start()
        try:
            signed = Signer(hall.keys.key(sim.board_id) or "").sign(topic, P.encode(msg))
            c.publish(topic, signed, 1).wait_for_publish(10)
        finally:
            c.loop_stop()
            c.disconnect()
        sim.wait_for(lambda r: r.get("sched") == 10 ** 9, start=mark)
        late, errors, skew, missed = [], [], [], 0
        for at in plan:
            try:
                rec = sim.wait_for(lambda r: r.get("signal") == "rotate" and r["at"] == at, start=mark,
                                   timeout=max(0.0, at - now_ms()) / 1000 + 10)
            except TimeoutError:
                missed += 1
                continue
            mark = sim.records.index(rec)
            got = played_signal(sim, "rotate", mark, timeout=1)
            assert got is not None
            late.append(got[2])
            errors.append(got[1])
            skew.append(got[0] - at)
        report.add(f"signal wake-up lateness, 1 board on an idle machine, {count} signals", spread(late),
                   f"the board's clock from its synchronised instant to the buzzer's start; {missed} not played")
        report.add("that board's clock error at its signals", spread([abs(e) for e in errors]),
                   f"|estimate - true hub time|; mean {statistics.fmean(errors):+.2f} ms")
        report.add("that board's played - scheduled", spread(skew), f"mean {statistics.fmean(skew):+.2f} ms")
        return late
    finally:
        hall.close()


def report_hall_skew(report: Report, n: int, errors: list[int], lateness: list[float]) -> None:
    """The signal skew the hall hears: each of the n boards' clock errors
    (measured in the 300-process run, where the processes' own lateness
    cancels out of it) combined with the wake-up lateness of one board on
    an idle core (bench_signal_lateness): every error with every lateness
    sample, played - scheduled = lateness - error, n x len(lateness) values."""
    report.add(f"signal clock error, {n} boards", spread([abs(e) for e in errors]),
               f"|estimate - true hub time| at the signal; mean {statistics.fmean(errors):+.2f} ms")
    if not lateness:
        report.add(f"signal skew as the hall hears it, {n} boards", "not measured", "no lateness measured")
        return
    skew = [lt - e for e in errors for lt in lateness]
    report.add(f"signal skew as the hall hears it, {n} boards", spread([abs(v) for v in skew]),
               f"|clock error + idle lateness|, {len(errors)} x {len(lateness)} combinations; "
               f"signed p1 {pct(skew, 1):+.1f} p99 {pct(skew, 99):+.1f} ms")
