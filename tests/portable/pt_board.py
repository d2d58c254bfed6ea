# Portable tests of firmware/board.py: the board's pure logic.
import protocol
from board import Board

OFF = 7200000


# the hub's messages, as hub/hub_protocol.py builds them (CPython only)
def sync_reply(req, t2, t3):
    return {"v": 1, "type": "sync", "id": req["id"], "t1": req["t1"], "t2": t2, "t3": t3}


PRESSED, RELEASED = 1, 0     # the levels of gestures.Debouncer


def schedule(sched_id, start, end, signals, rot=None, calls=None, ev=None):
    m = {"v": 1, "type": "sched", "id": sched_id, "start": start, "end": end, "signals": signals}
    if ev is not None:
        m["ev"] = ev
    if rot is not None:
        m["rot"] = rot
    if calls is not None:
        m["calls"] = calls
    return m


RETRY_MIN_MS = 1000     # an unacknowledged event is sent again after 1 s,
RETRY_MAX_MS = 16000    # doubling up to 16 s


def press(board, st, t):
    """A complete short press at local time t (down, then up 80 ms later)."""
    return board.transition(st, PRESSED, t) + board.transition(st, RELEASED, t + 80)


def synced(board, t=0):
    req = board.sync_request(t)
    reply = sync_reply(req, t + OFF + 1, t + OFF + 1)
    assert board.sync_reply(reply, t + 2) is not None


def running(board, start_local=0, end_local=None):
    synced(board)
    end = None if end_local is None else board.sync.to_hub(end_local)
    assert board.set_schedule(schedule(1, board.sync.to_hub(start_local), end, []))


def events(actions):
    return [a[1] for a in actions if a[0] == "event"]


def sounds(actions):
    return [a[1] for a in actions if a[0] == "sound"]


def hold(board, st, t, ms):
    return board.transition(st, PRESSED, t) + board.transition(st, RELEASED, t + ms)


def test_press_while_running_is_a_finish_call_with_hub_time():
    b = Board(3, 2)
    running(b)
    acts = b.transition(2, PRESSED, 1000)
    assert events(acts) == [{"type": "press", "boot": 3, "seq": 1, "station": 2,
                             "at": 1000 + OFF, "err": 2}]
    assert sounds(acts) == ["call"]
    assert b.state(2, b.sync.to_hub(1001)) == "called"
    assert b.state(1, b.sync.to_hub(1001)) == "running"
    assert b.transition(2, RELEASED, 4000) == []   # a long hand-raise is not a confirmation
    m = Board.event_message(events(acts)[0])
    assert protocol.decode(protocol.encode(m)) == m


def hub_has(board, call, t):
    """The hub's station states (in the press's ack) say the call is open
    there, at local time t."""
    board.update([[2, [call["boot"], call["seq"]], None, 0]], t)


def test_referee_counts_missing_pieces_then_confirms():
    b = Board(1, 1)
    running(b)
    call = events(press(b, 1, 1000))[0]
    hub_has(b, call, 1100)                          # the ack: counts from 6100 on (5 s quiet)
    acts = hold(b, 1, 6100, 100)
    assert sounds(acts) == ["count"]
    (counted,) = events(acts)                       # told to the hub: the phone shows the count
    assert (counted["type"], counted["state"], counted["missing"], counted["at"]) == \
        ("stray", "called", 1, 6100 + OFF)
    assert sounds(hold(b, 1, 7000, 300)) == ["count"]
    acts = hold(b, 1, 8000, 2500)
    (conf,) = events(acts)
    assert sounds(acts) == ["confirmed"]
    assert conf["type"] == "confirm" and conf["call"] == [1, call["seq"]] and conf["missing"] == 2
    assert conf["at"] == 10500 + OFF                # the release that confirmed
    assert b.state(1, b.sync.to_hub(10600)) == "done"
    (stray,) = events(press(b, 1, 11000))           # after the confirmation
    assert stray["type"] == "stray" and stray["state"] == "done"


def test_referee_voids_an_accidental_call():
    b = Board(1, 1)
    running(b)
    call = events(press(b, 1, 1000))[0]
    hold(b, 1, 2000, 100)                           # a count, then the void
    (void,) = events(hold(b, 1, 3000, 6500))
    assert void["type"] == "void" and void["call"] == [1, call["seq"]]
    assert b.state(1, b.sync.to_hub(9600)) == "running"
    again = events(press(b, 1, 20000))[0]
    assert again["type"] == "press" and again["seq"] == void["seq"] + 1
    (conf,) = events(hold(b, 1, 21000, 2100))
    assert conf["missing"] == 0                     # the void reset the count


