# Portable tests of firmware/journal.py on the host filesystem.
import os

from journal import Journal

TMP = None   # set by the runner


def fresh(name):
    root = TMP + "/" + name
    return Journal(root), root


def keys(loaded):
    entries, more = loaded
    return [(e["boot"], e["seq"]) for e in entries], more


def test_boot_counter_persists():
    j, root = fresh("boot")
    assert j.next_boot() == 1
    assert Journal(root).next_boot() == 2      # "reboot"


def test_put_load_remove():
    j, root = fresh("entries")
    j.put({"boot": 2, "seq": 10, "station": 1, "at": 5})
    j.put({"boot": 1, "seq": 3, "station": 2, "at": None, "local": 7})
    j.put({"boot": 2, "seq": 9, "station": 1, "at": 4})
    assert keys(Journal(root).load()) == ([(1, 3), (2, 9), (2, 10)], False)
    assert j.remove(2, 9) and not j.remove(2, 9)
    assert keys(j.load()) == ([(1, 3), (2, 10)], False)


def test_forget_takes_acknowledged_entries_from_the_front_of_their_runs():
    # app.gone: runs of keys (boot, first seq, last seq), flat
    j, root = fresh("forget")
    for boot, seq in ((1, 7), (2, 1), (2, 2), (2, 3), (2, 5)):
        j.put({"boot": boot, "seq": seq, "station": 1, "at": 5})
    gone = [1, 7, 7, 2, 1, 3]
    j.forget(gone, 2)
    assert gone == [2, 2, 3]
    assert keys(j.load()) == ([(2, 2), (2, 3), (2, 5)], False)
    j.forget(gone, 100)
    assert gone == []
    assert keys(j.load()) == ([(2, 5)], False)     # not acknowledged: kept
    j.forget(gone, 4)                               # nothing to forget: nothing happens
    assert keys(j.load()) == ([(2, 5)], False)


def test_rewrite_replaces_entry():
    j, root = fresh("rewrite")
    j.put({"boot": 1, "seq": 1, "at": None, "local": 5})
    j.put({"boot": 1, "seq": 1, "at": 99})
    assert j.load() == ([{"boot": 1, "seq": 1, "at": 99}], False)


def test_power_loss_leftovers():
    j, root = fresh("powerloss")
    j.put({"boot": 1, "seq": 1, "at": 1})
    with open(root + "/journal/1_2.json.tmp", "w") as f:   # write cut short
        f.write('{"boot": 1, "se')
    with open(root + "/journal/1_3.json", "w") as f:       # corrupt file
        f.write("garbage")
    assert keys(j.load()) == ([(1, 1)], False)
    names = os.listdir(root + "/journal")
    assert "1_2.json.tmp" not in names
    assert "1_3.json.bad" in names
    assert keys(j.load()) == ([(1, 1)], False)   # stable on the next boot


def test_load_takes_the_oldest_few_after_a_key():
    """After a long outage the journal holds hundreds: the board takes them
    in a few at a time, oldest first (by boot, then seq: 2_10 after 2_9)."""
    j, root = fresh("window")
    for boot, seq in ((2, 10), (1, 7), (2, 9), (3, 1), (1, 12), (2, 100)):
        j.put({"boot": boot, "seq": seq, "at": 1})
    assert keys(j.load((0, 0), 2)) == ([(1, 7), (1, 12)], True)
    assert keys(j.load((1, 12), 2)) == ([(2, 9), (2, 10)], True)
    assert keys(j.load((2, 10), 2)) == ([(2, 100), (3, 1)], False)
    assert keys(j.load((3, 1), 2)) == ([], False)
    assert keys(j.load(n=6)) == ([(1, 7), (1, 12), (2, 9), (2, 10), (2, 100), (3, 1)], False)


def test_a_leftover_tmp_that_cannot_be_removed_does_not_stop_the_entries():
    """A leftover .tmp the board cannot remove (here a directory of that
    name; on a board, a failing flash) is left: the entries still come."""
    j, root = fresh("stuck")
    j.put({"boot": 1, "seq": 1, "at": 1})
    os.mkdir(root + "/journal/1_2.json.tmp")
    assert keys(j.load()) == ([(1, 1)], False)
    assert keys(j.load()) == ([(1, 1)], False)
