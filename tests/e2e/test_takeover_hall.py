"""Issue 28 at a hall's scale: the hub laptop dies in the middle of a burst of
finish calls and the standby takes over; later the dead laptop comes back.

Two hubs on this machine as on two laptops, each with its Mosquitto child
(`--broker-kind mosquitto`, the same port on 127.0.0.2, the primary, and on
127.0.0.1, the standby); 30 boards of the real firmware flashed with both
addresses (`failover` 5 s).  A seeded round:

1. before the fault: 12 finish calls, the desk confirms some of them (missing
   pieces) and records a DNS; the standby copies it all;
2. a burst: 29 boards call within a second, and half a second into it the
   primary's hub and its Mosquitto are SIGKILLed (the laptop dies); the
   standby says PRIMARY SILENT, `tabletimer takeover` runs on its copy;
3. the round goes on: 15 more calls, the desk confirms burst calls on the
   new hub, which serves the pages on the dead laptop's address: a referee's
   phone signed in on the old hub is signed in on the new one;
4. the old primary is started again and 3 boards are power-cycled: they dial
   it first (their list's first address), it learns from their births that
   another hub took over (a higher term) and stops, FENCED, its broker with
   it; the boards take nothing from it (no clock, no ack, no schedule) and
   go back to the new hub, with the calls they made meanwhile.

Afterwards: every call of every board is in the new hub's log exactly once,
at the instant the board stamped (within the error it stated), and the
standings `tabletimer replay --json` makes of that log are the ones the
ranking engine makes of the same round without the fault (the true
instants, the desk's confirmations and DNS).  The seed: TT_TAKEOVER_SEED.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import json
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from brokers import require_mosquitto
from hall import TT, Hub, act, replay_json, stored_presses
from rig import synced, within_stated_error
from standings_check import compare_standings
from tabletimer.hub.broker.broker import free_port
from tabletimer.hub.protocol.hub_secret import ensure_secret
from tabletimer.hub.protocol.keys import BoardKeys, mqtt_password
from tabletimer.hub.event.folder import event_folder
from tabletimer.hub.event.log.store import EventStore
from tabletimer.hub.rules.standings import Confirm, DidNotStart, Press, RoundStart, rank
from tabletimer.hub.web.referees import RefereeBook, book_path
from tabletimer.hub.fleet.simulator import SimBoard
from waiting import Output, until

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="two loopback addresses (127.0.0.2): Linux has the whole 127/8")

BOARDS = 30
SEED = int(os.environ.get("TT_TAKEOVER_SEED", "2828"))
TOL_MS = 15                 # standings' times against the truth's (the boards state their own bound)


def board_id(n: int) -> str:
    return f"D{n:02d}"


def entrant(board: str, station: int) -> str:
    return str((int(board[1:]) - 1) * 2 + station)


def make_event(tmp: Path) -> tuple[Path, Path, BoardKeys, str]:
    """An individuals round (1 ms resolution: the standings compare times,
    not seconds), 30 boards of two stations, one entrant each, a referee's
    badge; the standby laptop's copy of the folder, made the night before;
    and the badge's token."""
    ev = event_folder.init(tmp / "primary", "czjpa-individuals", "Hall")
    text = (ev / "format.toml").read_text()
    text, n = re.subn(r'^resolution = "[^"]*"', 'resolution = "1ms"', text, flags=re.M)
    assert n == 1
    (ev / "format.toml").write_text(text)
    boards = [board_id(n) for n in range(1, BOARDS + 1)]
    (ev / "entrants.csv").write_text("id,name,eligible\n" + "".join(
        f"{entrant(b, s)},Entrant {entrant(b, s)},yes\n" for b in boards for s in (1, 2)))
    (ev / "stations.csv").write_text("board,button,table,entrant\n" + "".join(
        f"{b},{s},Table {b},{entrant(b, s)}\n" for b in boards for s in (1, 2)))
    keys = BoardKeys(ev / "board-keys.json")
    for b in boards:
        keys.ensure(b)
    assert not event_folder.load(ev).warnings
    token = RefereeBook(book_path(ev)).add("Anna")
    ensure_secret(ev)                              # as `tabletimer init` makes it
    copy = tmp / "standby"
    shutil.copytree(ev, copy)
    return ev, copy, keys, token


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def signed_in(url: str, token: str) -> str:
    """A phone's sign-in with a badge: the cookie the hub sets."""
    try:
        answer = urllib.request.build_opener(NoRedirect).open(f"{url}/signin?token={token}", timeout=10)
    except urllib.error.HTTPError as e:              # the redirect to the calls page, not followed
        answer = e
    cookie = answer.headers.get("Set-Cookie", "")
    assert cookie.startswith("tt_referee="), answer.headers
    return cookie.split(";", 1)[0]


