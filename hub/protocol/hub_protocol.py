"""The hub's half of the wire protocol: the topics it listens on, the check
of the fields of the messages boards send (status, the journaled events),
and the messages it sends to boards (acks, sync replies, schedules,
identify, recorded times, its own status).

The rest of the protocol (topics, versions, the envelope of every message,
the fields of what a board receives, the messages a board builds) is
shared/protocol.py, which the boards run too; what only the hub uses is
here, so that a board does not carry it in its RAM.  See docs/protocol.md
for the messages."""

from __future__ import annotations

import re
from typing import NamedTuple

from tabletimer.shared.protocol import (CMD, EVENT, OFFLINE, ONLINE, PREFIX, SCHED, STATUS, SYNC,
                                        T_ACK, T_CONFIRM, T_HUB, T_IDENTIFY, T_PRESS, T_RECORDED,
                                        T_SCHED, T_STATIONS, T_STATUS, T_STRAY, T_SYNC, T_VOID, VERSION,
                                        ProtocolError, check_board_id, check_int, decode, event,
                                        validate)


class Outgoing(NamedTuple):
    """A message for the broker: what the hub publishes."""
    topic: str
    payload: bytes
    qos: int
    retain: bool


def check_call(msg: dict) -> None:
    """A board's confirm or void names its call: [boot, seq] (ProtocolError otherwise)."""
    c = msg.get("call")
    if not isinstance(c, list) or len(c) != 2 or type(c[0]) is not int or type(c[1]) is not int:
        raise ProtocolError("'call' must be [boot, seq]")


# the types of journaled board events (on the board's evt topic)
EVENT_TYPES = (T_PRESS, T_CONFIRM, T_VOID, T_STRAY)
STATION_STATES = ("idle", "running", "called", "done", "stopped")
# settings over the air (docs/protocol.md, "config"): the hub's command and a
# board's answers, on its status topic (not retained): staged (it restarts
# on them), refused (why), committed (its hub heard on them; at once, with no
# staged, for the keys safe without a restart: firmware/settings_update.py's AT_ONCE); a roll-back is
# said in the next birth's fault ("settings rolled back: ...")
T_CONFIG = "config"
SETTINGS_ANSWERS = ("staged", "refused", "committed")
ROLLED_BACK = "settings rolled back"
# firmware over the air (docs/protocol.md, "fw"): the hub's begin and chunks,
# a board's answers on its status topic: receiving (the begin taken), at
# (a chunk's answer: the place it waits for), staged (checked, switched: it
# restarts on it), refused (why), committed (its hub heard on it); a
# roll-back is said in the next birth's fault ("firmware V rolled back: ...")
T_FW = "fw"
FW_ANSWERS = ("receiving", "at", "staged", "refused", "committed")
FW_ROLLED_BACK = re.compile(r"firmware (\S+) rolled back: ")
MAX_INSTALL = 16
# the largest MQTT packet the brokers take (Mosquitto's max_packet_size, the
# embedded broker's limit): a message is 1 KB at most (MAX_PAYLOAD), with its
# signature, topic and headers well under this; larger is junk or an attack
MAX_PACKET = 2048
_HEX = frozenset("0123456789abcdef")

# the hub's status, retained, and its last will "offline": unsigned, for
# people and tools (boards get it signed on their cmd topic: hub_online)
HUB_STATUS = PREFIX + "/hub/status"
# the hub's probe of its own path through the broker (self_probe.py): only
# the hub publishes and reads it (the production ACL lets no board read it),
# signed with a key the hub makes at each start
PROBE = PREFIX + "/hub/probe"
T_PROBE = "probe"
# the embedded broker's notices to the hub (broker_notices.py): a client id
# that connected again while its connection was open, with both addresses;
# connections refused.  Published by the broker itself, readable by the
# hub's login only; a $SYS topic, which no subscription to # receives
BROKER_NOTICE = "$SYS/tabletimer/notice"


def press(boot: int, seq: int, station: int, at: int | None, err: int | None = None) -> dict:
    """A board's press, as the firmware builds it (protocol.event): for the
    hub's tests and benchmarks (the board itself needs no such function)."""
    return event(T_PRESS, boot, seq, station, at, err)


def check_install(m: dict, key: str) -> None:
    """An install id (m[key], optional): 1..16 lowercase hex digits, made
    by `tabletimer board flash` (or the simulator) for each flash."""
    v = m.get(key)
    if v is None:
        return
    if not isinstance(v, str) or not 0 < len(v) <= MAX_INSTALL or not set(v) <= _HEX:
        raise ProtocolError(f"'{key}' must be an install id: 1..{MAX_INSTALL} lowercase hex digits")


def install_of(m: dict) -> str:
    """The install id an event was made under ('': a board without one)."""
    return m.get("in") or ""


def sender_install(m: dict) -> str:
    """The sender's install id: 'bi', which a board leaves out of an event
    made under its own install ('in' says it); '' for a board without one."""
    return m.get("bi") or m.get("in") or ""


