"""Issue 14, items 2-4, at the hub (the real HubService on a real SQLite
log; the boards' side is tests/portable/pt_board.py, end to end with real
boards tests/e2e/test_board_swap_e2e.py):

2. schedules carry the event's id, so a board reused from an earlier event
   can tell this event's schedule from the one in its flash;
3. a board event's identity is (board, install, boot, seq): a spare flashed
   with a dead board's id is not a replay of it, and its events do not
   collide with the dead board's; the same identity with other content is
   a conflict row, stored and alerted, never silently dropped; an old log
   is migrated;
4. a boot may only advance by BOOT_WINDOW (a validly signed bt = 2^53-1
   no longer locks a board out), and a counter by CTR_WINDOW and CTR_RATE
   a second (issue 33, item 6: nor does ctr = 2^53-1), `reset_board` (an operator action, with
   who and why) forgets a board's counters; press times that cannot be
   this round's are kept in the log, refused as finishes and alerted.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from tabletimer.hub.cli import main as cli
from tabletimer.hub.event.folder import event_folder
from tabletimer.hub.event.fold.competition import Competition
from tabletimer.hub.rules.formats import load_format
from tabletimer.hub.protocol import hub_protocol as H
from tabletimer.hub.protocol.keys import BoardKeys
from tabletimer.hub.protocol import replay
from tabletimer.hub.core.alerts import JUMP_ALERT_MS
from tabletimer.hub.event.log import store as event_store
from tabletimer.hub.core.changes import ToBoards
from tabletimer.hub.core.service import HubService
from tabletimer.hub.rules.standings import row_dict
from tabletimer.hub.event.log.store import EventStore
from tabletimer.shared import protocol as P
from tabletimer.shared.auth import Signer
from clocks import FixedClock

KEYS = {"b1": "11" * 32, "b2": "22" * 32}
T0 = 1_796_000_000_000
MAX = 2 ** 53 - 1
DEAD, SPARE = "0a1b2c3d", "9f8e7d6c"          # install ids of two flashes of board b1


class FakeClock(FixedClock):
    """Hub time held at t (T0 at first)."""
    t = T0


class Flash:
    """One flash of a board (board id, install id): signs as its firmware
    does, with its boot, a counter rising within the boot and its install."""

    def __init__(self, board: str, install: str | None, boot: int = 1) -> None:
        self.board, self.install, self.boot, self.ctr = board, install, boot, 0

    def payload(self, kind: str, msg: dict, bt: int | None = None, ctr: int | None = None) -> bytes:
        if ctr is None:
            self.ctr += 1
            ctr = self.ctr
        P.stamp(msg, ctr, self.boot if bt is None else bt)
        if self.install and msg.get("in") != self.install:
            msg["bi"] = self.install          # as firmware/app.py seals it (not on its own events)
        return Signer(KEYS[self.board]).sign(P.board_topic(self.board, kind), P.encode(msg))

    def send(self, svc: HubService, kind: str, msg: dict, **kw) -> list:
        return svc.handle(P.board_topic(self.board, kind), self.payload(kind, msg, **kw), svc.clock.t)

    def online(self, svc: HubService, **kw) -> list:
        return self.send(svc, P.STATUS, P.status_online(self.boot, "0.2.0", 3), **kw)

    def press(self, svc: HubService, seq: int, station: int = 1, at: int | None = None, **kw) -> list:
        at = svc.clock.t + 1000 if at is None else at
        extra = {"in": self.install} if self.install else {}
        return self.send(svc, P.EVENT, P.event("press", self.boot, seq, station, at, 3, **extra), **kw)


def competition() -> Competition:
    return Competition(load_format("cz-championship-individuals"), [], [], auto_stations=True)


def open_hub(path: Path, clock: FakeClock | None = None) -> HubService:
    return HubService(EventStore(path), BoardKeys(keys=KEYS), competition(), clock or FakeClock())


@pytest.fixture
def hub(tmp_path: Path):
    svc = open_hub(tmp_path / "events.sqlite")
    yield svc
    svc.store.close()


def body(out) -> dict:
    board = out.topic.split("/")[3]
    return json.loads(Signer(KEYS[board]).open(out.topic, out.payload))


def acks(out: list) -> list[dict]:
    return [b for b in map(body, out) if b["type"] == "ack"]


def recorded(out: list) -> list[dict]:
    """The recorded times in out: `recorded` messages (to a board of
    firmware 0.2.0), and those in acks ("recorded": the same fields), as
    `recorded` messages."""
    got = []
    for b in map(body, out):
        if b["type"] == "recorded":
            got.append(b)
        elif b["type"] == "ack" and "recorded" in b:
            got.append(dict(b["recorded"], type="recorded"))
    return got


def finished(svc: HubService) -> dict[str, int]:
    return {s.entrant: s.time_ms for s in svc.standings(final=True) if s.status == "finished"}


# ------------------------------------------------------------ item 2

def test_schedules_carry_the_events_id(tmp_path):
    """Every log has an event id of its own (random, made with the log, kept
    across restarts); each schedule carries it, beside its id, which only
    rises within the event."""
    one = open_hub(tmp_path / "one.sqlite")
    two = open_hub(tmp_path / "two.sqlite")
    try:
        sent: list = []
        one.changes.subscribe(ToBoards, lambda n: sent.extend(n.messages))
        one.start_round()
        (sched,) = [body(o) for o in sent if o.topic == "tt/v1/b/b1/sched"]
        two.start_round()
        (other,) = [body(o) for o in two.schedules(["b1"], force=True)]
        assert sched["id"] == other["id"]                  # both logs' first schedule: the same id ...
        assert None is not sched.get("ev") != other.get("ev") is not None   # ... of two events
        assert sched["ev"] == one.store.event_id and 0 < sched["ev"] < 2 ** 30
        again = EventStore(tmp_path / "one.sqlite")
        assert again.event_id == one.store.event_id       # the same log: the same event
        again.close()
        first = sched["id"]
        one.start_round(T0 + 60_000, why="moved")
        later = [body(o) for o in sent if o.topic == "tt/v1/b/b1/sched"][-1]
        assert later["ev"] == sched["ev"] and later["id"] > first
    finally:
        one.store.close()
        two.store.close()


# ------------------------------------------------------------ item 3

def test_a_spare_flashed_with_the_dead_boards_id_is_another_install(tmp_path):
    """The measured loss: the spare starts at boot 1 like the dead board
    did; its messages were rejected as replayed, and its (board, boot, seq)
    keys collided with the dead board's rows (INSERT OR IGNORE, acked, never
    stored).  Now every finish of both is stored, acked with its own
    install id and ranked; the dead board's late last will does not mark the
    spare offline; a restarted hub ranks the same."""
    db = tmp_path / "events.sqlite"
    hub = open_hub(db)
    hub.start_round()
    dead, spare = Flash("b1", DEAD), Flash("b1", SPARE)
    will = dead.payload(P.STATUS, P.status_offline(1), ctr=1)      # signed at connect, before the birth
    dead.ctr = 1
    dead.online(hub)
    (dead_ack,) = acks(dead.press(hub, 1, station=1, at=T0 + 61_000))
    dead.press(hub, 2, station=2, at=T0 + 62_000)
    # the dead board is swapped: the spare, same id and key, boot 1 again
    spare.online(hub)
    out = spare.press(hub, 1, station=3, at=T0 + 63_000)           # (b1, 1, 1) like the dead board's first
    assert hub.counts.rejected == {} and hub.counts.duplicates == 0
    assert len([e for e in hub.store.events() if e["type"] == "press"]) == 3
    # acks name the install once the id has two: the other board ignores them
    assert (dead_ack["boot"], dead_ack["seq"], dead_ack.get("in")) == (1, 1, None)
    (ack,) = acks(out)
    assert (ack["boot"], ack["seq"], ack.get("in")) == (1, 1, SPARE)
    (again,) = acks(dead.press(hub, 1, station=1, at=T0 + 61_000))     # the dead board's, resent
    assert (again["boot"], again["seq"], again.get("in")) == (1, 1, DEAD) and hub.counts.duplicates == 1
    assert [r["call"] for r in recorded(out)] == [[1, 1]]
    hub.handle("tt/v1/b/b1/status", will, hub.clock.t)             # the broker gives out the dead one's will
    assert hub.registry.boards["b1"].online and hub.registry.boards["b1"].install == SPARE
    assert finished(hub) == {"b1/1": 61_000, "b1/2": 62_000, "b1/3": 63_000}
    presses = [e for e in hub.store.events() if e["type"] == "press"]
    assert len(presses) == 3
    assert [c[1] for c in hub.competition.open_calls()] == ["b1/1/1", "b1/1/2", "b1.2/1/1"]
    # a confirmation by the spare names the spare's call, not the dead board's (1, 1)
    spare.send(hub, P.EVENT, P.event("confirm", 1, 2, 3, T0 + 70_000, call=[1, 1], missing=0, **{"in": SPARE}))
    assert [c[1] for c in hub.competition.open_calls()] == ["b1/1/1", "b1/1/2"]
    live = [row_dict(r) for r in hub.standings(final=True)]
    hub.store.close()
    again = open_hub(db)
    try:
        assert [row_dict(r) for r in again.standings(final=True)] == live
        assert spare.press(again, 3, station=1, at=T0 + 64_000)    # the guard replayed per install
        assert again.counts.rejected == {}
    finally:
        again.store.close()


def test_the_same_identity_with_other_content_is_a_conflict_stored_and_alerted(hub, tmp_path):
    """Two flashes without install ids (or one whose flash was wiped):
    (b1, boot 1, seq 1) arrives with other content.  It was acked and
    dropped in silence; now it is stored as a conflict row (the message as
    sent), alerted, acked after it is stored, and never ranked; the same
    conflict again is a duplicate, and so is the original."""
    hub.start_round()
    one, other = Flash("b1", None), Flash("b1", None)
    one.press(hub, 1, station=1, at=T0 + 5000)
    other.ctr = one.ctr                               # fresh counters within the same boot
    out = other.press(hub, 1, station=2, at=T0 + 9000)
    assert [(a["boot"], a["seq"]) for a in acks(out)] == [(1, 1)] and recorded(out) == []
    rows = hub.store.events()
    (first,) = [r for r in rows if r["type"] == "press"]
    (conflict,) = [r for r in rows if r["type"] == "conflict"]
    assert conflict["source"] == "hub" and conflict["board"] == "b1"
    assert conflict["payload"]["of"] == first["id"]
    assert conflict["payload"]["msg"]["station"] == 2 and conflict["payload"]["msg"]["at"] == T0 + 9000
    assert any(a.startswith("CONFLICT: b1 sent boot 1 seq 1 again") for a in hub.alerts()), hub.alerts()
    assert finished(hub) == {"b1/1": 5000}
    n = len(hub.store.events())
    other.press(hub, 1, station=2, at=T0 + 9000)      # the conflicting one, retransmitted
    one.ctr = other.ctr
    one.press(hub, 1, station=1, at=T0 + 5000)        # the original, retransmitted
    assert len(hub.store.events()) == n and hub.counts.duplicates == 2
    again = open_hub(tmp_path / "events.sqlite")
    try:
        assert any(a.startswith("CONFLICT: b1") for a in again.alerts())
        assert finished(again) == {"b1/1": 5000}
    finally:
        again.store.close()


def test_a_board_flashed_again_mid_round_confirms_its_earlier_call(hub):
    """Re-flashed mid-round (new WiFi settings: a new install id; the flash
    keeps the boot counter and the stations' states), the board's referee
    confirms a call it made under the previous install: the confirmation
    names that press."""
    hub.start_round()
    before, after = Flash("b1", DEAD, boot=4), Flash("b1", SPARE, boot=5)
    before.press(hub, 1, station=1, at=T0 + 40_000)
    assert [c[1] for c in hub.competition.open_calls()] == ["b1/4/1"]
    after.send(hub, P.EVENT, P.event("confirm", 5, 1, 1, T0 + 50_000, call=[4, 1], missing=1, **{"in": SPARE}))
    assert hub.competition.open_calls() == []
    (row,) = hub.standings(final=True)
    assert (row.status, row.time_ms, row.provisional, row.penalty_ms) == ("finished", 40_000, False, 10_000)


OLD_SCHEMA = """
CREATE TABLE events (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    received_ms INTEGER NOT NULL,
    source      TEXT    NOT NULL,
    type        TEXT    NOT NULL,
    board       TEXT,
    boot        INTEGER,
    seq         INTEGER,
    payload     TEXT    NOT NULL,
    UNIQUE (board, boot, seq)
);
"""


def test_a_log_of_the_previous_schema_is_migrated_row_for_row(tmp_path):
    """A log written before install ids (UNIQUE (board, boot, seq)): opened,
    it keeps every row (ids, payloads) and its sequence, ranks as before,
    dedupes its old events, and takes a spare's events with the same boot
    and seq."""
    db = tmp_path / "events.sqlite"
    con = sqlite3.connect(db)
    con.executescript(OLD_SCHEMA)
    rows = [("operator", "round_start", None, None, None, {"at": T0, "duration": None, "warnings": [],
                                                            "who": "desk", "why": ""}),
            ("board", "press", "b1", 1, 1, P.stamp(H.press(1, 1, 1, T0 + 7000, 3), 4, 1)),
            ("board", "press", "b2", 1, 1, P.stamp(H.press(1, 1, 1, T0 + 8000, 3), 2, 1)),
            ("operator", "dns", None, None, None, {"entrant": "b2/2", "who": "desk", "why": ""})]
    for source, type_, board, boot, seq, payload in rows:
        con.execute("INSERT INTO events (received_ms, source, type, board, boot, seq, payload)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?)", (T0, source, type_, board, boot, seq, json.dumps(payload)))
    con.execute("INSERT INTO events (received_ms, source, type, payload) VALUES (?, 'hub', 'x', '{}')", (T0,))
    con.execute("DELETE FROM events WHERE id = 5")       # the sequence is at 5, the last id 4
    con.commit()
    before = con.execute("SELECT id, received_ms, source, type, board, boot, seq, payload FROM events"
                         " ORDER BY id").fetchall()
    con.close()

    store = EventStore(db)
    try:
        con = sqlite3.connect(db)
        assert con.execute("PRAGMA user_version").fetchone() == (2,)
        assert con.execute("SELECT id, received_ms, source, type, board, boot, seq, payload FROM events"
                           " ORDER BY id").fetchall() == before
        assert {r[0] for r in con.execute("SELECT install FROM events")} == {""}
        con.close()
        old = P.stamp(H.press(1, 1, 1, T0 + 7000, 3), 9, 1)
        assert store.append_board_event("b1", old, T0) == (event_store.DUPLICATE, None)
        status, row = store.append_board_event("b1", dict(H.press(1, 1, 2, T0 + 9000, 3), **{"in": SPARE}), T0)
        assert status == event_store.STORED and row["id"] == 6    # after the sequence, not the last id
        status, _ = store.append_board_event("b1", H.press(1, 1, 3, T0 + 9500, 3), T0)
        assert status == event_store.CONFLICT
    finally:
        store.close()
    hub = open_hub(db)
    try:
        assert finished(hub) == {"b1/1": 7000, "b2/1": 8000, "b1/2": 9000}
        assert [c[1] for c in hub.competition.open_calls()] == ["b1/1/1", "b2/1/1", "b1.2/1/1"]
    finally:
        hub.store.close()


# ------------------------------------------------------------ item 4

def test_a_boot_far_ahead_is_rejected_and_locks_nobody_out(tmp_path):
    """The measured lock-out: one validly signed message with bt = 2^53-1
    made every later genuine message "older", for good, through hub
    restarts.  Now a boot may advance by at most BOOT_WINDOW: the jump is
    rejected (and alerted), nothing is stored, the board goes on."""
    db = tmp_path / "events.sqlite"
    hub = open_hub(db)
    hub.start_round()
    b = Flash("b1", DEAD, boot=2)
    b.online(hub)
    b.press(hub, 1, at=T0 + 4000)
    n = len(hub.store.events())
    assert b.online(hub, bt=MAX) == [] and b.press(hub, 9, bt=MAX) == []
    assert len(hub.store.events()) == n
    assert any(a.startswith("board b1: messages rejected, boot jump") and "reset_board board=b1" in a
               for a in hub.alerts()), hub.alerts()
    assert acks(b.press(hub, 2, station=2, at=T0 + 5000))           # the genuine board goes on
    # heard again: not locked out, but what came in its name is still said
    assert not any(a.startswith("board b1: messages rejected") for a in hub.alerts())
    assert [a for a in hub.network_alerts() if "boot jump" in a and "heard since" in a]
    hub.clock.t += JUMP_ALERT_MS
    assert not any("boot jump" in a for a in hub.alerts())
    assert finished(hub) == {"b1/1": 4000, "b1/2": 5000}
    window = replay.BOOT_WINDOW
    assert b.send(hub, P.SYNC, P.sync_request(1, 5), bt=2 + window + 1) == []
    assert hub.counts.rejected == {"boot jump": 3}
    assert b.send(hub, P.SYNC, P.sync_request(2, 5), bt=2 + window)   # within the window: a reboot loop
    hub.store.close()
    hub = open_hub(db)                                               # restarted: the log replayed
    try:
        b.boot = 3
        assert acks(b.press(hub, 1, station=3, at=T0 + 6000))
        assert b.press(hub, 2, bt=MAX) == [] and hub.counts.rejected == {"boot jump": 1}
    finally:
        hub.store.close()


def test_a_counter_far_ahead_is_rejected_alerted_and_locks_nobody_out(tmp_path):
    """Issue 33, item 6: one validly signed message with ctr = 2^53-1 in the
    board's current boot was taken; every later genuine message was then
    "replayed" until reset_board, and no alert said so.  Now a counter may
    be at most CTR_WINDOW + CTR_RATE a second (since the highest was heard)
    ahead of the highest heard in its boot, and a new boot's at most that
    far from 1: a jump is rejected, nothing about the board changes (the
    genuine board's next message is taken), and it is a network alert (a
    remote console shows those) with the board and the counter."""
    db = tmp_path / "events.sqlite"
    hub = open_hub(db)
    hub.start_round()
    b = Flash("b1", DEAD, boot=2)
    b.online(hub)
    b.press(hub, 1, at=T0 + 4000)
    n = len(hub.store.events())
    assert b.press(hub, 9, ctr=MAX) == [] and b.send(hub, P.SYNC, P.sync_request(1, 5), ctr=MAX) == []
    assert len(hub.store.events()) == n and hub.counts.rejected == {"counter jump": 2}
    (alert,) = [a for a in hub.network_alerts() if "counter jump" in a]
    assert alert.startswith("board b1: messages rejected, counter jump: counter %d" % MAX), alert
    assert "reset_board board=b1" in alert and alert in hub.alerts()
    assert acks(b.press(hub, 2, station=2, at=T0 + 5000))           # the genuine board: taken
    (alert,) = [a for a in hub.network_alerts() if "counter jump" in a]
    assert str(MAX) in alert and "heard since" in alert, alert
    # a new boot counts from 1: it may not start far ahead either
    assert b.online(hub, bt=3, ctr=MAX) == [] and hub.counts.rejected["counter jump"] == 3
    # an hour the hub did not hear the board (down; the board on another
    # broker): the bound grows with the time, by CTR_RATE a second
    hub.clock.t += 3_600_000
    room = replay.CTR_WINDOW + 3600 * replay.CTR_RATE
    assert b.send(hub, P.SYNC, P.sync_request(2, 5), ctr=b.ctr + room + 1) == []
    assert hub.counts.rejected["counter jump"] == 4
    b.ctr += room
    assert b.send(hub, P.SYNC, P.sync_request(3, 5), ctr=b.ctr)        # at the bound: taken
    assert acks(b.press(hub, 3, station=3))
    hub.clock.t += JUMP_ALERT_MS
    assert not any("counter jump" in a for a in hub.alerts())
    hub.store.close()
    hub = open_hub(db, FakeClock(hub.clock.t + 1000))                # restarted: the log replayed
    try:
        assert b.press(hub, 4, ctr=MAX) == [] and hub.counts.rejected == {"counter jump": 1}
        assert acks(b.press(hub, 4))
        assert set(finished(hub)) == {"b1/1", "b1/2", "b1/3"}
        assert not [r for r in hub.store.events() if r["payload"].get("seq") == 9]
    finally:
        hub.store.close()


def test_reset_board_from_the_command_line_lets_a_board_in_again(tmp_path, capsys):
    """A board whose first message in this log came with a boot far ahead
    (nothing to compare it with), or whose boot counter went back (its flash
    lost): rejected until `tabletimer act DIR reset_board board=T07`, stored
    as an operator action with who and why; its next message starts afresh,
    and a restarted hub replays the reset."""
    ev = tmp_path / "hall"
    event_folder.init(ev, "czjpa-individuals")
    (ev / "entrants.csv").write_text("id,name,eligible\n1,Alice,yes\n")
    (ev / "stations.csv").write_text("board,button,table,entrant\nb1,1,Table 1,1\n")
    (ev / "board-keys.json").write_text(json.dumps({"b1": KEYS["b1"]}))
    folder = event_folder.load(ev)

    def open_event() -> HubService:
        return HubService(EventStore(folder.db), BoardKeys(folder.keys_file),
                          Competition(folder.format, folder.entrants, folder.stations), FakeClock())
    hub = open_event()
    hub.start_round()
    b = Flash("b1", DEAD, boot=5)
    b.online(hub, bt=MAX - 1)                # a corrupted boot counter, the first heard of it
    b.ctr = 0
    assert b.online(hub) == [] and hub.counts.rejected == {"replayed": 1}
    assert cli.main(["act", str(ev), "reset_board", "board=b1", "--who", "head referee",
                     "--why", "boot counter corrupted"]) == 0
    assert "recorded" in capsys.readouterr().out
    assert hub.catch_up() == 1
    (row,) = [r for r in hub.store.events() if r["type"] == "reset_board"]
    assert row["source"] == "operator"
    assert row["payload"] == {"board": "b1", "who": "head referee", "why": "boot counter corrupted"}
    assert b.online(hub) != [] and acks(b.press(hub, 1, at=T0 + 3000))
    assert {s.entrant: s.status for s in hub.standings(final=True)} == {"1": "finished"}
    assert not hub.competition.flagged
    assert cli.main(["act", str(ev), "reset_board", "board=nope"]) == 2        # no such board
    assert "reset_board: no board 'nope'" in capsys.readouterr().err
    hub.store.close()
    again = open_event()
    try:
        assert acks(b.press(again, 2, at=T0 + 4000))                       # the reset replayed
        assert not again.competition.flagged and again.counts.rejected == {}
    finally:
        again.store.close()


def test_press_times_that_cannot_be_this_rounds_are_refused_and_alerted(tmp_path):
    """The measured presses at = 1 and 2^53-1 were stored as finish calls
    (the console showed "pressed -498918:42:11"); so would last month's,
    from a board's journal.  Each is still stored as sent and acked (the
    board's journal may let go of it), but refused as a finish: no open
    call, no recorded time back to the station, not ranked, alerted."""
    db = tmp_path / "events.sqlite"
    hub = open_hub(db)
    hub.start_round()
    b = Flash("b1", DEAD)
    bad = {1: 1, 2: MAX, 3: T0 - 30 * 86_400_000, 4: T0 - 2 * 3_600_000, 5: T0 + 20 * 60_000}
    for seq, at in bad.items():
        out = b.press(hub, seq, station=seq, at=at)
        assert recorded(out) == [] and [a["seq"] for a in acks(out)] == [seq]
    good = b.press(hub, 6, station=6, at=T0 + 30_000)
    assert [r["time"] for r in recorded(good)] == [30_000]
    assert len([e for e in hub.store.events() if e["type"] == "press"]) == 6
    assert [c[1] for c in hub.competition.open_calls()] == ["b1/1/6"]
    assert finished(hub) == {"b1/6": 30_000}
    refused = [a for a in hub.alerts() if a.startswith("press b1/1/")]
    assert len(refused) == 5 and all("refused, not ranked" in a for a in refused), hub.alerts()
    assert "days before it arrived" in refused[2] and "outside the round" in refused[3]
    assert "after the hub's clock" in refused[1] and "after the hub's clock" in refused[4]
    # the round re-armed two hours later: the good press is not of it any more, live as on a replay
    hub.act("round_start", {"at": T0 + 2 * 3_600_000, "duration": None, "warnings": []}, why="moved")
    assert finished(hub) == {} and hub.competition.open_calls() == []
    live = [row_dict(r) for r in hub.standings(final=True)]
    hub.store.close()
    again = open_hub(db)
    try:
        assert [row_dict(r) for r in again.standings(final=True)] == live
        assert len([a for a in again.alerts() if a.startswith("press b1/1/")]) == 5   # the last five
        assert len(again.competition.refused) == 6 and not again.competition.flagged
    finally:
        again.store.close()