def test_hold_feedback_tells_the_referee_what_release_does():
    b = Board(1, 1)
    running(b)
    press(b, 1, 1000)
    b.st[0].stable = PRESSED                    # the debouncer saw the press
    b.transition(1, PRESSED, 5000)
    assert b.next_hold_ms(5000) == 7000
    assert b.hold_feedback(6999) == []
    assert sounds(b.hold_feedback(7000)) == ["confirm_armed"]
    assert b.next_hold_ms(7000) == 11000
    assert sounds(b.hold_feedback(11000)) == ["void_armed"]
    assert b.hold_feedback(12000) == [] and b.next_hold_ms(12000) is None


def test_a_nervous_second_press_is_a_repeat_call_never_a_missing_piece():
    """Issue 45, item 3: the competitor presses again after calling (the
    ack's beeps late: the hub away).  Before the hub has the call, and
    within the quiet time after it (restarted by each such press), a short
    press is a repeat call: reported, answered with the call's beep, never
    counted; the confirm records no missing piece."""
    b = Board(1, 1)
    running(b)
    call = events(press(b, 1, 1000))[0]
    for t in (3000, 20000, 60000):                  # the hub away: no ack for a minute
        acts = press(b, 1, t)
        assert sounds(acts) == ["call"]
        (rep,) = events(acts)
        assert (rep["type"], rep["state"], "missing" in rep) == ("stray", "called", False)
    hub_has(b, call, 61000)                         # the ack comes: counts from 66000 on
    assert sounds(press(b, 1, 63000)) == ["call"]   # the competitor hears the beeps, presses once more
    assert sounds(press(b, 1, 66000)) == ["call"]   # ... which started the quiet time again
    assert b.st[0].missing == 0
    (conf,) = events(hold(b, 1, 70000, 2500))       # the referee confirms
    assert conf["missing"] == 0
    # the referee's own count, once the station has been quiet: counted
    b = Board(1, 1)
    running(b)
    call = events(press(b, 1, 1000))[0]
    hub_has(b, call, 1500)
    assert sounds(press(b, 1, 30000)) == ["count"] and b.st[0].missing == 1


def test_the_confirm_hold_says_the_count_it_records():
    """At the armed tick, a blip per missing piece counted: the referee
    hears what the release records before it is recorded."""
    b = Board(1, 1)
    running(b)
    call = events(press(b, 1, 1000))[0]
    hub_has(b, call, 1000)
    press(b, 1, 7000)
    press(b, 1, 8000)
    press(b, 1, 9000)
    b.st[0].stable = PRESSED
    b.transition(1, PRESSED, 10000)
    assert sounds(b.hold_feedback(12000)) == ["confirm_armed", 3]
    assert (b.st[0].missing, events(b.transition(1, RELEASED, 12500))[0]["missing"]) == (3, 3)


def test_presses_outside_the_round_are_reported_not_dropped():
    b = Board(1, 2)
    (e,) = events(press(b, 1, 10))                   # no clock, no schedule
    assert e["type"] == "stray" and e["state"] == "idle" and e["at"] is None
    running(b, start_local=1000, end_local=5000)
    (e,) = events(press(b, 1, 500))
    assert (e["type"], e["state"]) == ("stray", "idle")
    press(b, 2, 4000)                                # a call just before time-up
    (e,) = events(press(b, 1, 6000))
    assert (e["type"], e["state"]) == ("stray", "stopped")
    (conf,) = events(hold(b, 2, 7000, 2500))        # the call can still be confirmed
    assert conf["type"] == "confirm"


def test_press_before_sync_gets_time_later():
    b = Board(1, 1)
    (e,) = events(press(b, 1, 500))
    assert e["at"] is None and e["local"] == 500
    assert b.due(0) == []                   # held back until converted
    assert b.resolve_times() == []
    synced(b, 1000)
    changed = b.resolve_times()
    assert changed == [e] and e["at"] == 500 + OFF and "local" not in e
    assert b.due(0) == [e]


def test_rebooted_mid_round_without_clock_a_press_is_still_a_finish_call():
    # found by the chaos rehearsal: it used to be a stray ('idle'), never ranked
    b = Board(2, 4)
    b.restore({"st": [[None, 0, False, 0]] * 4,
               "sched": {"id": 9, "start": 1000000, "end": 9000000, "signals": [], "calls": None}})
    (e,) = events(press(b, 1, 5000))
    assert e["type"] == "press" and e["at"] is None and e["local"] == 5000
    synced(b, 6000)
    assert b.resolve_times() == [e] and e["at"] == 5000 + OFF


