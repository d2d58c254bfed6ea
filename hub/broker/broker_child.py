"""The embedded broker's process (broker.py's EmbeddedBroker starts it):
amqtt 0.12.1 with what a hall of boards and a hostile network need, each
fault named where it is fixed (patch_amqtt: a connect storm's; guard_amqtt:
the network's), and the hub told what it could not see otherwise
(BROKER_NOTICE: takeovers)."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from .connection_gate import CONNECT_DEADLINE_S, PER_HOST, SLOW, ConnectionGate
from ..protocol.hub_protocol import BROKER_NOTICE, MAX_PACKET
from .open_files import BROKER_FILES, room_for

SHUTDOWN_S = 2.0         # the hub gone (stdin closed): amqtt's shutdown given this long, then exit


class SnapshotDict(dict):
    """A dict whose iteration runs over a copy: amqtt iterates its
    subscriptions with awaits inside the loop, so another client subscribing
    meanwhile raised "dictionary changed size during iteration" and dropped
    the connecting client.  Its filters with wildcards are kept apart, so
    that a message's subscriptions are found without a look at every filter
    (matching())."""

    def __init__(self, *args) -> None:
        super().__init__(*args)
        self._wild = {k: None for k in dict.keys(self) if "+" in k or "#" in k}   # (ordered)

    def __setitem__(self, key, value) -> None:
        super().__setitem__(key, value)
        if "+" in key or "#" in key:
            self._wild[key] = None

    def __delitem__(self, key) -> None:
        super().__delitem__(key)
        self._wild.pop(key, None)

    def clear(self) -> None:
        super().clear()
        self._wild.clear()

    def __iter__(self):
        return iter(list(dict.keys(self)))

    def items(self):                                 # type: ignore[override]
        return list(dict.items(self))

    def matching(self, topic: str, matches) -> list:
        """(filter, subscriptions) of the filters that match topic: the one
        equal to it, and the wildcard ones matches(topic, filter) accepts
        (amqtt's own test, its rule for $ topics included)."""
        out = []
        exact = dict.get(self, topic)
        if exact is not None:
            out.append((topic, exact))
        for k in list(self._wild):
            subs = dict.get(self, k)
            if subs is not None and matches(topic, k):
                out.append((k, subs))
        return out


def patch_amqtt(broker) -> None:
    """Faults of amqtt 0.12.1 that a hall of boards connecting at once runs
    into (a connect storm made boards time out and retry for minutes, some
    stayed connected without their subscription): on every connection it
    sent the new client the retained messages of every topic filter *any*
    client had subscribed to (here: every board's schedule and status to
    every board); a late SUBSCRIBE of a replaced connection kept the new one
    from subscribing; its session monitor cleaned up the live session of a
    client that had just connected again under the id of a gone one; and it
    iterated its subscriptions unsafely."""
    cls = type(broker)
    if not getattr(cls, "_tt_patched", False):
        orig = cls._publish_retained_messages_for_subscription

        async def own_subscriptions_only(self, subscription, session) -> None:
            subscribers = self._subscriptions.get(subscription[0], ())
            if any(s.client_id == session.client_id for s, _ in subscribers):
                await orig(self, subscription, session)
        cls._publish_retained_messages_for_subscription = own_subscriptions_only

        add = cls.add_subscription

        async def current_session_only(self, subscription, session) -> int:
            # a board that gave up waiting for a SUBACK reconnects (same client
            # id, clean session) while the broker still works through the old
            # connection's SUBSCRIBE: that subscription of a replaced session
            # used to win, and the new connection never got a message
            current = self._sessions.get(session.client_id, (None, None))[0]
            if current is not None and current is not session:
                return 0x80                 # a replaced connection's late request
            subscribers = self._subscriptions.get(subscription[0])
            if subscribers:
                subscribers[:] = [(s, q) for s, q in subscribers
                                  if s is session or s.client_id != session.client_id]
            return await add(self, subscription, session)
        cls.add_subscription = current_session_only

        import asyncio
        import logging

        from amqtt.contexts import Action
        from amqtt.mqtt.constants import QOS_1, QOS_2

        async def indexed_broadcast(self, running_tasks) -> None:
            # amqtt's _run_broadcast, but the message's subscriptions looked
            # up (it tested every filter: every board's own topics, for every
            # message -- 60 % of the broker's time with 300 boards) and its
            # debug lines made only when they are logged
            broadcast = await self._broadcast_queue.get()
            topic = broadcast["topic"]
            debug = self.logger.isEnabledFor(logging.DEBUG)
            if debug:
                self.logger.debug(f"Processing broadcast message: {broadcast}")
            subs = self._subscriptions
            found = subs.matching(topic, self._matches) if isinstance(subs, SnapshotDict) else [
                (k, v) for k, v in subs.items() if self._matches(topic, k)]
            for _k_filter, subscriptions in found:
                for target_session, sub_qos in list(subscriptions):
                    qos = broadcast.get("qos", sub_qos)
                    if not await self._topic_filtering(target_session, topic=topic, action=Action.RECEIVE):
                        self.logger.info(f"{target_session.client_id} not allowed to receive messages "
                                         f"from TOPIC {topic}.")
                        continue
                    if (target_session.transitions.state != "connected"
                            and not target_session.clean_session
                            and qos in (QOS_1, QOS_2)
                            and not target_session.is_anonymous):
                        await self._retain_broadcast_message(broadcast, qos, target_session)
                        continue
                    if target_session.transitions.state != "connected":
                        continue
                    handler = self._get_handler(target_session)
                    if handler:
                        running_tasks.append(asyncio.ensure_future(
                            handler.mqtt_publish(topic, broadcast["data"], qos, retain=False)))
        cls._run_broadcast = indexed_broadcast

        cleanup, shutdown = cls._cleanup_session, cls.shutdown

        async def cleanup_if_still_gone(self, client_id: str) -> None:
            # amqtt's session monitor lists the clean sessions that are
            # disconnected, then cleans each up by its client id, awaiting
            # each in turn: a client that connected again under that id
            # meanwhile (a board whose id a stranger held for two seconds,
            # on a busy machine) had its new session cleaned up instead --
            # subscriptions gone, handler stopped, connection left open: deaf
            session = self._sessions.get(client_id, (None, None))[0]
            if session is not None and session.transitions.state != "disconnected" \
                    and not getattr(self, "_tt_shutting_down", False):
                return
            await cleanup(self, client_id)
        cls._cleanup_session = cleanup_if_still_gone

        async def shutdown_every_session(self) -> None:
            self._tt_shutting_down = True        # then every session goes, connected or not
            await shutdown(self)
        cls.shutdown = shutdown_every_session
        cls._tt_patched = True
    broker._subscriptions = SnapshotDict(broker._subscriptions)


class PacketTooLarge(Exception):
    pass


def load_access(path: str):
    """The BrokerAccess for the logins file BrokerLogins wrote (None: no
    logins, anyone on this machine)."""
    from .broker_access import BrokerAccess
    from ..protocol.keys import BoardKeys, mqtt_password

    if not path or not Path(path).exists():
        return None
    spec = json.loads(Path(path).read_text())

    def passwords() -> dict[str, str]:
        keys = BoardKeys(spec["keys_file"])
        users = {b: mqtt_password(keys.key(b) or "") for b in keys.boards()}
        users[spec["hub_user"]] = Path(spec["hub_password_file"]).read_text().strip()
        return users
    return BrokerAccess(spec["hub_user"], passwords(), reload=passwords)


# a replaced connection that amqtt has not closed this long after the
# takeover is cut (an abort: a reset, its unsent bytes dropped)
TAKEOVER_GRACE_S = 1.0


def _address(session) -> str | None:
    """host:port of an amqtt session's connection."""
    host = getattr(session, "remote_address", None)
    return None if host is None else f"{host}:{getattr(session, 'remote_port', '')}"


def guard_amqtt(access, max_packet: int, log, per_host: int = PER_HOST) -> ConnectionGate:
    """What amqtt 0.12.1 lacks for a hall's network, added around it; the
    connections' gate returned (its refusals: for the hub, serve()):
    - at most per_host connections at once from one address (loopback
      aside), and a whole CONNECT within CONNECT_DEADLINE_S (amqtt waited
      for ever: one host's idle sockets locked every board out);
    - a packet over max_packet bytes closes its connection (amqtt read
      whatever length a packet claimed: a board's login published 64 MB);
    - with access (BrokerAccess): a CONNECT is checked before the broker
      touches any session (amqtt cleaned the session of a client id, the
      hub's too, before it checked the password, and took it over even
      when it then refused the login: one anonymous connection made the hub
      deaf); the client id becomes the user name; every publish,
      subscription, delivery and last will is checked against the ACL;
    - a second connection with a client's id closes the first (amqtt took
      the first one's subscriptions and left it connected, deaf)."""
    import asyncio

    from amqtt.broker import Broker
    from amqtt.contexts import Action
    from amqtt.errors import MQTTError
    from amqtt.mqtt.connack import NOT_AUTHORIZED, ConnackPacket
    from amqtt.mqtt.packet import MQTTFixedHeader
    from amqtt.mqtt.protocol.broker_handler import BrokerProtocolHandler

    from .broker_access import READ, WRITE

    gate = ConnectionGate(per_host)
    transports: dict[tuple, asyncio.WriteTransport] = {}      # (host, port) -> the asyncio transport of that connection
    stream_connected = Broker.stream_connected

    async def gated(self, reader, writer, listener_name: str) -> None:
        peer = writer.get_extra_info("peername") or ("?", 0)
        if not gate.admit(peer[0]):
            writer.transport.abort()            # before it takes one of amqtt's connection slots
            return
        transports[peer[:2]] = writer.transport
        try:
            await stream_connected(self, reader, writer, listener_name)
        finally:
            gate.closed(peer[0])
            if transports.get(peer[:2]) is writer.transport:
                del transports[peer[:2]]
    Broker.stream_connected = gated

    read_header = MQTTFixedHeader.from_stream.__func__

    async def limited(cls, reader):
        header = await read_header(cls, reader)
        if header is not None:
            n = header.remaining_length        # + the fixed header: counted as Mosquitto counts
            n += 2 + (n >= 128) + (n >= 16384) + (n >= 2097152)
            if n > max_packet:
                raise PacketTooLarge(f"a packet of {n} bytes (at most {max_packet})")
        return header
    MQTTFixedHeader.from_stream = classmethod(limited)

    read_connect = BrokerProtocolHandler.init_from_connect.__func__
    arriving: dict[str, str] = {}        # client id -> address of its CONNECT being handled

    async def checked_connect(cls, reader, writer, plugins_manager, loop=None):
        try:
            handler, session = await asyncio.wait_for(read_connect(cls, reader, writer, plugins_manager, loop),
                                                      CONNECT_DEADLINE_S)
        except asyncio.TimeoutError:
            peer = writer.get_peer_info() or ("?", 0)
            gate.note(peer[0], SLOW)
            writer.is_closed = True             # amqtt's close would wait to send: cut instead
            t = transports.get(tuple(peer[:2]))
            if t is not None:
                t.abort()
            raise MQTTError(f"refused: no CONNECT within {CONNECT_DEADLINE_S:g} s") from None
        except PacketTooLarge as e:
            await writer.close()
            raise MQTTError(f"refused: {e}") from None
        if access is None:
            arriving[session.client_id or ""] = _address(session)
            return handler, session
        why = access.login(session.username, session.password, time.monotonic())
        if why is not None:
            log(f"refused a login from {session.remote_address} (client id {session.client_id!r}): {why}")
            await ConnackPacket.build(0, NOT_AUTHORIZED).to_stream(writer)    # as Mosquitto answers
            await writer.close()
            raise MQTTError(f"refused: {why}")
        session.client_id = session.username     # use_username_as_clientid
        if session.will_flag and not access.may(session.username, WRITE, session.will_topic or ""):
            # as Mosquitto: the connection is taken, its will dropped (a
            # board's will on another board's status would have been sent)
            log(f"dropped the last will of {session.username!r} on {session.will_topic!r}: not its topic")
            session.will_flag, session.will_topic, session.will_message = False, None, None
        arriving[session.client_id] = _address(session)
        return handler, session
    BrokerProtocolHandler.init_from_connect = classmethod(checked_connect)

    delete_session = Broker._delete_session

    async def delete_and_disconnect(self, client_id: str) -> None:
        # a clean-session CONNECT with the id of a connected client: amqtt
        # dropped the old connection's session and subscriptions but kept the
        # connection, which went on without a message (MQTT-3.1.4-2: the
        # old client is disconnected; its will goes out as at a takeover).  The
        # connection is closed whatever amqtt's state says: amqtt's own way
        # first (its will, its cleanup), then the socket itself a moment
        # later if that left it open (a flake hunt beside CPU burners saw a
        # board's old connection stay open, without its subscription, for
        # 40 s: the board was deaf until its keepalive)
        session, handler = self._sessions.get(client_id, (None, None))
        new = arriving.pop(client_id, None)
        await delete_session(self, client_id)
        if handler is None:
            return
        old = _address(session) if session is not None else None
        log(f"client id {client_id!r} connected again from {new} (it was on {old}): "
            f"its previous connection is closed")
        await self.internal_message_broadcast(BROKER_NOTICE, json.dumps(
            {"type": "takeover", "client": client_id, "old": old, "new": new}).encode(), 1)
        if session is not None and session.transitions.is_connected():
            await handler.handle_connection_closed()
        transport = None if session is None else transports.get((session.remote_address, session.remote_port))
        if transport is not None:
            asyncio.get_running_loop().call_later(TAKEOVER_GRACE_S, transport.abort)
    Broker._delete_session = delete_and_disconnect

    if access is not None:
        async def acl(self, session, topic, action) -> bool:
            return access.may(getattr(session, "username", None),
                              WRITE if action == Action.PUBLISH else READ, topic or "")
        Broker._topic_filtering = acl
    return gate


NOTICE_EVERY_S = 5.0          # how often the refused connections are told to the hub (if any)


async def report_refusals(broker, gate: ConnectionGate, log) -> None:
    """Every NOTICE_EVERY_S: the connections refused since, per address,
    in the broker's log and to the hub (BROKER_NOTICE)."""
    import asyncio

    while True:
        await asyncio.sleep(NOTICE_EVERY_S)
        for n in gate.taken():
            log(f"refused connections from {n['host']}: {n['busy']} over {gate.per_host} open at once, "
                f"{n['slow']} without a CONNECT in {CONNECT_DEADLINE_S:g} s ({n['open']} open now)")
            await broker.internal_message_broadcast(BROKER_NOTICE, json.dumps(n).encode(), 1)


def serve(config_path: str, access_path: str = "", per_host: str = "") -> None:
    """The embedded broker's child process: amqtt until stdin closes."""
    import asyncio
    import threading

    from amqtt.broker import Broker

    def log(text: str) -> None:
        print(time.strftime("%Y-%m-%dT%H:%M:%S"), text, flush=True)

    room_for(BROKER_FILES)        # out of files, amqtt would let no board in

    async def main() -> None:
        loop = asyncio.get_running_loop()
        parent_gone = asyncio.Event()
        threading.Thread(target=lambda: (sys.stdin.buffer.read(), loop.call_soon_threadsafe(parent_gone.set)),
                         daemon=True).start()
        gate = guard_amqtt(load_access(access_path), MAX_PACKET, log, int(per_host or PER_HOST))
        broker = Broker(json.loads(Path(config_path).read_text()))
        patch_amqtt(broker)
        await broker.start()
        reporter = asyncio.create_task(report_refusals(broker, gate, log))
        await parent_gone.wait()
        reporter.cancel()
        # amqtt's shutdown may wait for ever on one client's handler while it
        # goes on serving the others (seen: a hub SIGKILLed, its broker
        # answering a board's pings for minutes, the board never failing over
        # to the standby): bounded, then the process ends, its sockets closed
        shutdown = asyncio.ensure_future(broker.shutdown())
        done, _ = await asyncio.wait({shutdown}, timeout=SHUTDOWN_S)
        if not done:
            log(f"broker: its shutdown did not end in {SHUTDOWN_S:g} s; the process ends without it")
        sys.stdout.flush()
        os._exit(0)            # not asyncio.run's end: it would wait for the hung tasks

    asyncio.run(main())


if __name__ == "__main__":
    serve(*sys.argv[1:4])
