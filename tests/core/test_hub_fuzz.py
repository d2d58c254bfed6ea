"""Hostile traffic at the hub: malformed, oversized, forged, replayed and
wrongly shaped payloads on every topic the hub reads (and some it should not
see).  The hub must keep running, reject each message in the expected
category, and change neither the stored events nor the standings.

Two layers:
1. thousands of seeded random messages straight into HubService.handle();
2. a shorter run through the embedded broker and the real paho adapter, with
   a real simulated board whose genuine press after the storm is still
   acknowledged and ranked (the hub's network thread survived).

Deterministic: the seed is printed on failure; rerun with
    TT_FUZZ_SEED=<seed> .venv/bin/python -m pytest -q tests/core/test_hub_fuzz.py
(TT_FUZZ_ROUNDS changes the number of messages of layer 1).

Signed messages whose content once broke the hub (exceptions, or accepted
against the protocol) are listed in KNOWN_GAPS; test_known_gaps checks each
is now rejected as malformed.
"""

from __future__ import annotations

import json
import logging
import os
import random
import threading
from collections import Counter
from pathlib import Path
from typing import Callable, NamedTuple

import paho.mqtt.client as mqtt
import pytest

from rig import Rig, ready
from waiting import until
from tabletimer.hub.protocol import hub_protocol as H
from tabletimer.hub.protocol.keys import BoardKeys
from tabletimer.hub.core.changes import MessageRejected, RowApplied
from tabletimer.hub.core.service import HubService
from tabletimer.hub.event.log.store import EventStore
from tabletimer.shared import protocol as P
from tabletimer.shared.auth import Signer
from clocks import FixedClock

SEED = int(os.environ.get("TT_FUZZ_SEED", "1796"))
ROUNDS = int(os.environ.get("TT_FUZZ_ROUNDS", "20000"))
BROKER_ROUNDS = 300

KEYS = {"b1": "11" * 32, "b2": "22" * 32}
WRONG_KEY = "33" * 32
BOOT = {"b1": 5, "b2": 3}            # the boards' current boots in layer 1
T0 = 1_796_000_000_000

FORGED, MALFORMED, REPLAYED, UNKNOWN = "forged", "malformed", "replayed", "unknown board"
JUMP = "counter jump"                 # authentic, numbered far ahead of the board's counters
IGNORED = None                        # the hub's own status topic: dropped without a count

UNKNOWN_BOARDS = ["b9", "ghost", "B1", "x" * 32, "b1_", "-"]
ODD_TOPICS = [                        # never a board topic; -> malformed
    "tt/v1/b/日本/evt",                 # board ids are ASCII
    "", "/", "#", "+", "tt", "tt/v1", "tt/v1/b", "tt/v1/b/b1", "tt/v1/b/b1/", "tt/v1/b/b1/evt/",
    "tt/v1/b/b1/evt/x", "tt/v1/b//evt", "tt/v1/b/+/evt", "tt/v1/b/#", "tt/v1/b/bad board/evt",
    "tt/v1/b/b.1/evt", "tt/v1/b/b1/EVT", "tt/v1/b/b1/ evt", "tt/v1/b/b1/foo", "tt/v2/b/b1/evt",
    "TT/v1/b/b1/evt", "tt/v1/x/b1/evt", "tt/v1/b/" + "x" * 33 + "/evt", "tt/v1/b/b1\x00/evt",
    "tt/v1/b/b\u200b1/evt", "tt/v1/hub/statusx", "tt/v1/hub", "$SYS/broker/uptime", "tt/v1/b/b1/evt\n",
]

# signed by the board's own key, these make handle() raise or accept what
# docs/protocol.md says it rejects (see test_known_gaps)
KNOWN_GAPS = {
    "type is a list": b'{"v": 1, "type": ["press"], "boot": 5, "seq": 9, "station": 1, "at": 1}',
    "type is an object": b'{"v": 1, "type": {"press": 1}, "boot": 5}',
    "deeply nested JSON": b"[" * 1000,
    "seq beyond SQLite's 64 bits": None,          # built per board: needs a fresh counter
    "boot beyond SQLite's 64 bits": None,
    "version true": None,
    "version 1.0": None,
    "UTF-16 body": None,
}


def too_big(n: int, otherwise: str) -> str:
    """The hub refuses a payload longer than a signed maximum-size message
    before it looks at the signature."""
    return MALFORMED if n > P.MAX_PAYLOAD + 1 + 64 else otherwise


