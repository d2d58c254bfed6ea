"""Settings over the air, the hub's pure part (hub/fleet/board_settings.py):
KEY=VALUE read and checked with the board's own code, passwords sealed in
the log, and a board's state of a request followed from the log's rows."""

from __future__ import annotations

import pytest

from tabletimer.hub.fleet import board_settings as S

KEY = "11" * 32
OTHER_KEY = "22" * 32


def test_key_value_pairs_are_read_as_the_board_takes_them() -> None:
    got = S.parse(["broker.host=10.0.0.2, 10.0.0.3", "broker.port=1884", "wifi.ssid=Hall B",
                   "led=null"])
    assert got == {"broker.host": ["10.0.0.2", "10.0.0.3"], "broker.port": 1884, "wifi.ssid": "Hall B",
                   "led": None}
    assert S.parse(["broker.host=hub.local"]) == {"broker.host": "hub.local"}


@pytest.mark.parametrize("pair, said", [
    ("buttons=4", "cannot be set over the air"),
    ("broker.port", "give KEY=VALUE"),
    ("broker.port=http", "a whole number"),
    ("broker.port=0", "broker.port"),              # the board's own check: 1..65535
    ("buzzer.pin=7", "buzzer"),                    # a pin of the ESP32's flash chip
    ("buzzer.volume=0", "1..100"),
    ("buzzer.volume=loud", "a whole number"),
])
def test_a_change_the_board_would_refuse_is_refused_at_the_desk_in_words(pair: str, said: str) -> None:
    with pytest.raises(ValueError, match=said):
        S.parse([pair])


def test_the_buzzer_volume_is_a_percentage_of_a_passive_buzzer() -> None:
    assert S.parse(["buzzer.volume=40"]) == {"buzzer.volume": 40}
    with pytest.raises(ValueError, match="needs a passive"):
        S.parse(["buzzer.kind=active", "buzzer.volume=40"])


def test_a_password_is_sealed_in_the_log_and_opens_only_with_the_boards_key() -> None:
    changes = {"wifi.ssid": "Hall B", "wifi.password": "s3cret-pw"}
    sealed = S.seal(changes, KEY)
    assert sealed["wifi.ssid"] == "Hall B"
    assert "s3cret" not in repr(sealed) and set(sealed["wifi.password"]) == {"sealed"}
    assert S.seal(changes, KEY)["wifi.password"] != sealed["wifi.password"]    # a fresh nonce each time
    assert S.unseal(sealed, KEY) == changes
    with pytest.raises(ValueError, match="sealed with this board's key"):
        S.unseal(sealed, OTHER_KEY)
    nonce, ct = sealed["wifi.password"]["sealed"].split(":")
    altered = {**sealed, "wifi.password": {"sealed": nonce + ":" + ("0" if ct[0] != "0" else "1") + ct[1:]}}
    with pytest.raises(ValueError, match="wifi.password"):
        S.unseal(altered, KEY)
    moved = {"broker.password": sealed["wifi.password"]}       # another setting: does not open
    with pytest.raises(ValueError, match="broker.password"):
        S.unseal(moved, KEY)


def test_shown_changes_never_show_a_password() -> None:
    text = S.shown({"wifi.password": "s3cret-pw", "broker.port": 1884})
    assert "s3cret" not in text and "wifi.password=<secret>" in text and "broker.port=1884" in text


def test_a_boards_state_follows_its_answers_and_a_roll_back_in_its_birth() -> None:
    states = {"T01": S.BoardState("T01", request=10), "T02": S.BoardState("T02", request=10)}
    rows = [
        {"board": "T01", "source": "board", "type": "config", "payload": {"id": 10, "state": "staged"}},
        {"board": "T02", "source": "board", "type": "config", "payload": {"id": 10, "state": "staged"}},
        {"board": "T01", "source": "board", "type": "config", "payload": {"id": 9, "state": "refused",
                                                                           "why": "an older request"}},
        {"board": "T01", "source": "board", "type": "status", "payload": {"state": "online"}},
        {"board": "T02", "source": "board", "type": "status",
         "payload": {"state": "online", "fault": "settings rolled back: no broker answered within 10 s"}},
    ]
    S.follow(states, rows)
    assert (states["T01"].state, states["T01"].final) == ("on trial", False)
    assert (states["T02"].state, states["T02"].why) == ("rolled back", "no broker answered within 10 s")
    S.follow(states, [{"board": "T01", "source": "board", "type": "config",
                       "payload": {"id": 10, "state": "committed"}}])
    assert states["T01"].final and states["T01"].line() == "T01: committed"
