"""After time-up (issue 47, item 4): the competitor's agreement, objections
and official results, as the fold and the action checks keep them
(hub/event/fold/official.py): an agreed time or count is changed only as
the head referee's objection, with a reason (a plain change, or an
objection without a reason, refused); a board's confirm means the time was
shown; results are made official only after time-up and every check, and
then every change is refused until a reopen that says why.  Pure: the
checks called directly, on rows built as the hub stores them."""

from __future__ import annotations

import pytest

from tabletimer.hub.event.actions.action_checks import check_action
from tabletimer.hub.event.fold.competition import Competition
from tabletimer.hub.event.folder.event_folder import Station
from tabletimer.hub.rules.formats import FormatError, load_format, validate
from tabletimer.hub.rules.standings import Entrant

M = 60_000
S = 1_800_000_000_000             # the round's start (hub ms)
LIMIT = 120 * M                   # czjpa-individuals
AFTER = S + LIMIT + M             # a minute after time-up


class Log:
    def __init__(self) -> None:
        self.rows: list[dict] = []
        self.seq = 0

    def _row(self, source: str, type_: str, payload: dict, stored: int, board: str | None = None) -> dict:
        row = {"id": len(self.rows) + 1, "received_ms": stored, "source": source, "type": type_, "board": board,
               "payload": payload}
        self.rows.append(row)
        return row

    def act(self, type_: str, stored: int, who: str = "desk", why: str = "", **payload) -> dict:
        return self._row("operator", type_, dict(payload, who=who, why=why), stored)

    def board(self, typ: str, button: int, at: int, call: int | None = None) -> str:
        self.seq += 1
        p = {"type": typ, "station": button, "at": at, "boot": 1, "seq": self.seq}
        if call is not None:
            p.update(call=[1, call], missing=0)
        self._row("board", typ, p, at, "B1")
        return f"B1/1/{self.seq}"


def comp(log: Log, preset: str = "czjpa-individuals") -> Competition:
    entrants = [Entrant("1", "Anna"), Entrant("2", "Ben")]
    stations = [Station("B1", 1, "Table 1", "1", 1), Station("B1", 2, "Table 1", "2", 1)]
    return Competition(load_format(preset), entrants, stations, rows=list(log.rows))


def refused(c: Competition, action: str, p: dict, now: int = AFTER) -> str:
    with pytest.raises(ValueError) as e:
        check_action(c, action, p, now)
    return str(e.value)


def round_with_finishes() -> tuple[Log, str, str]:
    """Anna's finish confirmed at the desk; Ben's confirmed on the board."""
    log = Log()
    log.act("round_start", S, at=S, duration=LIMIT, warnings=[])
    anna = log.board("press", 1, S + 50 * M)
    log.act("confirm", S + 51 * M, who="Eva", press_id=anna, missing_found=0)
    ben = log.board("press", 2, S + 60 * M)
    log.board("confirm", 2, S + 61 * M, call=int(ben.rsplit("/", 1)[1]))
    return log, anna, ben


def test_a_board_confirm_shows_the_time_and_the_competitors_agreement_is_its_own_act():
    log, anna, ben = round_with_finishes()
    c = comp(log)
    book = c.official_book()
    assert book.call_shown(ben) and not book.call_agreed(ben)      # shown at the board, not agreed yet
    assert not book.call_agreed(anna) and not book.call_shown(anna)
    check_action(c, "confirm", {"press_id": ben, "missing_found": 1, "who": "Eva", "why": ""}, AFTER)
    check_action(c, "void", {"press_id": anna, "who": "desk", "why": "wrong table"}, AFTER)   # not agreed: may
    log.act("agree", S + 52 * M, who="Eva", press_id=anna)
    c = comp(log)
    assert c.official_book().agreement(("call", anna)).who == "Eva"
    assert "already agreed (Eva" in refused(c, "agree", {"press_id": anna, "who": "Eva", "why": ""})


def test_an_agreed_time_is_changed_only_as_an_objection_with_a_reason():
    log, anna, ben = round_with_finishes()
    log.act("agree", S + 62 * M, who="Eva", press_id=ben)
    c = comp(log)
    for action, p in (("void", {"press_id": ben}), ("correct", {"press_id": ben, "at": S + 59 * M}),
                      ("confirm", {"press_id": ben, "missing_found": 2}),
                      ("confirm", {"entrant": "2", "missing_found": 2})):
        text = refused(c, action, dict(p, who="desk", why=""))
        assert "the competitor agreed to this time (Eva" in text, text
        assert '--objection "REASON"' in text and "--force is not enough" in text and "nothing recorded" in text
        text = refused(c, action, dict(p, objection="  ", who="desk", why=""))
        assert "an objection needs its reason" in text, text
        check_action(c, action, dict(p, objection="video shows the call at 59:00", who="Head", why=""), AFTER)
    # the objection recorded: the corrected time keeps the agreement; a second change is an objection too
    row = log.act("correct", AFTER, who="Head", press_id=ben, at=S + 59 * M, objection="video shows 59:00")
    c = comp(log)
    new = f"op/{row['id']}"
    assert [(o.action, o.who, o.reason, o.entrant) for o in c.official_book().objections] == \
        [("correct", "Head", "video shows 59:00", "2")]
    assert c.official_book().call_agreed(new)
    assert "the competitor agreed" in refused(c, "void", {"press_id": new, "who": "desk", "why": ""})
    assert [r.net_time_ms for r in c.standings() if r.entrant == "2"] == [59 * M]


