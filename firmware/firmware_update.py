# Firmware over the air: a new version received, checked and switched to
# (docs/firmware.md, "Firmware over the air"; docs/protocol.md, "fw").
# Loaded only for an update (App.on_message, for the hub's "fw" messages),
# unloaded when it ends: nothing of it is in RAM otherwise, nor its names.
# The new version's trial, at the boots after the switch: boot_trial.py.
# (The hub's side of an update: hub/fleet/firmware_update.py.)
#
# The hub's messages, each signed and numbered as every command, and each for
# this boot of this board (App.on_message):
#   {"n": bytes, "sig": hex, "trial": s, "older": true}   begin: the manifest's
#       size and its HMAC under this board's key (auth.Signer.mac, no topic);
#       "older": the desk allows a version older than the one the board runs
#   {"f": i, "o": offset, "d": base64}     a chunk of file i at offset
#       (file 0: the manifest; 1..: the files it lists, in its order)
# The manifest, text: "tabletimer-firmware <version> <family>", then a line
# "<name> <size> <sha256 hex>" per file.
# Each file is appended to the staging folder (the version folder not booted:
# fw/a or fw/b, emptied first) a chunk at a time, its hash (the manifest's
# HMAC) fed as it comes: never a file in RAM.  A chunk not at the place the
# board waits for (lost, duplicated, out of order) is not written; every
# chunk is answered with the place the board waits for ("next"), and the
# hub sends from there.  A file whose hash differs, a manifest whose HMAC
# differs, one for another board family, a file name that is not a module's,
# a version older than the one the board runs (older(): the version floor;
# unless the begin says "older", the desk's explicit word):
# refused with the reason, the update ended (the staging folder is junk the
# next update empties).  The last file in, every file is hashed again from
# flash and the manifest's HMAC checked again ("checking"); then the switch:
# the pointer fw/boot.json (main.py) rewritten in one rename to the new
# folder on trial, the previous one kept; "staged"; a restart.  Power lost
# before the rename: the old version boots; after it: the new one, on trial.

import binascii
import hashlib
import os
import sys

import protocol
from auth import equal
from journal import write_atomic

_LIMIT_S = 120          # the trial's time in a boot, unless the hub says (10..3600 s)
_BLOCK = 512            # read back in pieces this long

_job = []               # the update under way: one Job


def older(a, b):
    """Whether version a comes before version b.  The order
    (docs/firmware.md, "Versions"): the leading numbers, dot-separated,
    compared as numbers ("0.10.0" after "0.9.2"; a missing one is 0:
    "1.0" is "1.0.0"); with the same numbers, one with a suffix (whatever
    follows them: "0.8.0-old", "1.0.0-rc1", "1.0.0+dev") before the one
    without, and two suffixes as text ("-old" before "-rc1").  A version
    without numbers ("dev") is 0 with a suffix: before every numbered one.
    Runs on CPython too (the hub's desk asks it, hub/fleet/firmware_update.py)."""
    k = []
    for v in (a, b):
        n, s = [0], ""
        for i, c in enumerate(v.encode()):     # bytes: a str's characters would each be a qstr
            if 48 <= c <= 57:
                n[-1] = n[-1] * 10 + c - 48
            elif c == 46:
                n.append(0)
            else:
                s = v[i:]
                break
        k.append((n, s))
    (x, xs), (y, ys) = k
    while len(x) < len(y):
        x.append(0)
    while len(y) < len(x):
        y.append(0)
    return (x, not xs, xs) < (y, not ys, ys)


