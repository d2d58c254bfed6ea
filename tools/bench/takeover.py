"""The hub laptop dies and the standby takes over (issue 28): N simulated
boards of the real firmware flashed with both hubs' addresses, the primary
(`tabletimer run`, its broker on 127.0.0.2) and a standby (`tabletimer
standby --auto-after S`, its idle broker on 127.0.0.1, the same port), a
round running.  Each board's first station presses (acknowledged by the
primary: the floor, its press -> ack), the primary is SIGKILLed with its
broker, each board's second station presses at once (journaled: no hub),
and the standby takes over
by itself.  Printed, from the kill: the standby's decision, its first ack of
a board, every board's ack (the switch), and the presses missing from, or
twice in, the new log (target 0), and the boards their watchdog reset
(target 0; a board reset boots again, as a chip does, and sends what its
flash holds).  Linux (two loopback addresses).

    .venv/bin/python -m tabletimer.tools.bench.takeover [--boards 30] [--auto-after 10]
    .venv/bin/python -m tabletimer.tools.bench.takeover --boards 4 --pause 20

--pause S: once every board has its second press in flash, the host stands
still for S seconds (a laptop's suspend, a virtual machine's pause):
every process of the run -- this one with the simulator's threads, the
boards, the standby and its broker -- stopped (SIGSTOP) and continued
(SIGCONT) at once by a process of its own (tools/testing/host_pause.py).
The times from the kill include it.  --watchdog-ms: the boards' watchdog
(the firmware's 8000 by default; the suite's test pauses 4 s with 3000).
    .venv/bin/python -m tabletimer.tools.bench.takeover --loadgen 300 [--auto-after 10]

--loadgen N: N boards played by the load generator (tools/loadgen: the
signed protocol, one process, the brokers list and hub terms as the
firmware follows them; no firmware, no flash), both hubs on their default
broker (Mosquitto when installed): each board presses once (the floor,
press -> ack on the primary), the primary is SIGKILLed, each presses again
at once; printed: the standby's decision, and from the kill each board's
ack by the new hub, and the presses missing from, or twice in, its log.

docs/benchmarks.md, "The hub laptop died".
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tabletimer.hub.protocol.hub_secret import ensure_secret
from tabletimer.hub.broker.ports import free_port
from tabletimer.hub.protocol.keys import BoardKeys, mqtt_password
from tabletimer.hub.event.folder import event_folder
from tabletimer.hub.event.log.store import EventStore
from tabletimer.tools.bench.report import Report, now_ms, pct
from tabletimer.hub.fleet.simulator import SimBoard
from tabletimer.tools.testing.host_pause import descendants, stand_still
from tabletimer.tools.testing.hub_process import TT, HubProcess


def _presses(log: Path) -> list[dict]:
    store = EventStore(log)
    try:
        return [e for e in store.events() if e["source"] == "board" and e["type"] == "press"]
    finally:
        store.close()


def _acked_after(sim: SimBoard, seq: int, start: int, timeout: float) -> float | None:
    """Host ms of the board's ack of (1, seq), from its records after start (None: none)."""
    try:
        return sim.wait_for(lambda r: r.get("acked") == [1, seq], timeout=timeout, start=start)["t"]
    except TimeoutError:
        return None