def fits(topic: str, m: dict, otherwise: str) -> str:
    """A message a board may send on that topic kind gets as far as the
    replay check; anything else is malformed first."""
    kind = topic.split("/")[4]
    ok = ((kind == P.STATUS and m["type"] == P.T_STATUS) or (kind == P.EVENT and m["type"] in H.EVENT_TYPES)
          or (kind == P.SYNC and m["type"] == P.T_SYNC and "t2" not in m))
    return otherwise if ok else MALFORMED


class FakeClock(FixedClock):
    """Hub time held at t (T0 at first)."""
    t = T0


class Case(NamedTuple):
    label: str
    topic: str
    payload: bytes
    expect: str | None


def dumps(m: object) -> bytes:
    return json.dumps(m).encode()                 # no validation (P.encode would refuse)


# ------------------------------------------------------------- content
INT_FIELDS = {  # field: (lo, hi, optional)
    "boot": (0, None, False), "seq": (1, None, False), "station": (1, 64, False),
    "at": (0, None, True), "err": (0, None, True), "missing": (0, 999, False),
    "stations": (1, 64, False), "mem": (0, None, True), "up": (0, None, True),
    "rssi": (-150, 0, True), "id": (0, None, False), "t1": (None, None, False),
    "ctr": (0, None, True), "bt": (0, None, True),
}
NOT_INTS = [True, False, 1.5, 1.0, -0.0, "1", "", "١", [1], [], {"a": 1}, {},
            float("nan"), float("inf"), float("-inf"), 1e300]
NOT_TYPES = ["prèss", "PRESS", "", " press", "press\u0000", "Ѕtatus", 5, None, True, 1.5, "ack2", "hub "]
NOT_VERSIONS = [2, 0, -1, "1", None, 1.5, [1], {"v": 1}, "v1", 10 ** 40]
NOT_STATES = ["flying", "", None, 1, "IDLE", "dónе", True, ["done"]]
NOT_CALLS = [[1], [1, 2, 3], "1,2", [True, 1], [1.0, 2], [None, 1], {"0": 1, "1": 2}, None, 7, []]
NOT_STRINGS = ["", "ü" * 33, 5, None, True, ["0.2"]]
NOT_JSON_OBJECTS = [b"[]", b"[1, 2]", b'"press"', b"1", b"null", b"true", b"NaN", b"-Infinity",
                    b"[" * 200 + b"]" * 200, b'{"v": 1, "type": "press"', b"{", b"}", b"",
                    b'{"v": 1, "type": "press", "boot": 1, "seq": 1, "station": 1, "at": 1,}',
                    b"{'v': 1}", b'{"v": 1, "type": "\xff"}', b"\xef\xbb", b"\x00" * 8]


def bad_int(rng: random.Random, field: str):
    lo, hi, optional = INT_FIELDS[field]
    choices = list(NOT_INTS) + ([] if optional else [None])
    if lo is not None:
        choices += [lo - 1, lo - 10 ** 30]
    if hi is not None:
        choices += [hi + 1, 10 ** 30]
    return rng.choice(choices)


def valid_content(rng: random.Random, kind: str) -> dict:
    """A valid, unstamped message for a board topic kind."""
    if kind == P.STATUS:
        return P.status_online(1, "0.2.0", 2, mem=51200, up=12, rssi=-58)
    if kind == P.SYNC:
        return P.sync_request(rng.randrange(1000), rng.randrange(10 ** 9))
    at = T0 + rng.randrange(1, 10 ** 7)
    typ = rng.choice(H.EVENT_TYPES)
    extras: dict[str, dict] = {P.T_CONFIRM: {"call": [1, 1], "missing": 2}, P.T_VOID: {"call": [1, 1]},
                               P.T_STRAY: {"state": "done"}}
    extra = extras.get(typ, {})
    return P.event(typ, 1, rng.randrange(1, 1000), 1, at, 4, **extra)


