"""What an operator, a laptop or a reused board does to a hub at an event
(issue 14): two hubs started on one folder, a laptop clock stepped back
between runs, a log that cannot be written.  The hub runs as organizers run
it (`tabletimer run DIR`, its own process) wherever that is what matters,
against a real broker, with real boards (the firmware in micropython)."""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import subprocess
import time
from pathlib import Path

from hall import TT, Hub, act, replay_json
from rig import HOUR, Rig, ready, synced
from tabletimer.hub.event.folder import event_folder
from tabletimer.hub.broker.broker import free_port
from tabletimer.hub.event.time.clock import HubClock
from tabletimer.hub.protocol.keys import BoardKeys
from tabletimer.hub.link.mqtt_adapter import HubMqtt
from tabletimer.hub.core.service import HubService
from tabletimer.hub.event.log.store import EventStore
from tabletimer.shared import protocol as P
from tabletimer.shared.auth import Signer
from waiting import until


def make_event(tmp: Path, boards: int = 1) -> Path:
    ev = event_folder.init(tmp / "event", "czjpa-individuals")
    (ev / "entrants.csv").write_text("id,name,eligible\n" + "".join(
        f"{b}{s},Puzzler {b}{s},yes\n" for b in range(1, boards + 1) for s in (1, 2)))
    (ev / "stations.csv").write_text("board,button,table,entrant\n" + "".join(
        f"B{b},{s},Table {b},{b}{s}\n" for b in range(1, boards + 1) for s in (1, 2)))
    keys = BoardKeys(ev / "board-keys.json")
    for b in range(1, boards + 1):
        keys.ensure(f"B{b}")
    return ev


# ------------------------------------------------------------ 5: one hub per folder

def test_a_second_hub_on_an_event_folder_is_refused_and_named(tmp_path, embedded_broker):
    ev = make_event(tmp_path)
    port = embedded_broker.port
    hub = Hub(ev, port)
    try:
        second = subprocess.run([TT, "run", str(ev), "--broker", f"mqtt://127.0.0.1:{port}",
                                 "--console-listen", "off", "--duration", "5"],
                                capture_output=True, text=True, timeout=60)
        assert second.returncode == 2, second.stdout + second.stderr
        err = second.stderr
        assert "another hub is already running on" in err and f"pid {hub.pid}" in err, err
        assert f"started {time.strftime('%Y-%m-%d')}" in err and f"kill {hub.pid}" in err, err
        assert "broker:" not in second.stdout          # refused before it touched anything
        # a demo writing into the same log: refused the same way
        demo = subprocess.run([TT, "demo", "--data", str(ev), "--boards", "1", "--duration", "5",
                               "--port", str(free_port()), "--console-listen", "off"],
                              capture_output=True, text=True, timeout=60)
        assert demo.returncode == 2 and f"pid {hub.pid}" in demo.stderr, demo.stdout + demo.stderr
        # what operators do beside a running hub still works, and the hub applies it
        act(ev, "round_start", at=int(time.time() * 1000))
        until(lambda: any(line.startswith("operator round_start") for line in hub.lines),
              "the running hub to apply the action", seen=lambda: hub.lines[-5:])
        assert [r["status"] for r in replay_json(ev)] == ["unfinished", "unfinished"]   # final: time is up
        res = subprocess.run([TT, "results", str(ev), "--json", "-"], capture_output=True, text=True,
                             timeout=60)
        assert res.returncode == 0 and json.loads(res.stdout)["rows"], res.stderr
    finally:
        hub.stop()
    # the lock goes with its process, however it ends (here: SIGKILL)
    hub = Hub(ev, port)
    hub.kill()
    hub = Hub(ev, port)
    assert hub.proc.poll() is None
    hub.stop()


# ------------------------------------------- 6: command counters across restarts

class SteppedClock(HubClock):
    """This machine's clock, stepped by offset_ms (a laptop whose clock was
    set back, or corrected by NTP, between two runs of the hub)."""

    def __init__(self, offset_ms: int) -> None:
        super().__init__()
        self.offset_ms = offset_ms

    def now_ms(self) -> int:
        return super().now_ms() + self.offset_ms