def _wait_line(lines: list[tuple[float, str]], pred, timeout: float) -> float | None:
    """Host ms when a line of the standby's output matching pred was read (None: none in time)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        t = next((t for t, ln in list(lines) if pred(ln)), None)
        if t is not None:
            return t
        time.sleep(0.01)
    return None


def wait_for_web(primary: HubProcess, timeout: float = 60.0) -> None:
    """Until the primary says its web server's address (its console API: the
    standby's feed).  A primary that says it cannot listen there, or exits,
    or says nothing in time is an error with what it said (a loaded machine
    starts a hub in seconds, a quiet one in one)."""
    deadline = time.monotonic() + timeout
    while not any("tabletimer console http" in ln for ln in primary.lines):
        why = primary.without_web()
        if why:
            raise RuntimeError(f"the primary's web server will not start ({why}): {primary.said()}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"the primary's web server did not start in {timeout:g} s: {primary.said()}")
        time.sleep(0.05)


def start_standby(copy: Path, ev: Path, web: int, port: int, *extra: str) -> tuple[subprocess.Popen, list]:
    """`tabletimer standby` on copy, following the primary at 127.0.0.1:web,
    its idle broker on port; started once it says so.  Its lines, as read:
    [(host ms, line)]."""
    import threading

    standby = subprocess.Popen([TT, "standby", str(copy), "--primary", f"http://127.0.0.1:{web}",
                                "--token-file", str(ev / "console-token"), "--port", str(port),
                                "--web-listen", "off", *extra],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: list[tuple[float, str]] = []
    threading.Thread(target=lambda: lines.extend((now_ms(), ln) for ln in iter(standby.stdout.readline, "")),
                     daemon=True).start()
    if _wait_line(lines, lambda ln: "(idle: the boards are the primary's)" in ln, 60) is None:
        standby.kill()
        raise RuntimeError("the standby did not start: " + "".join(ln for _, ln in lines)[-2000:])
    return standby, lines


def stop_hubs(standby: subprocess.Popen | None, primary: HubProcess) -> None:
    if standby is not None and standby.poll() is None:
        standby.terminate()
        standby.wait(30)
    primary.stop()


def _switch(report: Report, got: list[float], n: int, decided: float | None, killed: float, note: str) -> None:
    """The first board's and every board's ack by the new hub, from the kill (ms)."""
    if got:
        report.add("killed -> first board acked by the new hub", f"{min(got) / 1000:.1f} s",
                   f"{(min(got) - (decided - killed)) / 1000:.1f} s after the decision" if decided else "")
        report.add("killed -> each board acked (the switch)",
                   f"p50 {pct(got, 50) / 1000:.1f}  p99 {pct(got, 99) / 1000:.1f}  max {max(got) / 1000:.1f} s",
                   f"{len(got)}/{n} boards; {note}")


def _missing_or_twice(report: Report, log: Path, made: int) -> int:
    """The presses missing from, or twice in, the new hub's log (made in all)."""
    deadline = time.monotonic() + 30
    while len(_presses(log)) < made and time.monotonic() < deadline:
        time.sleep(0.2)
    rows = _presses(log)
    keys_in = [(e["board"], e["payload"]["boot"], e["payload"]["seq"]) for e in rows]
    wrong = (made - len(set(keys_in))) + (len(keys_in) - len(set(keys_in)))
    report.add("presses missing from or twice in the new log", str(wrong), f"{len(rows)} of {made}; target 0")
    return wrong


