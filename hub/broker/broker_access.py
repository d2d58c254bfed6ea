"""Who may use the embedded broker, and for what: the same logins and ACL
that `tabletimer broker config` writes for Mosquitto (mosquitto_config.py),
as rules the embedded broker applies itself (broker.py).  Pure: built from
the board keys and the hub's login, no I/O.

- Logins: the hub's user name and password; one user per board (its id),
  with the password derived from its key (keys.mqtt_password).  Anonymous
  clients and wrong passwords are refused before the broker touches any
  session: a refused CONNECT cannot take over or clean the hub's (or a
  board's) session.
- Client ids are tied to logins: a client's id is its user name, whatever
  it asked for (Mosquitto's `use_username_as_clientid true`), so one login
  can only ever replace its own connection.
- Topics: the hub every TableTimer topic; a board writes its status,
  events and sync requests and reads its commands and schedule
  (mosquitto_config.BOARD_WRITES / BOARD_READS); nothing else.
"""

from __future__ import annotations

import hmac
from typing import Callable

from tabletimer.shared import protocol

from ..protocol.hub_protocol import BROKER_NOTICE
from .mosquitto_config import BOARD_READS, BOARD_WRITES

READ, WRITE = "read", "write"


class BrokerAccess:
    """passwords: user -> password (the hub's, and each board's derived one);
    reload: called when an unknown user tries to log in (a board flashed
    since the broker started), returning the current passwords, at most
    once per reload_every_s."""

    def __init__(self, hub_user: str, passwords: dict[str, str],
                 reload: Callable[[], dict[str, str]] | None = None,
                 reload_every_s: float = 1.0) -> None:
        self.hub_user = hub_user
        self.passwords = dict(passwords)
        self._reload = reload
        self._reload_every_s = reload_every_s
        self._reloaded_at: float | None = None

    def login(self, user: str | None, password: str | bytes | None, now_s: float) -> str | None:
        """None if the login is good, else why it is refused."""
        if not user:
            return "anonymous clients are not allowed"
        want = self.passwords.get(user)
        if want is None and self._reload is not None and (
                self._reloaded_at is None or now_s - self._reloaded_at >= self._reload_every_s):
            self._reloaded_at = now_s
            self.passwords = dict(self._reload())
            want = self.passwords.get(user)
        if want is None:
            return f"no such user {user!r}"
        if isinstance(password, str):
            password = password.encode()
        if not hmac.compare_digest(password or b"", want.encode()):
            return f"wrong password for {user!r}"
        return None

    def may(self, user: str | None, action: str, topic: str) -> bool:
        """May user publish (WRITE) on topic, or subscribe to / receive
        (READ) it?  For a subscription, topic is the filter: a board's
        filters must be its own topics exactly (no wildcards)."""
        if not user:
            return False
        if user == self.hub_user:
            if topic == BROKER_NOTICE:          # the broker's word to the hub: it reads, nobody writes
                return action == READ
            return topic == protocol.PREFIX or topic.startswith(protocol.PREFIX + "/")
        if user not in self.passwords:
            return False
        kinds = BOARD_WRITES if action == WRITE else BOARD_READS
        return any(topic == protocol.board_topic(user, k) for k in kinds)