def _ctr(out) -> int:
    return json.loads(out.payload.rsplit(b"\n", 1)[0])["ctr"]


def test_counters_rise_across_a_restart_with_the_clock_an_hour_back(tmp_path, embedded_broker, monkeypatch):
    sent: dict[object, list[int]] = {}               # HubMqtt (one per run) -> counters it published
    real_publish = HubMqtt.publish_all

    def spy(self, out) -> None:
        out = list(out)
        sent.setdefault(self, []).extend(_ctr(o) for o in out)
        real_publish(self, out)
    monkeypatch.setattr(HubMqtt, "publish_all", spy)
    rig = Rig(tmp_path, embedded_broker)
    try:
        svc = rig.start_hub()
        svc.start_round()
        sim = rig.board("B1", stations=2)
        ready(sim)
        boot = sim.wait_for(lambda r: "booted" in r)["booted"]
        sim.press(1)
        sim.wait_for(lambda r: r.get("acked") == [boot, 1])
        first = sent[rig.mqtt]
        rig.stop_hub()
        # the laptop's clock goes back an hour; the hub starts again; the board
        # did not reboot and remembers the highest counter it accepted
        mark = len(sim.records)
        rig.start_hub(clock=SteppedClock(-HOUR))
        second = until(lambda: sent.get(rig.mqtt), "the restarted hub to send its first commands")
        assert min(second) > max(first), (max(first), second[:5])
        synced(sim, 3)                   # its sync replies are accepted: the board takes the samples
        sim.press(2)                     # event seq 2 (the first station awaits its referee)
        sim.wait_for(lambda r: r.get("acked") == [boot, 2], timeout=20, start=mark)
        assert min(sent[rig.mqtt]) > max(first)
        assert not [line for line in sim.stderr_tail if "rejected" in line], sim.stderr_tail
    finally:
        rig.close()


def test_the_desks_actions_beside_the_hub_reserve_no_counters_so_the_hubs_next_block_follows_the_clock(tmp_path):
    """`act` beside a running hub sends nothing (the hub sends as it applies
    the rows), so it numbers nothing: each block of counters it reserved put
    the hub's next block a minute further ahead of the clock, and after five
    or so a board refused every command of the hub (its acks too) as a
    counter jump (the door-to-results e2e, 2026-12-06: 8 acts, the hub's
    next block 478 s ahead, a board's last ack refused)."""
    from tabletimer.hub.core.board_commands import CTR_BLOCK
    from tabletimer.hub.core.changes import ToBoards
    from tabletimer.hub.event.fold.competition import Competition

    ev = make_event(tmp_path, boards=2)
    act(ev, "round_start", at=int(time.time() * 1000) + 60_000)
    for entrant in ("11", "12", "21"):
        act(ev, "check_in", entrant=entrant)
    act(ev, "identify", board="B1")
    loaded = event_folder.load(ev)
    store = EventStore(loaded.db)
    try:
        assert store.reserved("hub_ctr") == 0            # 5 actions: none numbered a command
        # the hub (its MQTT link listening) numbers its commands from the clock on, as without them
        svc = HubService(store, BoardKeys(ev / "board-keys.json"),
                         Competition(loaded.format, loaded.entrants, loaded.stations))
        svc.changes.subscribe(ToBoards, lambda note: None)
        now = int(time.time() * 1000)
        svc.check_writable()
        assert abs(store.reserved("hub_ctr") - (CTR_BLOCK - 1) - now) < 5_000
        first = svc.schedules(force=True)[0]
        assert abs(_ctr(first) - now) < 5_000
    finally:
        store.close()


