"""`tabletimer rehearse DIR --standby`: the hub laptop's death rehearsed on
one laptop (issue 28; docs/operations.md, "The hub laptop died").  Two
laptops played by two loopback addresses: the primary (`tabletimer run` on
the rehearsal's folder, its broker on 127.0.0.2, "the hub laptop") and a
standby (`tabletimer standby` on a copy of the folder, DIR/rehearsal-standby,
its idle broker on 127.0.0.1 with the same port, "the second laptop"), each
its own process; the simulated boards (the real firmware) in this one,
flashed with both addresses, the hub laptop's first.  From another terminal,
as at the event:

    tabletimer act DIR/rehearsal round_start        the desk starts the round
    tabletimer press DIR/rehearsal T01 1            a finish call
    tabletimer rehearse DIR --kill-primary          the hub laptop dies (SIGKILL)
    tabletimer rehearse DIR --takeover              at the standby's PRIMARY SILENT:
                                                    it stops, `tabletimer takeover` starts
    tabletimer act DIR/rehearsal-standby ...        the desk on the new hub

The children's lines are printed prefixed ("primary: ", "standby: ", "new
hub: "); at the end (Ctrl-C) the presses the boards made and those in the
new hub's log.  The hubs' hall pages are off (one laptop: their ports would
meet); the new hub's web server takes the primary's address once it is dead,
so that a phone's page comes back where it was."""

from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path
from urllib.parse import urlsplit

from ..protocol.keys import mqtt_password
from ..event.folder import rounds
from ..event.log.replica import FOLDER_FILES
from ..web.referees import FILE as REFEREES
from ..runtime.signals import stop_on_signals

SECOND = "127.0.0.2"              # the hub laptop's address; the standby's is 127.0.0.1
COPY = "rehearsal-standby"        # in the event folder: the second laptop's copy of the rehearsal
FAILOVER_S = 5                    # the boards try the standby's address after this long without a broker
KILL, TAKEOVER = "kill-primary", "takeover"


def second_address_problem() -> str | None:
    """Why the drill cannot have its second laptop's address here (None: it can)."""
    try:
        with socket.socket() as s:
            s.bind((SECOND, 0))
    except OSError as e:
        return (f"the drill plays the hub laptop on {SECOND}, which this machine does not have ({e.strerror}); "
                f"on macOS: `sudo ifconfig lo0 alias {SECOND} up`, then again")
    return None


def _port_free(host: str, port: int) -> bool:
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


_OUTPUT = threading.Lock()          # the drill's standard output, one child's line at a time


def _say(text: str) -> None:
    """The drill's own line(s), written whole between the children's."""
    with _OUTPUT:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()


