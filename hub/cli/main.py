"""The `tabletimer` command."""

from __future__ import annotations

import argparse
import json
import logging
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from ..event import event_folder
from ..boards.broker import BrokerAddress, EmbeddedBroker, parse_broker_url
from ..event.actions import FIELDS as OPERATOR_ACTIONS
from ..event.competition import Competition
from ..rules.formats import FormatError, fmt_duration
from ..boards.keys import BoardKeys, KeyFileError, mqtt_password
from ..boards.mqtt_adapter import HubMqtt
from ..boards.service import STORE_ERRORS, HubService, LogWriteFailed, write_failure_advice
from ..event.store import EventStore


def describe(service: HubService, ev: dict) -> str:
    """One log line for a stored event."""
    p = ev["payload"]
    if ev["source"] == "board" and ev["type"] in ("press", "confirm", "void"):
        st = service.competition._by_station.get((ev["board"], p["station"]))
        who = st.entrant if st else f"{ev['board']}/{p['station']} (no station)"
        rank = ""
        row = next((r for r in service.standings() if st and r.entrant == st.entrant), None)
        if row:
            res = service.competition.format.resolution_ms
            state = "provisional" if row.provisional else "confirmed"
            rank = f" -> place {row.place}, {row.status} {state}, {fmt_duration(row.net_time_ms, res)}"
        extra = f", {p['missing']} missing" if ev["type"] == "confirm" else ""
        return f"{ev['type']} {who} (boot {p['boot']} seq {p['seq']}{extra}){rank}"
    if ev["type"] == "stray":
        return f"stray press {ev['board']}/{p['station']} while {p['state']}"
    if ev["type"] == "status":
        return f"board {ev['board']} {p['state']}"
    return f"{ev['source']} {ev['type']} {json.dumps(p)}"


def _print_final(service: HubService) -> None:
    from .formats import standings_table

    print(standings_table(service.standings(final=True), service.competition.format))


# ------------------------------------------------------------------ serving

def _serve(args, service: HubService, data: Path, start_sims=None, event: dict | None = None) -> int:
    """Broker (embedded unless --broker), hub, the API for remote consoles
    (event: its /event), the console (or a line per event when not on a
    terminal), until Ctrl-C / SIGTERM / SIGHUP / --duration."""
    from rich.console import Console

    from ..console.server import parse_listen

    console = Console()
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGHUP):      # kill, closed terminal: stop cleanly
        signal.signal(sig, lambda *a: stop.set())
    sims: list = []
    broker = hub = remote = None
    failed = False
    title = f"TableTimer - {service.competition.format.title}"
    done = threading.Lock()

    def shut_down() -> bool:
        """Stop boards, hub and broker, once (False if already done)."""
        if not done.acquire(blocking=False):
            return False
        stop.set()
        for sim in sims:
            sim.stop()
        if remote:
            remote.stop()
        if hub:
            hub.stop()
        if broker:
            broker.stop()
        return True

    def watchdog() -> None:
        # a console whose terminal has gone (closed window, killed tmux) may
        # never return: once asked to stop, give it a few seconds, then shut
        # everything down from here and leave
        stop.wait()
        time.sleep(3)           # grace for the normal way out; not synchronisation
        if shut_down():
            os._exit(0)
    try:
        console_listen = parse_listen(args.console_listen)
        if args.broker:
            address = parse_broker_url(args.broker)
            pw = _hub_password(data)
            if address.user is None and pw.exists():    # from `tabletimer broker config`
                address.user, address.password = HUB_USER, pw.read_text().strip()
        else:
            broker = EmbeddedBroker(data / "broker", host=args.listen, port=args.port).start()
            address = broker.address
        console.print(f"broker on {address.host}:{address.port}{' (embedded)' if broker else ''}; "
                      f"event log {service.store.path}")
        hub = HubMqtt(service, address.host, address.port, address.user, address.password)
        hub.start()
        if console_listen and event:
            remote = _console_server(service, event, data, console_listen, lambda text: console.print(
                text, markup=False, highlight=False, soft_wrap=True))     # a command to copy: no wrapping
        if start_sims:
            sims = start_sims(address, stop)
        deadline = time.monotonic() + args.duration if args.duration else None

        def tick() -> None:
            service.catch_up()                       # operator actions from `tabletimer act`
            _report_dead_sims(sims, service.activity.append if console.is_terminal else print)

        if console.is_terminal:               # the organizer console (Textual)
            from ..console.app import run_console

            if args.duration:
                timer = threading.Timer(args.duration, stop.set)
                timer.daemon = True
                timer.start()
            threading.Thread(target=watchdog, daemon=True).start()
            run_console(service, title, stop, tick)
        else:   # a log, not a screen: one line per event as it is stored
            service.listeners.append(lambda ev: print(describe(service, ev), flush=True))
            while not stop.is_set() and not (deadline and time.monotonic() > deadline):
                stop.wait(0.25)
                tick()
    except KeyboardInterrupt:
        pass
    except (RuntimeError, ConnectionError, ValueError) as e:
        console.print(f"[red]error:[/red] {e}")
        failed = True
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)   # a second Ctrl-C must not leave strays
        shut_down()
    if failed:
        return 2
    console.print("\nstopped; standings:")
    _print_final(service)
    return 0