def bad_content(rng: random.Random, kind: str) -> tuple[str, dict]:
    """A message with exactly one thing wrong that validation must catch."""
    m = valid_content(rng, kind)
    P.stamp(m, 1, 1)
    how = rng.randrange(6)
    if how == 0:
        m["v"] = rng.choice(NOT_VERSIONS)
        return "bad version", m
    if how == 1:
        m["type"] = rng.choice(NOT_TYPES)
        return "bad type", m
    if how == 2:
        required = {"status": ["state", "boot", "fw", "stations"], "sync": ["id", "t1"],
                    "press": ["boot", "seq", "station"], "confirm": ["boot", "seq", "station", "call", "missing"],
                    "void": ["boot", "seq", "station", "call"], "stray": ["boot", "seq", "station", "state"]}
        drop = rng.choice(required[m["type"]] + ["v", "type"])
        del m[drop]
        return f"missing {drop}", m
    if how == 3 and m["type"] in ("confirm", "void"):
        m["call"] = rng.choice(NOT_CALLS)
        return "bad call", m
    if how == 3 and m["type"] in ("stray", "status"):
        m["state"] = rng.choice(NOT_STATES)
        return "bad state", m
    if how == 3 and m["type"] == "sync":
        m["t2"] = T0                              # half a reply
        return "half a sync reply", m
    if how == 4 and m["type"] == "status":
        m["fw"] = rng.choice(NOT_STRINGS)
        return "bad fw", m
    fields = [f for f in m if f in INT_FIELDS]
    f = rng.choice(fields)
    m[f] = bad_int(rng, f)
    return f"bad {f}={m[f]!r}"[:60], m


