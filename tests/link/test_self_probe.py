"""The hub's probe of its own path through the broker (self_probe.py): pure,
times given as numbers."""

from __future__ import annotations

import json

from tabletimer.hub.protocol import hub_protocol as H
from tabletimer.hub.link.self_probe import SelfProbe
from tabletimer.hub.rules.timetext import fmt_clock
from tabletimer.shared.auth import Signer

T0 = 1_796_000_000_000
KEY = bytes(range(32))


def probe(**kw) -> SelfProbe:
    p = SelfProbe(interval_ms=2000, key=KEY, run="r1", **kw)
    p.connected(T0)
    return p


def run(p: SelfProbe, start: int, end: int, echo: bool = True, step: int = 500) -> list:
    """Ticks from start to end (ms); each probe made comes back at once if
    echo.  Returns the ticks that did something."""
    done = []
    for t in range(start, end, step):
        tick = p.tick(t)
        if tick.probe is not None and echo:
            p.received(tick.probe, t + 5)
        if tick.probe is not None or tick.reconnect or tick.note:
            done.append((t, tick))
    return done


def test_probes_go_out_every_interval_signed_and_coming_back_keep_the_path_alive():
    p = probe()
    done = run(p, T0, T0 + 60_000)
    assert [t - T0 for t, _ in done[:3]] == [0, 2000, 4000]
    assert len(done) == 30 and p.heard == 30 and p.reconnects == 0
    assert all(not tick.reconnect and tick.note is None for _, tick in done)
    assert p.alert(T0 + 60_000) is None
    body = Signer(KEY).open(H.PROBE, done[0][1].probe)       # the hub's own signature, on its topic
    assert json.loads(body) == {"v": 1, "type": "probe", "run": "r1", "n": 1}
    assert H.PROBE == "tt/v1/hub/probe"


def test_a_probe_that_does_not_come_back_alerts_and_reconnects_until_one_does():
    p = probe()
    run(p, T0, T0 + 4001)                         # probes 1..3 back, the last at T0+4005
    done = run(p, T0 + 4500, T0 + 20_000, echo=False)
    (t, tick), = [d for d in done if d[1].reconnect]
    assert t == T0 + 4005 + 6000 + 495            # the first tick 6 s (3 intervals) after the last one back
    assert tick.probe is None
    assert tick.note.startswith("the hub has not heard its own probe through the broker for 6 s (since "
                                f"{fmt_clock(T0 + 4005)}): it reconnects")
    alert = p.alert(T0 + 30_000)
    assert alert == (f"the hub has not heard its own probe through the broker for 25 s (since "
                     f"{fmt_clock(T0 + 4005)}): it reconnects; if this repeats, another client may be "
                     f"using the hub's login or client id")
    # the adapter dropped the connection; paho connects again
    p.disconnected()
    assert run(p, T0 + 20_000, T0 + 22_000) == []          # nothing while disconnected
    p.connected(T0 + 22_000)
    tick = p.tick(T0 + 22_000)
    assert tick.probe is not None and not tick.reconnect
    assert p.alert(T0 + 22_010) is not None                 # until a probe is back
    assert p.received(tick.probe, T0 + 22_010) == \
        f"the hub hears itself again through the broker (it had not since {fmt_clock(T0 + 4005)})"
    assert p.alert(T0 + 22_020) is None
    assert run(p, T0 + 22_500, T0 + 60_000)[-1][1].reconnect is False


def test_reconnects_that_do_not_help_back_off():
    p = probe()
    reconnects = []
    t = T0
    while t < T0 + 200_000:
        tick = p.tick(t)
        if tick.reconnect:
            reconnects.append(t)
            p.disconnected()
            t += 1000
            p.connected(t)              # connected again, still deaf
        t += 100
    gaps = [b - a for a, b in zip(reconnects, reconnects[1:])]
    # 6 s after connecting, then 12, 24, and 48 s at most (plus the reconnection's second)
    assert [round(g, -2) for g in gaps[:4]] == [13_000, 25_000, 49_000, 49_000], gaps
    assert p.reconnects == len(reconnects)


def test_only_this_runs_recent_probes_count():
    p = probe(deadline_ms=10**9)
    other = SelfProbe(key=bytes(32), run="r1")           # another hub: another key
    other.connected(T0)
    foreign = other.tick(T0).probe
    assert p.received(foreign, T0).startswith("a message on tt/v1/hub/probe that is not this hub's probe")
    assert p.received(foreign, T0) is None               # said once
    same_key_other_run = SelfProbe(key=KEY, run="r2")
    same_key_other_run.connected(T0)
    for bad in (b"", b"{}", b"x" * 2000, same_key_other_run.tick(T0).probe,
                Signer(KEY).sign(H.PROBE, b'{"v":1,"type":"probe","run":"r1","n":"1"}'),
                Signer(KEY).sign("tt/v1/hub/status", b'{"v":1,"type":"probe","run":"r1","n":1}')):
        p.received(bad, T0)
    assert (p.heard, p.rejected, p.stale) == (0, 7, 1)       # n not a number: stale
    sent = [p.tick(T0 + i * 2000).probe for i in range(10)]
    p.received(sent[2], T0 + 20_000)               # number 3 of 10: too old
    assert (p.heard, p.stale) == (0, 2)
    p.received(sent[5], T0 + 20_000)               # number 6: within the slack
    assert p.heard == 1
    future = Signer(KEY).sign(H.PROBE, b'{"v":1,"type":"probe","run":"r1","n":11}')
    p.received(future, T0 + 20_000)                # never sent
    assert (p.heard, p.stale) == (1, 3)


def test_a_hub_busy_with_the_boards_messages_is_not_deaf():
    """A probe queued behind a burst of board messages comes late, not
    never: while they keep being delivered, or one is being handled, no
    reconnect."""
    p = probe()
    for t in range(T0, T0 + 30_000, 500):
        p.delivered(t, busy=True)
        p.delivered(t + 400, busy=False)
        assert not p.tick(t + 450).reconnect
    p.delivered(T0 + 30_000, busy=True)           # one message handled for long (the lock held)
    assert not p.tick(T0 + 50_000).reconnect
    p.delivered(T0 + 50_000, busy=False)
    assert not p.tick(T0 + 55_000).reconnect
    assert p.tick(T0 + 56_000).reconnect


def test_a_hub_not_connected_to_the_broker_is_an_alert_until_it_is_back():
    """No probe goes out while the hub is not connected (paho connects again
    by itself); the desk must see it all the same: the boards' presses wait
    in their flash meanwhile."""
    p = probe()
    p.disconnected(10_000)
    assert p.alert(10_000 + p.deadline_ms - 1) is None             # a blip
    text = p.alert(10_000 + p.deadline_ms + 4_000)
    assert text and text.startswith("the hub is NOT CONNECTED to the broker since ") and "(10 s)" in text
    assert p.tick(20_000).probe is None
    p.disconnected(21_000)                     # paho's next attempt failed too: down since the first
    assert "(14 s)" in p.alert(24_000)
    p.connected(40_000)
    assert p.alert(40_000) is None
