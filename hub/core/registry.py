"""Board registry: which boards exist, online or offline, what they said
in their birth message, and whether the hub still hears them and they its
acks.  Pure: fed with status messages, the events received again, and
their times.

Liveness.  A board sends an event until it is acknowledged (again after 1,
2, 4, 8, then every 16 s: firmware/board.py); the hub acks every copy.  The
same event received again and again, over many of those retries after it
was stored and acked, means the acks do not reach the board (another client took its client id or its
login and with it its subscription, or its WiFi only sends).  An online
board that sends nothing for a few of its clock-sync periods (every 30 s:
firmware/app.py, _SYNC_INTERVAL_MS) is silent."""

from __future__ import annotations

from dataclasses import dataclass, field

ACKS_LOST_RESENDS = 3          # the same event received again at least this many times...
ACKS_LOST_SPAN_MS = 10_000     # ...over at least this long: its acks are not reaching it
RESENT_FORGET_MS = 40_000      # not received again for this long (the board retries every 16 s at
#                                most): its ack arrived, or the board is gone
SILENT_MS = 90_000             # three of a board's clock-sync periods
_RESENT_KEPT = 16              # events received again tracked per board (a board's window is 4)


@dataclass
class BoardInfo:
    board: str
    online: bool = False
    boot: int | None = None
    install: str | None = None       # of the board online under this id ('': none)
    fw: str | None = None
    answers_in_ack: bool = False     # its birth says it takes an event's answers in the ack ("ack": 2)
    stations: int = 0
    last_seen_ms: int | None = None
    sync_err_ms: int | None = None   # the board's own error bound, from its last press
    mem_free: int | None = None      # from its birth message
    rssi: int | None = None
    uptime_s: int | None = None
    fault: str | None = None         # what reset it at the end of its previous boot (its birth message)
    flash_free: int | None = None    # bytes of flash free at its birth
    journal: int | None = None       # entries in its journal at its birth
    # (install, boot, seq) of an event received again after it was stored ->
    # [times received again, hub ms first, hub ms last, the alert begun]
    resent: dict[tuple[str, int, int], list] = field(default_factory=dict)


class BoardRegistry:
    def __init__(self, resends: int = ACKS_LOST_RESENDS, span_ms: int = ACKS_LOST_SPAN_MS,
                 forget_ms: int = RESENT_FORGET_MS, silent_ms: int = SILENT_MS) -> None:
        self.boards: dict[str, BoardInfo] = {}
        self.resends, self.span_ms, self.forget_ms, self.silent_ms = resends, span_ms, forget_ms, silent_ms
        # hub ms since when the hub listens (its connection to the broker):
        # a board is silent only for what it has not sent since; None: not
        # listening (nobody is silent)
        self.listening_since: int | None = None

    def get(self, board: str) -> BoardInfo:
        info = self.boards.get(board)
        if info is None:
            info = self.boards[board] = BoardInfo(board)
        return info

    def status(self, board: str, msg: dict, now_ms: int) -> BoardInfo:
        info = self.get(board)
        install = msg.get("bi") or ""
        if msg["state"] == "online":
            info.online = True
            info.boot = msg["boot"]
            info.install = install
            info.fw = msg["fw"]
            info.answers_in_ack = (msg.get("ack") or 1) >= 2
            info.stations = msg["stations"]
            info.mem_free, info.rssi, info.uptime_s = msg.get("mem"), msg.get("rssi"), msg.get("up")
            info.fault = msg.get("fault")
            info.flash_free, info.journal = msg.get("flash") or (None, None)
        elif info.install in (None, install) and (info.boot is None or msg["boot"] >= info.boot):
            # a last will of an earlier boot arriving late must not mark a
            # rebooted board offline, nor the will of a dead board the spare
            # that replaced it (another install under the same id)
            info.online = False
        info.last_seen_ms = now_ms
        return info

    def seen(self, board: str, now_ms: int) -> BoardInfo:
        info = self.get(board)
        info.last_seen_ms = now_ms
        return info

    def listening(self, since_ms: int | None) -> None:
        """The hub is connected to the broker since since_ms (None: it is not)."""
        self.listening_since = since_ms

    def duplicate(self, board: str, install: str, boot: int, seq: int, now_ms: int) -> str | None:
        """The board sent (install, boot, seq) again, already stored (and
        acked again).  Returns the event log's line when this makes its acks
        found lost."""
        info = self.get(board)
        key = (install, boot, seq)
        rec = info.resent.get(key)
        if rec is not None and now_ms - rec[2] > self.forget_ms:
            rec = None                               # an episode long over: counted afresh
        if rec is None:
            if len(info.resent) >= _RESENT_KEPT:
                self._forget(info, now_ms)
            rec = info.resent[key] = [0, now_ms, now_ms, False]
        rec[0] += 1
        rec[2] = now_ms
        if rec[3] or not self._lost(rec):
            return None
        rec[3] = True
        return f"board {board}: " + _acks_text(boot, seq, rec)

    def acks_lost(self, info: BoardInfo, now_ms: int) -> tuple[int, int, list] | None:
        """(boot, seq, its record) of the event the board sends again most,
        if that shows its acks are not reaching it now."""
        worst = None
        for (_install, boot, seq), rec in list(info.resent.items()):   # a copy: read outside the lock too
            if now_ms - rec[2] <= self.forget_ms and self._lost(rec) and (worst is None or rec[0] > worst[2][0]):
                worst = (boot, seq, rec)
        return worst

    def silent_for(self, info: BoardInfo, now_ms: int) -> int | None:
        """How long (ms) an online board has sent nothing, if longer than
        silent_ms while the hub listens."""
        if not info.online or self.listening_since is None:
            return None
        quiet = now_ms - max(info.last_seen_ms or 0, self.listening_since)
        return quiet if quiet > self.silent_ms else None

    def liveness_alerts(self, info: BoardInfo, now_ms: int) -> list[str]:
        out = []
        lost = self.acks_lost(info, now_ms)
        if lost is not None:
            out.append(f"board {info.board}: " + _acks_text(*lost) + ": another client may use its login "
                       "or client id, or its WiFi only sends")
        quiet = self.silent_for(info, now_ms)
        if quiet is not None:
            out.append(f"board {info.board} silent for {quiet // 1000} s (online, but nothing from it; "
                       f"a board sends at least every 30 s): its WiFi or its power?")
        return out

    def state(self, info: BoardInfo, now_ms: int) -> list[str]:
        """Short states for the console's hall table."""
        out = []
        if self.acks_lost(info, now_ms) is not None:
            out.append("acks lost")
        if self.silent_for(info, now_ms) is not None:
            out.append("silent")
        if info.online and info.fw is not None and not info.answers_in_ack:
            # it works, answered as last month's firmware is: three messages a
            # press where one does (docs/operations.md)
            out.append(f"old firmware {info.fw}")
        return out

    def _lost(self, rec: list) -> bool:
        return rec[0] >= self.resends and rec[2] - rec[1] >= self.span_ms

    def _forget(self, info: BoardInfo, now_ms: int) -> None:
        """Room for one more: the episodes over, else the oldest."""
        for k in [k for k, r in info.resent.items() if now_ms - r[2] > self.forget_ms]:
            del info.resent[k]
        if len(info.resent) >= _RESENT_KEPT:
            del info.resent[min(info.resent, key=lambda k: info.resent[k][2])]


def _acks_text(boot: int, seq: int, rec: list) -> str:
    return (f"its acks are not reaching it (it sent boot {boot} seq {seq} again {rec[0]} times "
            f"in {(rec[2] - rec[1]) // 1000} s)")
