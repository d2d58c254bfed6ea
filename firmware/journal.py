# The flash journal: every board event is a small JSON file, written with
# write-then-rename (atomic on LittleFS and POSIX) before it is published, and
# removed only when the hub acknowledges it.  Also keeps the persistent boot
# counter, so (boot, seq) never repeats across reboots.

import json
import os


def write_atomic(path, msg):
    # msg (an object: the name is one the firmware has already, a qstr the
    # less) as JSON, written straight to the file (json.dump writes it in
    # pieces: no string of it all on the board's heap, where one of a few
    # hundred bytes in one piece is what fails first when it fragments)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(msg, f)
    os.rename(tmp, path)


class Journal:
    def __init__(self, root):
        self.root = root
        self.dir = root + "/" + "journal"
        for d in (root, self.dir):
            try:
                os.stat(d)
            except OSError:
                os.mkdir(d)

    def next_boot(self):
        """Increment and return the persistent boot counter (1, 2, ...)."""
        path = self.root + "/" + "boot"
        boot = 0
        try:
            with open(path) as f:
                boot = int(f.read())
        except (OSError, ValueError):
            pass
        boot += 1
        write_atomic(path, boot)
        return boot

    def put(self, e):
        """Write (or rewrite) an entry; it has at least 'boot' and 'seq'."""
        write_atomic("%s/%d_%d.json" % (self.dir, e["boot"], e["seq"]), e)

    def remove(self, boot, seq):
        try:
            os.remove("%s/%d_%d.json" % (self.dir, boot, seq))
            return True
        except OSError:
            return False

    def forget(self, gone, n):
        # up to n acknowledged entries out of flash, oldest first, from the
        # front of gone (app.gone): runs of keys, flat (boot, first seq, last
        # seq, ...), a few small ints however many entries a run spans
        while gone and n > 0:
            self.remove(gone[0], gone[1])
            if gone[1] >= gone[2]:
                del gone[:3]
            else:
                gone[1] += 1
            n -= 1

    def load(self, key=(0, 0), n=4):
        """The n oldest journaled entries after key (boot, seq), oldest
        first, and whether there are others after them.  The directory is
        read one name at a time: after a long outage it holds hundreds, and
        no list of them is made in RAM (the board keeps only a few
        unacknowledged entries in RAM: board.py).  A leftover .tmp (power
        lost mid-write; writes are synchronous, so there is no other) is
        deleted: its entry was never acknowledged to anyone and the rename
        had not happened, so the previous version stands.  An entry that
        cannot be read is renamed .bad: kept for a human, never a crash."""
        keys = []
        tmp = []
        # os.ilistdir: one name at a time; CPython (the portable tests) has listdir
        for name in getattr(os, "ilistdir", os.listdir)(self.dir):
            if not isinstance(name, str):
                name = name[0]
            if name.endswith(".tmp"):
                tmp.append(name)
            elif name.endswith(".json"):
                k = name[:-5].split("_")
                try:
                    k = (int(k[0]), int(k[1]))
                except (ValueError, IndexError):
                    continue
                if k > key and (len(keys) <= n or k < keys[-1]):
                    keys.append(k)
                    keys.sort()
                    if len(keys) > n + 1:
                        keys.pop()
        for name in tmp:
            try:
                os.remove(self.dir + "/" + name)
            except OSError:     # not a file, or the flash failing: left, and the entries still come
                pass
        entries = []
        for k in keys[:n]:
            path = "%s/%d_%d.json" % (self.dir, k[0], k[1])
            try:
                with open(path) as f:
                    entries.append(json.load(f))
            except (OSError, ValueError):
                try:
                    os.rename(path, path + ".bad")
                except OSError:
                    pass
        return entries, len(keys) > n