def _console_server(service: HubService, event: dict, data: Path, listen: tuple[str, int], say):
    """The API for consoles on other laptops (None if its port is taken:
    the hub runs without it)."""
    from ..console.server import DEFAULT_PORT, ConsoleServer, console_token

    host, port = listen
    try:
        server = ConsoleServer(service, event, console_token(data), host, port).start()
    except OSError as e:
        say(f"warning: no remote consoles: cannot listen on {host}:{port} "
            f"({e.strerror or e}); choose another with --console-listen HOST:PORT")
        return None
    where = ("" if server.address[0] not in ("127.0.0.1", "localhost") else
             f" (this machine only; for another laptop: --console-listen 0.0.0.0:{port or DEFAULT_PORT})")
    say(f"remote console{where}:\n  {server.command()}")
    service.activity.append(f"remote console: {server.command()}")
    return server


def _report_dead_sims(sims: list, say) -> None:
    """A simulated board that exits by itself is a bug or a broken set-up:
    say so once, with what it printed last."""
    for sim in sims:
        if not sim.alive and not getattr(sim, "reported", False):
            sim.reported = True
            say(f"simulated board {sim.board_id} exited: {' | '.join(sim.stderr_tail[-3:])}")


def cmd_demo(args) -> int:
    """Hub + embedded broker + simulated boards playing a round."""
    data = Path(args.data)
    data.mkdir(parents=True, exist_ok=True)
    lock = _hub_lock(data / "events.sqlite")
    if lock is None:
        return 2
    try:
        return _demo(args, data)
    finally:
        lock.release()