def check_board_message(m: dict) -> dict:
    """The fields of a board's own message types (status and the journaled
    events), which protocol.validate leaves to the hub; m has passed
    protocol.validate.  Returns m, or raises ProtocolError."""
    t = m["type"]
    if t in EVENT_TYPES:
        # common to every journaled board event
        check_int(m, "boot", 0)
        check_int(m, "seq", 1)
        check_int(m, "station", 1, 64)
        # 'at' is the instant in hub time; None when the board had no clock
        # sync in the boot the event happened in (time unknown).
        check_int(m, "at", 0, optional=True)
        check_int(m, "err", 0, optional=True)
        check_install(m, "in")
        check_int(m, "ev", 0, optional=True)     # the event (round) whose schedule it was made under
        if t in (T_CONFIRM, T_VOID):
            check_call(m)
        if t == T_CONFIRM:
            check_int(m, "missing", 0, 999)
        elif t == T_STRAY:
            if m.get("state") not in STATION_STATES:
                raise ProtocolError("'state' must be one of " + ", ".join(STATION_STATES))
            # a short press at a call: the referee's count so far (a repeat call carries none)
            check_int(m, "missing", 1, 999, optional=True)
    elif t == T_FW:
        # a board's answer to a firmware update (firmware/firmware_update.py, boot_trial.py)
        if m.get("state") not in FW_ANSWERS:
            raise ProtocolError("'state' must be one of " + ", ".join(FW_ANSWERS))
        check_int(m, "id", 0, optional=True)
        check_int(m, "got", 0, optional=True)
        check_int(m, "of", 0, optional=True)
        n = m.get("next")
        if n is not None and (not isinstance(n, list) or len(n) != 2 or not all(type(x) is int for x in n)):
            raise ProtocolError("'next' must be [file, offset]")
        w = m.get("why")
        if w is not None and (not isinstance(w, str) or not 0 < len(w) <= 200):
            raise ProtocolError("'why' must be a string of 1..200 characters")
        f = m.get("fw")
        if f is not None and (not isinstance(f, str) or not 0 < len(f) <= 16):
            raise ProtocolError("'fw' must be a version of 1..16 characters")
    elif t == T_CONFIG:
        # a board's answer to a settings command (firmware/settings_update.py, boot_trial.py)
        if m.get("state") not in SETTINGS_ANSWERS:
            raise ProtocolError("'state' must be one of " + ", ".join(SETTINGS_ANSWERS))
        check_int(m, "id", 0, optional=True)
        w = m.get("why")
        if w is not None and (not isinstance(w, str) or not 0 < len(w) <= 200):
            raise ProtocolError("'why' must be a string of 1..200 characters")
    elif t == T_STATUS:
        if m.get("state") not in (ONLINE, OFFLINE):
            raise ProtocolError("'state' must be 'online' or 'offline'")
        check_int(m, "boot", 0)
        if m["state"] == ONLINE:
            fw = m.get("fw")
            if not isinstance(fw, str) or not 0 < len(fw) <= 32:
                raise ProtocolError("'fw' must be a string of 1..32 characters")
            check_int(m, "stations", 1, 64)
            check_int(m, "mem", 0, optional=True)
            check_int(m, "up", 0, optional=True)
            check_int(m, "rssi", -150, 0, optional=True)
            check_int(m, "ack", 1, 99, optional=True)   # 2 or more: it takes an event's answers in its ack
            check_int(m, "term", 1, optional=True)      # the highest hub term it has seen (takeover.py)
            tp = m.get("hash")          # and that term's proof (hub_secret.py: the hub checks it)
            if tp is not None and not (isinstance(tp, str) and len(tp) == 32 and set(tp) <= _HEX):
                raise ProtocolError("'hash' must be a term's proof: 32 lowercase hex digits")
            fl = m.get("flash")       # [free flash bytes, journal entries] (the hall check)
            if fl is not None and not (isinstance(fl, list) and len(fl) == 2 and all(
                    type(x) is int and 0 <= x < 2 ** 40 for x in fl)):
                raise ProtocolError("'flash' must be [free bytes, journal entries], two whole numbers")
            f = m.get("fault")        # what reset the board at the end of its last boot
            if f is not None and (not isinstance(f, str) or not 0 < len(f) <= 200):
                raise ProtocolError("'fault' must be a string of 1..200 characters")
    check_install(m, "bi")          # the sender's install id, beside its boot 'bt'
    return m


def decode_from_board(payload: bytes | str) -> dict:
    """A message a board sent: protocol.decode, then check_board_message."""
    return check_board_message(decode(payload))


def hub_subscriptions() -> tuple[str, str, str]:
    """Topic filters the hub subscribes to (all with QoS 1)."""
    base = PREFIX + "/b/+/"
    return (base + STATUS, base + EVENT, base + SYNC)


def parse_board_topic(topic: str) -> tuple[str, str]:
    """'tt/v1/b/<board>/<kind>' -> (board, kind); ProtocolError otherwise."""
    parts = topic.split("/")
    if len(parts) != 5 or parts[0] + "/" + parts[1] != PREFIX or parts[2] != "b":
        raise ProtocolError("not a board topic: " + topic)
    check_board_id(parts[3])
    if parts[4] not in (STATUS, EVENT, SYNC, CMD, SCHED):
        raise ProtocolError("unknown topic kind: " + parts[4])
    return parts[3], parts[4]