def test_old_boot_entries_without_time_are_sent_as_unknown():
    old = {"boot": 1, "seq": 4, "station": 1, "at": None, "local": 5}
    b = Board(2, 1, journal(old))
    assert b.due(0) == [old]
    synced(b)
    assert b.resolve_times() == []          # another boot's clock: cannot convert
    m = Board.event_message(old)
    assert m["at"] is None and m["type"] == "press"


def test_retry_backoff_and_ack():
    b = Board(1, 1)
    running(b)
    (e,) = events(press(b, 1, 10))
    assert b.due(0) == [e]
    assert b.due(RETRY_MIN_MS - 1) == []
    assert b.due(RETRY_MIN_MS) == [e]
    t = RETRY_MIN_MS
    for _ in range(10):
        t += RETRY_MAX_MS
        assert b.due(t) == [e]
    b.retry_all_now()
    assert b.due(t) == [e]
    assert b.ack(1, 1) and not b.ack(1, 1)
    assert b.due(t + 10 * RETRY_MAX_MS) == []


def test_unknown_station_rejected():
    b = Board(1, 2)
    for st in (0, 3):
        try:
            press(b, st, 0)
        except ValueError:
            continue
        raise AssertionError("station %d accepted" % st)


def test_schedule_newer_only_and_signals_in_order():
    b = Board(1, 1)
    assert b.next_signal(1000, 500) is None
    assert b.set_schedule(schedule(2, 1000, 9000, [[5000, "warn"], [1000, "start"], [9000, "time_up"]]))
    assert not b.set_schedule(schedule(2, 0, 0, []))
    assert not b.set_schedule(schedule(1, 0, 0, []))
    assert b.next_signal(900, 500) == [1000, "start"]
    assert b.next_signal(1400, 500) == [1000, "start"]      # a little late: still played
    assert b.next_signal(1600, 500) == [5000, "warn"]       # too late: skipped
    b.mark_played([5000, "warn"])
    assert b.next_signal(1600, 500) == [9000, "time_up"]
    assert b.set_schedule(schedule(3, 1000, 9000, [[5000, "warn"], [7000, "rotate"]]))
    assert b.next_signal(1600, 500) == [7000, "rotate"]     # played ones stay played


def test_signals_too_late_to_play_are_told():
    """A board woken (or booted) too late for a signal never plays it late;
    the ones it passed are handed back, in order, to be said (and marked
    played: a clock corrected backwards never brings one back)."""
    b = Board(1, 1)
    assert b.set_schedule(schedule(1, 1000, 9000, [[1000, "start"], [4000, "rotate"], [7000, "rotate"],
                                                   [9000, "time_up"]]))
    gone = []
    assert b.next_signal(7100, 150, gone) == [7000, "rotate"]     # 100 ms late: still played
    assert gone == [[1000, "start"], [4000, "rotate"]]
    for g in gone:
        b.mark_played(g)
    gone = []
    assert b.next_signal(3000, 150, gone) == [7000, "rotate"] and gone == []   # never again
    b.mark_played([7000, "rotate"])
    gone = []
    assert b.next_signal(9200, 150, gone) is None and gone == [[9000, "time_up"]]


def test_snapshot_restores_pending_call_across_reboot():
    b = Board(1, 2)
    running(b)
    call = events(press(b, 1, 1000))[0]
    hub_has(b, call, 1000)
    hold(b, 1, 7000, 100)                          # a missing piece counted
    b2 = Board(2, 2)
    b2.restore(b.snapshot())
    synced(b2)
    assert b2.state(1, b2.sync.to_hub(3000)) == "called"
    (conf,) = events(hold(b2, 1, 3000, 2500))
    assert conf["call"] == [1, call["seq"]] and conf["missing"] == 1 and conf["boot"] == 2


def test_sync_reply_must_match_request():
    b = Board(1, 1)
    req = b.sync_request(100)
    bad = sync_reply(req, 1, 2)
    bad["t1"] = 99
    assert b.sync_reply(bad, 105) is None
    assert b.sync_reply(sync_reply(req, 1, 2), 105) is None   # already consumed
    assert not b.sync.ready
    for i in range(20):                     # lost replies do not pile up
        b.sync_request(i)
    assert len(b.sync_sent) <= 8


