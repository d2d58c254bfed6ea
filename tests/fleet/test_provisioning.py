"""Batch provisioning's rules (hub/fleet/provisioning.py): the next id, the
record a restart goes on from, what a plugged board's configuration says."""

from __future__ import annotations

import pytest

from tabletimer.hub.fleet import provisioning as pv

ORDER = ["T01", "T02", "T03", "T04"]


def entry(board, install, result, time="2027-05-01 07:10:00", detail=""):
    return pv.Entry(time, board, install, "/dev/ttyUSB0", "", result, detail)


def record(*entries) -> str:
    return "".join(pv.record_text(e, header=i == 0) for i, e in enumerate(entries))


def test_the_next_id_is_the_first_of_stations_csv_not_yet_handed_out():
    plan = pv.Plan(ORDER)
    assert plan.next() == "T01"
    plan.mark_done("T01")
    plan.mark_done("T03")
    assert plan.todo() == ["T02", "T04"]
    plan.mark_done("T02")
    plan.mark_done("T04")
    assert plan.next() is None


def test_a_restart_goes_on_from_the_record_and_a_failed_attempt_hands_out_no_id():
    text = record(entry("T01", "aa0001", pv.DONE), entry("T02", "aa0002", pv.FAILED, detail="mpremote failed"),
                  entry("T03", "", pv.FOUND))
    entries, problems = pv.parse_record(text)
    assert problems == [] and [e.board for e in entries] == ["T01", "T02", "T03"]
    assert set(pv.taken(entries)) == {"T01", "T03"}
    assert pv.Plan(ORDER, done=set(pv.taken(entries))).todo() == ["T02", "T04"]


def test_a_row_cut_short_by_a_power_loss_is_skipped_and_said():
    text = record(entry("T01", "aa0001", pv.DONE)) + "2027-05-01 07:11:00,T02,aa00"
    entries, problems = pv.parse_record(text)
    assert [e.board for e in entries] == ["T01"]
    assert len(problems) == 1 and "line 3" in problems[0] and "skipped" in problems[0]


def test_a_row_with_a_cell_past_the_csv_limit_is_skipped_and_said_and_the_rest_read():
    """Issue 44, item 7: a cell larger than the csv module's limit raised
    _csv.Error out of `boards provision`; it is a row that does not read."""
    text = record(entry("T01", "aa0001", pv.DONE)) + "2027-05-01 07:11:00,T02," + "x" * 200_000 + ",,,done,\n" \
        + pv.record_text(entry("T03", "aa0003", pv.DONE), header=False)
    entries, problems = pv.parse_record(text)
    assert [e.board for e in entries] == ["T01", "T03"]
    assert len(problems) == 1 and problems[0].startswith("provisioning.csv line 3: not a provisioning row (skipped)")
    assert len(problems[0]) < 200


def test_a_detail_with_commas_and_quotes_reads_back_whole():
    e = entry("T01", "aa0001", pv.FAILED, detail='mpremote failed (exit 1): "x", y')
    assert pv.parse_record(record(e))[0] == [e]


def test_a_chosen_id_goes_first_then_the_free_ones_and_only_limits_them():
    plan = pv.Plan(ORDER, done={"T01"}, only=["T04", "T02"], chosen="T03")
    assert plan.todo() == ["T03", "T02", "T04"]          # --only keeps stations.csv's order
    plan.mark_done("T03")
    assert plan.chosen is None and plan.todo() == ["T02", "T04"]
    replaced = pv.Plan(ORDER, done={"T01"}, chosen="T01")  # a spare replacing a provisioned board
    assert replaced.next() == "T01" and replaced.todo()[1:] == ["T02", "T03", "T04"]


@pytest.mark.parametrize("kw,message", [
    ({"chosen": "T09"}, "not a board of stations.csv: T09"),
    ({"only": ["T02", "X1", "X1"]}, "not a board of stations.csv: X1 (its boards: T01, T02"),
])
def test_an_id_that_is_not_in_stations_csv_is_refused(kw, message):
    with pytest.raises(pv.ProvisionError) as e:
        pv.Plan(ORDER, **kw)
    assert message in str(e.value) and "board flash" in str(e.value)


def test_no_board_in_stations_csv_is_said():
    with pytest.raises(pv.ProvisionError, match="stations.csv names no board"):
        pv.Plan([])