# ------------------------------------------------------------ the mix
class Fuzzer:
    """Hostile cases for the boards in `keys` (the hub has heard them: their
    current boots are `boots`), given genuine payloads captured earlier.
    `foreign` boards have a key but have never been heard: messages for them
    are only ever mis-signed (a well-signed one would be fresh, and valid)."""

    def __init__(self, rng: random.Random, keys: dict[str, str], boots: dict[str, int],
                 genuine: list[tuple[str, bytes]], hub_cmds: list[tuple[str, bytes]],
                 low_ctr: dict[str, int], next_ctr: Callable[[str], int] | None,
                 unknown: list[str], odd_topics: list[str], foreign: dict[str, str],
                 kinds=(P.STATUS, P.EVENT, P.SYNC)) -> None:
        self.rng, self.keys, self.boots, self.foreign = rng, keys, boots, foreign
        self.genuine, self.hub_cmds = genuine, hub_cmds
        self.low_ctr = low_ctr            # counters every board has already used
        self.next_ctr = next_ctr          # fresh counters (None: never advance the replay guard)
        self.unknown, self.odd_topics, self.kinds = unknown, odd_topics, kinds
        self.makers = [
            (6, self.random_bytes), (3, self.random_text), (3, self.truncated), (3, self.flipped),
            (1, self.oversized), (3, self.unsigned), (3, self.wrong_key), (3, self.other_topic),
            (8, self.signed_bad_content), (4, self.signed_not_an_object), (2, self.signed_garbage),
            (4, self.replay), (3, self.old_counter), (3, self.old_boot), (2, self.unnumbered),
            (2, self.stale_will), (2, self.far_counter), (4, self.unknown_board), (3, self.odd_topic),
        ]
        if hub_cmds:
            self.makers.append((2, self.hub_command_back))
        if next_ctr is not None:
            self.makers.append((3, self.wrong_kind))
        self.weights = [w for w, _ in self.makers]
        self.used: Counter[str] = Counter()

    def __call__(self) -> Case:
        (_, make), = self.rng.choices(self.makers, self.weights)
        self.used[make.__name__] += 1
        return make()

    # helpers
    def board(self) -> str:
        return self.rng.choice(sorted(self.keys))

    def topic(self, board: str | None = None) -> str:
        return P.board_topic(board or self.board(), self.rng.choice(self.kinds))

    def sign(self, topic: str, body: bytes, key: str | None = None) -> bytes:
        board = topic.split("/")[3]
        return Signer(key or self.keys.get(board) or self.foreign[board]).sign(topic, body)

    def stamped(self, board: str, kind: str, ctr: int, boot: int | None = None) -> dict:
        m = valid_content(self.rng, kind)
        if m["type"] == "status":
            m["boot"] = self.boots[board]
        return P.stamp(m, ctr, self.boots[board] if boot is None else boot)

    # unsigned or badly signed -> forged (too large to be a message at all -> malformed)
    def random_bytes(self) -> Case:
        n = self.rng.choice([0, 1, 2, 63, 64, 65, 100, 500, 1024, 1025, 2000])
        return Case("random bytes", self.topic(), self.rng.randbytes(n), too_big(n, FORGED))

    def random_text(self) -> Case:
        alphabet = '{}[]":,0123456789abcdef\n tvyperssÿ日\\'
        n = self.rng.randrange(0, 300)
        text = "".join(self.rng.choice(alphabet) for _ in range(n))
        return Case("random text", self.topic(), text.encode(), FORGED)

    def truncated(self) -> Case:
        topic, p = self.rng.choice(self.genuine)
        return Case("truncated genuine", topic, p[: self.rng.randrange(len(p))], FORGED)

    def flipped(self) -> Case:
        topic, p = self.rng.choice(self.genuine)
        i = self.rng.randrange(len(p))
        b = bytearray(p)
        b[i] ^= self.rng.randrange(1, 256)
        # (the signature must be lowercase hex: a case flip there is forged too)
        return Case("one byte changed", topic, bytes(b), FORGED)

    def oversized(self) -> Case:
        n = self.rng.choice([1025, 4096, 65_536, 262_145, 300_000])
        topic = self.topic()
        if self.rng.random() < 0.5:
            return Case(f"{n} random bytes", topic, self.rng.randbytes(n), too_big(n, FORGED))
        m = self.stamped(topic.split("/")[3], topic.split("/")[4], 10 ** 12)
        m["pad"] = "x" * n
        return Case(f"signed, {n} bytes", topic, self.sign(topic, dumps(m)), MALFORMED)

    def unsigned(self) -> Case:
        topic = self.topic()
        m = self.stamped(topic.split("/")[3], topic.split("/")[4], 10 ** 12)
        body = dumps(m)
        tail = self.rng.choice([b"", b"\n", b"\n" + b"0" * 64, b"\n" + b"g" * 64, b"\n" + b"ab" * 31])
        return Case("unsigned", topic, body + tail, FORGED)

    def wrong_key(self) -> Case:
        topic = self.topic()
        m = self.stamped(topic.split("/")[3], topic.split("/")[4], 10 ** 12)
        return Case("wrong key", topic, self.sign(topic, dumps(m), WRONG_KEY), FORGED)

    def other_topic(self) -> Case:
        """Good content, signed for another topic (another board's, or
        another kind of the same board's) than the one it is sent on, or
        sent on a board's topic signed with another board's key."""
        topic = self.topic()
        board, kind = topic.split("/")[3:5]
        m = self.stamped(board, kind, 10 ** 12)
        everyone = {**self.keys, **self.foreign}
        if self.foreign and self.rng.random() < 0.3:
            victim = P.board_topic(self.rng.choice(sorted(self.foreign)), kind)
            return Case("signed by another board", victim,
                        Signer(everyone[board]).sign(victim, dumps(m)), FORGED)
        others = [P.board_topic(b, k) for b in sorted(everyone) for k in (P.STATUS, P.EVENT, P.SYNC, P.CMD)
                  if P.board_topic(b, k) != topic]
        signed_for = self.rng.choice(others)
        key = everyone[self.rng.choice([board, signed_for.split("/")[3]])]
        return Case("signed for another topic", topic, Signer(key).sign(signed_for, dumps(m)), FORGED)

    # correctly signed, invalid content -> malformed
    def signed_bad_content(self) -> Case:
        topic = self.topic()
        label, m = bad_content(self.rng, topic.split("/")[4])
        return Case(f"signed, {label}", topic, self.sign(topic, dumps(m)), MALFORMED)

    def signed_not_an_object(self) -> Case:
        topic = self.topic()
        return Case("signed, not a JSON object", topic,
                    self.sign(topic, self.rng.choice(NOT_JSON_OBJECTS)), MALFORMED)

    def signed_garbage(self) -> Case:
        topic = self.topic()
        topic_, p = self.rng.choice(self.genuine)
        body = p[:p.rfind(b"\n")]
        body = self.rng.choice([body[: self.rng.randrange(len(body))],       # truncated JSON
                                self.rng.randbytes(self.rng.randrange(1, 1500))])
        return Case("signed garbage", topic, self.sign(topic, body), MALFORMED)

    def wrong_kind(self) -> Case:
        """Valid and fresh, but not what the topic carries (advances the
        replay guard: authentic, just misplaced)."""
        board = self.board()
        kind = self.rng.choice(self.kinds)
        other = self.rng.choice([k for k in (P.STATUS, P.EVENT, P.SYNC) if k != kind])
        assert self.next_ctr is not None
        m = self.stamped(board, other, self.next_ctr(board))
        if self.rng.random() < 0.3:
            m = P.stamp(self.rng.choice([H.ack(1, 1), H.identify(T0), H.hub_status(P.ONLINE),
                                         H.schedule(1, T0, None, [[T0, "start"]]),
                                         H.sync_reply(P.sync_request(1, 2), T0, T0)]),
                        m["ctr"], m["bt"])
        topic = P.board_topic(board, kind)
        return Case(f"{m['type']} on {kind}", topic, self.sign(topic, dumps(m)), MALFORMED)

    # authentic but not fresh -> replayed
    def replay(self) -> Case:
        topic, p = self.rng.choice(self.genuine)
        return Case("replay of a genuine message", topic, p, REPLAYED)

    def old_counter(self) -> Case:
        topic = self.topic()
        board, kind = topic.split("/")[3:5]
        m = self.stamped(board, kind, self.rng.randint(0, self.low_ctr[board]))
        if m["type"] == "status" and self.rng.random() < 0.5:
            m = P.stamp(P.status_online(self.boots[board], "9.9.9", 64), m["ctr"], m["bt"])
        return Case("old counter", topic, self.sign(topic, dumps(m)), fits(topic, m, REPLAYED))

    def old_boot(self) -> Case:
        topic = self.topic()
        board, kind = topic.split("/")[3:5]
        m = self.stamped(board, kind, 10 ** 12, boot=self.rng.randrange(self.boots[board]))
        return Case("old boot", topic, self.sign(topic, dumps(m)), fits(topic, m, REPLAYED))

    def unnumbered(self) -> Case:
        topic = self.topic()
        board, kind = topic.split("/")[3:5]
        m = self.stamped(board, kind, 1)
        for f in self.rng.choice([("ctr",), ("bt",), ("ctr", "bt")]):
            del m[f]
        return Case("unnumbered", topic, self.sign(topic, dumps(m)), fits(topic, m, REPLAYED))

    def stale_will(self) -> Case:
        """An 'offline' will whose counter is not between the last two births."""
        board = self.board()
        topic = P.board_topic(board, P.STATUS)
        m = P.stamp(P.status_offline(self.boots[board]), self.rng.choice([10 ** 3, 10 ** 4]),
                    self.boots[board])
        return Case("stale last will", topic, self.sign(topic, dumps(m)), REPLAYED)

    def far_counter(self) -> Case:
        """Numbered beyond what the board can have signed since it was heard
        (a counter of 2^53-1 in its boot locked it out: issue 33, item 6)."""
        topic = self.topic()
        board, kind = topic.split("/")[3:5]
        m = self.stamped(board, kind, self.rng.choice([10 ** 12, 10 ** 15, 2 ** 53 - 1]))
        return Case("far counter", topic, self.sign(topic, dumps(m)), fits(topic, m, JUMP))

    def hub_command_back(self) -> Case:
        """A command the hub signed for a board, sent back to the hub: on its
        own topic it is a hub message (no boot, a replay); elsewhere forged."""
        topic, p = self.rng.choice(self.hub_cmds)
        if self.rng.random() < 0.5:
            return Case("hub command on its own topic", topic, p, MALFORMED)   # not a board's message
        board = topic.split("/")[3]
        moved = self.rng.choice([t for t in (P.board_topic(board, k) for k in self.kinds) if t != topic])
        return Case("hub command moved", moved, p, FORGED)

    # not a board of ours / not a board topic
    def unknown_board(self) -> Case:
        board = self.rng.choice(self.unknown)
        topic = P.board_topic(board, self.rng.choice(self.kinds))
        m = P.stamp(valid_content(self.rng, topic.split("/")[4]), 10 ** 12, 1)
        payload = self.rng.choice([Signer(WRONG_KEY).sign(topic, dumps(m)), dumps(m),
                                   self.rng.randbytes(40)])
        return Case("unknown board", topic, payload, UNKNOWN)

    def odd_topic(self) -> Case:
        topic = self.rng.choice(self.odd_topics)
        _, p = self.rng.choice(self.genuine)
        return Case("odd topic", topic, self.rng.choice([p, b"", self.rng.randbytes(30)]),
                    IGNORED if topic == H.HUB_STATUS else MALFORMED)