def who(url: str, cookie: str) -> str:
    """Who the hub at url says the phone with that cookie is (/r/api/me)."""
    request = urllib.request.Request(f"{url}/r/api/me", headers={"Cookie": cookie})
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.loads(answer.read())["referee"]


class Call:
    """A finish call as the board made it: its true instant and its key."""

    def __init__(self, sim: SimBoard, station: int) -> None:
        self.board, self.station = sim.board_id, station
        start = len(sim.records)
        sim.press(station)
        self.true_ms = sim.wait_for(lambda r: r.get("sim") == "press" and r["station"] == station,
                                    timeout=30, start=start)["true"]
        j = sim.wait_for(lambda r: "journaled" in r, timeout=30, start=start)
        assert j["type"] == "press", j
        self.boot, self.seq = j["journaled"]
        self.press_id = f"{self.board}/{self.boot}/{self.seq}"


def call_all(sims: list[SimBoard], station: int, within_s: float,
             rng: random.Random) -> tuple[list[Call], list[threading.Thread], list[BaseException]]:
    """Each board calls at its own instant within within_s (a thread each,
    as competitors raise their hands): the calls in the order made (once
    joined()), the threads, what failed in them."""
    offsets = {s.board_id: rng.uniform(0, within_s) for s in sims}
    began = time.monotonic()
    made: list[Call] = []
    lock = threading.Lock()
    failed: list[BaseException] = []

    def one(sim: SimBoard) -> None:
        try:
            time.sleep(max(0.0, began + offsets[sim.board_id] - time.monotonic()))   # the plan's instant
            c = Call(sim, station)
            with lock:
                made.append(c)
        except BaseException as e:          # noqa: BLE001 (said below, in the test's thread)
            failed.append(e)
    threads = [threading.Thread(target=one, args=(s,)) for s in sims]
    for t in threads:
        t.start()
    return made, threads, failed


def joined(threads, failed) -> None:
    for t in threads:
        t.join(60)
    assert not failed, failed[:3]


def kill_laptop(hub: Hub, folder: Path) -> list[int]:
    """The hub laptop dies: SIGKILL for the hub, its Mosquitto and the
    Mosquitto's watchdog (every process that names the folder's broker
    files).  The pids killed."""
    marks = str(folder / "mosquitto")
    victims = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marks in cmd:
            victims.append(int(pid))
    hub.proc.kill()
    for pid in victims:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    hub.proc.wait()
    return victims


