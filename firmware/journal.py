# The flash journal: every board event is a small JSON file, written with
# write-then-rename (atomic on LittleFS and POSIX) before it is published, and
# removed only when the hub acknowledges it.  Also keeps the persistent boot
# counter, so (boot, seq) never repeats across reboots.

import json
import os


def write_atomic(path, data):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(data)
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
        write_atomic(path, str(boot))
        return boot

    def put(self, e):
        """Write (or rewrite) an entry; it has at least 'boot' and 'seq'."""
        write_atomic("%s/%d_%d.json" % (self.dir, e["boot"], e["seq"]), json.dumps(e))

    def remove(self, boot, seq):
        try:
            os.remove("%s/%d_%d.json" % (self.dir, boot, seq))
            return True
        except OSError:
            return False

    def load(self):
        """All journaled entries, oldest first.  A leftover .tmp (power lost
        mid-write) is deleted: its entry was never acknowledged to anyone
        and the rename had not happened, so the previous version stands."""
        entries = []
        for name in os.listdir(self.dir):
            path = self.dir + "/" + name
            if name.endswith(".tmp"):
                os.remove(path)
                continue
            if not name.endswith(".json"):
                continue
            try:
                with open(path) as f:
                    entries.append(json.loads(f.read()))
            except (OSError, ValueError):
                os.rename(path, path + ".bad")   # keep it for a human, never crash
        entries.sort(key=lambda e: (e["boot"], e["seq"]))
        return entries
