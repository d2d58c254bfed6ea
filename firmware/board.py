# The board's pure logic: presses become journaled events, acks retire them,
# clock-sync replies feed the offset estimator.  No I/O here: app.py does the
# journal writes, publishing and buzzing that these methods ask for.

import protocol
from clocksync import OffsetEstimator

RETRY_MIN_MS = 1000
RETRY_MAX_MS = 16000


class Board:
    def __init__(self, board_id, boot, stations, pending=()):
        self.board_id = board_id
        self.boot = boot
        self.stations = stations
        self.seq = 0
        self.sync = OffsetEstimator()
        self.sync_id = 0
        self.sync_sent = {}     # id -> t1 of requests awaiting a reply
        # (boot, seq) -> [entry, next retry local ms, retry interval]
        self.unacked = {}
        for e in pending:
            self.unacked[(e["boot"], e["seq"])] = [e, 0, RETRY_MIN_MS]

    # -- presses -------------------------------------------------------
    def press(self, station, local_ms):
        """A button press at local time local_ms -> a new journal entry.
        The entry carries the hub time of the press if the clock is synced,
        else the local time, converted later in this same boot."""
        if not 1 <= station <= self.stations:
            raise ValueError("no such station: %d" % station)
        self.seq += 1
        e = {"boot": self.boot, "seq": self.seq, "station": station}
        if self.sync.ready:
            e["at"] = self.sync.to_hub(local_ms)
            e["err"] = self.sync.error_bound()
        else:
            e["at"] = None
            e["local"] = local_ms
        self.unacked[(self.boot, self.seq)] = [e, 0, RETRY_MIN_MS]
        return e

    def resolve_times(self):
        """After the first sync of this boot: entries of this boot still
        without hub time get one.  Returns the entries changed (to rewrite
        in the journal).  Entries of earlier boots keep at=None: their local
        clock is gone with the reboot."""
        changed = []
        if not self.sync.ready:
            return changed
        for rec in self.unacked.values():
            e = rec[0]
            if e["at"] is None and e["boot"] == self.boot and "local" in e:
                e["at"] = self.sync.to_hub(e.pop("local"))
                e["err"] = self.sync.error_bound()
                changed.append(e)
        return changed

    def due(self, now_ms):
        """Entries whose (re)transmission is due at local time now_ms; each
        returned entry's next retry is pushed back with exponential back-off.
        Entries waiting for their hub time in this boot are held back."""
        out = []
        for rec in self.unacked.values():
            e = rec[0]
            if e["at"] is None and e["boot"] == self.boot:
                continue
            if now_ms - rec[1] >= 0:
                out.append(e)
                rec[1] = now_ms + rec[2]
                rec[2] = min(rec[2] * 2, RETRY_MAX_MS)
        out.sort(key=lambda e: (e["boot"], e["seq"]))
        return out

    def retry_all_now(self):
        """The hub (re)appeared: send everything unacknowledged at once."""
        for rec in self.unacked.values():
            rec[1] = 0
            rec[2] = RETRY_MIN_MS

    def ack(self, boot, seq):
        """The hub made (boot, seq) durable; returns True if it was pending."""
        return self.unacked.pop((boot, seq), None) is not None

    @staticmethod
    def event_message(e):
        return protocol.press(e["boot"], e["seq"], e["station"], e["at"], e.get("err"))

    # -- clock sync ----------------------------------------------------
    def sync_request(self, local_ms):
        self.sync_id += 1
        self.sync_sent[self.sync_id] = local_ms
        if len(self.sync_sent) > 8:   # forget requests whose replies were lost
            del self.sync_sent[min(self.sync_sent)]
        return protocol.sync_request(self.sync_id, local_ms)

    def sync_reply(self, msg, local_ms):
        """Feed a hub reply received at local time local_ms.  Returns the
        sample's (offset, delay), or None for a reply that does not match an
        outstanding request (late duplicate, or from before a reboot)."""
        t1 = self.sync_sent.pop(msg["id"], None)
        if t1 is None or t1 != msg["t1"]:
            return None
        return self.sync.add(t1, msg["t2"], msg["t3"], local_ms)
