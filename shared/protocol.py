# TableTimer wire protocol, version 1: topics, the validation of every
# message (envelope, and the fields of what a board receives), and the
# messages a board builds.  The hub's half -- its own messages, its topic
# parsing, the fields of what a board sends -- is hub/hub_protocol.py
# (CPython only), so that a board does not carry it in RAM.
#
# This module is imported unchanged by the hub (CPython, as
# tabletimer.shared.protocol) and by the board firmware (MicroPython, as
# protocol).  Keep it to the language subset both share: no typing, no
# dataclasses, no f-string format specs MicroPython lacks, integers for every
# time value (the ESP32 port has single-precision floats).  On the board it
# stays in RAM: every function, global name and string here costs it.
#
# Times on the wire are integer milliseconds.  "Hub time" is the hub's clock,
# milliseconds since 1970-01-01 UTC.  A board's own clock ("local time") is
# only ever used inside a clock-sync exchange (t1, t4).
#
# See docs/protocol.md for topics, QoS, retained flags and who publishes what.

import json

try:
    from micropython import const
except ImportError:   # CPython
    def const(v):
        return v

VERSION = 1
PREFIX = "tt/v1"

# Topic suffixes under tt/v1/b/<board>/
STATUS = "status"   # board -> hub, retained: birth message / last will
EVENT = "evt"       # board -> hub, QoS 1: journaled events (press, confirm, ...)
SYNC = "sync"       # board -> hub, QoS 0: clock-sync request
CMD = "cmd"         # hub -> board: acks (QoS 1), sync replies (QoS 0), identify
SCHED = "sched"     # hub -> board, retained: the board's signal schedule

# (the hub's retained status on PREFIX/hub/status is hub_protocol.HUB_STATUS:
# boards get the hub's status signed on their cmd topic)

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
T_STATIONS = "stations"  # the hub's state of each of a board's stations: the board follows it
T_HUB = "hub"


ONLINE = "online"
OFFLINE = "offline"

MAX_PAYLOAD = 1024

# const() with a leading underscore: folded into the code, no global name
# on the board
_BOARD_TYPES = const(("status", "press", "confirm", "void", "stray"))   # T_STATUS and the events
_SIGNALS = const(("start", "rotate", "warn", "time_up"))
_MAX_BOARD_ID = const(32)
_MAX_ROTATIONS = const(200)
_MAX_INT = const((1 << 53) - 1)      # JSON-safe, and far inside SQLite's 64 bits


class ProtocolError(ValueError):
    pass


def board_topic(board, kind):
    return "%s/b/%s/%s" % (PREFIX, board, kind)


def check_board_id(board):
    if not isinstance(board, str) or not 0 < len(board) <= _MAX_BOARD_ID:
        raise ProtocolError("board id must be 1..%d characters" % _MAX_BOARD_ID)
    for c in board.encode():     # bytes: iterating a str makes each character a qstr on the board
        if c not in b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_":
            raise ProtocolError("board id may hold only ASCII letters, digits, '-' and '_': " + board)
    return board


# ---------------------------------------------------------------- validation

def check_int(msg, key, start=-_MAX_INT, end=_MAX_INT, optional=False):
    x = msg.get(key)
    if x is None and optional:
        return
    if type(x) is not int:
        raise ProtocolError("'%s' must be an integer" % key)
    if not start <= x <= end:
        raise ProtocolError("'%s' out of range: %d" % (key, x))


