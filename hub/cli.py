"""The `tabletimer` command."""

from __future__ import annotations

import argparse
import json
import logging
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from .broker import BrokerAddress, EmbeddedBroker, parse_broker_url
from .keys import BoardKeys, KeyFileError
from .live_view import fmt_duration, render
from .mqtt_adapter import HubMqtt
from .service import HubService
from .store import EventStore


def _broker(args, data: Path) -> tuple[BrokerAddress, EmbeddedBroker | None]:
    if args.broker:
        return parse_broker_url(args.broker), None
    emb = EmbeddedBroker(data / "broker", host=args.listen, port=args.port).start()
    return emb.address, emb


def _print_standings(service: HubService) -> None:
    for s in service.standings():
        ref = ("confirmed" if s.confirmed else "provisional") if s.status == "finished" else ""
        print(f"{s.place:>4}  {s.entrant:<16} {s.status:<9} {fmt_duration(s.time_ms)}  {ref}")


def describe(service: HubService, ev: dict) -> str:
    """One log line for a stored event."""
    p = ev["payload"]
    if ev["type"] in ("press", "confirm", "void"):
        who = f"{ev['board']}/{p['station']}"
        st = next((s for s in service.standings() if s.entrant == who), None)
        rank = ""
        if st:
            ref = ("confirmed" if st.confirmed else "provisional") if st.status == "finished" else ""
            rank = f" -> place {st.place}, {st.status} {ref}, {fmt_duration(st.time_ms)}"
        extra = f", {p['missing']} missing" if ev["type"] == "confirm" else ""
        return f"{ev['type']} {who} (boot {p['boot']} seq {p['seq']}{extra}){rank}"
    if ev["type"] == "stray":
        return f"stray press {ev['board']}/{p['station']} while {p['state']}"
    if ev["type"] == "status":
        return f"board {ev['board']} {p['state']}"
    return f"{ev['type']} {json.dumps(p)}"


def cmd_run(args) -> int:
    """Hub + broker (+ simulated boards) with a live view, until Ctrl-C."""
    from rich.console import Console
    from rich.live import Live

    data = Path(args.data)
    data.mkdir(parents=True, exist_ok=True)
    stop = threading.Event()
    failed = False
    for sig in (signal.SIGTERM, signal.SIGHUP):      # kill, closed terminal: stop cleanly
        signal.signal(sig, lambda *a: stop.set())
    sims = []
    broker = None
    hub = None
    console = Console()
    try:
        keys = BoardKeys(Path(args.keys) if args.keys else data / "board-keys.json")
    except KeyFileError as e:
        console.print(f"[red]error:[/red] {e}")
        return 2
    for i in range(args.boards):
        keys.ensure(_sim_id(i))
    store = EventStore(data / "events.sqlite")
    service = HubService(store, keys)
    try:
        address, broker = _broker(args, data)
        console.print(f"broker on {address.host}:{address.port}"
                      f"{' (embedded)' if broker else ''}; event log {store.path}")
        hub = HubMqtt(service, address.host, address.port, address.user, address.password)
        hub.start()
        service.start_round(duration_ms=int(args.limit * 60_000) if args.limit else None,
                            warnings_ms=tuple(int(w * 60_000) for w in args.warn))
        if args.boards:
            sims = _start_sims(args, address, data, service, stop)
        deadline = time.monotonic() + args.duration if args.duration else None
        if console.is_terminal:
            with Live(render(service, "TableTimer hub"), console=console, refresh_per_second=4) as live:
                while not stop.is_set() and not (deadline and time.monotonic() > deadline):
                    stop.wait(0.25)
                    _report_dead_sims(sims, service.activity.append)
                    live.update(render(service, "TableTimer hub"))
        else:   # a log, not a screen: one line per event as it is stored
            service.listeners.append(lambda ev: print(describe(service, ev), flush=True))
            while not stop.is_set() and not (deadline and time.monotonic() > deadline):
                stop.wait(0.25)
                _report_dead_sims(sims, print)
    except KeyboardInterrupt:
        pass
    except (RuntimeError, ConnectionError, ValueError) as e:
        console.print(f"[red]error:[/red] {e}")
        failed = True
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)   # a second Ctrl-C must not leave strays
        stop.set()
        for sim in sims:
            sim.stop()
        if hub:
            hub.stop()
        if broker:
            broker.stop()
        store.close()
    if failed:
        return 2
    console.print("\nstopped; final standings:")
    _print_standings(service)
    return 0


