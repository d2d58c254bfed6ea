"""Board registry: which boards exist, online or offline, and what they said
in their birth message.  Pure: fed with status messages and their times."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class BoardInfo:
    board: str
    online: bool = False
    boot: int | None = None
    install: str | None = None       # of the board online under this id ('': none)
    fw: str | None = None
    stations: int = 0
    last_seen_ms: int | None = None
    sync_err_ms: int | None = None   # the board's own error bound, from its last press
    mem_free: int | None = None      # from its birth message
    rssi: int | None = None
    uptime_s: int | None = None
    fault: str | None = None         # what reset it at the end of its previous boot (its birth message)


class BoardRegistry:
    def __init__(self) -> None:
        self.boards: dict[str, BoardInfo] = {}

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
            info.stations = msg["stations"]
            info.mem_free, info.rssi, info.uptime_s = msg.get("mem"), msg.get("rssi"), msg.get("up")
            info.fault = msg.get("fault")
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