def test_a_reply_with_a_negative_round_trip_is_refused_not_raised():
    # the hub's time between receiving and answering (t3 - t2: 50) longer
    # than the board's whole round trip (t4 - t1: 5)
    b = Board(1, 1)
    req = b.sync_request(100)
    assert b.sync_reply(sync_reply(req, 1000, 1050), 105) is None
    assert not b.sync.ready and req["id"] not in b.sync_sent


def test_compact_rotation_schedule_expands():
    b = Board(1, 4)
    assert b.set_schedule(protocol.decode(protocol.encode(
        schedule(5, 1000, 30000, [[1000, "start"], [30000, "time_up"]], rot=[9000, 8000, 30000]))))
    assert [list(s) for s in b.sched["signals"]] == [[1000, "start"], [9000, "rotate"], [17000, "rotate"],
                                                     [25000, "rotate"], [30000, "time_up"]]
    try:
        protocol.encode(schedule(6, 0, 0, [], rot=[0, 10, 100]))
    except protocol.ProtocolError:
        return
    raise AssertionError("a rotation every 10 ms accepted")


def test_one_at_a_time_station_runs_again_after_each_confirmation():
    b = Board(1, 1)
    synced(b)
    assert b.set_schedule(schedule(1, b.sync.to_hub(0), None, [], calls=[3]))
    for n in range(3):
        (call,) = events(press(b, 1, 1000 + 10000 * n))
        assert call["type"] == "press"
        (conf,) = events(hold(b, 1, 5000 + 10000 * n, 2500))
        assert conf["type"] == "confirm"
        assert b.state(1, b.sync.to_hub(9000 + 10000 * n)) == ("running" if n < 2 else "done")
    (stray,) = events(press(b, 1, 40000))
    assert stray["type"] == "stray"


def test_a_station_with_its_own_end_runs_past_the_rounds():
    # an entrant with a new start time (a referee cut a taped bag): the
    # hub's station states give its station a later end than the round's;
    # a press before its own end is a finish call, the neighbour's after
    # the round's end a stray
    b = Board(1, 2)
    synced(b)
    start, end = b.sync.to_hub(0), b.sync.to_hub(10000)
    assert b.set_schedule(schedule(1, start, end, []))
    assert b.state(2, end + 1000) == "stopped"          # not told yet: the round's end
    assert b.update([[1, None, end, 0], [1, None, end + 5000, 0]]) == []
    assert b.state(1, end + 1000) == "stopped" and b.state(2, end + 1000) == "running"
    assert b.state(2, end + 5000) == "stopped"
    (stray,) = events(press(b, 1, 12000))
    (call,) = events(press(b, 2, 12000))
    assert (stray["type"], stray["state"], call["type"]) == ("stray", "stopped", "press")


def test_the_board_follows_the_calls_the_hub_closed():
    # [state, call, end, confirmed] per button: 1 running, 2 called, 3 done
    b = Board(1, 3)
    running(b)
    for n in (1, 2, 3):
        press(b, n, 1000 * n)                        # calls [1, 1], [1, 2], [1, 3]
    assert [s.call for s in b.st] == [[1, 1], [1, 2], [1, 3]]
    # the hub has 1 voided at the desk, 2 confirmed there with 2 missing, 3 still open
    hub = [[1, [1, 1], None, 0], [3, [1, 2], None, 1], [2, [1, 3], None, 0]]
    assert b.update(hub) == [(1, "voided"), (2, "confirmed")]
    assert [b.state(n, b.sync.to_hub(5000)) for n in (1, 2, 3)] == ["running", "done", "called"]
    assert b.update(hub) == []                        # said again: nothing changes, no sound
    (call,) = events(press(b, 1, 6000))               # the competitor's next press is a call again
    assert call["type"] == "press" and b.st[0].call == [1, 4]
    # a message made before that call: it names the older one, the new call stays
    assert b.update(hub) == [] and b.st[0].call == [1, 4]
    (stray,) = events(hold(b, 2, 7000, 2500))         # the desk's confirmation stands at the table
    assert (stray["type"], stray["state"]) == ("stray", "done")
    # the board's own decision the hub refused (the desk had voided it): as the hub has it
    (conf,) = events(hold(b, 3, 8000, 2500))
    assert conf["type"] == "confirm" and b.state(3, b.sync.to_hub(9000)) == "done"
    assert b.update([[2, [1, 4], None, 0], [3, [1, 2], None, 1], [1, [1, 3], None, 0]]) == [(3, "voided")]
    assert b.state(3, b.sync.to_hub(9000)) == "running"
    # the hub still has it open (the board's decision not there yet): left alone
    b2 = Board(1, 1)
    running(b2)
    press(b2, 1, 1000)
    events(hold(b2, 1, 2000, 2500))
    assert b2.update([[2, [1, 1], None, 0]]) == [] and b2.state(1, b2.sync.to_hub(5000)) == "done"
    # survives a reboot: the latest call is in the snapshot
    b3 = Board(2, 3)
    b3.restore(b.snapshot())
    assert [s.key for s in b3.st] == [[1, 4], [1, 2], [1, 3]]