# ============================================================ layer 1
FOREIGN = {"b3": "44" * 32}           # a key the hub has, a board it has never heard


class Sender:
    """Signs messages as the boards do: their boot and a rising counter."""

    def __init__(self) -> None:
        self.ctr: dict[str, int] = {}

    def next(self, board: str) -> int:
        self.ctr[board] = self.ctr.get(board, 0) + 1
        return self.ctr[board]

    def payload(self, board: str, kind: str, msg: dict) -> tuple[str, bytes]:
        P.stamp(msg, self.next(board), BOOT[board])
        topic = P.board_topic(board, kind)
        return topic, Signer(KEYS[board]).sign(topic, P.encode(msg))


def used_counters(genuine: list[tuple[str, bytes]]) -> dict[str, int]:
    """board -> a counter at or below the last one it used in each of the
    guard's streams (its sync requests, and its stored messages: counted
    apart, hub/protocol/replay.py): a message signed with it is a replay."""
    last: dict[tuple[str, bool], int] = {}
    for topic, payload in genuine:
        board, kind = topic.split("/")[3:5]
        ctr = json.loads(payload.rsplit(b"\n", 1)[0])["ctr"]
        last[board, kind == P.SYNC] = max(ctr, last.get((board, kind == P.SYNC), 0))
    return {b: min(c for (b2, _), c in last.items() if b2 == b) for b, _ in last}