def _demo(args, data: Path) -> int:
    from ..console.server import demo_description
    from ..event.demo import demo_event, sim_board_id
    from ..rules.formats import format_text

    try:
        fmt, entrants, stations = demo_event(args.preset, args.boards, args.stations, args.speed)
        keys = BoardKeys(data / "board-keys.json")
        event = demo_description(Path(fmt.path).name, format_text(args.preset), args.boards,
                                 args.stations, args.speed)     # for remote consoles
    except (FormatError, KeyFileError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    for i in range(args.boards):
        keys.ensure(sim_board_id(i))
    opened = _writable_log(data / "events.sqlite", lambda store: HubService(
        store, keys, Competition(fmt, entrants, stations)))
    if opened is None:
        return LOG_FAILED
    store, service = opened

    def start_sims(address: BrokerAddress, stop: threading.Event):
        service.start_round(duration_ms=int(args.limit * 60_000) if args.limit else None,
                            warnings_ms=tuple(int(w * 60_000 / args.speed) for w in args.warn))
        return _start_sims(args, address, data, service, stations, stop)

    try:
        return _serve(args, service, data, start_sims, event)
    finally:
        store.close()


def _start_sims(args, address: BrokerAddress, data: Path, service: HubService, stations, stop):
    from tabletimer.tools.simulator import SimBoard

    from ..event.demo import sim_board_id

    rng = random.Random(args.seed)
    per_board: dict[str, int] = {}
    for s in stations:
        per_board[s.board] = max(per_board.get(s.board, 0), s.button)
    sims = []
    for i in range(args.boards):
        b = sim_board_id(i)
        sim = SimBoard(b, address.host, address.port, data / "sim-boards", key=service.keys.ensure(b),
                       stations=per_board.get(b, 1),
                       clock_offset_ms=rng.randint(-5, 5) * 3_600_000 + rng.randint(0, 3_599_999),
                       drift_ppm=rng.randint(-50, 50))
        sims.append(sim.start())

    comp = service.competition
    window = args.press_window or comp.format.time_limit_ms / 1000 * 0.8

    def presser() -> None:
        # every entrant works through its puzzles in order within the window:
        # a finish call, a referee a few seconds later (short presses count
        # missing pieces, a 2.5 s hold confirms); an entrant that runs out of
        # time stays unfinished
        plan = []
        by_entrant: dict[str, list] = {}
        for s in stations:
            by_entrant.setdefault(s.entrant, []).append(s)
        for sts in by_entrant.values():
            calls = [(s, k) for s in sorted(sts, key=lambda s: s.puzzle or 0) for k in range(comp.calls_of(s))]
            at = min(3.0, window / 4)               # the boards sync first
            step = (window - at) / (len(calls) + rng.uniform(0, 1.5))
            for s, _ in calls:
                at += rng.uniform(0.4, 1.0) * step
                if at > window:
                    break
                sim = next(x for x in sims if x.board_id == s.board)
                plan.append((at, 0, sim, s.button, 80))
                ref = at + rng.uniform(0.3, 0.6) * min(step, 6)
                for k in range(rng.choice((0, 0, 0, 1, 2))):
                    plan.append((ref + 0.4 * k, 1, sim, s.button, 100))
                plan.append((ref + 1, 2, sim, s.button, 2500))
                at = ref + 4
        plan.sort(key=lambda p: (p[0], p[1]))
        t0 = time.monotonic()
        for at, _, sim, st, hold in plan:
            if stop.wait(max(0.0, t0 + at - time.monotonic())):
                return
            if sim.alive:
                sim.press(st, hold)

    threading.Thread(target=presser, daemon=True).start()
    return sims


def _load_event(path: str):
    ev = event_folder.load(path)
    for w in ev.warnings:
        print(f"warning: {w}", file=sys.stderr)
    return ev


def _open_event(path: str):
    """(event folder, board keys), or None after saying what is wrong."""
    try:
        ev = _load_event(path)
        return ev, BoardKeys(ev.keys_file)
    except (event_folder.EventFolderError, FormatError, KeyFileError) as e:
        print(f"error: {e}", file=sys.stderr)
        return None


LOG_FAILED = 3        # exit code: the event log could not be opened or written


def _writable_log(path: Path, make_service):
    """(store, service) on the log at path, once it has taken a committed
    write; else None, after saying what is wrong and what to do."""
    try:
        store = EventStore(path)
    except STORE_ERRORS as e:
        print(f"error: {write_failure_advice(path, e, 'open')}. The hub did not start.", file=sys.stderr)
        return None
    try:
        service = make_service(store)
        service.check_writable()
    except LogWriteFailed as e:
        print(f"error: {e}. The hub did not start: it would acknowledge nothing.", file=sys.stderr)
    except STORE_ERRORS as e:
        print(f"error: {write_failure_advice(path, e, 'read')}. The hub did not start.", file=sys.stderr)
    else:
        return store, service
    store.close()
    return None


def _hub_lock(log: Path):
    """One hub per event log: the lock held for the process's lifetime
    (None after saying who holds it)."""
    from ..event.folder_lock import FolderLocked, HubLock

    try:
        lock = HubLock(log).acquire()
    except FolderLocked as e:
        print(f"error: {e}", file=sys.stderr)
        return None
    if not lock.supported:
        print(f"warning: this system has no file locks: make sure no other hub runs on {log}",
              file=sys.stderr)
    return lock


def _service_for(ev, keys: BoardKeys, store: EventStore) -> HubService:
    return HubService(store, keys, Competition(ev.format, ev.entrants, ev.stations))


def cmd_run(args) -> int:
    """A real event from its folder: boards from stations.csv, keys from
    board-keys.json, the log in events.sqlite."""
    opened = _open_event(args.dir)
    if opened is None:
        return 2
    ev, keys = opened
    missing = sorted({s.board for s in ev.stations} - set(keys.boards()))
    if missing:
        print(f"warning: no key for board(s) {', '.join(missing)}: flash them with "
              f"`tabletimer board flash PORT --id ID --keys {ev.keys_file}`", file=sys.stderr)
    from ..console.server import folder_event

    event = folder_event(ev.path)        # what the hub loaded, for remote consoles
    lock = _hub_lock(ev.db)
    if lock is None:
        return 2
    try:
        opened = _writable_log(ev.db, lambda store: _service_for(ev, keys, store))
        if opened is None:
            return LOG_FAILED
        store, service = opened
        try:
            return _serve(args, service, ev.path, event=event)
        finally:
            store.close()
    finally:
        lock.release()


def cmd_console(args) -> int:
    """The console on an event's log, beside the running hub (a second
    screen): it follows the log, and its operator actions go into the log,
    where the hub picks them up.  Given the hub's address (http://...), the
    same over the network, from another laptop."""
    from ..console.app import run_console

    if "://" in args.dir:
        return _remote_console(args)
    opened = _open_event(args.dir)
    if opened is None:
        return 2
    ev, keys = opened
    if not ev.db.exists():
        print(f"error: {ev.db} does not exist yet: start the hub with `tabletimer run {ev.path}`",
              file=sys.stderr)
        return 2
    store = EventStore(ev.db)
    try:
        service = _service_for(ev, keys, store)
        run_console(service, f"TableTimer - {ev.format.title} (watching {ev.path.name})",
                    tick=service.catch_up)
    finally:
        store.close()
    return 0


def _remote_console(args) -> int:
    from ..console.app import run_console
    from ..console.client import connect

    if not args.token:
        print("error: give the hub's console token: --token TOKEN (the hub prints it when it "
              "starts; it is also in the event folder's console-token file)", file=sys.stderr)
        return 2
    try:
        service = connect(args.dir, args.token)
    except ValueError as e:          # unreachable, refused, an event that does not load here
        print(f"error: {e}", file=sys.stderr)
        return 2
    try:
        run_console(service, f"TableTimer - {service.competition.format.title} (remote: {service.log.path})",
                    tick=service.catch_up)
    finally:
        service.log.close()
    return 0


def cmd_init(args) -> int:
    try:
        p = event_folder.init(args.dir, args.format)
    except (event_folder.EventFolderError, FormatError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"event folder {p}: edit entrants.csv and stations.csv, flash the boards with "
          f"--keys {p / 'board-keys.json'}, then `tabletimer run {p}`")
    return 0


def _value(text: str):
    try:
        return json.loads(text)
    except ValueError:
        return text


def cmd_act(args) -> int:
    """Append an operator action to an event's log; a running hub applies it
    within a quarter of a second."""
    opened = _open_event(args.dir)
    if opened is None:
        return 2
    ev, keys = opened
    try:
        store = EventStore(ev.db)
        try:
            svc = _service_for(ev, keys, store)
            payload = _act_payload(args.action, args.fields, svc)
            svc.check_action(args.action, payload, who=args.who, why=args.why)
            print(f"about to record: {args.action} {_described(payload, svc)} (who: {args.who}"
                  + (f", why: {args.why}" if args.why else "") + ")")
            changes = svc.consequences(args.action, payload)
            if changes and not args.force:
                for c in changes:
                    print(f"warning: this {c}", file=sys.stderr)
                if not _ask("record it anyway? [y/N] "):
                    print("error: not recorded; add --force to record it (it changes what is recorded)",
                          file=sys.stderr)
                    return 2
            row = svc.act(args.action, payload, who=args.who, why=args.why)
        finally:
            store.close()
    except (ValueError, TypeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except LogWriteFailed as e:
        print(f"error: {e}. Nothing was recorded: fix this and run the command again.", file=sys.stderr)
        return LOG_FAILED
    except STORE_ERRORS as e:       # opening or reading the log
        print(f"error: {write_failure_advice(ev.db, e, 'open')}. Nothing was recorded.", file=sys.stderr)
        return LOG_FAILED
    print(f"recorded #{row['id']}: {args.action} {json.dumps(row['payload'])}")
    return 0


def _act_payload(action: str, fields: list[str], svc: HubService) -> dict:
    """key=value words as an action's fields: text for names and ids;
    times as an operator types them (round_start at=HH:MM[:SS] local clock
    time or hub ms; other at= as h:mm:ss[.fff] since the round start or hub
    ms; durations, offsets and warnings as h:mm:ss or ms); else JSON."""
    from ..rules.timetext import parse_clock_time, parse_duration_ms, parse_hub_time
    now = svc.clock.now_ms()
    payload: dict = {}
    for kv in fields:
        k, sep, v = kv.partition("=")
        if not sep:
            raise ValueError(f"expected key=value, not {kv!r}")
        if k in ("entrant", "press_id", "reason", "board"):
            payload[k] = v
        elif k == "at" and ":" in v:
            payload[k] = (parse_clock_time(v, now) if action == "round_start"
                          else parse_hub_time(v, svc.competition.start_ms, f"{action}: at"))
        elif k in ("duration", "offset_ms") and ":" in v:
            payload[k] = parse_duration_ms(v, f"{action}: {k}")
        elif k == "warnings" and ":" in v:
            payload[k] = [parse_duration_ms(w, f"{action}: warnings") for w in v.replace(",", " ").split()]
        else:
            payload[k] = _value(v)
    if action == "round_start":
        payload.setdefault("at", now)
        if "warnings" not in payload:     # 10 min and 1 min left, those within the limit
            limit = payload.get("duration") if isinstance(payload.get("duration"), int) else None
            limit = limit or svc.competition.format.time_limit_ms
            payload["warnings"] = [w for w in (600_000, 60_000) if w < limit]
    return payload


def _described(payload: dict, svc: HubService) -> str:
    """The fields as the operator reads them: times also as a clock time
    and as time since the round start."""
    from ..rules.timetext import fmt_clock
    start = svc.competition.start_ms
    shown = []
    for k, v in payload.items():
        if k == "at" and isinstance(v, int):
            since = f", {fmt_duration(v - start)} since the start" if start is not None and v >= start else ""
            shown.append(f"at={v} ({fmt_clock(v)}{since})")
        else:
            shown.append(f"{k}={json.dumps(v, ensure_ascii=False)}")
    return " ".join(shown)


def _ask(question: str) -> bool:
    """A yes from the operator at a terminal; no terminal (a script): no."""
    if not sys.stdin.isatty():
        return False
    try:
        return input(question).strip().lower() in ("y", "yes")
    except EOFError:
        return False


def replay_document(service: HubService) -> dict:
    """`replay --json`: the final standings, and every station's state and
    the relay as they are now (hub ms)."""
    from ..rules.relay import relay_view
    from ..rules.standings import row_dict
    comp = service.competition
    now = service.clock.now_ms()
    return {"now": now, "standings": [row_dict(r) for r in service.standings(final=True)],
            "stations": [s.as_dict() for s in service.station_states(now)],
            "relay": relay_view(comp.format, comp.entrants, comp.facts(), now, comp.round_end_ms())
            if comp.format.relay is not None and comp.start_ms is not None else []}


def cmd_replay(args) -> int:
    """The standings rebuilt offline from an event's log."""
    opened = _open_event(args.dir)
    if opened is None:
        return 2
    ev, keys = opened
    store = EventStore(ev.db)
    try:
        service = _service_for(ev, keys, store)
        if args.json:
            print(json.dumps(replay_document(service), indent=2))
        else:
            _print_final(service)
    finally:
        store.close()
    return 0


# ------------------------------------------------------------------ boards

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
        # the board's broker login (used by a broker from `tabletimer broker config`)
        cfg["broker"]["user"], cfg["broker"]["password"] = board, mqtt_password(cfg["key"])
        cmd = deploy.deploy(args.device, cfg, dry_run=args.dry_run)
    except (deploy.DeployError, KeyFileError, ValueError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except subprocess.CalledProcessError as e:
        print(f"error: mpremote failed ({e.returncode}); is the board on {args.device}?", file=sys.stderr)
        return 1
    shown = dict(cfg, key="<secret>", broker=dict(cfg["broker"], password="<secret>"))
    print(json.dumps(shown, indent=2))
    if args.dry_run:
        print(" ".join(cmd))
    else:
        print(f"board {board} flashed (install {cfg['install']}); its key is in {keys.path}")
    return 0


HUB_USER = "hub"


def _hub_password(ev_path: Path) -> Path:
    return ev_path / "mosquitto" / "hub-password"


def cmd_broker_config(args) -> int:
    """A Mosquitto configuration for the event: a login per board (password
    derived from its key), the hub's login, an ACL, persistence."""
    import secrets

    from ..boards.mosquitto_config import write_mosquitto_config

    try:
        ev = _load_event(args.dir)
        keys = BoardKeys(ev.keys_file)
        missing = sorted({s.board for s in ev.stations} - set(keys.boards()))
        if missing:
            print(f"warning: no key yet for {', '.join(missing)} (flash them with --keys "
                  f"{ev.keys_file}, then run this again)", file=sys.stderr)
        pw_file = _hub_password(ev.path)
        pw_file.parent.mkdir(parents=True, exist_ok=True)
        if not pw_file.exists():
            pw_file.write_text(secrets.token_hex(16))
            pw_file.chmod(0o600)
        conf = write_mosquitto_config(ev.path / "mosquitto", keys, HUB_USER, pw_file.read_text().strip(),
                                      listen_host=args.listen, port=args.port)
    except (event_folder.EventFolderError, FormatError, KeyFileError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"wrote {conf}\nstart it:  mosquitto -c {conf}\nthen:      tabletimer run {ev.path} "
          f"--broker mqtt://127.0.0.1:{args.port}   (the hub logs in as '{HUB_USER}' with "
          f"{pw_file})")
    return 0


def cmd_board_check(args) -> int:
    from tabletimer.tools import board_check

    return board_check.main(["-v"] if args.verbose else [])


# ------------------------------------------------------------------ parser

def _serve_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--broker", help="external broker URL, e.g. mqtt://192.168.1.10:1883 (default: embedded)")
    p.add_argument("--listen", default="127.0.0.1",
                   help="address the embedded broker binds (0.0.0.0: reachable by boards on the LAN)")
    p.add_argument("--port", type=int, default=1883, help="embedded broker port (default 1883)")
    p.add_argument("--duration", type=float, default=None, help="stop by itself after this many seconds")
    p.add_argument("--console-listen", default=os.environ.get("TABLETIMER_CONSOLE_LISTEN", "127.0.0.1:8765"),
                   metavar="HOST:PORT",
                   help="address of the API for consoles on other laptops (default 127.0.0.1:8765, "
                        "this machine only, or $TABLETIMER_CONSOLE_LISTEN; 0.0.0.0:8765: reachable "
                        "on the LAN; port 0: any free port; off: none)")


def _bench(argv: list[str]) -> int:
    from tabletimer.tools.bench import hall as bench
    return bench.main(argv)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["bench"]:            # its own options (argparse would take them for ours)
        return _bench(argv[1:])
    p = argparse.ArgumentParser(prog="tabletimer", description="Timing and ranking for jigsaw-puzzle "
                                "speed competitions.")
    sub = p.add_subparsers(dest="cmd", required=True)

    d = sub.add_parser("demo", help="the hub with an embedded broker and simulated boards playing a round")
    d.add_argument("--data", default="data", help="folder for the demo's event log and boards (default: ./data)")
    d.add_argument("--preset", default="cz-championship-individuals", help="competition format preset")
    d.add_argument("--boards", type=int, default=4, help="simulated boards")
    d.add_argument("--stations", type=int, default=2, help="stations (buttons) per board (individual formats)")
    d.add_argument("--speed", type=float, default=60.0,
                   help="play the format this many times faster (time limit, relay rotations; default 60)")
    d.add_argument("--press-window", type=float, default=None,
                   help="simulated finishes happen within this many seconds of the start "
                        "(default: most of the sped-up time limit)")
    d.add_argument("--seed", type=int, default=None, help="random seed for the simulation")
    d.add_argument("--limit", type=float, default=None,
                   help="round time limit in minutes (default: the format's)")
    d.add_argument("--warn", type=float, nargs="*", default=[10.0, 1.0],
                   help="warnings, in the format's minutes before the limit (sped up like it; default: 10 1)")
    _serve_options(d)
    d.set_defaults(func=cmd_demo)

    r = sub.add_parser("run", help="run an event from its folder (see `tabletimer init`)")
    r.add_argument("dir", help="the event folder")
    _serve_options(r)
    r.set_defaults(func=cmd_run)

    cs = sub.add_parser("console", help="open the organizer console on an event the hub is running "
                                        "(a second screen: the event folder on this machine, or the "
                                        "hub's address from another laptop)")
    cs.add_argument("dir", metavar="DIR|URL",
                    help="the event folder, or the hub's console address http://HOST:PORT "
                         "(the hub prints it when it starts)")
    cs.add_argument("--token", default=os.environ.get("TABLETIMER_CONSOLE_TOKEN"),
                    help="with a URL: the hub's console token (printed by the hub; the event folder's "
                         "console-token file; default: $TABLETIMER_CONSOLE_TOKEN)")
    cs.set_defaults(func=cmd_console)

    i = sub.add_parser("init", help="create an event folder from a format preset")
    i.add_argument("dir")
    i.add_argument("--format", required=True, help="preset name (see `tabletimer formats`)")
    i.set_defaults(func=cmd_init)

    a = sub.add_parser("act", help="record an operator action in an event's log "
                                   "(a running hub applies it at once)")
    a.add_argument("dir", help="the event folder")
    a.add_argument("action", choices=sorted(OPERATOR_ACTIONS))
    a.add_argument("fields", nargs="*", help="key=value, e.g. entrant=12 placed=311; at= as h:mm:ss since "
                                             "the round start (round_start: a clock time HH:MM) or hub ms; "
                                             "round_start warns at 10 and 1 min left unless warnings=10:00,1:00")
    a.add_argument("--who", default="operator", help="who acts (recorded)")
    a.add_argument("--why", default="", help="the reason (recorded)")
    a.add_argument("--force", action="store_true",
                   help="record an action that replaces or discards a recorded result without asking")
    a.set_defaults(func=cmd_act)

    rp = sub.add_parser("replay", help="rebuild the standings offline from an event's log")
    rp.add_argument("dir")
    rp.add_argument("--json", action="store_true")
    rp.set_defaults(func=cmd_replay)

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
                   help="the hub's board keys file (an event's: DIR/board-keys.json)")
    f.add_argument("--dry-run", action="store_true",
                   help="check the configuration and print the mpremote command; no key is stored")
    f.set_defaults(func=cmd_board_flash)
    bk = sub.add_parser("broker", help="broker tools")
    bksub = bk.add_subparsers(dest="broker_cmd", required=True)
    bc = bksub.add_parser("config", help="write a Mosquitto configuration for an event "
                                         "(logins per board, ACL, persistence)")
    bc.add_argument("dir", help="the event folder")
    bc.add_argument("--listen", default="0.0.0.0", help="address Mosquitto listens on (default 0.0.0.0)")
    bc.add_argument("--port", type=int, default=1883)
    bc.set_defaults(func=cmd_broker_config)
    c = bsub.add_parser("check", help="compile the firmware with mpy-cross and type-check it "
                                      "against the ESP32 stubs")
    c.add_argument("-v", "--verbose", action="store_true")
    c.set_defaults(func=cmd_board_check)

    bn = sub.add_parser("bench", add_help=False,
                        help="hall-scale benchmarks: press latency, timing error, signal skew, ingest, "
                             "restart, ranking, heap (see `tabletimer bench --help`)")
    bn.set_defaults(func=lambda a: _bench([]))

    from . import formats as cli_formats
    from ..outputs import results
    cli_formats.add_subcommands(sub)
    results.add_subcommands(sub)

    args = p.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