def test_a_hall_goes_on_when_the_hub_laptop_dies_in_a_burst_and_the_old_one_comes_back(tmp_path):
    require_mosquitto()
    rng = random.Random(SEED)
    print(f"takeover hall: seed {SEED} (TT_TAKEOVER_SEED)")
    ev, copy, keys, badge = make_event(tmp_path)
    port, web = free_port(), free_port()
    mosquitto = ("--broker-kind", "mosquitto", "--port", str(port))
    primary = Hub(ev, None, *mosquitto, "--listen", "127.0.0.2", web_port=web)
    url = f"http://127.0.0.1:{web}"
    until(lambda: any("tabletimer console http" in ln for ln in primary.lines), "the primary's web server")
    phone = signed_in(url, badge)
    assert who(url, phone) == "Anna"
    standby = took = again = None
    sims: list[SimBoard] = []
    try:
        standby = subprocess.Popen([TT, "standby", str(copy), "--primary", url, "--token-file",
                                    str(ev / "console-token"), *mosquitto, "--web-listen", "off"],
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        follows = Output(standby.stdout)
        follows.wait_for(lambda ln: "(idle: the boards are the primary's)" in ln, "the standby's idle broker")
        for n in range(1, BOARDS + 1):
            b = board_id(n)
            s = SimBoard(b, "127.0.0.2", port, tmp_path / "boards", key=keys.key(b), stations=2,
                         broker_user=b, broker_password=mqtt_password(keys.key(b)))
            s.config["broker"].update(host=["127.0.0.2", "127.0.0.1"], failover=5)
            sims.append(s.start())
        act(ev, "round_start")
        for s in sims:                                   # a hall's boards are on long before the start
            s.wait_for(lambda r: "sched" in r, timeout=60)
            synced(s)
        by_id = {s.board_id: s for s in sims}
        order = [s.board_id for s in sims]
        rng.shuffle(order)
        before, later, reboot = order[:12], order[12:27], order[27:]
        dns = entrant(board_id(BOARDS), 2)

        # 1. before the fault: calls, the desk's confirmations and a DNS, all copied by the standby
        made, threads, failed = call_all([by_id[b] for b in before], 1, 2.0, rng)
        joined(threads, failed)
        calls: list[Call] = list(made)
        until(lambda: len(stored_presses(ev)) == len(calls), "the first calls stored", timeout=30)
        confirmed: dict[str, int] = {}
        for c in rng.sample(calls, 4):
            confirmed[c.press_id] = rng.randint(0, 2)
            act(ev, "confirm", press_id=c.press_id, missing_found=confirmed[c.press_id])
        act(ev, "dns", entrant=dns)
        until(lambda: _types(copy).count("dns") == 1, "the standby's copy of the DNS", timeout=30)

        # 2. the burst, and the laptop dies half a second into it
        made, threads, failed = call_all([s for s in sims if entrant(s.board_id, 2) != dns], 2, 1.0, rng)
        time.sleep(0.5)                                  # the scenario: the fault comes mid-burst
        killed = kill_laptop(primary, ev)
        assert len(killed) >= 2, f"the primary's Mosquitto and its watchdog not found: {killed}"
        joined(threads, failed)
        calls += made
        follows.wait_for(lambda ln: ln.startswith("PRIMARY SILENT"), "the standby's alert", timeout=60)
        standby.terminate()
        standby.wait(30)
        key = lambda e: (e["board"], e["payload"]["boot"], e["payload"]["seq"])     # noqa: E731
        at_primary = {key(e) for e in stored_presses(ev)}
        in_copy = {key(e) for e in stored_presses(copy)}
        took = subprocess.Popen([TT, "takeover", str(copy), "--primary", url, *mosquitto, "--listen", "127.0.0.1",
                                 "--web-listen", f"127.0.0.1:{web}", "--hall-listen", "127.0.0.1:0"],   # the dead one's
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        new = Output(took.stdout)
        new.wait_for(lambda ln: ln.startswith("takeover: this laptop is the hub now (term 2"), "the takeover")
        last_desk = new.wait_for(lambda ln: ln.startswith("the last desk action copied"), "the last desk action")
        assert " dns " in last_desk and f"'entrant': '{dns}'" in last_desk, last_desk
        _wait_presses(copy, len(calls), "every call so far in the new hub's log", sims, new)
        new.wait_for(lambda ln: "tabletimer console http" in ln, "the new hub's web server")
        assert who(url, phone) == "Anna"                 # the phone signed in on the old hub
        # the old primary's address is the new hub's own now: it does not ask itself to stop (issue 44)
        new.wait_for(lambda ln: "is this hub's own now: it is not watched" in ln, "the new hub's watch of it")

        # 3. the round goes on: calls, and the desk confirms burst calls on the new hub
        made, threads, failed = call_all([by_id[b] for b in later], 1, 2.0, rng)
        joined(threads, failed)
        calls += made
        _wait_presses(copy, len(calls), "the later calls", sims, new)
        for c in rng.sample([c for c in calls if c.station == 2], 5):
            confirmed[c.press_id] = rng.randint(0, 2)
            act(copy, "confirm", press_id=c.press_id, missing_found=confirmed[c.press_id])

        # 4. the old laptop comes back; three boards are power-cycled and dial it first
        again = Hub(ev, None, *mosquitto, "--listen", "127.0.0.2")
        cycled = [by_id[b] for b in reboot]
        marks = {}
        for s in cycled:
            s.kill()
            marks[s.board_id] = len(s.records)
            s.start(flash=False)
        for s in cycled:                                 # on the old laptop's broker first
            s.wait_for(lambda r: r.get("log") == "mqtt: connected", timeout=60, start=marks[s.board_id])
        made, threads, failed = call_all(cycled, 1, 0.5, rng)
        joined(threads, failed)
        calls += made
        code = again.proc.wait(60)                       # it stops by itself
        said = again.stop()
        assert code == 4 and "FENCED: board" in said and "has seen hub term 2, this hub's is 1" in said, said[-2000:]
        assert "This hub has stopped, and its broker with it" in said, said[-2000:]
        got = _wait_presses(copy, len(calls), "the calls of the boards that met the old hub", sims, new)
        for s in cycled:                                 # nothing taken from the old hub, then back to the new
            since = s.records[marks[s.board_id]:]
            moved = next((i for i, r in enumerate(since) if r.get("log") == "mqtt: no broker for a while: "
                          "trying 127.0.0.1"), None)
            assert moved is not None, (s.board_id, since[-30:])
            taken = [r for r in since[:moved] if "sim" not in r
                     and {"sync", "acked", "sched", "recorded", "station"} & set(r)]
            assert taken == [], (s.board_id, taken)
            rejected = [r["log"] for r in since[:moved] if "rejected message" in str(r.get("log", ""))]
            # the old hub's commands: of its term, or (named for the board's boot before the
            # power cycle, which is all the old log knows) of another boot, refused before their term
            assert all("an old hub's (term 1, not 2)" in r or re.search(r"for boot \d+ of \w+, this is \d+ of", r)
                       for r in rejected), rejected
        stored = _types(copy)
    finally:
        for s in sims:
            s.stop()
        for p in (took, standby):
            if p is not None and p.poll() is None:
                p.terminate()
                p.wait(30)
        for h in (again, primary):
            if h is not None and h.proc.poll() is None:
                h.kill()

    # every call once, at the instant the board stamped
    keys_stored = [(e["board"], e["payload"]["boot"], e["payload"]["seq"]) for e in got]
    assert len(keys_stored) == len(set(keys_stored)), "a call stored twice"
    truth = {(c.board, c.boot, c.seq): c for c in calls}
    assert set(keys_stored) == set(truth), (sorted(set(truth) - set(keys_stored)), sorted(set(keys_stored) - set(truth)))
    for e in got:
        c = truth[(e["board"], e["payload"]["boot"], e["payload"]["seq"])]
        assert e["payload"]["station"] == c.station
        assert within_stated_error(e, c.true_ms)
    assert stored.count("takeover") == 1 and stored.count("dns") == 1 and stored.count("confirm") == len(confirmed)
    print(f"takeover hall, seed {SEED}: {len(calls)} calls; when the laptop died its log had {len(at_primary)}, "
          f"the standby's copy {len(in_copy)} ({len(at_primary - in_copy)} acknowledged but not copied: they "
          f"came again from the boards' flash); the boards' stated clock errors up to "
          f"{max(e['payload']['err'] for e in got)} ms")
    # the standings: those of the same round without the fault
    loaded = event_folder.load(copy)
    start = next(e for e in _rows(copy) if e["type"] == "round_start")
    facts: list = [RoundStart(at_ms=start["payload"]["at"]), DidNotStart(entrant=dns)]
    for c in calls:
        facts.append(Press(entrant=entrant(c.board, c.station), puzzle=1, at_ms=c.true_ms, press_id=c.press_id))
        if c.press_id in confirmed:
            facts.append(Confirm(press_id=c.press_id, missing_found=confirmed[c.press_id]))
    # a call made on a board not yet synchronised again after its power cycle (phase 4) is stamped
    # as well as the board's clock then allows: its time is held to the error the board stated
    stated = {entrant(e["board"], e["payload"]["station"]): e["payload"]["err"] + 2 for e in got}
    problems = compare_standings(replay_json(copy), rank(loaded.format, loaded.entrants, facts), TOL_MS, stated)
    assert not problems, f"seed {SEED}: the standings differ from the round's without the fault:\n" + "\n".join(problems)


def _rows(folder: Path) -> list[dict]:
    store = EventStore(folder / "events.sqlite")
    try:
        return store.events()
    finally:
        store.close()


def _types(folder: Path) -> list[str]:
    return [e["type"] for e in _rows(folder) if e["source"] in ("operator", "hub")]


def _wait_presses(folder: Path, n: int, what: str, sims: list[SimBoard], new: Output) -> list[dict]:
    """The new hub's presses once there are n (on a timeout: what the
    boards and the new hub said last)."""
    return until(lambda: (lambda p: p if len(p) >= n else None)(stored_presses(folder)), what,
                 timeout=90, seen=lambda: {"stored": len(stored_presses(folder)), "of": n,
                                           "boards": {s.board_id: s.records[-8:] for s in sims[:5]},
                                           "new hub": new.lines[-20:]})