def run(n: int, auto_after: float, failover: int, report: Report, pause: float = 0.0,
        watchdog_ms: int | None = None) -> int:
    """The benchmark; presses missing from or doubled in the new log, and
    boards their watchdog reset."""
    root = Path(tempfile.mkdtemp(prefix="tt-takeover-"))
    ev = event_folder.init(root / "primary", "czjpa-individuals", "Takeover bench")
    boards = [f"T{i:02d}" for i in range(1, n + 1)]
    (ev / "entrants.csv").write_text("id,name,eligible\n" + "".join(f"{i},E{i},yes\n" for i in range(1, 2 * n + 1)))
    (ev / "stations.csv").write_text("board,button,table,entrant\n" + "".join(
        f"{b},{k},T{b},{2 * i + k - 2}\n" for i, b in enumerate(boards, 1) for k in (1, 2)))
    keys = BoardKeys(ev / "board-keys.json")
    for b in boards:
        keys.ensure(b)
    ensure_secret(ev)                  # as `tabletimer init` makes it: the standby's copy has it
    copy = root / "standby"
    shutil.copytree(ev, copy)
    port, web = free_port(), free_port()
    primary = HubProcess(ev, None, "--broker-kind", "embedded", "--listen", "127.0.0.2", "--port", str(port),
                         web_port=web)
    standby = None
    sims: list[SimBoard] = []
    try:
        wait_for_web(primary)
        standby, lines = start_standby(copy, ev, web, port, "--broker-kind", "embedded",
                                       "--auto-after", f"{auto_after:g}")
        for b in boards:
            s = SimBoard(b, "127.0.0.2", port, root / "boards", key=keys.key(b), stations=2,
                         broker_user=b, broker_password=mqtt_password(keys.key(b)),
                         timings={"watchdog_ms": watchdog_ms} if watchdog_ms else None)
            s.config["broker"].update(host=["127.0.0.2", "127.0.0.1"], failover=failover)
            s.reboots = True                              # a chip reset boots again
            sims.append(s.start())
        subprocess.run([TT, "act", str(ev), "round_start"], check=True, capture_output=True)
        for s in sims:
            s.wait_for(lambda r: "sched" in r, timeout=60)
        floor = []
        for s in sims:
            m, t0 = len(s.records), now_ms()
            s.press(1)
            t = _acked_after(s, 1, m, 30)
            if t is not None:
                floor.append(t - t0)
        report.add("press -> ack on the primary (floor)", f"p50 {pct(floor, 50):.0f}  p99 {pct(floor, 99):.0f} ms",
                   f"{len(floor)}/{n} boards")
        copied = time.monotonic() + 30
        while len(_presses(copy / "events.sqlite")) < n and time.monotonic() < copied:
            time.sleep(0.1)
        marks = [len(s.records) for s in sims]
        killed = now_ms()
        primary.kill()                                    # the hub laptop dies, its broker with it
        for s in sims:
            s.press(2)                                    # journaled: no hub to ack it
        if pause:
            for s, m in zip(sims, marks):
                s.wait_for(lambda r: r.get("journaled") == [1, 2], timeout=30, start=m)
            paused = now_ms()
            stand_still([os.getpid(), *descendants(os.getpid())], pause)
            report.add("the host stood still (every process of the run stopped)", f"{pause:g} s",
                       f"from {(paused - killed) / 1000:.1f} s after the kill, every second press in flash")
        decided = _wait_line(lines, lambda ln: "this laptop takes over" in ln, 120)
        hub_now = _wait_line(lines, lambda ln: ln.startswith("takeover: this laptop is the hub now"), 60)
        acks = [_acked_after(s, 2, m, 120) for s, m in zip(sims, marks)]
        got = [a - killed for a in acks if a is not None]
        report.add("killed -> the standby's decision", f"{(decided - killed) / 1000:.1f} s" if decided else "never",
                   f"--auto-after {auto_after:g}")
        report.add("killed -> the new hub's first word", f"{(hub_now - killed) / 1000:.1f} s" if hub_now else "never",
                   "'takeover: this laptop is the hub now'")
        _switch(report, got, n, decided, killed, f"their failover {failover} s")
        wrong = _missing_or_twice(report, copy / "events.sqlite", 2 * n)
        reset = [s.board_id for s in sims if any(r.get("sim") == "watchdog_reset" for r in s.records)]
        report.add("boards reset by their watchdog", str(len(reset)),
                   f"target 0{': ' + ', '.join(reset) if reset else ''}; "
                   f"their watchdog {max(s.watchdog_ms for s in sims)} ms")
        return wrong + len(reset)
    finally:
        for s in sims:
            s.stop()
        stop_hubs(standby, primary)
        shutil.rmtree(root, ignore_errors=True)