def test_counters_are_reserved_in_blocks_in_the_log_not_written_per_message(tmp_path, monkeypatch):
    """The counter follows the hub's clock (max(previous + 1, hub ms): a
    board refuses one far ahead of the clock, docs/protocol.md), and is
    reserved in the log a block at a time: a write per block, never per
    message, above every block of any run or process."""
    from tabletimer.hub.core import board_commands

    monkeypatch.setattr(board_commands, "CTR_BLOCK", 50)
    keys = BoardKeys(tmp_path / "board-keys.json")
    key = keys.ensure("B1")
    db = tmp_path / "events.sqlite"

    class Clock(HubClock):
        """This machine's clock, held still, moved by the test (and offset)."""

        def __init__(self, offset_ms: int = 0) -> None:
            super().__init__()
            self.t = super().now_ms() + offset_ms

        def now_ms(self) -> int:
            return self.t

    def reserved() -> int:
        other = EventStore(db)                   # what another process sees in the log
        try:
            return other.reserved("hub_ctr")
        finally:
            other.close()

    def sync_replies(svc, n: int, ctr0: int) -> list[int]:
        """n clock-sync requests from board B1: the counters of the replies."""
        topic = P.board_topic("B1", P.SYNC)
        out = []
        for i in range(n):
            msg = P.stamp(P.sync_request(ctr0 + i, ctr0 + i), ctr0 + i, 1)
            (o,) = svc.handle(topic, Signer(key).sign(topic, P.encode(msg)), svc.clock.now_ms())
            out.append(_ctr(o))
        return out

    store = EventStore(db)
    clock = Clock()
    svc = HubService(store, keys, Rig.competition(), clock)
    started = clock.t
    a = sync_replies(svc, 30, 1)
    assert a == list(range(a[0], a[0] + 30)) and a[0] > started    # the clock a floor, for a new log
    assert reserved() == a[0] + 49                        # one block, written before its first use
    a += sync_replies(svc, 40, 31)                        # into the second block: one more write
    assert reserved() == a[0] + 99 and a == sorted(set(a))
    clock.t += 10_000                                      # ten seconds on: the counter follows the clock
    (c,) = sync_replies(svc, 1, 71)
    assert clock.t < c <= clock.t + 1 and reserved() == c + 49 and c > a[-1]
    a.append(c)
    # the process dies (no clean close); the clock is an hour back when it starts again
    b_store = EventStore(db)
    b_svc = HubService(b_store, keys, Rig.competition(), Clock(-HOUR))
    b = sync_replies(b_svc, 10, 72)
    assert min(b) > max(a) and reserved() == b[0] + 49
    # a second process on the log (`act` beside the running hub) numbers what
    # it signs from a block of its own, above the hub's; the hub's next block
    # is above that one
    block_end = reserved()
    act_store = EventStore(db)
    assert sync_replies(HubService(act_store, keys, Rig.competition(), Clock(-HOUR)), 1, 500) \
        == [block_end + 1]
    b += sync_replies(b_svc, 45, 82)
    assert b == sorted(set(b)) and b[-1] > block_end + 50
    for s in (store, b_store, act_store):
        s.close()


# ------------------------------------------------- 7: a log that cannot be written

def test_a_log_that_stops_taking_writes_is_an_alert_nothing_is_acked_and_it_recovers(
        tmp_path, embedded_broker, caplog):
    caplog.set_level(logging.INFO)
    rig = Rig(tmp_path, embedded_broker)
    try:
        svc = rig.start_hub()
        svc.start_round()
        sim = rig.board("B1", stations=2)
        ready(sim)
        boot = sim.wait_for(lambda r: "booted" in r)["booted"]
        assert not [a for a in svc.alerts() if "LOG" in a]
        # the log's disk goes read-only (as Linux remounts a failing USB stick)
        rig.store.refuse_writes()
        mark = len(sim.records)
        sim.press(1)
        sim.press(2)
        # the board sends both, and again (its retries): every write fails
        until(lambda: svc.write_failure and svc.write_failure["count"] >= 4,
              "the hub to fail to store the presses and their retries", timeout=20,
              seen=lambda: svc.write_failure)
        assert not [r for r in sim.records[mark:] if "acked" in r]        # nothing acked
        alert = svc.alerts()[0]
        assert alert.startswith("EVENT LOG NOT WRITTEN since ") and "nothing acknowledged meanwhile" in alert
        assert f"cannot write the event log {rig.db}" in alert and "read-only" in alert, alert
        errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
        assert len(errors) == 1 and errors[0].name == "tabletimer.hub.core.service", \
            [r.getMessage()[:100] for r in errors]                         # once per burst, no tracebacks
        assert "Nothing is acknowledged" in errors[0].getMessage()
        # the disk is back: the boards' retries are stored (once) and acked
        rig.store.refuse_writes(False)
        for seq in (1, 2):
            sim.wait_for(lambda r: r.get("acked") == [boot, seq], timeout=30, start=mark)
        assert not [a for a in svc.alerts() if "LOG" in a], svc.alerts()
        presses = [e for e in svc.store.events() if e["board"] == "B1" and e["type"] == "press"]
        assert sorted(e["payload"]["seq"] for e in presses) == [1, 2]
        again = [r.getMessage() for r in caplog.records if "log is written again" in r.getMessage()]
        assert len(again) == 1 and "failed write(s) since" in again[0], again
        assert len([r for r in caplog.records if r.levelno >= logging.ERROR]) == 1
    finally:
        rig.close()


