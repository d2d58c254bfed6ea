# TableTimer wire protocol, version 1.
#
# This one module is imported unchanged by the hub (CPython, as
# tabletimer.shared.protocol) and by the board firmware (MicroPython, as
# protocol).  Keep it to the language subset both share: no typing, no
# dataclasses, no f-string format specs MicroPython lacks, integers for every
# time value (the ESP32 port has single-precision floats).
#
# Times on the wire are integer milliseconds.  "Hub time" is the hub's clock,
# milliseconds since 1970-01-01 UTC.  A board's own clock ("local time") is
# only ever used inside a clock-sync exchange (t1, t4).
#
# See docs/protocol.md for topics, QoS, retained flags and who publishes what.

import json

VERSION = 1
PREFIX = "tt/v1"

# Topic suffixes under tt/v1/b/<board>/
STATUS = "status"   # board -> hub, retained: birth message / last will
EVENT = "evt"       # board -> hub, QoS 1: journaled events (press, confirm, ...)
SYNC = "sync"       # board -> hub, QoS 0: clock-sync request
CMD = "cmd"         # hub -> board: acks (QoS 1), sync replies (QoS 0), identify
SCHED = "sched"     # hub -> board, retained: the board's signal schedule

HUB_STATUS = PREFIX + "/hub/status"   # hub -> all, retained, with last will (unsigned)

# Message types
T_STATUS = "status"
T_PRESS = "press"       # finish call: the competitor's raised hand
T_CONFIRM = "confirm"   # referee confirmation of a call, with missing pieces
T_VOID = "void"         # referee voids an accidental call
T_STRAY = "stray"       # a press while the station is not running
T_SYNC = "sync"
T_ACK = "ack"
T_SCHED = "sched"
T_IDENTIFY = "identify"
T_RECORDED = "recorded"  # the time the hub recorded for a call, back to its station
T_HUB = "hub"

EVENT_TYPES = (T_PRESS, T_CONFIRM, T_VOID, T_STRAY)
SIGNALS = ("start", "rotate", "warn", "time_up")
STATION_STATES = ("idle", "running", "called", "done", "stopped")

ONLINE = "online"
OFFLINE = "offline"

MAX_BOARD_ID = 32
MAX_ROTATIONS = 200
MAX_PAYLOAD = 1024


class ProtocolError(ValueError):
    pass


def board_topic(board, kind):
    return PREFIX + "/b/" + board + "/" + kind


def hub_subscriptions():
    """Topic filters the hub subscribes to (all with QoS 1)."""
    base = PREFIX + "/b/+/"
    return (base + STATUS, base + EVENT, base + SYNC)


def parse_board_topic(topic):
    """'tt/v1/b/<board>/<kind>' -> (board, kind); ProtocolError otherwise."""
    parts = topic.split("/")
    if len(parts) != 5 or parts[0] + "/" + parts[1] != PREFIX or parts[2] != "b":
        raise ProtocolError("not a board topic: " + topic)
    check_board_id(parts[3])
    if parts[4] not in (STATUS, EVENT, SYNC, CMD, SCHED):
        raise ProtocolError("unknown topic kind: " + parts[4])
    return parts[3], parts[4]


_ID_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_"
MAX_INT = (1 << 53) - 1      # JSON-safe, and far inside SQLite's 64 bits


def check_board_id(board):
    if not isinstance(board, str) or not 0 < len(board) <= MAX_BOARD_ID:
        raise ProtocolError("board id must be 1..%d characters" % MAX_BOARD_ID)
    for c in board:
        if c not in _ID_CHARS:
            raise ProtocolError("board id may hold only ASCII letters, digits, '-' and '_': " + board)
    return board


# ---------------------------------------------------------------- validation

def _is_int(x):
    return isinstance(x, int) and not isinstance(x, bool)


def _int(msg, key, lo=None, hi=None, optional=False):
    x = msg.get(key)
    if x is None and optional:
        return None
    if not _is_int(x):
        raise ProtocolError("'%s' must be an integer" % key)
    if (lo is not None and x < lo) or x > (MAX_INT if hi is None else hi) or x < -MAX_INT:
        raise ProtocolError("'%s' out of range: %d" % (key, x))
    return x