class _Child:
    """A hub of the drill as a child process, its lines printed with a prefix."""

    def __init__(self, name: str, argv: list[str]) -> None:
        self.name = name
        self.lines: list[str] = []
        self.said = threading.Condition()
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                     stdin=subprocess.DEVNULL)
        threading.Thread(target=self._relay, name=f"drill-{name}", daemon=True).start()

    def _relay(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            # one write per line, under one lock for every child: print() writes the text and its
            # newline apart, and two children's lines met on one ("standby: copied ...primary: board
            # D1 online"), which nobody reading the drill's output could find
            with _OUTPUT:
                sys.stdout.write(f"{self.name}: {line.rstrip()}\n")
                sys.stdout.flush()
            with self.said:
                self.lines.append(line)
                self.said.notify_all()
        with self.said:
            self.said.notify_all()

    def wait_line(self, pred, timeout: float) -> str | None:
        """The first line pred holds for, within timeout (None: not said, or the child ended)."""
        import time
        deadline = time.monotonic() + timeout
        i = 0
        with self.said:
            while True:
                while i < len(self.lines):
                    if pred(self.lines[i]):
                        return self.lines[i]
                    i += 1
                left = deadline - time.monotonic()
                if left <= 0 or self.proc.poll() is not None and i >= len(self.lines):
                    return None
                self.said.wait(min(left, 0.5))

    def stop(self, kill: bool = False) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL if kill else signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def _copy_folder(rnd: Path, folder: Path, copy: Path) -> None:
    """The second laptop's copy: the round's definition, the board keys and
    the hub secret (made now if the rehearsal has none yet), no log (the
    standby copies the primary's from its first row).  Made afresh at every
    drill, with the drill's boards' flash in it (copy/boards): a drill's
    boards see the new hub's term 2, which fenced every later rehearsal on
    the rehearsal's own boards, and the next drill's primary (issue 45,
    item 6); each drill's boards are flashed anew, the rehearsal's stay as
    they were."""
    from ..protocol.hub_secret import SECRET_FILE, ensure_secret
    from ..event.folder.private_file import write_private

    shutil.rmtree(copy, ignore_errors=True)
    copy.mkdir(parents=True)
    for name in (*FOLDER_FILES, "title"):
        if (rnd / name).exists():
            shutil.copyfile(rnd / name, copy / name)
    ensure_secret(folder)
    for name in ("board-keys.json", SECRET_FILE):
        write_private(copy / name, (folder / name).read_text())     # 0600 from its first byte
    if (folder / REFEREES).exists():        # the phones sign in again on the new hub (the event's badges)
        write_private(copy / REFEREES, (folder / REFEREES).read_text())


def drill(args, folder: Path, lock, source, keys, boards: dict[str, int], follow_presses) -> int:
    """The drill on the rehearsal's folder (its round `source`), until
    Ctrl-C / SIGTERM; follow_presses(sims, stop, asks) plays `tabletimer
    press` and hands the drill's asks (kill-primary, takeover) to asks."""
    from tabletimer.hub.fleet.simulator import SimBoard

    from ..web.server import parse_listen

    problem = second_address_problem()
    if problem is None and not _port_free(SECOND, args.port):
        problem = f"port {args.port} is taken on {SECOND}: give the drill another with --port"
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    event_dir = folder.parent
    rnd = rounds.round_dir(folder, source.round)
    copy = event_dir / COPY
    _copy_folder(rnd, folder, copy)
    round_arg = [] if rnd == folder else ["--round", source.round]
    kind = ["--broker-kind", args.broker_kind]
    host, web_port = parse_listen(args.web_listen) or ("127.0.0.1", 8765)
    tt = [sys.executable, "-m", "tabletimer.hub.cli.main"]          # `tabletimer`, this installation's
    lock.release()             # the primary's own process takes the rehearsal log's lock
    stop = threading.Event()
    stop_on_signals(stop)
    hubs: dict[str, _Child] = {}
    sims: list = []
    url: list[str] = []
    try:
        hubs["primary"] = primary = _Child("primary", [*tt, "run", str(folder), *round_arg, *kind, "--listen", SECOND,
                                                       "--port", str(args.port), "--web-listen", f"{host}:{web_port}",
                                                       "--hall-pages", "off"])
        said = primary.wait_line(lambda ln: "tabletimer console http" in ln, 60)
        if said is None:
            print("error: the primary hub did not start (its lines above)", file=sys.stderr)
            return 2
        url.append(said.split("tabletimer console ", 1)[1].split()[0])
        hubs["standby"] = standby = _Child("standby", [*tt, "standby", str(copy), "--primary", url[0], *kind,
                                                       "--port", str(args.port), "--web-listen", "off"])
        if standby.wait_line(lambda ln: "(idle: the boards are the primary's)" in ln, 60) is None:
            print("error: the standby did not start (its lines above)", file=sys.stderr)
            return 2
        for b, buttons in sorted(boards.items()):
            key = keys.key(b) or ""
            sim = SimBoard(b, SECOND, args.port, copy / "boards", key=key, stations=buttons,
                           broker_user=b, broker_password=mqtt_password(key))
            sim.config["broker"].update(host=[SECOND, "127.0.0.1"], failover=FAILOVER_S)
            sim.reboots = True       # boots again after its reset, as a board does
            sims.append(sim.start())
        d, first = event_dir, sorted(boards)[0]
        _say(f"drill: the hub laptop (pid {primary.proc.pid}, its broker on {SECOND}:{args.port}) and the "
              f"standby laptop (pid {standby.proc.pid}, its idle broker on 127.0.0.1:{args.port}); "
              f"{len(sims)} simulated board(s) flashed with both, the hub laptop's first. From another terminal:\n"
              f"  tabletimer act {folder} round_start    (the desk starts the round)\n"
              f"  tabletimer press {folder} {first} 1    (a finish call)\n"
              f"  tabletimer rehearse {d} --kill-primary    (the hub laptop dies)\n"
              f"  tabletimer rehearse {d} --takeover    (at the standby's PRIMARY SILENT: it takes over)\n"
              f"  tabletimer act {copy} ...    (the desk, on the new hub)\n"
              f"Ctrl-C ends the drill.")

        def asked(what: str) -> None:
            if what == KILL and primary.proc.poll() is None:
                _say(f"drill: the hub laptop dies: SIGKILL to pid {primary.proc.pid}")
                primary.stop(kill=True)
            elif what == TAKEOVER and "new hub" not in hubs:
                if primary.proc.poll() is None:
                    _say("drill: the primary still runs: kill it first (`--kill-primary`); a takeover from "
                          "a live primary is the split brain the docs warn of")
                    return
                _say("drill: the standby stops; `tabletimer takeover` starts on its copy, its web server on "
                      f"the dead primary's address ({url[0]}: the phones' pages come back where they were)")
                standby.stop()
                hubs["new hub"] = _Child("new hub", [*tt, "takeover", str(copy), "--primary", url[0], *kind,
                                                     "--listen", "127.0.0.1", "--port", str(args.port),
                                                     "--web-listen", f"{host}:{urlsplit(url[0]).port}",
                                                     "--hall-pages", "off"])
        follow_presses(sims, stop, asked)
        try:
            stop.wait()
        except KeyboardInterrupt:
            pass
        return 0
    finally:
        stop.set()
        presses = sum(r.get("sim") == "press" for s in sims for r in s.records)
        for s in sims:
            s.stop()
        for child in reversed(list(hubs.values())):
            child.stop()
        if "new hub" in hubs:
            from ..event.log.rows import RowKind, kind_of
            from ..event.log.store import EventStore
            store = EventStore(copy / "events.sqlite")
            try:
                stored = sum(kind_of(e) is RowKind.BOARD_PRESS for e in store.events())
            finally:
                store.close()
            _say(f"drill over: the boards made {presses} press(es); the new hub's log has {stored}")
        else:
            _say(f"drill over (no takeover): the boards made {presses} press(es)")
