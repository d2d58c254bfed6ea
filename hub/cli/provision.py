"""`tabletimer boards provision DIR`: the first flash of a crate of boards,
one plugged after another, without typing.  It prints the plan (the event,
the ids still to hand out in stations.csv order, the settings every board
gets), then waits for a board on a new USB serial port; for each: reads
what its /config.json says (a board provisioned already is left alone),
writes MicroPython with esptool if --image, then the firmware and a
configuration with the next free id (as `board flash --id` does: a new
install id, the board's key from the event's keys file), makes it play
its identify pattern, and says "T07 done on /dev/ttyUSB0: unplug it and
plug the next".  Every attempt is a row of DIR/provisioning.csv
(fleet/provisioning.py): a restart goes on with the next free id; a failed
attempt hands out no id.  Ctrl-C ends it with a summary.  Exit 0 once
nothing is left to provision, 1 if some ids are left (or a board failed at
the end), 2 on bad input (nothing done)."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..fleet import provisioning as pv
from ..protocol.keys import BoardKeys, KeyFileError
from ..rules.formats import FormatError
from .boards import add_config_options, board_config
from .common import load_event
from tabletimer.hub.event.folder import event_folder

POLL_S = 0.5
DEPLOY_TIMEOUT_S = 180          # mpremote copying some 20 files at 115200 baud: well under a minute
TEMPLATE_NAME = "board-template.json"


def add_parser(bsub) -> None:
    p = bsub.add_parser(
        "provision", help="the first flash of many boards over USB: plug them one after another; each gets "
                          "the next free id of stations.csv, the firmware and its settings, and plays its id",
        description="Waits for boards plugged one after another (USB serial); each gets MicroPython "
                    "(--image), the firmware and a configuration with the next free id of stations.csv, "
                    "then plays its identify pattern. DIR/provisioning.csv records every attempt: a "
                    "restart goes on with the next free id. The settings: DIR/board-template.json if "
                    "there is one (else firmware/config.example.json), and the options, as `board flash`.")
    p.add_argument("dir", help="the event folder (its stations.csv, its board-keys.json)")
    add_config_options(p, "DIR/board-template.json if there is one, else firmware/config.example.json")
    p.add_argument("--image", metavar="FILE",
                   help="a MicroPython .bin for the ESP32 (downloaded beforehand: nothing is fetched), "
                        "written first with esptool (erase_flash, write_flash 0x1000); needs esptool")
    p.add_argument("--id", dest="first_id", metavar="ID",
                   help="give the next board plugged this id (then the free ones in order); an id "
                        "provisioned already goes to the new board (a spare replacing it)")
    p.add_argument("--only", action="append", metavar="ID,ID", help="hand out only these ids")
    p.add_argument("--overwrite", action="store_true",
                   help="provision a board that carries another configuration (an earlier event's, a "
                        "spare's) too: it gets the next free id (default: it is left alone)")
    p.add_argument("--take-present", action="store_true",
                   help="a board on a port that is there at the start is provisioned too (default: only "
                        "boards plugged after the start)")
    p.add_argument("--dry-run", action="store_true",
                   help="print the plan and the commands each board would get; nothing is written, no "
                        "key is stored, no board is waited for")
    p.add_argument("--round", help="the round whose stations.csv to take (default: every round's boards)")
    p.add_argument("--poll", type=float, default=POLL_S, help=argparse.SUPPRESS)
    p.set_defaults(func=cmd_boards_provision)


@dataclass
class Session:
    args: argparse.Namespace
    keys: BoardKeys
    record: Path
    entries: list[pv.Entry]
    plan: pv.Plan
    template: Path
    image: Path | None
    esptool: list[str] | None
    files: list[Path] = field(default_factory=list)
    done: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    current: tuple | None = None          # (board, port, install) while one is written


def cmd_boards_provision(args) -> int:
    from tabletimer.hub.fleet import deploy, usb_boards

    try:
        s = _session(args)
        sample = board_config(args, s.keys, s.plan.next() or s.plan.order[0], s.template, store_key=False)
    except (pv.ProvisionError, event_folder.EventFolderError, FormatError, KeyFileError,
            deploy.DeployError, ValueError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if s.image is not None:
        problem = usb_boards.image_problem(s.image)
        if problem:
            print(f"error: {problem}", file=sys.stderr)
            return 2
        if s.esptool is None:
            if not args.dry_run:
                print(f"error: {usb_boards.ESPTOOL_MISSING}", file=sys.stderr)
                return 2
            print(f"warning: {usb_boards.ESPTOOL_MISSING}; without it the real run refuses to start",
                  file=sys.stderr)
    _print_plan(s, sample)
    with tempfile.TemporaryDirectory() as tmp:
        from tabletimer.hub.fleet import firmware_build

        try:
            s.files = firmware_build.build(Path(tmp) / "board")
        except Exception as e:            # mpy-cross missing or failing: nothing can be written
            print(f"error: the firmware does not build: {e} (`tabletimer board check` says more)",
                  file=sys.stderr)
            return 2
        if args.dry_run:
            _print_dry_run(s, sample)
            return 0
        lock = _lock(s.record)
        if lock is None:
            return 2
        try:
            return _loop(s)
        finally:
            os.close(lock)


def _session(args) -> Session:
    from tabletimer import firmware_dir
    from tabletimer.hub.fleet import usb_boards
    from ..event.folder import rounds

    names = [args.round] if args.round else rounds.names(args.dir)
    evs = [load_event(args.dir, r) for r in names] or [load_event(args.dir)]
    ev = evs[0]
    record = ev.path / pv.RECORD_NAME
    text = record.read_text() if record.exists() else ""
    entries, problems = pv.parse_record(text)
    for p in problems:
        print(f"warning: {p}", file=sys.stderr)
    taken = pv.taken(entries)
    plan = pv.Plan([b for b in pv.board_order([[st.board for st in e.stations] for e in evs])],
                   done=set(taken), only=pv.parse_ids(args.only) or None, chosen=args.first_id)
    if args.first_id in taken:
        t = taken[args.first_id]
        print(f"warning: --id {args.first_id}: {args.first_id} was provisioned {t.time} (install {t.install}); "
              f"the next board plugged replaces that one (a spare): the old one is a stranger to the hub",
              file=sys.stderr)
    template = (Path(args.template) if args.template else ev.path / TEMPLATE_NAME
                if (ev.path / TEMPLATE_NAME).exists() else firmware_dir() / "config.example.json")
    image = Path(args.image) if args.image else None
    return Session(args, BoardKeys(ev.keys_file), record, entries, plan, template, image,
                   usb_boards.esptool() if image else None)


def _print_plan(s: Session, sample: dict) -> None:
    todo = s.plan.todo()
    ev_path = s.record.parent
    print(f"provisioning the boards of {event_folder.event_title(ev_path)} ({ev_path})")
    print(f"  stations.csv: {len(s.plan.order)} board(s); provisioned already: {len(s.plan.done)} "
          f"({s.record}); to do now: {len(todo)}, in this order:")
    print("    " + (", ".join(todo) if todo else "(none)"))
    print("  every board gets:")
    for line in pv.settings_lines(sample):
        print(f"    {line}")
    print(f"    (from {s.template} and the options; its own id, key and a new install id)")
    if s.image:
        print(f"  first MicroPython from {s.image}, with esptool: erase_flash, then write_flash 0x1000")
    else:
        print("  no --image: boards must run MicroPython already (new ones: --image FILE, docs/hardware.md)")
    print("  when written, the board plays its identify pattern (10 short beeps, its LED blinking)")


def _print_dry_run(s: Session, sample: dict) -> None:
    from tabletimer.hub.fleet import deploy, usb_boards

    board = s.plan.next()
    print("dry run: nothing is written, no key is stored, no board is waited for")
    if board is None:
        print("nothing to provision: every board of the plan is in the record")
        return
    print(f"the first board plugged (PORT: its serial port) would get {board}:")
    print("  " + shlex.join(usb_boards.read_config_command("PORT")) + "    # what it carries already")
    if s.image:
        for cmd in usb_boards.image_commands(s.esptool or ["esptool"], "PORT", s.image):
            print("  " + shlex.join(cmd))
    cmd = deploy.deploy("PORT", sample, dry_run=True, files=s.files, then=_play())
    print("  " + _shown_command(cmd))
    print("then the next boards the same way, each with its own configuration (its id, its key, a new "
          "install id); the ids, in the order the boards plugged get them:")
    for n, b in enumerate(s.plan.todo(), 1):
        print(f"  {n}. {b}")


def _shown_command(cmd: list[str]) -> str:
    """The command as a shell line, its scripts (exec) by their first line."""
    return " ".join(shlex.quote(f"<script: {a.splitlines()[0]} ...>") if "\n" in a else shlex.quote(a)
                    for a in cmd)


def _play() -> list[str]:
    from tabletimer.hub.fleet import deploy

    return ["exec", deploy.PLAY_IDENTIFY, "+"]


def _lock(record: Path) -> int | None:
    """One provisioning per event folder at a time (two would hand out the
    same id): an OS lock, dropped when this process ends in any way."""
    try:
        import fcntl
    except ImportError:              # Windows: not locked
        fcntl = None                 # type: ignore[assignment]
    path = record.with_name(record.name + ".lock")
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as e:
        print(f"error: cannot write in {record.parent} ({e.strerror or e})", file=sys.stderr)
        return None
    if fcntl is not None:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            print(f"error: another `tabletimer boards provision` runs on {record.parent} (it holds "
                  f"{path}): one at a time, or two boards could get the same id; plug the boards "
                  f"into that one's laptop, or stop it first", file=sys.stderr)
            return None
    return fd


def _loop(s: Session) -> int:
    from tabletimer.hub.fleet import usb_boards

    try:
        present = set(usb_boards.list_ports())
        busy = set() if s.args.take_present else present
        if present and not s.args.take_present:
            print(f"  left alone (there at the start): {', '.join(p.device for p in sorted(present))} "
                  f"(--take-present to provision them too)")
        if s.plan.next() is None:
            print("nothing to provision: every board of the plan is in the record")
            return 0
        print("waiting for a board: plug one in (Ctrl-C to stop)", flush=True)
        while True:
            ports = usb_boards.list_ports()
            busy &= set(ports)                 # unplugged: its port may bring the next board
            new = [p for p in ports if p not in busy]
            if not new:
                time.sleep(s.args.poll)
                continue
            busy.add(new[0])
            _one(s, new[0])
            if s.plan.next() is None:
                print("every board of the plan is provisioned", flush=True)
                break
    except KeyboardInterrupt:
        if s.current:
            board, port, install = s.current
            _failed(s, board, port, install, "stopped (Ctrl-C) during the write", "Plug it again at the next start")
        print("\nstopped", flush=True)
    remaining = s.plan.todo()
    print(pv.summary(s.done, s.failed, remaining), flush=True)
    return 0 if not remaining else 1


def _one(s: Session, port) -> None:
    from tabletimer.hub.fleet import deploy, usb_boards

    where = port.device
    print(f"{where}: a board" + (f" (USB serial {port.serial})" if port.serial else "") + ": reading it ...",
          flush=True)
    try:
        cfg = usb_boards.read_config(where)
    except usb_boards.UsbError as e:
        if s.image is None:
            s.failed.append(where)
            print(f"{where}: not provisioned: {e}: no MicroPython answered. A new board needs it first: "
                  f"start again with --image FILE; else plug it again (a data cable, not a charging one)",
                  flush=True)
            return
        cfg = None                        # no MicroPython yet: the image comes first
    seen = pv.recognise(cfg, s.entries, set(s.plan.order), s.keys.key)
    decision = pv.decide(seen, s.plan, s.args.overwrite)
    if decision.board is None:
        if decision.record_found:
            _append(s, pv.Entry(_now(), seen.board or "", seen.install or "", where, port.serial or "",
                                pv.FOUND, "flashed for this event before (its key)"))
            s.plan.mark_done(seen.board or "")
        print(f"{where}: {decision.message}", flush=True)
        return
    board, install = decision.board, ""
    if seen.kind == pv.RETRY and seen.entry:
        print(f"{where}: an attempt of {seen.entry.time} ({seen.board}) did not finish on it: provisioning "
              f"it again", flush=True)
    s.current = (board, port, install)
    try:
        if s.image is not None:
            print(f"{where}: writing MicroPython ({s.image.name}) with esptool: erase, then write (a minute "
                  f"or two) ...", flush=True)
            usb_boards.write_image(s.esptool or [], where, s.image)
        cfg = board_config(s.args, s.keys, board, s.template, store_key=True)
        install = cfg["install"]
        s.current = (board, port, install)
        print(f"{where}: {board}: writing the firmware and its configuration (install {install}) ...", flush=True)
        deploy.deploy(where, cfg, files=s.files, then=_play(),
                      run=lambda c: usb_boards.run(c, "mpremote (writing the firmware)", DEPLOY_TIMEOUT_S))
    except usb_boards.UsbError as e:
        s.current = None
        _failed(s, board, port, install, str(e), _advice(str(e), port))
        return
    except (deploy.DeployError, KeyFileError, ValueError, OSError) as e:
        s.current = None
        _failed(s, board, port, install, str(e), "Check the settings and the keys file, then plug it again")
        return
    s.current = None
    _append(s, pv.Entry(_now(), board, install, where, port.serial or "", pv.DONE,
                        "with MicroPython " + s.image.name if s.image else ""))
    s.plan.mark_done(board)
    s.done.append(board)
    left = len(s.plan.todo())
    print(f"{board} done on {where}: unplug it and plug the next (write {board} on it; {left} to go)",
          flush=True)


def _advice(what: str, port) -> str:
    if sys.platform != "win32" and not os.path.exists(port.device):    # COM3 is no path
        return "The board was unplugged during the write: plug it in again"
    if what.startswith("esptool"):
        return ("If esptool kept printing 'Connecting...', hold the board's BOOT button while it "
                "connects; plug it again")
    return ("Unplug it and plug it again; if it fails again: does it run MicroPython (v1.22 or later)? "
            "--image FILE writes it")


def _failed(s: Session, board: str, port, install: str, what: str, advice: str) -> None:
    _append(s, pv.Entry(_now(), board, install, port.device, port.serial or "", pv.FAILED, what))
    s.failed.append(board)
    print(f"{board} not done on {port.device}: {what}. {advice}. {board} is not used up: the next board "
          f"plugged gets it ({len(s.plan.todo())} to go)", flush=True)


def _append(s: Session, entry: pv.Entry) -> None:
    """One row of the record, on disk before the next board is taken."""
    new = not s.record.exists() or s.record.stat().st_size == 0
    with open(s.record, "a", encoding="utf-8", newline="") as f:
        f.write(pv.record_text(entry, header=new))
        f.flush()
        os.fsync(f.fileno())
    s.entries.append(entry)


def _now() -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S")
