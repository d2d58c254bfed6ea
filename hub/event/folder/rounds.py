"""The rounds of an event folder: one hall (boards, keys, logins, referees,
the title) and its rounds, each a category with its own format, entrants,
stations and log, run one after another on the same boards.

    DIR/                  the hall: title, board-keys.json, mosquitto/, referees.json, ...
    DIR/format.toml ...   the round "main": a folder made by `tabletimer init` (one round)
    DIR/rounds/NAME/      a round added by `tabletimer round add DIR NAME --format PRESET`:
                          format.toml, entrants.csv, stations.csv, events.sqlite
    DIR/rounds/order      the rounds' names in the order they were added (one a line)
    DIR/live-round        the round `tabletimer run` last ran: what `results`, `act`,
                          `console` ... mean without --round

Each round's log has its own event id: a board that gets the next round's
schedule (another event's) starts its stations afresh.  Paths only: the
folder's files are read and written by event_folder.py."""

from __future__ import annotations

import re
from pathlib import Path

MAIN = "main"                 # the round whose files are in DIR itself (`tabletimer init`)
ROUNDS = "rounds"
ORDER = "order"
LIVE = "live-round"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,31}")


class RoundError(ValueError):
    """A round that is not there, or a name that cannot be one; the text says what to do."""


def check_name(name: str) -> str:
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise RoundError(f"a round's name is 1-32 letters, digits, - and _ (starting with a letter "
                         f"or digit), not {name!r}")
    return name


def round_dir(hall: str | Path, name: str) -> Path:
    hall = Path(hall)
    return hall if name == MAIN else hall / ROUNDS / name


def names(hall: str | Path) -> list[str]:
    """Every round of the folder, in the order they were added (the
    folder's own, "main", first)."""
    hall = Path(hall)
    out = [MAIN] if (hall / "format.toml").exists() else []
    base = hall / ROUNDS
    try:
        listed = [n.strip() for n in (base / ORDER).read_text(encoding="utf-8").splitlines()]
    except OSError:
        listed = []
    found = sorted(p.name for p in base.iterdir() if (p / "format.toml").exists()) if base.is_dir() else []
    for n in listed + found:
        if n and n != MAIN and n not in out and (base / n / "format.toml").exists():
            out.append(n)
    return out


def live(hall: str | Path) -> str | None:
    """The round `run` last ran, if it is still one of the folder's."""
    try:
        name = (Path(hall) / LIVE).read_text(encoding="utf-8").strip()
    except OSError:
        return None
    return name if name in names(hall) else None


def set_live(hall: str | Path, name: str) -> None:
    (Path(hall) / LIVE).write_text(name + "\n", encoding="utf-8")


def resolve(hall: str | Path, name: str | None = None) -> tuple[str, Path]:
    """(name, folder) of the round asked for; without a name the folder's
    only round, else the live one.  RoundError says what there is."""
    hall = Path(hall)
    have = names(hall)
    if name is not None:
        if name in have:
            return name, round_dir(hall, name)
        check_name(name)
        raise RoundError(f"{hall} has no round {name!r}" + (
            f" (its rounds: {', '.join(have)})" if have else "")
            + f"; add it with `tabletimer round add {hall} {name} --format PRESET`")
    if not have:
        raise RoundError(f"{hall}: no format.toml and no rounds; create the folder with "
                         f"`tabletimer init {hall} --format PRESET` (one round) or "
                         f"`tabletimer round add {hall} NAME --format PRESET`")
    if len(have) == 1:
        return have[0], round_dir(hall, have[0])
    now = live(hall)
    if now is None:
        raise RoundError(f"{hall} holds {len(have)} rounds ({', '.join(have)}) and none has run yet: "
                         f"name one with --round NAME")
    return now, round_dir(hall, now)


def add(hall: str | Path, name: str) -> Path:
    """The folder of a new round (made, and listed last); RoundError if the
    name is taken or not a name."""
    hall = Path(hall)
    check_name(name)
    if name == MAIN or name in names(hall) or (hall / ROUNDS / name).exists():
        raise RoundError(f"{hall} has a round {name!r} already: choose another name")
    d = hall / ROUNDS / name
    d.mkdir(parents=True)
    with open(hall / ROUNDS / ORDER, "a", encoding="utf-8") as f:
        f.write(name + "\n")
    return d