def sync_reply(request: dict, t2: int, t3: int, gen: int = 0) -> dict:
    """gen: the generation of the hub's time base (event/time/time_base.py), absent at 0."""
    reply = {"v": VERSION, "type": T_SYNC, "id": request["id"], "t1": request["t1"], "t2": t2, "t3": t3}
    if gen:
        reply["g"] = gen
    return reply


def ack(boot: int, seq: int, install: str | None = None, rec: dict | None = None,
        st: list[list] | None = None) -> dict:
    """The event (install, boot, seq) is stored.  install: the event's
    install id ('' none), named once the board id has had more than one
    install in the event (None: the only one there is; an ack is as short
    as it can be, on the board's busiest path).

    The event's answers, to a board whose birth says it takes them ("ack":
    2): rec, the recorded() message of its call (its fields in the ack's
    "recorded"), and st, its stations' entries (stations()) when the event
    changed them: one command per event instead of three (the hub's ingest
    was bound by the numbering, signing and publishing of three)."""
    m = {"v": VERSION, "type": T_ACK, "boot": boot, "seq": seq}
    if install is not None:
        m["in"] = install
    if rec is not None:
        m["recorded"] = {k: v for k, v in rec.items() if k not in ("v", "type")}
    if st is not None:
        m["st"] = st
    return m


def schedule(sched_id: int, start: int | None, end: int | None, signals: list,
             rot: list | None = None, calls: list | None = None, ev: int | None = None) -> dict:
    """ev: the event's id (EventStore.event_id): a board takes a schedule of
    another event whatever its id, and within one event only a higher id.
    signals: [[hub ms, name], ...]; the station runs from start to end.
    rot: [first, interval, until]: relay rotation signals at first,
    first + interval, ... while < until (sent compactly: a 5 h relay has
    dozens).  calls: per button, how many puzzles it calls in turn (one at
    a time formats; default 1): after a confirmation the station runs again
    until that many are confirmed."""
    m = {"v": VERSION, "type": T_SCHED, "id": sched_id, "start": start, "end": end,
         "signals": signals}
    if ev is not None:
        m["ev"] = ev
    if rot is not None:
        m["rot"] = rot
    if calls is not None:
        m["calls"] = calls
    return m


def identify(exp: int) -> dict:
    return {"v": VERSION, "type": T_IDENTIFY, "exp": exp}


def recorded(station: int, call: list, time_ms: int | None, confirmed: bool) -> dict:
    """time_ms: the finish as the standings show it (since the entrant's
    start, at the format's resolution; None if not a finish)."""
    return {"v": VERSION, "type": T_RECORDED, "station": station, "call": call, "time": time_ms,
            "confirmed": confirmed}


STATION_CODES = {name: i for i, name in enumerate(STATION_STATES)}


def stations(entries: list[list]) -> dict:
    """The hub's state of a board's stations, by button from 1: each
    [state code (STATION_CODES), its open call [boot, seq] or None (a call
    recorded at the desk is 'called' with None), the station's own end (hub
    ms; a new start time moves it) or None, finish calls confirmed].
    Checked as the board checks it (protocol.validate; ProtocolError)."""
    return validate({"v": VERSION, "type": T_STATIONS, "st": entries})


def probe(run: str, n: int) -> dict:
    """The hub's probe number n of this run (run: its random nonce)."""
    return {"v": VERSION, "type": T_PROBE, "run": run, "n": n}


def settings(request: int, changes: dict, trial_s: int | None = None) -> dict:
    """A settings command (request: the log row that asked for it, which
    the board's answers name): changes {"part.key": value}, firmware/settings_update.py's
    KEYS; trial_s: how long the board tries them before it goes back."""
    m = {"v": VERSION, "type": T_CONFIG, "id": request, "set": changes}
    if trial_s is not None:
        m["trial"] = trial_s
    return m


def fw_begin(request: int, size: int, sig: str, trial_s: int | None = None, older: bool = False) -> dict:
    """A firmware update's first message (request: the log row that asked
    for it, which the board's answers name): the manifest's size and its
    HMAC under the board's key (hex).  older: the desk allows a version
    older than the board's (`boards update --allow-older`); without it the
    board refuses one (firmware/firmware_update.py, older)."""
    m = {"v": VERSION, "type": T_FW, "id": request, "n": size, "sig": sig}
    if trial_s is not None:
        m["trial"] = trial_s
    if older:
        m["older"] = True
    return m


def fw_chunk(request: int, f: int, o: int, data: str) -> dict:
    """A chunk of file f (0: the manifest) at offset o, data in base64."""
    return {"v": VERSION, "type": T_FW, "id": request, "f": f, "o": o, "d": data}


def hub_status(state: str) -> dict:
    return {"v": VERSION, "type": T_HUB, "state": state}