def run_loadgen(n: int, auto_after: float, failover: int, report: Report) -> int:
    """The benchmark with load-generator boards; presses missing or doubled."""
    import asyncio

    from tabletimer.tools.bench.hall_rig import Hall
    from tabletimer.tools.loadgen.run import Generator

    root = Path(tempfile.mkdtemp(prefix="tt-takeover-lg-"))
    port, web = free_port(), free_port()
    hall = Hall(root / "hall", port, n, seed=n)
    ev = hall.ev
    ensure_secret(ev)
    copy = root / "standby"
    shutil.copytree(ev, copy)
    primary = HubProcess(ev, None, "--listen", "127.0.0.2", "--port", str(port), web_port=web, timeout=60)
    standby = None
    try:
        wait_for_web(primary)
        standby, lines = start_standby(copy, ev, web, port, "--auto-after", f"{auto_after:g}")
        hall.act("round_start", f"at={int(now_ms())}", "warnings=[]")

        async def drive():
            gen = Generator(["127.0.0.2", "127.0.0.1"], port, [(b, hall.keys.key(b) or "") for b in hall.ids],
                            login=True, keepalive=10, failover_s=failover, seed=n)
            try:
                await gen.start(timeout=180)
                before = await gen.burst(1.0, timeout=60)          # the floor: on the primary
                copied_by = time.monotonic() + 30                    # the standby has the floor's presses
                while len(_presses(copy / "events.sqlite")) < n and time.monotonic() < copied_by:
                    await asyncio.sleep(0.1)
                killed = now_ms()
                primary.kill()                                       # the hub laptop dies, its broker with it
                gen.begin("after the kill")
                for b in gen.boards:
                    gen.press(b)                                     # journaled: no hub to ack them
                after = await gen.end(timeout=auto_after + 120)
                return before, after, killed, dict(gen.counts)
            finally:
                await gen.close()

        before, after, killed, counts = asyncio.run(drive())
        report.add(f"press -> ack on the primary (floor), {n} within 1 s",
                   f"p50 {pct(before.lat_ms, 50):.0f}  p99 {pct(before.lat_ms, 99):.0f} ms",
                   f"{before.acked}/{before.made} acked")
        decided = next((t for t, ln in lines if "this laptop takes over" in ln), None)
        report.add("killed -> the standby's decision", f"{(decided - killed) / 1000:.1f} s" if decided else "never",
                   f"--auto-after {auto_after:g}")
        _switch(report, after.lat_ms, n, decided, killed,           # each press made at the kill -> its ack
                f"their failover {failover} s; failovers {counts['failovers']}, messages a board refused "
                f"{counts['bad']}")
        return _missing_or_twice(report, copy / "events.sqlite", 2 * n)
    finally:
        stop_hubs(standby, primary)
        shutil.rmtree(root, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tabletimer.tools.bench.takeover",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--boards", type=int, default=30, help="simulated boards (default 30)")
    ap.add_argument("--loadgen", type=int, default=None, metavar="N",
                    help="N load-generator boards instead of simulated ones (e.g. 300)")
    ap.add_argument("--auto-after", type=float, default=10.0,
                    help="the standby's --auto-after, seconds (default 10)")
    ap.add_argument("--failover", type=int, default=5,
                    help="the boards' broker failover, seconds without a broker (default 5)")
    ap.add_argument("--pause", type=float, default=0.0, metavar="S",
                    help="after the kill, once the boards' presses are in flash, the host stands still "
                         "for S seconds: every process of the run stopped (default 0: none)")
    ap.add_argument("--watchdog-ms", type=int, default=None, metavar="MS",
                    help="the simulated boards' watchdog timeout (default the firmware's, 8000)")
    a = ap.parse_args(argv)
    if a.boards < 1:
        ap.error("--boards needs at least 1")
    if a.loadgen and (a.pause or a.watchdog_ms):
        ap.error("--pause and --watchdog-ms are for the simulated boards (the firmware's watchdog)")
    if not sys.platform.startswith("linux"):
        print("this benchmark needs two loopback addresses (127.0.0.2): Linux", file=sys.stderr)
        return 2
    report = Report()
    if a.loadgen:
        print(f"the hub laptop dies: {a.loadgen} load-generator boards, a primary and a standby "
              f"(--auto-after {a.auto_after:g})", flush=True)
        wrong = run_loadgen(a.loadgen, a.auto_after, a.failover, report)
    else:
        print(f"the hub laptop dies: {a.boards} simulated boards (the real firmware), a primary and a standby "
              f"(--auto-after {a.auto_after:g})", flush=True)
        wrong = run(a.boards, a.auto_after, a.failover, report, a.pause, a.watchdog_ms)
    print(report.table())
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
