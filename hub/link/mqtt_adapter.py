"""The hub's MQTT edge (paho-mqtt 2.x, VERSION2 callbacks).

Subscribes in on_connect (so a reconnect resubscribes), stamps each message
with the hub time at arrival, and publishes what the service answers -- the
service has committed the event before that.  Clock-sync requests are
answered on paho's network thread; everything the service stores goes to
the commit thread, which hands whatever has arrived meanwhile to the service
at once (HubService.handle_many: one transaction, one fsync, for all of
them), so events that arrive together share a commit and a sync reply never
waits behind one.

A daemon thread sends the hub's probe of its own path (self_probe.py) and,
when the probes stop coming back while connected, drops the connection
(shutting its socket: paho sees the connection lost, connects again and
on_connect subscribes again; calling reconnect() from another thread would
race paho's network thread).
"""

from __future__ import annotations

import logging
import queue
import socket
import threading
import time
from typing import Callable

import paho.mqtt.client as mqtt

from tabletimer.shared import protocol

from ..protocol.hub_protocol import BROKER_NOTICE, HUB_STATUS, PROBE, hub_status, hub_subscriptions
from .mqtt_client import HubClient
from .self_probe import PROBE_INTERVAL_MS, SelfProbe
from ..broker.broker_notices import BrokerNotices
from ..core.changes import Subscription, ToBoards
from ..core.service import HubService

log = logging.getLogger(__name__)

# the most messages one commit takes (more wait for the next one, a few ms later)
MAX_BATCH = 500
_SYNC_TOPIC_END = "/" + protocol.SYNC


def no_delay(client, userdata, sock) -> None:
    """paho's on_socket_open: acks and sync replies are tiny; without
    TCP_NODELAY, Nagle's algorithm and delayed ACKs hold them back for up to
    40 ms."""
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    except (OSError, AttributeError):
        pass