def _write_locked(db: Path) -> sqlite3.Connection:
    """Another program holding the log's write lock (a database browser with
    an unsaved edit): every other writer waits, then fails."""
    c = sqlite3.connect(db, isolation_level=None)
    c.execute("BEGIN IMMEDIATE")
    return c


def _read_only(path: Path) -> bool:
    """Make the file read-only even for root (chattr +i); False if this
    machine cannot."""
    if os.geteuid() != 0:
        path.chmod(0o444)
    else:
        subprocess.run(["chattr", "+i", str(path)], capture_output=True)
    try:
        open(path, "r+b").close()
    except OSError:
        return True
    return False


def _writable(path: Path) -> None:
    if os.geteuid() == 0:
        subprocess.run(["chattr", "-i", str(path)], capture_output=True)
    path.chmod(0o644)


def test_the_hub_does_not_start_on_a_log_it_cannot_write_and_act_says_so(tmp_path, embedded_broker):
    ev = make_event(tmp_path)
    subprocess.run([TT, "act", str(ev), "dns", "entrant=11"], check=True, capture_output=True)
    run = [TT, "run", str(ev), "--broker", f"mqtt://127.0.0.1:{embedded_broker.port}",
           "--console-listen", "off", "--duration", "3"]
    db = ev / "events.sqlite"
    holder = _write_locked(db)
    try:
        for name, cmd in (("run", run), ("act", [TT, "act", str(ev), "dns", "entrant=12"])):
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
            assert p.returncode == 3, (name, p.returncode, p.stdout, p.stderr)
            assert f"error: cannot write the event log {db} (database is locked): another program is " \
                   f"writing to the log" in p.stderr, (name, p.stderr)
            assert "Traceback" not in p.stderr + p.stdout and "broker:" not in p.stdout, p.stderr
            assert ("The hub did not start" if name == "run" else "Nothing was recorded") in p.stderr
    finally:
        holder.rollback()
        holder.close()
    if _read_only(db):                    # (where this machine can make a file read-only)
        try:
            for cmd, said in ((run, "The hub did not start"),
                              ([TT, "act", str(ev), "dns", "entrant=12"], "Nothing was recorded")):
                p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
                assert p.returncode == 3 and said in p.stderr, (p.returncode, p.stdout, p.stderr)
                assert f"cannot write the event log {db} (attempt to write a readonly database): the " \
                       f"file or its folder is read-only" in p.stderr, p.stderr
                assert "Traceback" not in p.stderr and "broker:" not in p.stdout
        finally:
            _writable(db)
    # nothing was stored meanwhile; with the log writable, both work
    assert [r["status"] for r in replay_json(ev)][-1] == "dns"
    stored = subprocess.run([TT, "act", str(ev), "dns", "entrant=12"], capture_output=True, text=True)
    assert stored.returncode == 0 and "recorded #2:" in stored.stdout, stored.stderr
    hub = Hub(ev, embedded_broker.port)
    hub.stop()
