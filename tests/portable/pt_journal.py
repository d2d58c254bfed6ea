# Portable tests of firmware/journal.py on the host filesystem.
import os

from journal import Journal

TMP = None   # set by the runner


def fresh(name):
    root = TMP + "/" + name
    return Journal(root), root


def test_boot_counter_persists():
    j, root = fresh("boot")
    assert j.next_boot() == 1
    assert Journal(root).next_boot() == 2      # "reboot"


def test_put_load_remove():
    j, root = fresh("entries")
    j.put({"boot": 2, "seq": 10, "station": 1, "at": 5})
    j.put({"boot": 1, "seq": 3, "station": 2, "at": None, "local": 7})
    j.put({"boot": 2, "seq": 9, "station": 1, "at": 4})
    assert [(e["boot"], e["seq"]) for e in Journal(root).load()] == [(1, 3), (2, 9), (2, 10)]
    assert j.remove(2, 9) and not j.remove(2, 9)
    assert [(e["boot"], e["seq"]) for e in j.load()] == [(1, 3), (2, 10)]


def test_rewrite_replaces_entry():
    j, root = fresh("rewrite")
    j.put({"boot": 1, "seq": 1, "at": None, "local": 5})
    j.put({"boot": 1, "seq": 1, "at": 99})
    assert j.load() == [{"boot": 1, "seq": 1, "at": 99}]


def test_power_loss_leftovers():
    j, root = fresh("powerloss")
    j.put({"boot": 1, "seq": 1, "at": 1})
    with open(root + "/journal/1_2.json.tmp", "w") as f:   # write cut short
        f.write('{"boot": 1, "se')
    with open(root + "/journal/1_3.json", "w") as f:       # corrupt file
        f.write("garbage")
    assert [e["seq"] for e in j.load()] == [1]
    names = os.listdir(root + "/journal")
    assert "1_2.json.tmp" not in names
    assert "1_3.json.bad" in names
    assert [e["seq"] for e in j.load()] == [1]   # stable on the next boot