def validate(msg):
    """The message dict itself if it is valid, ProtocolError otherwise: the
    envelope (version, a known type, the counters) of every message, and
    the fields of the messages a board receives (and of sync requests).  The
    fields of the board's own messages -- status and the journaled events --
    the hub checks on arrival (hub_protocol.check_board_message): the board
    builds them, it needs no check of them in its RAM.  One function checks
    every type: on a board each function of a loaded module costs RAM."""
    if not isinstance(msg, dict):
        raise ProtocolError("message must be a JSON object")
    m, t = msg, msg.get("type")
    v = m.get("v")
    if type(v) is not int or v != VERSION:
        raise ProtocolError("unsupported version %r (not %d)" % (v, VERSION))
    if t in _BOARD_TYPES:
        pass
    elif t == T_SYNC:
        check_int(m, "id", 0)
        check_int(m, "t1")
        # a request's report: the counter of a hub command refused as a jump
        check_int(m, "hub_ctr", 0, optional=True)
        # ... and its clock: [its hub time at t1, its error(, a jump of the
        # hub's it refused, the generation of the base it keeps)]
        a = m.get("at")
        if a is not None and (not isinstance(a, list) or len(a) not in (2, 4) or a[1] < 0
                              or any(type(x) is not int for x in a)):
            raise ProtocolError("'at' must be [hub time, error] or [hub time, error, jump, generation]")
        if "t2" in m or "t3" in m:   # the hub's reply
            check_int(m, "t2")
            check_int(m, "t3")
            check_int(m, "g", 0, optional=True)   # the generation of the hub's time base
    elif t == T_ACK:
        check_int(m, "boot", 0)
        check_int(m, "seq", 1)
    elif t == T_SCHED:
        check_int(m, "id", 0)
        check_int(m, "start", 0, optional=True)
        check_int(m, "end", 0, optional=True)
        sig = m.get("signals")
        if not isinstance(sig, list) or len(sig) > 64:
            raise ProtocolError("'signals': up to 64 [at, name]")
        for s in sig:
            if not isinstance(s, list) or len(s) != 2 or type(s[0]) is not int or s[1] not in _SIGNALS:
                raise ProtocolError("a signal must be [at, name] with name one of " + ", ".join(_SIGNALS))
        calls = m.get("calls")
        if calls is not None:
            bad = not isinstance(calls, list) or not 0 < len(calls) <= 64
            for c in () if bad else calls:
                bad = bad or type(c) is not int or not 1 <= c <= 99
            if bad:
                raise ProtocolError("'calls': 1..99 per button")
        rot = m.get("rot")
        if rot is not None:
            if (not isinstance(rot, list) or len(rot) != 3 or type(rot[0]) is not int or type(rot[1]) is not int
                    or type(rot[2]) is not int or rot[1] < 1000 or rot[2] < rot[0]
                    or (rot[2] - rot[0]) // rot[1] > _MAX_ROTATIONS):
                raise ProtocolError("'rot' must be [first, interval >= 1000, until], at most %d"
                                    % _MAX_ROTATIONS)
    elif t == T_IDENTIFY:
        check_int(m, "exp", 0)
    elif t == T_HUB:
        if m.get("state") not in (ONLINE, OFFLINE):
            raise ProtocolError("'state': 'online' or 'offline'")
    elif t == "config":
        # the hub's settings ("set": {"part.key": value}, checked by the
        # board as its configuration file: firmware/settings_update.py), or a
        # board's answer ("state"); "config" is a name the board has already
        if not isinstance(m.get("set", {}), dict):
            raise ProtocolError("'set' must be an object of settings")
        check_int(m, "id", 0, optional=True)     # (its "trial", s: settings_update.py checks it)
    elif t != T_STATIONS and t != T_RECORDED and t != "fw":
        # ("fw": a firmware update's part, or a board's answer: firmware/firmware_update.py checks it)
        raise ProtocolError("unknown message type: %r" % (t,))
    # a recorded time: a message of its own, or the fields of one in the ack
    # of the event it answers (to a board whose birth says "ack": 2)
    r = m if t == T_RECORDED else m.get("recorded")
    if r is not None:
        if not isinstance(r, dict):
            raise ProtocolError("'recorded' must be an object")
        check_int(r, "station", 1, 64)
        c = r.get("call")                 # [boot, seq] (hub_protocol.check_call: the board's own)
        if not isinstance(c, list) or len(c) != 2 or type(c[0]) is not int or type(c[1]) is not int:
            raise ProtocolError("'call' must be [boot, seq]")
        check_int(r, "time", 0, optional=True)
        if not isinstance(r.get("confirmed"), bool):
            raise ProtocolError("'confirmed' must be a boolean")
    if t == T_STATIONS or "st" in m:
        # per button: [state 0 idle 1 running 2 called 3 done 4 stopped,
        #              the open call [boot, seq] or None, own end or None,
        #              finish calls confirmed]; in a stations message, or in
        #              the ack of the event that changed them (a receiver
        #              follows "st" in whatever message carries it)
        st = m.get("st")
        ok = isinstance(st, list) and len(st) <= 64
        for e in (st if ok and isinstance(st, list) else ()):
            ok = (isinstance(e, list) and len(e) == 4 and e[0] in (0, 1, 2, 3, 4) and type(e[3]) is int
                  and (e[1] is None or (isinstance(e[1], list) and len(e[1]) == 2))
                  and (e[2] is None or type(e[2]) is int))
            if not ok:
                break
        if not ok:
            raise ProtocolError("'st': up to 64 [state 0..4, call or null, end or null, confirmed]")
    # (an ack's 'in' and a schedule's 'ev', the hub's install and event
    # ids, a board only compares for equality: no check of them here)
    # replay-protection fields (see stamp()); their presence is checked by
    # the receiver's authentication layer
    check_int(m, "ctr", 0, optional=True)
    check_int(m, "bt", 0, optional=True)
    check_int(m, "term", 1, optional=True)   # a hub's term (1 when absent): higher after a takeover
    return msg


def encode(msg):
    """Validate and serialise a message dict to bytes (the body that
    auth.Signer signs)."""
    return json.dumps(validate(msg), separators=(",", ":")).encode()


def stamp(msg, ctr, boot=None, bi=None):
    """Add the replay-protection fields: 'ctr', strictly increasing per
    sender (per boot on a board); on board messages 'bt', the sender's
    current boot (which a retransmitted event's own 'boot' may predate), and
    'bi', its install id (made when it was flashed; none: a board flashed
    before install ids, or a test); on a hub's command the same two of the
    board it is for, which refuses a command of another boot."""
    msg["ctr"] = ctr
    if boot is not None:
        msg["bt"] = boot
    if bi:
        msg["bi"] = bi
    return msg


def decode(payload):
    """bytes/memoryview/str -> validated message dict; ProtocolError on
    anything else."""
    if len(payload) > MAX_PAYLOAD:
        raise ProtocolError("payload too large: %d bytes" % len(payload))
    try:
        if not isinstance(payload, str):
            payload = str(payload, "utf-8")        # JSON on the wire is UTF-8, nothing else
        if payload[:1] != "{":
            raise ValueError
        msg = json.loads(payload)
    except (ValueError, UnicodeError, RuntimeError):   # RuntimeError: nesting too deep
        raise ProtocolError("not a JSON object in UTF-8")
    return validate(msg)


# ------------------------------------------------ what a board sends

def status_online(boot, fw, stations, mem=None, up=None, rssi=None, fault=None, term=1):
    # ack 2: this board takes an event's answers in its ack ('recorded',
    # 'st'): one command per event, not three (docs/protocol.md, ack)
    m = {"v": VERSION, "type": T_STATUS, "state": ONLINE, "boot": boot,
         "fw": fw, "stations": stations, "ack": 2}
    if mem is not None:
        m["mem"] = mem
    if up is not None:
        m["up"] = up
    if rssi is not None:
        m["rssi"] = rssi
    if fault is not None:
        m["fault"] = fault        # what reset the board at the end of its last boot
    if term > 1:
        m["term"] = term          # the highest hub term it has seen (a standby took over)
    return m


def status_offline(boot):
    return {"v": VERSION, "type": T_STATUS, "state": OFFLINE, "boot": boot}


def event(kind, boot, seq, station, at, err=None, **fields):
    """A journaled board event of type kind: press, confirm (call,
    missing), void (call), stray (state); 'in' among the fields: the install
    id the board had when it made the event (part of its identity)."""
    m = {"v": VERSION, "type": kind, "boot": boot, "seq": seq,
         "station": station, "at": at}
    if err is not None:
        m["err"] = err
    for k in fields:
        m[k] = fields[k]
    return m


def sync_request(id, t1):
    return {"v": VERSION, "type": T_SYNC, "id": id, "t1": t1}