class HubMqtt:
    def __init__(self, service: HubService, host: str, port: int,
                 user: str | None = None, password: str | None = None,
                 client_id: str = "tabletimer-hub", probe_interval: float = PROBE_INTERVAL_MS / 1000,
                 probe_deadline: float | None = None) -> None:
        """probe_interval: seconds between two probes of the hub's own path;
        probe_deadline: seconds without one back (while connected) before
        the hub alerts and reconnects (default 3 intervals)."""
        self.service = service
        self.host, self.port = host, port
        self.connected = threading.Event()
        # the broker confirmed the hub's subscriptions (SUBACK): from now on it hears every board;
        # a message a board sent between the CONNACK and this went to nobody (a board sends again)
        self.listening = threading.Event()
        self._subscribe_mid: int | None = None
        self.connections = 0        # successful connections (and reconnections)
        self.probe = SelfProbe(int(probe_interval * 1000),
                               None if probe_deadline is None else int(probe_deadline * 1000))
        self._probe_lock = threading.Lock()       # a leaf lock: nothing is taken while it is held
        self._probe_stop = threading.Event()
        self._probe_thread: threading.Thread | None = None
        self.notices = BrokerNotices(self._who)      # the embedded broker's notices (broker_notices.py)
        self._me = {client_id, user}
        # messages to store, in arrival order: (topic, payload, received ms, retained); None: stop
        self._inbox: queue.SimpleQueue = queue.SimpleQueue()
        self._commit_thread: threading.Thread | None = None
        c = self.client = HubClient(mqtt.CallbackAPIVersion.VERSION2, client_id=client_id,
                                    clean_session=True)
        if user:
            c.username_pw_set(user, password)
        c.will_set(HUB_STATUS, protocol.encode(hub_status(protocol.OFFLINE)),
                   qos=1, retain=True)
        c.reconnect_delay_set(min_delay=1, max_delay=5)
        c.max_queued_messages_set(0)         # unlimited: never drop an ack
        # no limit: with one, paho scans every message in flight at each
        # PUBACK (to send the next queued one), which took most of the
        # network thread's time in a burst of acks; the brokers do not limit
        # what a client sends (Mosquitto's max_inflight_messages is its own
        # sending), and a reconnect sends again whatever was not PUBACKed
        c.max_inflight_messages_set(0)
        c.on_socket_open = no_delay
        c.on_connect = self._on_connect
        c.on_subscribe = self._on_subscribe
        c.on_disconnect = self._on_disconnect
        c.on_message = self._on_message
        # what the service's parts publish for the boards (ToBoards), sent by this link until it
        # stops (a link started again on the same service takes it over)
        self._to_boards: Subscription | None = service.changes.subscribe(ToBoards, self._send_to_boards)

    def _on_connect(self, client, userdata, flags, reason_code, properties) -> None:
        if reason_code.is_failure:
            log.error("broker refused the hub: %s", reason_code)
            return
        self.listening.clear()
        self._subscribe_mid = client.subscribe([(t, 1) for t in hub_subscriptions()] + [(PROBE, 1), (BROKER_NOTICE, 1)])[1]
        client.publish(HUB_STATUS, protocol.encode(hub_status(protocol.ONLINE)),
                       qos=1, retain=True)
        self.service.connected()       # the schedules again, and the hub's status to each board
        now = self.service.clock.now_ms()
        with self._probe_lock:
            self.probe.connected(now)
        self.service.registry.listening(now)     # boards are silent only for what they have not sent since
        self.connections += 1
        self.connected.set()

    def _who(self, client_id: str) -> str:
        """A client id in an operator's words."""
        if client_id in self._me:
            return "the hub"
        board = client_id[3:] if client_id.startswith("tt-") else client_id
        return f"board {board}" if board in self.service.registry.boards else f"client id {client_id!r}"

    def _on_subscribe(self, client, userdata, mid, reason_codes, properties) -> None:
        if mid == self._subscribe_mid:
            self.listening.set()

    def _on_disconnect(self, client, userdata, flags, reason_code, properties) -> None:
        self.connected.clear()
        self.listening.clear()
        with self._probe_lock:
            self.probe.disconnected(self.service.clock.now_ms())
        self.service.registry.listening(None)

    def _on_message(self, client, userdata, msg) -> None:
        received = self.service.clock.now_ms()
        if msg.topic == PROBE:                   # the hub's own probe: never a board message
            with self._probe_lock:
                note = self.probe.received(msg.payload, received)
            if note:
                self._note(note)
            return
        if msg.topic == BROKER_NOTICE:           # the broker's own word: never a board message
            with self._probe_lock:
                t = self.notices.heard(msg.payload, received)
            if t is not None:
                self._note(self.notices.text(t))
            return
        item = (msg.topic, msg.payload, received, bool(msg.retain))
        if msg.topic.endswith(_SYNC_TOPIC_END):
            # stores nothing: answered here, never behind a commit
            with self._probe_lock:       # delivered (busy while the commit thread has work)
                self.probe.delivered(received, busy=not self._inbox.empty())
            try:
                self.service.handle_many([item], emit=self.publish_all)
            except Exception:   # never let one message kill the network thread
                log.exception("failed to handle a message on %s", msg.topic)
            return
        with self._probe_lock:       # (with the queue: the commit thread's "all done" sees it)
            self._inbox.put(item)
            self.probe.delivered(received, busy=True)

    # ------------------------------------------------------ the commit thread
    def _commit_loop(self) -> None:
        while True:
            batch = [self._inbox.get()]
            while batch[-1] is not None and len(batch) < MAX_BATCH:
                try:
                    batch.append(self._inbox.get_nowait())
                except queue.Empty:
                    break
            stop = batch[-1] is None
            items = batch[:-1] if stop else batch
            if items:
                try:
                    self.service.handle_many(items, emit=self.publish_all)
                except Exception:   # never let one batch end the thread
                    log.exception("failed to handle %d message(s) from the broker", len(items))
            with self._probe_lock:
                if self._inbox.empty():
                    self.probe.delivered(self.service.clock.now_ms(), busy=False)
            if stop:
                return

    # ------------------------------------------------------ the self-probe
    def _probe_loop(self) -> None:
        step = self.probe.interval_ms / 2000          # half an interval, in seconds
        while not self._probe_stop.wait(step):
            try:
                self._probe_tick()
            except Exception:          # never let the probe end: it is what notices a deaf hub
                log.exception("the hub's self-probe failed")

    def _probe_tick(self) -> None:
        now = self.service.clock.now_ms()
        with self._probe_lock:
            tick = self.probe.tick(now)
            if tick.reconnect:
                self._drop_connection()
        if tick.note:
            self._note(tick.note)
        if tick.probe is not None:
            self.client.publish(PROBE, tick.probe, qos=1)

    def _drop_connection(self) -> None:
        """Shut the socket under paho's network thread: it reads the end of
        the connection, calls on_disconnect and connects again.  Called
        under the probe lock, which on_disconnect takes: paho cannot be
        between a lost connection and a new one meanwhile, so this socket is
        the one found dead (None, or closed, if paho just lost it)."""
        sock = self.client.socket()
        if not isinstance(sock, socket.socket):     # none (or not a TCP socket: nothing to cut)
            return
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass                       # already closed: paho reconnects anyway

    def _network_alerts(self) -> list[str]:
        with self._probe_lock:
            now = self.service.clock.now_ms()
            text = self.probe.alert(now)
            return ([text] if text else []) + self.notices.alerts(now)

    def _note(self, text: str) -> None:
        log.warning("%s", text)
        self.service.note(text)

    def publish_all(self, out) -> None:
        """The service's messages, in order, with one wake-up of paho's
        network thread for all of them (mqtt_client.py).  A fenced hub (another
        took over from its log: HubService.fenced, terms.py) sends nothing: no ack, no
        schedule (the boards keep their presses for the hub that took over)."""
        if out and not self.service.fenced:
            self.client.publish_batch(out)      # Outgoing: (topic, payload, qos, retain)

    def start(self, timeout: float = 30.0, while_waiting: Callable[[], None] | None = None) -> None:
        """Connect; return once the broker has confirmed the hub's
        subscriptions (ConnectionError after timeout: 30 s, as a laptop busy
        starting its broker and everything else may need; 10 s was missed
        beside two CPU burners and a parallel test run).  while_waiting():
        called every quarter of a second meanwhile (the hub's check of its
        child broker: one that dies before the hub is subscribed is started
        again, and the hub connects to that one)."""
        if self._to_boards is None:
            self._to_boards = self.service.changes.subscribe(ToBoards, self._send_to_boards)
        if self._commit_thread is None:
            self._commit_thread = threading.Thread(target=self._commit_loop, name="hub-commit", daemon=True)
            self._commit_thread.start()
        self.client.connect_async(self.host, self.port, keepalive=15)
        self.client.loop_start()
        self._probe_stop.clear()
        self.service.queries.add_alerts("the MQTT link", self._network_alerts)
        self._probe_thread = threading.Thread(target=self._probe_loop, name="hub-self-probe", daemon=True)
        self._probe_thread.start()
        deadline = time.monotonic() + timeout
        subscribed = False
        while not subscribed:
            subscribed = self.listening.wait(min(0.25, max(0.0, deadline - time.monotonic())))
            if subscribed or time.monotonic() >= deadline:
                break
            if while_waiting is not None:
                while_waiting()
        # once subscribed the hub has started: a broker lost right after (its child killed at that
        # moment) is the running hub's to reconnect to (paho) and restart (the tick), not a failure
        # to start (that was a flake beside two CPU burners: SUBACK, then the broker's death, then
        # this check found the connection gone and the hub exited)
        if not subscribed:
            self.stop()
            raise ConnectionError(f"could not connect to the MQTT broker at {self.host}:{self.port}")

    def _send_to_boards(self, note: ToBoards) -> None:
        self.publish_all(note.messages)

    def stop(self) -> None:
        if self._to_boards is not None:
            self._to_boards.cancel()
            self._to_boards = None
        self._probe_stop.set()
        t, self._probe_thread = self._probe_thread, None
        if t is not None and t.is_alive():      # (not started: a Ctrl-C during start)
            t.join(5)
        self.service.queries.drop_alerts("the MQTT link")     # a stopped hub's probe says nothing
        if self.connected.is_set():
            info = self.client.publish(HUB_STATUS,
                                       protocol.encode(hub_status(protocol.OFFLINE)),
                                       qos=1, retain=True)
            try:
                info.wait_for_publish(2)
            except (RuntimeError, ValueError):
                pass
        self.client.disconnect()
        self.client.loop_stop()
        t, self._commit_thread = self._commit_thread, None
        if t is not None:
            self._inbox.put(None)          # after what was received: stored before the thread ends
            if t.is_alive():               # (not started: a Ctrl-C during start)
                t.join(30)
