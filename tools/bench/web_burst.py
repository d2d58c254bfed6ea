"""The press burst on a hub with its web server, with and without web
clients on it: the signed boards press within one second (burst), the hub
started with its web server and the clients (the referees' phones, the
hall's pages) in a process of their own (WebClients), the baseline with
nobody on the web server (burst_alone), and the one against the other
(report_against).  Used by the phones' and the spectators' benchmarks."""

from __future__ import annotations

import multiprocessing
import random
import time

from tabletimer.hub.broker.ports import free_port
from tabletimer.tools.bench.hall_rig import Hall
from tabletimer.tools.bench.report import Report, pct, spread
from tabletimer.tools.bench.signed_boards import SignedBoards

SETTLE_S = 3.0           # from every board online to the burst


def wait_web(port: int, timeout: float = 30, hub=None) -> None:
    """Until the web server on 127.0.0.1:port answers.  With hub (its
    HubProcess), a hub that says it cannot listen there, or exits, is said
    at once, and a timeout says what the hub printed."""
    import http.client
    deadline = time.monotonic() + timeout
    while True:
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            c.request("GET", "/r/api/me")
            c.getresponse().read()
            c.close()
            return
        except OSError as e:
            why = hub.without_web() if hub is not None else None
            if why:
                raise RuntimeError(f"the hub's web server on port {port} will not answer ({why}): "
                                   f"{hub.said()}") from e
            if time.monotonic() > deadline:
                if hub is not None:
                    raise RuntimeError(f"the hub's web server on port {port} did not answer in "
                                       f"{timeout:g} s ({e}): {hub.said()}") from e
                raise
            time.sleep(0.1)


def cpu_seconds(pid: int) -> float:
    """CPU seconds (user + system) a process has used so far."""
    import psutil
    t = psutil.Process(pid).cpu_times()
    return t.user + t.system


def burst(hall: Hall, port: int, report: Report, label: str,
          pids: dict[str, int] | None = None) -> tuple[list[float], int]:
    """The press burst: every board within one second; (event -> ack ms,
    lost).  pids: name -> process whose CPU seconds from the burst's start
    to its last ack are reported."""
    gen = SignedBoards(hall, port, client_id=f"bench-load-{label.replace(' ', '-')}")
    try:
        gen.online()
        # boards are online long before the finishes: the views the pages got
        # for the boards' "online" rows are sent before the burst starts
        time.sleep(SETTLE_S)
        cpu0 = {k: cpu_seconds(pid) for k, pid in (pids or {}).items()}
        gen.presses(1, window_s=1.0, rng=random.Random(17))
        gen.wait_acked(120)
        if pids:
            report.add(f"CPU during the burst, {label}", ", ".join(
                f"{k} {cpu_seconds(pid) - cpu0[k]:.2f} s" for k, pid in pids.items()),
                "user + system, from the first press to the last ack")
        lat = gen.latencies()
        first = min(gen.sent.values(), default=0.0)
        if gen.acks:
            report.add(f"acks' arrival, {label}", f"{(min(gen.acks.values()) - first) / 1000:.2f} .. "
                       f"{(max(gen.acks.values()) - first) / 1000:.2f} s", "from the burst's first press")
    finally:
        gen.close()
    stored = len(hall.stored_presses())
    lost = max(len(hall.ids) - len(lat), len(hall.ids) - stored)
    return lat, lost


class WebClients:
    """The hall's hub started with its web server, and target(pipe, port,
    *args) in a spawned process of its own (the phones or the pages, off the
    bench's interpreter); port: the web server's, or with hall_pages the
    hall's pages' process's; `first`: what it sent once ready.  Use as a
    context manager: the process is killed and the hall closed at the end."""

    def __init__(self, hall: Hall, target, args: tuple, what: str, start_s: float,
                 hall_pages: bool = False) -> None:
        self.hall, self.what, self.proc = hall, what, None
        ctx = multiprocessing.get_context("spawn")
        self.pipe, there = ctx.Pipe()
        try:
            hall.start_hub(web_port=(web := free_port()))
            wait_web(web, hub=hall.hub)
            port = int(hall.hub.hall_url().rsplit(":", 1)[1]) if hall_pages else web   # type: ignore[union-attr]
            self.proc = ctx.Process(target=target, args=(there, port, *args), daemon=True)
            self.proc.start()
            if not self.pipe.poll(start_s):
                raise RuntimeError(f"the {what} did not start")
            self.first = self.pipe.recv()[1]
        except BaseException:
            self.close()
            raise

    def result(self, timeout: float = 240):
        """What the process sent at its end (it is then joined)."""
        if not self.pipe.poll(timeout):
            raise RuntimeError(f"the {self.what} did not finish")
        _, res = self.pipe.recv()
        self.proc.join(10)                              # type: ignore[union-attr]
        return res

    def close(self) -> None:
        if self.proc is not None and self.proc.is_alive():
            self.proc.kill()
        self.hall.close()

    def __enter__(self) -> "WebClients":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def burst_alone(hall: Hall, port: int, report: Report, label: str,
                broker_floor: tuple[float, float], pids_of=None) -> list[float]:
    """The burst on hall's hub with its web server and nobody on it (the
    baseline); the event -> ack times, reported, the lost counted.
    pids_of(hall): the processes whose CPU during the burst is reported."""
    try:
        hall.start_hub(web_port=(web := free_port()))
        wait_web(web, hub=hall.hub)
        without, lost = burst(hall, port, report, label, pids_of(hall) if pids_of else None)
    finally:
        hall.close()
    report.lost += lost
    report.add(f"event -> durable -> ack, {hall.n} boards within 1 s, {label}", spread(without),
               f"lost {lost}; x{pct(without, 99) / broker_floor[1]:.1f} the broker round trip (p99)")
    return without


def report_against(report: Report, label: str, what: str, n: int, with_: list[float], without: list[float],
                   lost: int, note: str = "") -> None:
    """The burst's event -> ack with the clients open, against the baseline's."""
    report.lost += lost
    r = pct(with_, 99) / pct(without, 99) if without and with_ else float("nan")
    r50 = pct(with_, 50) / pct(without, 50) if without and with_ else float("nan")
    report.add(f"event -> durable -> ack, {n} boards within 1 s, {label}", spread(with_),
               f"lost {lost}; p99 x{r:.2f} without {what} (p50 x{r50:.2f})" + note)