def standings_view(svc: HubService) -> list:
    """The standings, comparable (a row's `detail` is an internal object)."""
    return [(r._replace(detail=None), r.splits) for r in svc.standings()]


def finished(svc: HubService) -> list[str]:
    return sorted(s.entrant for s in svc.standings() if s.status == "finished")


@pytest.fixture
def hub(tmp_path: Path):
    store = EventStore(tmp_path / "events.sqlite")
    svc = HubService(store, BoardKeys(keys={**KEYS, **FOREIGN}), Rig.competition(), FakeClock())
    yield svc
    store.close()


def genuine_traffic(svc: HubService, sender: Sender):
    """Births, a sync, one press per board: the state the fuzz must not move.
    Returns the captured board payloads and the hub's signed replies."""
    genuine: list[tuple[str, bytes]] = []
    hub_cmds: list[tuple[str, bytes]] = []
    svc.start_round()
    for board in ("b1", "b2"):
        for kind, msg in ((P.STATUS, P.status_online(BOOT[board], "0.2.0", 2)),
                          (P.SYNC, P.sync_request(1, 12345)),
                          (P.EVENT, H.press(BOOT[board], 1, 1, T0 + 61_000))):
            topic, payload = sender.payload(board, kind, msg)
            out = svc.handle(topic, payload, T0)
            assert out, f"genuine {kind} of {board} not answered"
            genuine.append((topic, payload))
            hub_cmds += [(o.topic, o.payload) for o in out]
    assert not svc.counts.rejected and finished(svc) == ["b1/1", "b2/1"]
    return genuine, hub_cmds


def test_hostile_payloads_straight_into_the_service(hub):
    rng = random.Random(SEED)
    sender = Sender()
    genuine, hub_cmds = genuine_traffic(hub, sender)
    fuzz = Fuzzer(rng, KEYS, BOOT, genuine, hub_cmds, low_ctr=used_counters(genuine), next_ctr=sender.next,
                  unknown=UNKNOWN_BOARDS, odd_topics=ODD_TOPICS + [H.HUB_STATUS], foreign=FOREIGN,
                  kinds=(P.STATUS, P.EVENT, P.SYNC, P.CMD, P.SCHED))
    events, standings = hub.store.events(), standings_view(hub)
    got: list[str] = []
    hub.changes.subscribe(MessageRejected, lambda n: got.append(n.category))
    expected: Counter[str] = Counter()
    failures: list[str] = []
    for i in range(ROUNDS):
        case = fuzz()
        del got[:]
        try:
            out = hub.handle(case.topic, case.payload, T0 + i)
        except Exception as e:               # a crash is a finding, reported below
            out = [f"raised {type(e).__name__}: {e}"]
        if case.expect is not None:
            expected[case.expect] += 1
        want = [] if case.expect is None else [case.expect]
        if out != [] or got != want:
            failures.append(f"#{i} {case.label}: {case.topic!r} {case.payload[:120]!r} -> "
                            f"{out[:1]}, rejected as {got} (expected {want})")
    print(f"seed {SEED}: {ROUNDS} messages, rejected {dict(hub.counts.rejected)}, makers {dict(fuzz.used)}")
    assert not failures, (f"seed {SEED} (TT_FUZZ_SEED={SEED}): {len(failures)} of {ROUNDS} messages "
                          "not rejected as expected:\n" + "\n".join(failures[:25]))
    assert hub.store.events() == events, f"seed {SEED}: the stored events changed"
    assert standings_view(hub) == standings, f"seed {SEED}: the standings changed"
    assert hub.counts.rejected == expected, f"seed {SEED}"
    assert sum(expected.values()) >= ROUNDS * 0.95 and hub.counts.duplicates == 0
    assert set(fuzz.used) == {m.__name__ for _, m in fuzz.makers}, fuzz.used   # every kind was tried
    # the boards are still heard: a genuine second press is stored, acked, ranked
    topic, payload = sender.payload("b1", P.EVENT, H.press(BOOT["b1"], 2, 2, T0 + 75_000))
    (ack,) = hub.handle(topic, payload, T0 + ROUNDS)      # its answers in it: the birth said "ack": 2
    answer = json.loads(Signer(KEYS["b1"]).open(ack.topic, ack.payload))
    rec = answer["recorded"]
    assert (answer["seq"], rec["station"], rec["call"], answer["st"][1][:2]) == \
        (2, 2, [BOOT["b1"], 2], [2, [BOOT["b1"], 2]])
    new = hub.store.events()[len(events):]
    assert [(e["type"], e["board"], e["payload"]["station"]) for e in new] == [("press", "b1", 2)]
    assert finished(hub) == ["b1/1", "b1/2", "b2/1"]
    assert {s.entrant: s.time_ms for s in hub.standings()}["b1/2"] == 75_000


