"""python -m tabletimer.tools.loadgen: N boards of an event folder against a
running hub and broker (see __init__.py)."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

from .run import Generator, cpu_s, cpu_split


def pct(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, max(0, int(round(p / 100 * (len(s) - 1)))))]


def spread(values: list[float]) -> str:
    return (f"p50 {pct(values, 50):.1f}  p99 {pct(values, 99):.1f}  max {max(values):.1f} ms"
            if values else "no samples")


def parse_rate(text: str) -> float | None:
    """'1000/s' or '1000' -> 1000.0; 'max' -> None (as fast as acked)."""
    t = text.strip().lower()
    if t == "max":
        return None
    return float(t[:-2] if t.endswith("/s") else t)


def board_keys(folder: Path, n: int) -> list[tuple[str, str]]:
    """The first n boards (sorted) of the folder's board-keys.json."""
    from tabletimer.hub.protocol.keys import BoardKeys
    keys = BoardKeys(folder / "board-keys.json")
    ids = keys.boards()
    if len(ids) < n:
        raise SystemExit(f"{folder / 'board-keys.json'} has {len(ids)} boards, not {n}")
    return [(b, keys.key(b) or "") for b in ids[:n]]


def next_boot(folder: Path, boards: set[str]) -> int:
    """One above every boot these boards have in the folder's log (a run
    is a new boot of every board, as a board's restart is: its counters
    and seqs start afresh)."""
    path = folder / "events.sqlite"
    if not path.exists():
        return 1
    from tabletimer.hub.event.log.store import EventStore
    store = EventStore(path)
    try:
        top = 0
        for e in store.events():
            if e["board"] in boards and isinstance(e["payload"], dict):
                for k in ("boot", "bt"):
                    v = e["payload"].get(k)
                    if isinstance(v, int):
                        top = max(top, v)
        return top + 1
    finally:
        store.close()


def stored_check(folder: Path, boards: set[str], boot: int) -> dict:
    """The presses of this run in the hub's log: how many, how many twice."""
    from tabletimer.tools.testing.hub_process import stored_presses
    seen: dict[tuple[str, int], int] = {}
    for e in stored_presses(folder):
        if e["board"] in boards and e["payload"].get("boot") == boot:
            k = (e["board"], e["payload"]["seq"])
            seen[k] = seen.get(k, 0) + 1
    return {"stored": len(seen), "twice": sum(1 for v in seen.values() if v > 1)}


def say(line: str) -> None:
    print(line, flush=True)


