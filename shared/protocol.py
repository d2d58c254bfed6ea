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
EVENT = "evt"       # board -> hub, QoS 1: journaled events (press, ...)
SYNC = "sync"       # board -> hub, QoS 0: clock-sync request
CMD = "cmd"         # hub -> board, QoS 1 (acks) / QoS 0 (sync replies)

HUB_STATUS = PREFIX + "/hub/status"   # hub -> all, retained, with last will
BROADCAST_CMD = PREFIX + "/all/cmd"   # hub -> all boards

# Message types
T_STATUS = "status"
T_PRESS = "press"
T_SYNC = "sync"
T_ACK = "ack"
T_HUB = "hub"

ONLINE = "online"
OFFLINE = "offline"

MAX_BOARD_ID = 32
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
    if parts[4] not in (STATUS, EVENT, SYNC, CMD):
        raise ProtocolError("unknown topic kind: " + parts[4])
    return parts[3], parts[4]


def check_board_id(board):
    if not isinstance(board, str) or not 0 < len(board) <= MAX_BOARD_ID:
        raise ProtocolError("board id must be 1..%d characters" % MAX_BOARD_ID)
    for c in board:
        if not (c.isalpha() or c.isdigit() or c in "-_"):
            raise ProtocolError("board id may hold only letters, digits, '-' and '_': " + board)
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
    if (lo is not None and x < lo) or (hi is not None and x > hi):
        raise ProtocolError("'%s' out of range: %d" % (key, x))
    return x


def _str(msg, key, maxlen=64):
    x = msg.get(key)
    if not isinstance(x, str) or not 0 < len(x) <= maxlen:
        raise ProtocolError("'%s' must be a string of 1..%d characters" % (key, maxlen))
    return x


# A validator per message type: checks fields beyond 'v' and 'type'.
def _v_status(m):
    if m.get("state") not in (ONLINE, OFFLINE):
        raise ProtocolError("'state' must be 'online' or 'offline'")
    _int(m, "boot", 0)
    if m["state"] == ONLINE:
        _str(m, "fw", 32)
        _int(m, "stations", 1, 64)


def _v_press(m):
    _int(m, "boot", 0)
    _int(m, "seq", 1)
    _int(m, "station", 1, 64)
    # 'at' is the press instant in hub time; None when the board had no
    # clock sync in the boot the press happened in (time unknown).
    _int(m, "at", 0, optional=True)
    _int(m, "err", 0, optional=True)


def _v_sync(m):
    _int(m, "id", 0)
    _int(m, "t1")
    if "t2" in m or "t3" in m:   # the hub's reply
        _int(m, "t2")
        _int(m, "t3")


def _v_ack(m):
    _int(m, "boot", 0)
    _int(m, "seq", 1)


def _v_hub(m):
    if m.get("state") not in (ONLINE, OFFLINE):
        raise ProtocolError("'state' must be 'online' or 'offline'")


_VALIDATORS = {
    T_STATUS: _v_status,
    T_PRESS: _v_press,
    T_SYNC: _v_sync,
    T_ACK: _v_ack,
    T_HUB: _v_hub,
}


def validate(msg):
    if not isinstance(msg, dict):
        raise ProtocolError("message must be a JSON object")
    v = msg.get("v")
    if v != VERSION:
        raise ProtocolError("unsupported protocol version: %r (this side speaks %d)" % (v, VERSION))
    check = _VALIDATORS.get(msg.get("type"))
    if check is None:
        raise ProtocolError("unknown message type: %r" % (msg.get("type"),))
    check(msg)
    return msg


def encode(msg):
    """Validate and serialise a message dict to bytes."""
    validate(msg)
    return json.dumps(msg).encode()


def decode(payload):
    """bytes/str -> validated message dict; ProtocolError on anything else."""
    if len(payload) > MAX_PAYLOAD:
        raise ProtocolError("payload too large: %d bytes" % len(payload))
    try:
        msg = json.loads(payload)
    except (ValueError, UnicodeError):
        raise ProtocolError("payload is not JSON")
    return validate(msg)


# -------------------------------------------------------------- constructors

def status_online(boot, fw, stations):
    return {"v": VERSION, "type": T_STATUS, "state": ONLINE, "boot": boot,
            "fw": fw, "stations": stations}


def status_offline(boot):
    return {"v": VERSION, "type": T_STATUS, "state": OFFLINE, "boot": boot}


def press(boot, seq, station, at, err=None):
    m = {"v": VERSION, "type": T_PRESS, "boot": boot, "seq": seq,
         "station": station, "at": at}
    if err is not None:
        m["err"] = err
    return m


def sync_request(sync_id, t1):
    return {"v": VERSION, "type": T_SYNC, "id": sync_id, "t1": t1}


def sync_reply(request, t2, t3):
    return {"v": VERSION, "type": T_SYNC, "id": request["id"], "t1": request["t1"],
            "t2": t2, "t3": t3}


def ack(boot, seq):
    return {"v": VERSION, "type": T_ACK, "boot": boot, "seq": seq}


def hub_status(state):
    return {"v": VERSION, "type": T_HUB, "state": state}