def gap_payload(name: str, sender: Sender) -> tuple[str, bytes]:
    board, topic = "b1", P.board_topic("b1", P.EVENT)
    ctr = sender.next(board)
    fresh = P.stamp(H.press(BOOT[board], 50 + ctr, 1, T0 + 90_000), ctr, BOOT[board])
    body = KNOWN_GAPS[name]
    if name == "seq beyond SQLite's 64 bits":
        body = dumps(dict(fresh, seq=2 ** 63))
    elif name == "boot beyond SQLite's 64 bits":
        body = dumps(dict(fresh, boot=2 ** 64))
    elif name == "version true":
        body = dumps(dict(fresh, v=True))
    elif name == "version 1.0":
        body = dumps(dict(fresh, v=1.0))
    elif name == "UTF-16 body":
        body = json.dumps(fresh).encode("utf-16")
    assert body is not None
    return topic, Signer(KEYS[board]).sign(topic, body)


@pytest.mark.parametrize("name", sorted(KNOWN_GAPS))
def test_known_gaps(hub, name):
    """Messages signed with the board's own key that once made handle()
    raise (TypeError, RecursionError, OverflowError) or were accepted
    against the protocol (a boolean or float version, a body that is not
    UTF-8): each is rejected as malformed, without raising."""
    sender = Sender()
    genuine_traffic(hub, sender)
    events = hub.store.events()
    topic, payload = gap_payload(name, sender)
    assert hub.handle(topic, payload, T0) == []
    assert hub.counts.rejected == Counter({MALFORMED: 1})
    assert hub.store.events() == events


# ============================================================ layer 2
class FailureLog(logging.Handler):
    """Counts the adapter's 'failed to handle' reports (an exception in
    handle(), caught so the network thread lives on)."""

    def __init__(self, on_record: Callable[[], None]) -> None:
        super().__init__(logging.ERROR)
        self.count = 0
        self.on_record = on_record

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1
        self.on_record()