async def run(a: argparse.Namespace) -> dict:
    from tabletimer.hub.broker.broker import parse_broker_url
    addr = parse_broker_url(a.broker)
    folder = Path(a.folder)
    boards = board_keys(folder, a.boards)
    ids = {b for b, _ in boards}
    boot = a.boot or next_boot(folder, ids)
    gen = Generator(addr.host, addr.port, boards, boot=boot, login=a.login, sync_burst=a.sync_burst,
                    sync_every_s=a.sync_every, connect_at_once=a.connect_at_once, seed=a.seed)
    out: dict = {"boards": len(boards), "boot": boot}
    c0 = cpu_s()
    u0, s0 = cpu_split()
    try:
        took = await gen.start(a.connect_timeout)
        out["connect_s"] = round(took, 2)
        out["connected"] = len(gen.up())
        await gen.until(lambda: gen.synced() == len(boards) and gen.scheduled() == len(boards), a.connect_timeout)
        out["synced"], out["scheduled"] = gen.synced(), gen.scheduled()
        out["connect_cpu_s"] = round(cpu_s() - c0, 3)
        say(f"loadgen: {out['connected']}/{len(boards)} boards connected in {took:.1f} s, "
            f"{out['synced']} synced, {out['scheduled']} with their schedule (boot {boot})")
        phases = []
        if a.idle:
            say("phase begin idle")
            await asyncio.sleep(a.idle)             # the hub with every board online, nothing pressed
            say("phase end idle")
        if a.burst:
            say("phase begin burst")
            phases.append(await gen.burst(a.burst, a.ack_timeout))
            say("phase end burst")
        if a.seconds > 0:
            rate = parse_rate(a.rate)
            if a.drop:
                gen.loop.call_later(a.drop_at if a.drop_at is not None else a.seconds / 2,
                                    lambda: say(f"loadgen: dropped {gen.drop(a.drop)} connections"))
            say("phase begin sustained")
            if rate is None:
                phases.append(await gen.as_fast_as_acked(a.inflight, a.seconds, a.ack_timeout))
            else:
                phases.append(await gen.offered(rate, a.seconds, a.ack_timeout))
            say("phase end sustained")
        if a.drop:          # every dropped board back before the figures
            await gen.until(lambda: len(gen.up()) == len(boards), a.connect_timeout)
        out["phases"] = [p.summary() for p in phases]
        out["unacked"] = gen.unacked()
        out["sync_rtt_ms"] = [d for b in gen.boards for d in b.sync_delays]
        out.update(gen.counts)
        out["bad_why"] = gen.bad_why
        out["connected_at_end"] = len(gen.up())
    finally:
        await gen.close()
    out["cpu_s"] = round(cpu_s() - c0, 3)
    u1, s1 = cpu_split()
    out["cpu_user_s"], out["cpu_sys_s"] = round(u1 - u0, 3), round(s1 - s0, 3)
    if a.check_stored:
        out.update(stored_check(folder, ids, boot))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tabletimer.tools.loadgen", description=__doc__.splitlines()[0])
    ap.add_argument("--broker", required=True, help="mqtt://HOST:PORT")
    ap.add_argument("--folder", required=True, help="the event folder (its board-keys.json; its log for the checks)")
    ap.add_argument("--boards", type=int, required=True)
    ap.add_argument("--rate", default="100/s", help="offered events/s (e.g. 1000/s), or 'max': as fast as acked "
                                                     "with --inflight events unacked")
    ap.add_argument("--inflight", type=int, default=200, help="with --rate max: events unacked at all times")
    ap.add_argument("--seconds", type=float, default=10.0, help="of sustained presses (0: none)")
    ap.add_argument("--idle", type=float, default=0.0, help="seconds online doing nothing before the presses")
    ap.add_argument("--burst", type=float, default=0.0, metavar="WINDOW_S",
                    help="first, every board presses once within this many seconds")
    ap.add_argument("--drop", type=float, default=0.0, metavar="FRACTION",
                    help="cut this fraction of the connections during the sustained presses (they reconnect)")
    ap.add_argument("--drop-at", type=float, default=None, help="seconds into the sustained presses (default half)")
    ap.add_argument("--login", action="store_true", help="log in as the board (password from its key), as at an event")
    ap.add_argument("--boot", type=int, default=0, help="the boards' boot (default: one above their log's)")
    ap.add_argument("--sync-burst", type=int, default=3, help="clock syncs at each connect (100 ms apart)")
    ap.add_argument("--sync-every", type=float, default=30.0, help="seconds between the periodic clock syncs")
    ap.add_argument("--connect-at-once", type=int, default=64, help="connections being set up at once")
    ap.add_argument("--connect-timeout", type=float, default=180.0)
    ap.add_argument("--ack-timeout", type=float, default=120.0, help="after a phase, for its last acks")
    ap.add_argument("--no-check", dest="check_stored", action="store_false",
                    help="do not read the hub's log for lost and twice-stored events")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", action="store_true", help="end with one line 'JSON {...}' (for tabletimer bench)")
    a = ap.parse_args(argv)
    out = asyncio.run(run(a))
    made = sum(p["made"] for p in out.get("phases", []))
    for p in out.get("phases", []):
        n = max(1, p["made"])
        say(f"  {p['name']}: {p['acked']}/{p['made']} acked, event -> ack {spread(p['lat_ms'])}; "
            f"{p['events_per_s'] or 0:.0f} events/s acked; generator CPU {p['cpu_s']:.2f} s "
            f"({p['cpu_s'] / n * 1e6:.0f} us/event, {p['cpu_s'] / max(p['seconds'], 1e-9) * 100:.0f} % of a core)")
    say(f"  clock sync round trip: {spread(out.get('sync_rtt_ms', []))}")
    say(f"  retransmissions {out.get('retransmissions')}, reconnects {out.get('reconnects')} "
        f"(dropped {out.get('drops')}), duplicate acks {out.get('dup_acks')}, bad messages {out.get('bad')} "
        f"{out.get('bad_why') or ''}, unacked {out.get('unacked')}")
    if "stored" in out:
        say(f"  in the hub's log: {out['stored']} of {made} events made, {out['twice']} stored twice, "
            f"lost {made - out['stored']}")
    say(f"  generator CPU in all {out['cpu_s']:.2f} s (user {out['cpu_user_s']:.2f}, system {out['cpu_sys_s']:.2f})")
    if a.json:
        print("JSON " + json.dumps(out), flush=True)
    ok = out.get("unacked") == 0 and (out.get("stored", made) == made) and not out.get("twice")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