def test_one_at_a_time_station_follows_a_confirmation_at_the_desk():
    b = Board(1, 1)
    synced(b)
    assert b.set_schedule(schedule(1, b.sync.to_hub(0), None, [], calls=[2]))
    press(b, 1, 1000)
    assert b.update([[1, [1, 1], None, 1]]) == [(1, "confirmed")]    # runs again: the next puzzle
    assert b.state(1, b.sync.to_hub(2000)) == "running" and b.st[0].confirmed == 1


def test_default_and_configured_hold_times():
    b = Board(1, 1)                                  # defaults: confirm 2 s, void 6 s
    running(b)
    call = events(press(b, 1, 1000))[0]
    hub_has(b, call, 1000)
    assert sounds(hold(b, 1, 6000, 1999)) == ["count"]   # quiet 5 s after the hub has the call
    assert sounds(hold(b, 1, 9000, 2000)) == ["confirmed"]
    b = Board(1, 1, timings={"quiet_ms": 300})
    running(b)
    call = events(press(b, 1, 1000))[0]
    hub_has(b, call, 1000)
    assert sounds(press(b, 1, 1299)) == ["call"] and sounds(press(b, 1, 1700)) == ["count"]
    b = Board(1, 1, timings={"confirm_ms": 400, "void_ms": 900, "debounce_ms": 10})
    running(b)
    press(b, 1, 1000)
    assert b.st[0].settle_ms == 10
    assert sounds(hold(b, 1, 2000, 899)) == ["confirmed"]
    b = Board(1, 1, timings={"confirm_ms": 400, "void_ms": 900})
    running(b)
    press(b, 1, 1000)
    assert sounds(hold(b, 1, 2000, 900)) == ["voided"]


def test_signals_at_one_instant_each_play_once():
    b = Board(1, 1)
    assert b.set_schedule(schedule(1, 1000, 9000, [[5000, "warn"], [5000, "rotate"], [6000, "time_up"]]))
    got = []
    for _ in range(3):
        sig = b.next_signal(5000, 150)
        if sig is None:
            break
        b.mark_played(sig)
        got.append(sig)
    assert got == [[5000, "rotate"], [5000, "warn"], [6000, "time_up"]]
    assert b.next_signal(5000, 150) is None
    # a newer schedule with the same signals and an earlier one: nothing plays twice
    assert b.set_schedule(schedule(2, 1000, 9000, [[4000, "warn"], [5000, "warn"], [6000, "time_up"]]))
    assert b.next_signal(5000, 1500) is None


def test_a_schedule_of_another_event_replaces_one_kept_from_an_earlier_event():
    """Issue 14, item 2: a board reused from an earlier event keeps that
    event's schedule in flash (schedule id 480, its station confirmed);
    the new event's first schedule has a low id, but another event id: it
    is taken, the stations start afresh, and a press is a finish call
    again (was: refused for its id, every press a stray)."""
    b = Board(7, 1)
    synced(b)
    t = b.sync.to_hub(0)
    assert b.set_schedule(schedule(480, t - 90000, t - 30000, [[t - 30000, "time_up"]], ev=111))
    b.st[0].done, b.st[0].confirmed = True, 1          # confirmed in the earlier event
    b.mark_played([t - 30000, "time_up"])
    b2 = Board(8, 1)                                    # rebooted at the next event
    b2.restore(b.snapshot())
    synced(b2)
    assert b2.state(1, b2.sync.to_hub(1000)) == "done"
    assert b2.update([[3, None, t - 20000, 1]]) == []             # its own end, in the earlier event
    assert not b2.set_schedule(schedule(479, t, None, [], ev=111))   # same event: older
    assert b2.set_schedule(schedule(3, t - 40000, None, [[t + 5000, "warn"]], ev=222))
    assert b2.sched["ev"] == 222 and b2.played is None
    assert b2.st[0].end is None and b2.st[0].key is None
    assert b2.next_signal(t, 150) == [t + 5000, "warn"]
    (call,) = events(press(b2, 1, 1000))
    assert call["type"] == "press"
    assert not b2.set_schedule(schedule(2, t, None, [], ev=222))     # within the new event: ids rise
    assert b2.set_schedule(schedule(4, t, None, [], ev=222))
    assert b2.state(1, b2.sync.to_hub(2000)) == "called"             # the same event: state kept