def test_hostile_payloads_through_the_broker_and_adapter(rig):
    rng = random.Random(SEED)
    keys = {"f1": rig.keys.ensure("f1")}
    foreign = {"f2": rig.keys.ensure("f2")}         # a key, never a board
    hub = rig.start_hub()
    hub.start_round()

    # a spy captures the board's genuine traffic, then sends the storm
    captured: dict[str, list[bytes]] = {P.STATUS: [], P.EVENT: [], P.SYNC: []}
    cond = threading.Condition()

    def on_message(c, u, m):
        with cond:
            captured[m.topic.rsplit("/", 1)[1]].append(m.payload)
            cond.notify_all()
    spy = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="fuzzer")
    spy.on_message = on_message
    subscribed = threading.Event()
    spy.on_subscribe = lambda *a: subscribed.set()
    spy.connect(rig.broker.host, rig.broker.port)
    spy.loop_start()
    adapter_log = logging.getLogger("tabletimer.hub.link.mqtt_adapter")
    total, seen, want = [0], threading.Event(), [10 ** 9]
    lock = threading.Lock()

    def tick(*_) -> None:                            # a rejection, or a failure the adapter logged
        with lock:
            total[0] += 1
            if total[0] >= want[0]:
                seen.set()
    failures = FailureLog(tick)
    subs: list = []
    try:
        spy.subscribe([(P.board_topic("f1", k), 1) for k in captured])
        assert subscribed.wait(10)
        # no install id: the fuzzer's signed messages (stamped without one,
        # tests/core/test_hub_fuzz.py's boards) are the same flash's, its counters
        sim = rig.board("f1", stations=2, install="")
        ready(sim)
        sim.press(1)
        boot = sim.wait_for(lambda r: "booted" in r)["booted"]
        sim.wait_for(lambda r: r.get("acked") == [boot, 1])
        with cond:
            assert cond.wait_for(lambda: all(captured.values()), 15), captured
            genuine = [(P.board_topic("f1", k), p) for k, ps in captured.items() for p in ps]
        low = min(json.loads(p.rsplit(b"\n", 1)[0])["ctr"] for _, p in genuine)
        events, standings = hub.store.events(), standings_view(hub)
        assert finished(hub) == ["f1/1"]
        before = Counter(hub.counts.rejected)

        fuzz = Fuzzer(rng, keys, {"f1": boot}, genuine, hub_cmds=[], low_ctr={"f1": low},
                      next_ctr=None,                 # never advance the real board's counters
                      unknown=UNKNOWN_BOARDS, foreign=foreign,
                      odd_topics=[t for t in ODD_TOPICS if t.startswith("tt/v1/b/") and t.count("/") == 4
                                  and t.endswith(("/evt", "/status", "/sync")) and "+" not in t
                                  and "\x00" not in t])      # what the hub's subscriptions match
        # what fits the brokers' packet limit (a larger one closes the
        # sender's connection: below; handle() takes the rest in the tests above)
        cases = [c for c in (fuzz() for _ in range(BROKER_ROUNDS))
                 if 5 + len(c.topic.encode()) + len(c.payload) <= H.MAX_PACKET]
        evt = P.board_topic("f1", P.EVENT)
        # larger than a message, within the brokers' packet limit (beyond it
        # the broker closes the connection: the test after the storm)
        cases += [Case("1.9 KB random", evt, rng.randbytes(1900), MALFORMED),
                  Case("1.5 KB random", P.board_topic("f1", P.STATUS), rng.randbytes(1500), MALFORMED)]
        gaps = [Case(f"gap: {n}", evt, Signer(keys["f1"]).sign(evt, KNOWN_GAPS[n]), MALFORMED)
                for n in ("type is a list", "type is an object", "deeply nested JSON")]
        cases += gaps
        rng.shuffle(cases)
        expected = Counter(c.expect for c in cases if c.expect is not None)
        want[0] = sum(expected.values())
        subs += [hub.changes.subscribe(MessageRejected, tick),
                hub.changes.subscribe(RowApplied, tick)]    # an accepted one must fail fast, not time out
        adapter_log.addHandler(failures)
        infos = [spy.publish(c.topic, c.payload, qos=1) for c in cases]
        for info in infos:
            info.wait_for_publish(10)
        assert seen.wait(30), (f"seed {SEED}: the hub handled {total[0]} of {want[0]} hostile "
                               f"messages; rejected {dict(Counter(hub.counts.rejected) - before)}")
        rejected = Counter(hub.counts.rejected) - before
        print(f"seed {SEED}: {len(cases)} messages, rejected {dict(rejected)}, "
              f"failures logged by the adapter {failures.count}, makers {dict(fuzz.used)}")
        # the known gaps (once made handle() raise: the adapter caught and
        # logged it) are closed: each is rejected as malformed, nothing raised
        assert failures.count == 0, f"seed {SEED}: handle() raised {failures.count} times"
        assert rejected == expected, f"seed {SEED}"
        assert hub.store.events() == events, f"seed {SEED}: the stored events changed"
        assert standings_view(hub) == standings, f"seed {SEED}: the standings changed"

        # the board's genuine second press is still heard, stored, acked and ranked
        sim.press(2)
        sim.wait_for(lambda r: r.get("acked") == [boot, 2], timeout=15)
        new = hub.store.events()[len(events):]
        assert [(e["type"], e["board"], e["payload"]["station"]) for e in new] == [("press", "f1", 2)]
        assert finished(hub) == ["f1/1", "f1/2"]
        assert Counter(hub.counts.rejected) - before == rejected, "late rejections after the storm"

        # 300 KB: the broker closes the sender's connection, the hub never has it
        gone = threading.Event()
        spy.on_disconnect = lambda *a: gone.set()
        spy.reconnect_delay_set(60, 60)
        spy.publish(evt, rng.randbytes(300_000), qos=1)
        assert gone.wait(10), "the broker took a 300 KB packet"
        after = hub.clock.now_ms()              # the board is still heard: told the hub is
        hub.state.publish(hub.hub_online())           # online, it syncs its clock
        until(lambda: (hub.registry.boards["f1"].last_seen_ms or 0) > after, "the board heard again")
        assert Counter(hub.counts.rejected) - before == rejected
    finally:
        adapter_log.removeHandler(failures)
        for sub in subs:
            sub.cancel()
        spy.loop_stop()
        spy.disconnect()