def test_an_agreed_count_is_changed_only_as_an_objection():
    log = Log()
    log.act("round_start", S, at=S, duration=LIMIT, warnings=[])
    log.act("count", S + LIMIT + 1000, entrant="1", placed=300)
    c = comp(log)
    assert "no piece count recorded for 2 puzzle 1" in refused(c, "agree", {"entrant": "2", "who": "d", "why": ""})
    log.act("agree", S + LIMIT + 2000, who="Eva", entrant="1", puzzle=1)
    c = comp(log)
    assert c.official_book().count_agreed("1", 1)
    assert "agreed to this count (Eva" in refused(c, "count", {"entrant": "1", "placed": 310, "who": "d", "why": ""})
    check_action(c, "count", {"entrant": "1", "placed": 310, "objection": "a group of 10 missed", "who": "Head",
                              "why": ""}, AFTER)


def test_agreement_needs_a_confirmed_time():
    log = Log()
    log.act("round_start", S, at=S, duration=LIMIT, warnings=[])
    pid = log.board("press", 1, S + 50 * M)
    c = comp(log)
    assert "is not confirmed yet" in refused(c, "agree", {"press_id": pid, "who": "Eva", "why": ""})
    assert "no press 'nope'" in refused(c, "agree", {"press_id": "nope", "who": "Eva", "why": ""})
    assert "agree: press_id (a confirmed finish) or entrant" in refused(c, "agree", {"who": "Eva", "why": ""})


def test_official_only_after_time_up_and_every_check_then_every_change_refused_until_reopened_with_why():
    log = Log()
    assert "has not started" in refused(comp(log), "official", {"who": "d", "why": ""})
    log.act("round_start", S, at=S, duration=LIMIT, warnings=[])
    anna = log.board("press", 1, S + 50 * M)
    c = comp(log)
    assert "the round's time is not up" in refused(c, "official", {"who": "d", "why": ""}, S + 60 * M)
    text = refused(c, "official", {"who": "d", "why": ""})
    assert "1 call(s) waiting for a referee" in text and "provisional result(s)" in text, text
    log.act("confirm", AFTER, press_id=anna, missing_found=0)
    log.act("count", AFTER, entrant="2", placed=200)
    c = comp(log)
    assert "reopen: the results are not official" in refused(c, "reopen", {"who": "d", "why": "x"})
    check_action(c, "official", {"who": "Head", "why": ""}, AFTER)
    log.act("official", AFTER + 1000, who="Head")
    c = comp(log)
    assert c.official_book().official() is not None
    for action, p in (("count", {"entrant": "2", "placed": 210, "objection": "recount"}),
                      ("void", {"press_id": anna}), ("dq", {"entrant": "1", "reason": "help"}),
                      ("press", {"entrant": "2", "at": AFTER}), ("official", {})):
        text = refused(c, action, dict(p, who="Head", why=""))
        assert "the results are official (made official by Head" in text and "reopen first, saying why" in text
    check_action(c, "identify", {"board": "B1", "who": "d", "why": ""}, AFTER)
    assert "say why the results are reopened" in refused(c, "reopen", {"who": "Head", "why": " "})
    log.act("reopen", AFTER + 2000, who="Head", why="objection at the desk: table 1's count")
    c = comp(log)
    marks = c.official_book().marks
    assert [m.kind for m in marks] == ["official", "reopen"] and c.official_book().official() is None
    assert "objection at the desk: table 1's count" in marks[-1].text()
    check_action(c, "count", {"entrant": "2", "placed": 210, "who": "Head", "why": ""}, AFTER)


def test_the_format_names_the_moment():
    assert load_format("czjpa-individuals").official_at == "checks"
    assert load_format("dk-team-championship").official_at == "prize-giving"
    with pytest.raises(FormatError, match="official_at"):
        validate({"format": {"title": "t", "summary": "s"}, "entrants": {"kind": "individual"},
                  "round": {"time_limit": "1:00:00", "puzzles": [500]},
                  "results": {"official_at": "tomorrow"}}, "x.toml")
    log = Log()
    log.act("round_start", S, at=S, duration=180 * M, warnings=[])
    c = comp(log, "dk-team-championship")
    assert "at the prize-giving, once" in refused(c, "official", {"who": "d", "why": ""}, S + M)


def test_a_stored_change_after_official_still_folds():
    """A row another process stored (an older version's) is folded, never raised on."""
    log, anna, ben = round_with_finishes()
    log.act("count", AFTER, entrant="1", placed=1)
    log.act("official", AFTER, who="Head")
    log.act("void", AFTER + 1, press_id=ben)            # (refused today; stored by hand here)
    c = comp(log)
    assert not c.flagged
    assert [r.status for r in c.standings() if r.entrant == "2"] == ["unfinished"]


def test_a_confirmation_by_entrant_and_puzzle_closes_its_call() -> None:
    # the desk records a finish by hand and confirms it by entrant and puzzle (no press id): the
    # standings show it confirmed, and no call waits for a referee, so the results can be official
    log = Log()
    log.act("round_start", S, at=S)
    log.act("press", S + 40 * M, entrant="1", puzzle=1, at=S + 40 * M)
    c = comp(log)
    assert len(c.open_calls()) == 1
    log.act("confirm", S + 41 * M, entrant="1", puzzle=1)
    log.act("dns", S + 41 * M, entrant="2")
    c = comp(log)
    assert c.open_calls() == []
    assert [r.provisional for r in c.standings(None) if r.entrant == "1"] == [False]
    check_action(c, "official", {}, AFTER)