def _report_dead_sims(sims: list, say) -> None:
    """A simulated board that exits by itself is a bug or a broken set-up:
    say so once, with what it printed last."""
    for sim in sims:
        if not sim.alive and not getattr(sim, "reported", False):
            sim.reported = True
            say(f"simulated board {sim.board_id} exited: {' | '.join(sim.stderr_tail[-3:])}")


def _sim_id(i: int) -> str:
    return f"sim{i + 1:02d}"


def _start_sims(args, address: BrokerAddress, data: Path, service: HubService, stop: threading.Event):
    from tabletimer.tools.simulator import SimBoard

    rng = random.Random(args.seed)
    sims = []
    for i in range(args.boards):
        sim = SimBoard(_sim_id(i), address.host, address.port, data / "sim-boards",
                       key=service.keys.ensure(_sim_id(i)),
                       stations=args.stations, clock_offset_ms=rng.randint(-5, 5) * 3_600_000
                       + rng.randint(0, 3_599_999), drift_ppm=rng.randint(-50, 50))
        sims.append(sim.start())

    def presser() -> None:
        # each station finishes once, at a random moment of the press window;
        # a few seconds later a referee counts missing pieces (short presses)
        # and confirms (a 2.5 s hold)
        plan = []
        for sim in sims:
            for st in range(1, args.stations + 1):
                at = rng.uniform(3, args.press_window)
                plan.append((at, 0, sim, st, "press", 80))
                ref = at + rng.uniform(2, 6)
                for k in range(rng.choice((0, 0, 0, 1, 2))):
                    plan.append((ref + 0.4 * k, 1, sim, st, "press", 100))
                plan.append((ref + 1, 2, sim, st, "press", 2500))
        plan.sort(key=lambda p: (p[0], p[1]))
        t0 = time.monotonic()
        for at, _, sim, st, cmd, hold in plan:
            if stop.wait(max(0.0, t0 + at - time.monotonic())):
                return
            if sim.alive:
                sim.press(st, hold)

    threading.Thread(target=presser, daemon=True).start()
    return sims


def cmd_standings(args) -> int:
    store = EventStore(args.db)
    service = HubService(store, BoardKeys())
    _print_standings(service)
    store.close()
    return 0