def test_board_order_takes_every_rounds_boards_once_in_order():
    assert pv.board_order([["T02", "T02", "T01"], ["T01", "T03"]]) == ["T02", "T01", "T03"]
    assert pv.parse_ids(["T01, T02", "T05", ""]) == ["T01", "T02", "T05"]


KEYS = {"T02": "ab" * 32}


def seen(cfg, entries=()):
    return pv.recognise(cfg, list(entries), set(ORDER), KEYS.get)


def test_what_a_plugged_boards_configuration_says_about_it():
    done = entry("T01", "aa0001", pv.DONE)
    failed = entry("T03", "aa0003", pv.FAILED)
    assert seen(None).kind == pv.NEW
    assert seen({"board": "T01", "install": "aa0001"}, [done]).kind == pv.KNOWN
    assert seen({"board": "T03", "install": "aa0003"}, [failed]).kind == pv.RETRY
    assert seen({"board": "T02", "install": "x", "key": "ab" * 32}).kind == pv.EVENTS
    assert seen({"board": "T02", "install": "x", "key": "cd" * 32}).kind == pv.FOREIGN   # another event's key
    assert seen({"board": "T01", "install": "old001"}, [done]).kind == pv.FOREIGN        # T01 is another board now
    assert seen({"wifi": {}}).kind == pv.FOREIGN


def test_a_known_board_is_never_given_a_new_id_even_with_overwrite():
    done = entry("T01", "aa0001", pv.DONE, time="2027-05-01 07:12:00")
    plan = pv.Plan(ORDER, done={"T01"})
    d = pv.decide(seen({"board": "T01", "install": "aa0001"}, [done]), plan, overwrite=True)
    assert d.board is None and "this board is T01 already (provisioned 2027-05-01 07:12:00" in d.message


def test_a_foreign_board_is_left_alone_unless_overwrite():
    done = entry("T01", "aa0001", pv.DONE, time="2027-05-01 07:12:00")
    plan = pv.Plan(ORDER, done={"T01"})
    s = seen({"board": "T01", "install": "old001"}, [done])
    d = pv.decide(s, plan, overwrite=False)
    assert d.board is None and "--overwrite" in d.message
    assert "T01 is another board since 2027-05-01 07:12:00 (install aa0001)" in d.message
    assert pv.decide(s, plan, overwrite=True).board == "T02"


def test_an_events_board_flashed_before_is_recorded_and_takes_its_id():
    plan = pv.Plan(ORDER)
    d = pv.decide(seen({"board": "T02", "install": "x", "key": "ab" * 32}), plan, overwrite=False)
    assert d.board is None and d.record_found and "this board is T02" in d.message


def test_a_new_board_or_an_unfinished_attempt_gets_the_next_id():
    plan = pv.Plan(ORDER, done={"T01"})
    assert pv.decide(seen(None), plan, overwrite=False).board == "T02"
    failed = entry("T02", "aa0002", pv.FAILED)
    assert pv.decide(seen({"board": "T02", "install": "aa0002"}, [failed]), plan, False).board == "T02"
    full = pv.Plan(ORDER, done=set(ORDER))
    assert pv.decide(seen(None), full, False).board is None


def test_the_settings_lines_show_no_secret():
    cfg = {"wifi": {"ssid": "hall", "password": "s3cret"}, "key": "ab" * 32,
           "broker": {"host": ["10.0.0.1", "10.0.0.2"], "port": 8883, "ca": "MII...", "password": "p"},
           "buttons": [4, 5], "buzzer": {"pin": 25, "kind": "active"}, "led": 2}
    text = "\n".join(pv.settings_lines(cfg))
    assert "'hall' (password set)" in text and "10.0.0.1, 10.0.0.2 port 8883 (TLS)" in text
    assert "GPIO 25 active" in text and "LED GPIO 2" in text
    assert "s3cret" not in text and "ab" * 32 not in text


def test_the_summary_counts_done_failed_and_remaining():
    assert pv.summary(["T01"], ["T02", "/dev/ttyUSB1"], ["T02", "T03"]) == (
        "provisioned 1: T01; failed attempts 2: T02, /dev/ttyUSB1; remaining 2: T02, T03")