class Job:
    def __init__(self, app, msg, slot, run, fw):
        self.id = msg.get("id")
        # the version floor: the one the board runs (committed: no update
        # while one is on trial, boot_trial.busy); None: the desk allows older
        self.floor = None if msg.get("older") is True else fw
        self.sig = binascii.unhexlify(msg["sig"])
        t = msg.get("trial")
        self.lim = t if type(t) is int and 10 <= t <= 3600 else _LIMIT_S
        self.slot = slot + "/"
        self.run = run           # the folder booted now ("": the first flash's files)
        self.name = "manifest.txt"
        self.size = msg["n"]
        if type(self.size) is not int or not 0 < self.size <= 4096:
            raise ValueError("a manifest of %r bytes" % (self.size,))
        self.want = None         # the file's sha256 (the manifest's: its HMAC, self.sig)
        self.h = app.signer.start()       # HMAC's inner hash, fed as it comes
        self.f = self.o = self.got = self.total = 0
        self.fw = None           # the version, once the manifest is in

    def line(self, i):
        # the manifest's line i (1..): [name, size, sha256 hex], or None past its end
        with open(self.slot + "manifest.txt") as m:
            for n, text in enumerate(m):
                if n == i:
                    return text.split()

    def file(self, app):
        # the file just received checked; on to the next (True: it was the last)
        if self.f == 0:
            if not equal(app.signer.end(self.h), self.sig):
                raise ValueError("the manifest's signature is not this board's hub's")
            w = self.line(0)
            if len(w) != 3 or w[0] != "tabletimer-firmware" or not 0 < len(w[1]) <= 16:
                raise ValueError("not a firmware manifest")
            if w[2] != app.hw.kind:
                raise ValueError("a firmware for %s boards: this board is %s" % (w[2], app.hw.kind))
            self.fw = w[1]
            if self.floor and older(w[1], self.floor):
                raise ValueError("firmware %s is older than this board's %s (the desk may allow it: "
                                 "--allow-older)" % (w[1], self.floor))
            n = 1
            w = self.line(1)
            while w:
                if (len(w) != 3 or "/" in w[0] or not (w[0].endswith(".mpy") or w[0].endswith(".py"))
                        or w[0] == "main.py" or len(w[2]) != 64):
                    raise ValueError("manifest line %d: not a module's name, size and sha256" % n)
                self.total += int(w[1])
                n += 1
                w = self.line(n)
            if n < 2:
                raise ValueError("a manifest without files")
            try:
                s = os.statvfs("fw")
                free = s[0] * s[4]
            except (OSError, AttributeError):
                free = self.total
            if free < self.total:
                raise ValueError("%d bytes of flash free, %d needed" % (free, self.total))
        elif binascii.hexlify(self.h.digest()).decode() != self.want:
            raise ValueError(self.name + ": wrong sha256 (a corrupted chunk?)")
        self.f += 1
        self.o = 0
        w = self.line(self.f)
        if not w:
            return True
        self.name, self.size, self.want = w[0], int(w[1]), w[2]
        self.h = hashlib.sha256()
        open(self.slot + self.name, "wb").close()
        if self.size == 0:
            return self.file(app)
        return False

    def chunk(self, app, msg):
        # a chunk; True once the last file is in
        if msg.get("f") != self.f or msg.get("o") != self.o:
            return False        # not the one waited for: not written; the answer says where it is
        d = binascii.a2b_base64(msg["d"])
        if self.o + len(d) > self.size:
            raise ValueError("%s: more than its %d bytes" % (self.name, self.size))
        with open(self.slot + self.name, "ab") as f:
            f.write(d)
        self.h.update(d)
        self.o += len(d)
        if self.f:
            self.got += len(d)
        if self.o == self.size:
            return self.file(app)
        return False

    def verify(self, app):
        # every file hashed again from flash, the manifest's HMAC checked again
        buf = bytearray(_BLOCK)
        n = 0
        while True:
            w = self.line(n) if n else ["manifest.txt"]
            if not w:
                return
            h = app.signer.start() if n == 0 else hashlib.sha256()
            with open(self.slot + w[0], "rb") as f:
                while True:
                    k = f.readinto(buf)
                    if not k:
                        break
                    h.update(memoryview(buf)[:k])
            if n == 0:
                if not equal(app.signer.end(h), self.sig):
                    raise ValueError("the manifest changed in flash")
            elif binascii.hexlify(h.digest()).decode() != w[2]:
                raise ValueError(w[0] + ": changed in flash (its sha256 read back differs)")
            n += 1


