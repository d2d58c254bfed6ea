"""`tabletimer board flash`, `board check` and `broker config`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from ..protocol.keys import BoardKeys, KeyFileError, mqtt_password
from ..rules.formats import FormatError
from ..runtime.brokers import HUB_USER, ensure_hub_password
from .common import load_event
from tabletimer.hub.event.folder import event_folder


def add_config_options(p, template_default: str = "firmware/config.example.json") -> None:
    """The options of a board's configuration: `board flash`'s, and `boards
    provision`'s (the same names, the same meanings)."""
    p.add_argument("--template", help=f"configuration to start from (default: {template_default})")
    p.add_argument("--wifi-ssid")
    p.add_argument("--wifi-password")
    p.add_argument("--broker-host", action="append",
                   help="the hub laptop's address on the hall network; again for the standby laptop's "
                        "(the board tries it after --failover S without the first)")
    p.add_argument("--failover", type=int, metavar="S",
                   help="seconds without its broker before the board tries the next --broker-host "
                        "(default 30)")
    p.add_argument("--broker-port", type=int)
    p.add_argument("--broker-ca", help="TLS to the broker: the event's CA certificate "
                                       "(DIR/mosquitto/ca.crt from `broker config --tls`); the board "
                                       "accepts only a broker it signed (give --broker-port 8883)")
    p.add_argument("--buttons", help="GPIO pins of the stations' buttons, comma-separated, e.g. 4,5")
    p.add_argument("--buzzer-pin", type=int)
    p.add_argument("--buzzer-kind", choices=("passive", "active"))
    p.add_argument("--led", type=int, help="GPIO pin of the status LED")


def board_config(args, keys: BoardKeys, board: str, template: Path, store_key: bool) -> dict:
    """The configuration of board `board` from the template and the options
    of add_config_options (a new install id; the board's key from the keys
    file, generated and stored there first if store_key; its broker login).
    DeployError, KeyFileError, ValueError, OSError name what is wrong."""
    from tabletimer.hub.fleet import deploy

    cfg = deploy.make_config(
        template, key=keys.key(board) or "00" * 32, board=board, wifi_ssid=args.wifi_ssid,
        wifi_password=args.wifi_password,
        broker_host=(args.broker_host[0] if len(args.broker_host) == 1 else args.broker_host)
        if args.broker_host else None, failover=getattr(args, "failover", None),
        broker_port=args.broker_port, broker_ca=_board_ca(args.broker_ca),
        buttons=[int(p) for p in args.buttons.split(",")] if args.buttons else None,
        buzzer_pin=args.buzzer_pin, buzzer_kind=args.buzzer_kind, led=args.led)
    if store_key:
        cfg["key"] = keys.ensure(board)          # stored for the hub before flashing
    # the board's broker login (used by a broker from `tabletimer broker config`)
    cfg["broker"]["user"], cfg["broker"]["password"] = board, mqtt_password(cfg["key"])
    return cfg


def cmd_board_flash(args) -> int:
    from tabletimer import firmware_dir
    from tabletimer.hub.fleet import deploy

    try:
        keys = BoardKeys(Path(args.keys))
        board = args.id
        if board is None:
            board = json.loads(Path(args.template).read_text()).get("board") if args.template else None
        if not board:
            raise deploy.DeployError("give the board's id with --id (e.g. --id T07)")
        template = Path(args.template) if args.template else firmware_dir() / "config.example.json"
        cfg = board_config(args, keys, board, template, store_key=not args.dry_run)
        cmd = deploy.deploy(args.device, cfg, dry_run=args.dry_run)
    except (deploy.DeployError, KeyFileError, ValueError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except subprocess.CalledProcessError as e:
        print(f"error: mpremote failed ({e.returncode}); is the board on {args.device}?", file=sys.stderr)
        return 1
    print(json.dumps(shown_config(cfg), indent=2))
    if args.dry_run:
        print(" ".join(cmd))          # the configuration in it is a temporary file's name
    else:
        print(f"board {board} flashed (install {cfg['install']}); its key is in {keys.path}")
    return 0


def _board_ca(path: str | None) -> str | None:
    """--broker-ca: the CA certificate (PEM) as the board's configuration carries it."""
    if not path:
        return None
    from ..broker.tls_certs import board_ca

    try:
        return board_ca(Path(path).read_bytes())
    except ValueError as e:
        raise ValueError(f"--broker-ca {path}: {e}") from e


def shown_config(cfg: dict) -> dict:
    """The configuration as printed: its secrets (the board's key, its
    broker login's and the WiFi's passwords) hidden."""
    shown = dict(cfg, key="<secret>")
    for part in ("broker", "wifi"):
        if isinstance(cfg.get(part), dict) and cfg[part].get("password") is not None:
            shown[part] = dict(cfg[part], password="<secret>")
    return shown


def cmd_broker_config(args) -> int:
    """A Mosquitto configuration for the event: a login per board (password
    derived from its key), the hub's login, an ACL, persistence."""
    from ..broker.mosquitto_config import write_mosquitto_config

    try:
        from ..event.folder import rounds

        evs = [load_event(args.dir, r) for r in rounds.names(args.dir)] or [load_event(args.dir)]
        ev = evs[0]                     # the hall's files are every round's
        keys = BoardKeys(ev.keys_file)
        missing = sorted({s.board for e in evs for s in e.stations} - set(keys.boards()))
        if missing:
            print(f"warning: no key yet for {', '.join(missing)} (flash them with --keys "
                  f"{ev.keys_file}, then run this again)", file=sys.stderr)
        if args.tls and not args.tls_host:
            raise ValueError("--tls needs the address boards connect to: --tls-host ADDRESS "
                             "(the laptop's IP address on the hall network, or its name)")
        port = args.port or (8883 if args.tls else 1883)
        pw_file = ensure_hub_password(ev.path)
        conf = write_mosquitto_config(ev.path / "mosquitto", keys, HUB_USER, pw_file.read_text().strip(),
                                      listen_host=args.listen, port=port,
                                      tls_hosts=args.tls_host if args.tls else None, hub_port=args.hub_port)
    except (event_folder.EventFolderError, FormatError, KeyFileError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    hub_port = args.hub_port if args.tls else port
    print(f"wrote {conf}\nstart it:  mosquitto -c {conf}\nthen:      tabletimer run {ev.path} "
          f"--broker mqtt://127.0.0.1:{hub_port}   (the hub logs in as '{HUB_USER}' with "
          f"{pw_file})")
    if args.tls:
        print(f"boards:    tabletimer board flash ... --broker-host {args.tls_host[0]} --broker-port {port} "
              f"--broker-ca {conf.parent / 'ca.crt'}   (TLS only on port {port})")
    return 0


def cmd_board_check(args) -> int:
    from tabletimer.hub.fleet import board_check

    return board_check.main(["-v"] if args.verbose else [])
