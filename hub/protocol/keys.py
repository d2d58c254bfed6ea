"""Board keys: the secret each board signs with (HMAC-SHA256), kept by the hub
in a JSON file {board id: 64 hex digits}.  `tabletimer board flash`
generates a board's key and writes it both here and into the board's config."""

from __future__ import annotations

import json
import secrets
import threading
from pathlib import Path

from tabletimer.shared.auth import AuthError, Signer, parse_key
from ..event.folder.private_file import write_private
from tabletimer.shared.protocol import ProtocolError, check_board_id


class KeyFileError(ValueError):
    pass


class BoardKeys:
    def __init__(self, path: str | Path | None = None, keys: dict[str, str] | None = None):
        self.path = Path(path) if path else None
        self._lock = threading.Lock()
        self._keys: dict[str, str] = {}
        self._signers: dict[str, Signer] = {}
        self._stamp = self._file_stamp()      # of the file as last read
        if self.path and self.path.exists():
            self._load()
        for b, k in (keys or {}).items():
            self._add(b, k, str(self.path or "keys"))

    def _load(self) -> None:
        assert self.path
        try:
            data = json.loads(self.path.read_text())
        except ValueError as e:
            raise KeyFileError(f"{self.path}: not valid JSON ({e})") from e
        if not isinstance(data, dict):
            raise KeyFileError(f"{self.path}: must be a JSON object {{board id: key}}")
        for b, k in data.items():
            self._add(b, k, str(self.path))

    def _add(self, board: str, key: str, where: str) -> None:
        try:
            check_board_id(board)
            parse_key(key)
        except (ProtocolError, AuthError) as e:
            raise KeyFileError(f"{where}: board {board!r}: {e}") from e
        self._keys[board] = key
        self._signers.pop(board, None)

    def reload(self) -> None:
        """Pick up boards added to the file by another process."""
        if self.path and self.path.exists():
            with self._lock:
                self._stamp = self._file_stamp()
                self._load()

    def refresh(self) -> None:
        """reload() if the file changed since it was last read (one stat):
        what a message from an unknown board costs, however many come."""
        if self.path is not None and self._file_stamp() != self._stamp:
            self.reload()

    def _file_stamp(self) -> tuple | None:
        try:
            st = self.path.stat() if self.path else None
        except OSError:
            return None
        return (st.st_mtime_ns, st.st_size, st.st_ino) if st else None

    def signer(self, board: str) -> Signer | None:
        with self._lock:
            s = self._signers.get(board)
            if s is None and board in self._keys:
                s = self._signers[board] = Signer(self._keys[board])
            return s

    def boards(self) -> list[str]:
        with self._lock:
            return sorted(self._keys)

    def key(self, board: str) -> str | None:
        return self._keys.get(board)

    def ensure(self, board: str) -> str:
        """The board's key, generating and saving a new one if it has none."""
        with self._lock:
            if board not in self._keys:
                self._add(board, secrets.token_hex(32), "generated")
                self._save()
            return self._keys[board]

    def _save(self) -> None:
        if not self.path:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_private(self.path, json.dumps(self._keys, indent=2, sort_keys=True))
        self._stamp = self._file_stamp()


def mqtt_password(key_hex: str) -> str:
    """The board's MQTT password, derived from its signing key: hex of the
    first 16 bytes of HMAC-SHA256(key, b"tabletimer mqtt password").
    Deterministic, so the hub stores no second secret per board (the broker's
    password file is generated from the keys file); one-way, so a leaked
    broker password does not give away the signing key.  A board could derive
    it too (shared/auth.py's Signer.mac computes the same HMAC)."""
    import hashlib
    import hmac

    key = parse_key(key_hex)             # AuthError (a ValueError) if not 64 hex digits
    return hmac.new(key, b"tabletimer mqtt password", hashlib.sha256).digest()[:16].hex()