def busy(app):
    # why nothing may change now (None: it may).  A trial (settings or a
    # firmware) is on only while boot_trial.py is loaded (the entry scripts
    # load it for a trial's boot, through update.py; boot_trial.run unloads
    # it once committed): its busy() then; else only a round running on a
    # station stops an update.
    u = sys.modules.get("boot_trial")
    if u:
        return u.busy(app)
    if app.running():
        return "a round runs on this board: after the round"


def begin(app, msg, fw):
    why = busy(app)
    if why:
        raise ValueError(why)
    try:
        with open("fw/boot.json") as f:
            import json
            run = json.load(f)[0]
    except (OSError, ValueError, TypeError, IndexError):
        run = ""
    slot = "fw/b" if run == "fw/a" else "fw/a"
    for d in ("fw", slot):
        try:
            os.mkdir(d)
        except OSError:
            pass
    for name in os.listdir(slot):      # the version kept before the one booted: replaced
        os.remove(slot + "/" + name)
    j = Job(app, msg, slot, run, fw)
    open(j.slot + j.name, "wb").close()
    _job[:] = [j]
    app.hw.log("firmware: receiving into " + j.slot)


def check(app, msg, fw):
    """One of the hub's "fw" messages (App.on_message, signed, numbered,
    for this boot): begun, or a chunk written, and answered with the place the
    board waits for; once it ended, refused (why) or staged, answered by
    end() (then the restart).  A chunk of no update under way: not answered.
    fw: the version the board runs, the floor of a new one."""
    rid = msg.get("id")
    why = None
    last = False
    try:
        if "n" in msg:
            begin(app, msg, fw)
        elif not _job or _job[0].id != rid:
            # a chunk of no update under way here (one that ended; the board
            # restarted: its birth makes the hub begin again): not answered
            if not _job:
                sys.modules.pop("firmware_update", None)
            return
        j = _job[0]
        if "n" not in msg:
            last = j.chunk(app, msg)
        if last:
            app.hw.log("firmware %s: checking" % j.fw)
            j.verify(app)
            why = busy(app)
            if why is None:
                write_atomic("fw/boot.json", [j.slot[:-1], j.run, [0, j.lim, rid, j.fw]])
    except (OSError, ValueError, KeyError, TypeError, IndexError) as e:
        why = str(e) or repr(e)
    import asyncio
    if why or last:
        _job.clear()
        sys.modules.pop("firmware_update", None)      # (end's task keeps what it needs)
        asyncio.create_task(end(app, rid, why))
        return
    m = {"v": protocol.VERSION, "type": "fw", "id": rid, "state": "receiving" if "n" in msg else "at",
         "next": [j.f, j.o], "got": j.got}
    if j.total:
        m["of"] = j.total
    asyncio.create_task(app.send(app.topic + protocol.STATUS, m, qos=1 if "n" in msg else 0))


async def end(app, rid, why):
    # the update's end answered: refused (why), or staged, and then the
    # restart on it (settings_update.answer's steps for the settings: not loaded here)
    import asyncio
    m = {"v": protocol.VERSION, "type": "fw", "id": rid, "state": "refused" if why else "staged"}
    if why:
        m["why"] = why[:160]
    for _ in range(10):
        if await app.send(app.topic + protocol.STATUS, m, qos=1):
            break
        await asyncio.sleep_ms(500)
    if why:
        return
    app.journal.forget(app.gone, 1 << 30)   # no station runs: the acknowledged entries go now
    app.hw.log("firmware staged: restarting")
    await asyncio.sleep_ms(100)
    app.hw.reset()