def test_events_carry_the_install_id_and_acks_must_match_it():
    """Issue 14, item 3: a board flashed with an install id makes every
    event under it; once the hub names installs in its acks (a board id
    with more than one install: a spare under the same id, acked on the
    shared topic), an ack of another install's (boot, seq) does not retire
    the entry."""
    b = Board(1, 1, bi="0a1b2c3d")
    running(b)
    (e,) = events(press(b, 1, 1000))
    assert e["in"] == "0a1b2c3d"
    m = Board.event_message(e)
    assert m["in"] == "0a1b2c3d" and m["boot"] == 1 and m["seq"] == 1
    assert not b.ack(1, 1, "ffffffff")              # another install's
    assert not b.ack(1, 1, "")                      # a board's without an install id
    assert len(b.unacked) == 1
    assert b.ack(1, 1, "0a1b2c3d") and not b.unacked
    events(press(b, 1, 9000))                       # (the station was called: a count)
    b2 = Board(1, 1, bi="0a1b2c3d")
    running(b2)
    events(press(b2, 1, 1000))
    assert b2.ack(1, 1)                             # the only install there is: not named
    old = Board(1, 1)                               # no install id: no "in"
    running(old)
    (e,) = events(press(old, 1, 1000))
    assert "in" not in e and "in" not in Board.event_message(e)
    assert not old.ack(1, 1, "0a1b2c3d") and old.ack(1, 1, "")
    stamped = protocol.stamp(Board.event_message(e), 5, 1, "0a1b2c3d")
    assert (stamped["ctr"], stamped["bt"], stamped["bi"]) == (5, 1, "0a1b2c3d")
    assert "bi" not in protocol.stamp({}, 5, 1)


def journal_after(entries, key, n):
    """What Journal.load(key, n) returns from a journal of these entries."""
    later = [e for e in entries if (e["boot"], e["seq"]) > key]
    later.sort(key=lambda e: (e["boot"], e["seq"]))
    return later[:n], len(later) > n


def journal(*entries):
    """A Journal.load of these entries."""
    return lambda key, n: journal_after(entries, key, n)


def test_only_a_few_unacknowledged_entries_stay_in_ram_the_rest_come_from_the_journal():
    """A long outage: every event is journaled, but only 4 stay in RAM (each
    is 250-300 bytes on the board); as they are acknowledged the next come
    in from the journal, oldest first, and every one is sent once."""
    b = Board(1, 1)                      # no schedule: every press is a stray
    synced(b)
    made = []
    for i in range(10):
        made += events(press(b, 1, 100 * i))
    assert [k[1] for k in sorted(b.unacked)] == [1, 2, 3, 4] and b.backlog == (1, 4)
    sent = []
    t = 0
    while True:
        due = b.due(t)
        sent += [e["seq"] for e in due]
        for e in due:
            assert b.ack(e["boot"], e["seq"])
        if not due and b.backlog is None:
            break
        assert not b.fill(journal(*made))       # their times known already
        t += 1
    assert sent == list(range(1, 11)) and not b.unacked
    (e,) = events(press(b, 1, 5000))     # the journal drained: straight into RAM again
    assert list(b.unacked) == [(1, 11)] and b.backlog is None
    assert Board(2, 1, journal(*made)).backlog == (1, 4)      # a reboot: the oldest 4 first


def test_an_entry_from_the_journal_gets_its_hub_time_when_it_comes_in():
    b = Board(3, 1)
    made = []
    for i in range(6):                   # before the first sync: local times only
        made += events(press(b, 1, 1000 + i))
    synced(b)
    assert [e["seq"] for e in b.resolve_times()] == [1, 2, 3, 4]
    for k in list(b.unacked):
        b.ack(*k)
    changed = b.fill(journal(*made))
    assert [(e["seq"], e["at"]) for e in changed] == [(5, 1004 + OFF), (6, 1005 + OFF)]
    assert b.backlog is None and [e["seq"] for e in b.due(0)] == [5, 6]