def _str(msg, key, maxlen=64):
    x = msg.get(key)
    if not isinstance(x, str) or not 0 < len(x) <= maxlen:
        raise ProtocolError("'%s' must be a string of 1..%d characters" % (key, maxlen))
    return x


def _call_ref(m):
    c = m.get("call")
    if not isinstance(c, list) or len(c) != 2 or not _is_int(c[0]) or not _is_int(c[1]):
        raise ProtocolError("'call' must be [boot, seq] of the finish call")


def _state(m, allowed):
    if m.get("state") not in allowed:
        if allowed is STATION_STATES:
            raise ProtocolError("'state' must be one of " + ", ".join(STATION_STATES))
        raise ProtocolError("'state' must be 'online' or 'offline'")


def _check(m, t):
    """The fields of a message of type t beyond 'v' and 'type'; False if t
    is no message type.  One function rather than one per type: on a board
    every function of a loaded module costs RAM."""
    if t in EVENT_TYPES:
        # common to every journaled board event
        _int(m, "boot", 0)
        _int(m, "seq", 1)
        _int(m, "station", 1, 64)
        # 'at' is the instant in hub time; None when the board had no clock
        # sync in the boot the event happened in (time unknown).
        _int(m, "at", 0, optional=True)
        _int(m, "err", 0, optional=True)
        if t == T_CONFIRM:
            _call_ref(m)
            _int(m, "missing", 0, 999)
        elif t == T_VOID:
            _call_ref(m)
        elif t == T_STRAY:
            _state(m, STATION_STATES)
    elif t == T_STATUS:
        _state(m, (ONLINE, OFFLINE))
        _int(m, "boot", 0)
        if m["state"] == ONLINE:
            _str(m, "fw", 32)
            _int(m, "stations", 1, 64)
            _int(m, "mem", 0, optional=True)
            _int(m, "up", 0, optional=True)
            _int(m, "rssi", -150, 0, optional=True)
    elif t == T_SYNC:
        _int(m, "id", 0)
        _int(m, "t1")
        if "t2" in m or "t3" in m:   # the hub's reply
            _int(m, "t2")
            _int(m, "t3")
    elif t == T_ACK:
        _int(m, "boot", 0)
        _int(m, "seq", 1)
    elif t == T_SCHED:
        _int(m, "id", 0)
        _int(m, "start", 0, optional=True)
        _int(m, "end", 0, optional=True)
        sig = m.get("signals")
        if not isinstance(sig, list) or len(sig) > 64:
            raise ProtocolError("'signals' must be a list of at most 64 [at, name] pairs")
        for s in sig:
            if not isinstance(s, list) or len(s) != 2 or not _is_int(s[0]) or s[1] not in SIGNALS:
                raise ProtocolError("a signal must be [at, name] with name one of " + ", ".join(SIGNALS))
        calls = m.get("calls")
        if calls is not None and (not isinstance(calls, list) or not 0 < len(calls) <= 64
                                  or not all(_is_int(c) and 1 <= c <= 99 for c in calls)):
            raise ProtocolError("'calls' must list, per button, how many finish calls it makes (1..99)")
        rot = m.get("rot")
        if rot is not None:
            if (not isinstance(rot, list) or len(rot) != 3 or not all(_is_int(x) for x in rot)
                    or rot[1] < 1000 or rot[2] < rot[0] or (rot[2] - rot[0]) // rot[1] > MAX_ROTATIONS):
                raise ProtocolError("'rot' must be [first, interval >= 1000, until], at most %d signals"
                                    % MAX_ROTATIONS)
    elif t == T_IDENTIFY:
        _int(m, "exp", 0)
    elif t == T_RECORDED:
        _int(m, "station", 1, 64)
        _call_ref(m)
        _int(m, "time", 0, optional=True)
        if not isinstance(m.get("confirmed"), bool):
            raise ProtocolError("'confirmed' must be true or false")
    elif t == T_HUB:
        _state(m, (ONLINE, OFFLINE))
    else:
        return False
    return True


def validate(msg):
    if not isinstance(msg, dict):
        raise ProtocolError("message must be a JSON object")
    v = msg.get("v")
    if not _is_int(v) or v != VERSION:
        raise ProtocolError("unsupported protocol version: %r (this side speaks %d)" % (v, VERSION))
    t = msg.get("type", "")
    if not isinstance(t, str) or not _check(msg, t):
        raise ProtocolError("unknown message type: %r" % (msg.get("type"),))
    # replay-protection fields (see stamp()); their presence is checked by
    # the receiver's authentication layer
    _int(msg, "ctr", 0, optional=True)
    _int(msg, "bt", 0, optional=True)
    return msg


def encode(msg):
    """Validate and serialise a message dict to bytes (the body that
    auth.Signer signs)."""
    validate(msg)
    return json.dumps(msg).encode()


def stamp(msg, ctr, boot=None):
    """Add the replay-protection fields: 'ctr', strictly increasing per
    sender (per boot on a board), and on board messages 'bt', the sender's
    current boot (which a retransmitted event's own 'boot' may predate)."""
    msg["ctr"] = ctr
    if boot is not None:
        msg["bt"] = boot
    return msg


def decode(payload):
    """bytes/str -> validated message dict; ProtocolError on anything else."""
    if len(payload) > MAX_PAYLOAD:
        raise ProtocolError("payload too large: %d bytes" % len(payload))
    try:
        if not isinstance(payload, str):
            payload = payload.decode("utf-8")      # JSON on the wire is UTF-8, nothing else
        if payload[:1] != "{":
            raise ValueError
        msg = json.loads(payload)
    except (ValueError, UnicodeError, RuntimeError):   # RuntimeError: nesting too deep
        raise ProtocolError("payload is not a JSON object in UTF-8")
    return validate(msg)


# -------------------------------------------------------------- constructors

def status_online(boot, fw, stations, mem=None, up=None, rssi=None):
    m = {"v": VERSION, "type": T_STATUS, "state": ONLINE, "boot": boot,
         "fw": fw, "stations": stations}
    if mem is not None:
        m["mem"] = mem
    if up is not None:
        m["up"] = up
    if rssi is not None:
        m["rssi"] = rssi
    return m


def status_offline(boot):
    return {"v": VERSION, "type": T_STATUS, "state": OFFLINE, "boot": boot}


def event(type_, boot, seq, station, at, err=None, **fields):
    """A journaled board event: press, confirm (call, missing), void (call),
    stray (state)."""
    m = {"v": VERSION, "type": type_, "boot": boot, "seq": seq,
         "station": station, "at": at}
    if err is not None:
        m["err"] = err
    for k in fields:
        m[k] = fields[k]
    return m


def press(boot, seq, station, at, err=None):
    return event(T_PRESS, boot, seq, station, at, err)


def sync_request(sync_id, t1):
    return {"v": VERSION, "type": T_SYNC, "id": sync_id, "t1": t1}


def sync_reply(request, t2, t3):
    return {"v": VERSION, "type": T_SYNC, "id": request["id"], "t1": request["t1"],
            "t2": t2, "t3": t3}


def ack(boot, seq):
    return {"v": VERSION, "type": T_ACK, "boot": boot, "seq": seq}


def schedule(sched_id, start, end, signals, rot=None, calls=None):
    """signals: [[hub ms, name], ...]; the station runs from start to end.
    rot: [first, interval, until]: relay rotation signals at first,
    first + interval, ... while < until (sent compactly: a 5 h relay has
    dozens).  calls: per button, how many puzzles it calls in turn (one at
    a time formats; default 1): after a confirmation the station runs again
    until that many are confirmed."""
    m = {"v": VERSION, "type": T_SCHED, "id": sched_id, "start": start, "end": end,
         "signals": signals}
    if rot is not None:
        m["rot"] = rot
    if calls is not None:
        m["calls"] = calls
    return m


def identify(exp):
    return {"v": VERSION, "type": T_IDENTIFY, "exp": exp}


def recorded(station, call, time_ms, confirmed):
    """time_ms: the finish as the standings show it (since the entrant's
    start, at the format's resolution; None if not a finish)."""
    return {"v": VERSION, "type": T_RECORDED, "station": station, "call": call, "time": time_ms,
            "confirmed": confirmed}


def hub_status(state):
    return {"v": VERSION, "type": T_HUB, "state": state}