def cmd_board_flash(args) -> int:
    from tabletimer import firmware_dir
    from tabletimer.tools import deploy

    try:
        keys = BoardKeys(Path(args.keys))
        board = args.id
        if board is None:
            board = json.loads(Path(args.template).read_text()).get("board") if args.template else None
        if not board:
            raise deploy.DeployError("give the board's id with --id (e.g. --id T07)")
        cfg = deploy.make_config(
            Path(args.template) if args.template else firmware_dir() / "config.example.json",
            key=keys.key(board) or "00" * 32, board=board, wifi_ssid=args.wifi_ssid,
            wifi_password=args.wifi_password, broker_host=args.broker_host,
            broker_port=args.broker_port,
            buttons=[int(p) for p in args.buttons.split(",")] if args.buttons else None,
            buzzer_pin=args.buzzer_pin, buzzer_kind=args.buzzer_kind, led=args.led)
        if not args.dry_run:
            cfg["key"] = keys.ensure(board)          # stored for the hub before flashing
        cmd = deploy.deploy(args.device, cfg, dry_run=args.dry_run)
    except (deploy.DeployError, KeyFileError, ValueError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except subprocess.CalledProcessError as e:
        print(f"error: mpremote failed ({e.returncode}); is the board on {args.device}?", file=sys.stderr)
        return 1
    shown = dict(cfg, key="<secret>")
    print(json.dumps(shown, indent=2))
    if args.dry_run:
        print(" ".join(cmd))
    else:
        print(f"board {board} flashed; its key is in {keys.path}")
    return 0


def cmd_board_check(args) -> int:
    from tabletimer.tools import board_check

    return board_check.main(["-v"] if args.verbose else [])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="tabletimer", description=__doc__)
    sub = p.add_subparsers(dest="cmd", required=True)

    r = sub.add_parser("run", help="run the hub (embedded broker, simulated boards by default) with a live view")
    r.add_argument("--data", default="data", help="folder for the event log and the broker (default: ./data)")
    r.add_argument("--broker", help="external broker URL, e.g. mqtt://192.168.1.10:1883 (default: embedded)")
    r.add_argument("--listen", default="127.0.0.1",
                   help="address the embedded broker binds (the boards' LAN address at an event)")
    r.add_argument("--port", type=int, default=1883, help="embedded broker port (default 1883)")
    r.add_argument("--boards", type=int, default=4, help="simulated boards to start (0 for real boards only)")
    r.add_argument("--stations", type=int, default=2, help="stations (buttons) per simulated board")
    r.add_argument("--press-window", type=float, default=30.0,
                   help="simulated finishes happen within this many seconds of the start")
    r.add_argument("--seed", type=int, default=None, help="random seed for the simulation")
    r.add_argument("--duration", type=float, default=None, help="stop by itself after this many seconds")
    r.add_argument("--limit", type=float, default=None,
                   help="round time limit in minutes: the boards sound time-up (default: none)")
    r.add_argument("--warn", type=float, nargs="*", default=[1.0],
                   help="warnings, in minutes before the limit (default: 1)")
    r.add_argument("--keys", help="board keys file (default: DATA/board-keys.json)")
    r.set_defaults(func=cmd_run)

    s = sub.add_parser("standings", help="print the standings rebuilt from an event log")
    s.add_argument("--db", default="data/events.sqlite")
    s.set_defaults(func=cmd_standings)

    b = sub.add_parser("board", help="board tools")
    bsub = b.add_subparsers(dest="board_cmd", required=True)
    f = bsub.add_parser("flash", help="copy the firmware and a generated configuration to a board (mpremote)")
    f.add_argument("device", help="serial port of the board, e.g. /dev/ttyUSB0")
    f.add_argument("--id", help="the board's id, e.g. T07 (letters, digits, - and _)")
    f.add_argument("--template", help="configuration to start from (default: firmware/config.example.json)")
    f.add_argument("--wifi-ssid")
    f.add_argument("--wifi-password")
    f.add_argument("--broker-host", help="the hub laptop's address on the hall network")
    f.add_argument("--broker-port", type=int)
    f.add_argument("--buttons", help="GPIO pins of the stations' buttons, comma-separated, e.g. 4,5")
    f.add_argument("--buzzer-pin", type=int)
    f.add_argument("--buzzer-kind", choices=("passive", "active"))
    f.add_argument("--led", type=int, help="GPIO pin of the status LED")
    f.add_argument("--keys", default="data/board-keys.json",
                   help="the hub's board keys file (default: data/board-keys.json)")
    f.add_argument("--dry-run", action="store_true",
                   help="check the configuration and print the mpremote command; no key is stored")
    f.set_defaults(func=cmd_board_flash)
    c = bsub.add_parser("check", help="compile the firmware with mpy-cross and type-check it "
                                      "against the ESP32 stubs")
    c.add_argument("-v", "--verbose", action="store_true")
    c.set_defaults(func=cmd_board_check)

    args = p.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
