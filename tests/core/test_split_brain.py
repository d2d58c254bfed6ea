"""Issue 44, item 4, the logic (core/split_brain.py, cli/redo.py): two
hubs of one event at once.  The primary notes its standby lost and flags
the desk actions recorded meanwhile; shown the proven term of the hub that
took over, it fences itself (a row) and answers with its desk actions after
the takeover's copy; the hub that took over keeps them (a row, an alert)
and `tabletimer redo` records them through the usual checks, a decision
taken here since becoming a conflict.  Real SQLite, the hub's own service,
the real `tabletimer redo`; the end-to-end split is
tests/e2e/test_split_brain_e2e.py."""

from __future__ import annotations

import shutil

import pytest

from tabletimer.hub.protocol.hub_secret import ensure_secret
from tabletimer.hub.protocol.keys import BoardKeys
from tabletimer.hub.core.service import HubService
from tabletimer.hub.core.split_brain import STANDBY_SILENT_MS
from tabletimer.hub.cli import main as cli
from tabletimer.hub.event.folder import event_folder
from tabletimer.hub.event.fold.competition import Competition
from tabletimer.hub.event.log.store import EventStore
from tabletimer.shared import protocol as P

T0 = 1_796_000_000_000


class Clock:
    def __init__(self) -> None:
        self.t = T0

    def now_ms(self) -> int:
        return self.t


def hub(folder, clock: Clock | None = None) -> HubService:
    ev = event_folder.load(folder)
    secret, _ = ensure_secret(folder)
    return HubService(EventStore(ev.db), BoardKeys(ev.keys_file), Competition(ev.format, ev.entrants, ev.stations),
                      clock or Clock(), secret=secret)


@pytest.fixture
def split(tmp_path):
    """The primary's folder with a round and a finish recorded by hand, and
    the standby's copy of it that took over (term 2) after those rows:
    (primary's service, the new hub's folder, the row the copy ends at,
    the finish's press id)."""
    ev = event_folder.init(tmp_path / "primary", "czjpa-individuals", "Split")
    (ev / "entrants.csv").write_text("id,name,eligible\n1,Anna,yes\n2,Ben,yes\n")
    ensure_secret(ev)
    new = tmp_path / "new"
    shutil.copytree(ev, new)
    primary = hub(ev)
    primary.act("round_start", {"at": T0 - 60_000})
    press = primary.act("press", {"entrant": "1", "puzzle": 1, "at": T0 - 1_000})
    pid = f"op/{press['id']}"                  # a finish recorded by hand: its press id
    copy = EventStore(new / "events.sqlite")
    copy.copy_rows(primary.store.events(), primary.store.event_id)
    proofs = hub_proofs(new, copy)
    copy.append("hub", "takeover", {"primary": "http://primary:8765", "copied_up_to": press["id"], "term": 2,
                                    "hash": proofs.proof(2)}, T0)
    copy.close()
    yield primary, new, press["id"], pid
    primary.store.close()


def hub_proofs(folder, store):
    from tabletimer.hub.protocol.hub_secret import TermProofs, read_secret
    return TermProofs(read_secret(folder), store.event_id)


def test_a_primary_that_loses_its_standby_flags_the_desks_actions_until_it_is_heard_again(split):
    primary, _, _, pid = split
    clock = primary.clock
    primary.split.check()
    assert not [r for r in primary.store.events() if r["type"] == "standby_lost"]    # no standby yet: none lost
    primary.split.heard_standby(2)                        # it asks for the rows after #2: it has them
    clock.t += STANDBY_SILENT_MS - 1
    primary.split.check()
    assert primary.split.unseen_warning() is None
    clock.t += 2
    primary.split.check()
    (lost,) = [r for r in primary.store.events() if r["type"] == "standby_lost"]
    row = primary.act("confirm", {"press_id": pid, "missing_found": 0}, who="Anna")
    warning = primary.split.unseen_warning()
    assert warning and f"log row #{lost['id']}" in warning and "not in its log" in warning
    (alert,) = [a for a in primary.alerts() if a.startswith("STANDBY NOT HEARD")]
    assert f"#{row['id']} confirm" in alert and "by Anna" in alert
    # read again from the log: the same
    again = hub(primary.store.path.parent)
    assert [a for a in again.alerts() if a.startswith("STANDBY NOT HEARD") and f"#{row['id']} confirm" in a]
    again.store.close()
    primary.split.heard_standby(2)                        # it asks again: it copies what it missed
    primary.split.check()
    assert [r["type"] for r in primary.store.events()][-1] == "standby_back"
    assert primary.split.unseen_warning() is None and not [a for a in primary.alerts() if "STANDBY NOT" in a]


def test_a_hub_a_board_fences_while_its_standby_is_lost_lists_the_desk_actions_the_standby_lacks(split, capsys):
    """Fenced by a board's birth (the board heard the hub that took over)
    before that hub could tell it: it lists its desk actions after the last
    row its lost standby had, and the hub that took over redoes them from a
    copy of its log (`tabletimer redo --from`)."""
    primary, new, after, pid = split
    primary.split.heard_standby(after)
    primary.clock.t += STANDBY_SILENT_MS + 1
    primary.split.check()
    decided = primary.act("confirm", {"press_id": pid, "missing_found": 3, "seen": 0}, who="Anna")
    primary.store.append("board", "status", dict(P.status_online(2, "0.3.0", 1, term=2), hash=primary.state.terms.proofs.proof(2),
                                                 ctr=1, bt=2), primary.clock.t, board="D1")
    primary.catch_up()
    assert primary.fenced and primary.fenced.startswith("board D1 has seen hub term 2")
    (line,) = primary.split.fenced_lines()
    assert f"after row #{after}, the last row the standby had when it was lost" in line, line
    assert f"#{decided['id']} confirm" in line and f"tabletimer redo ITS-DIR --from {primary.store.path}" in line
    assert cli.main(["redo", str(new), "--from", str(primary.store.path)]) == 0
    assert f"#{decided['id']} confirm" in capsys.readouterr().out
    took = hub(new)
    (confirm,) = [r for r in took.store.events() if r["type"] == "confirm"]
    assert confirm["payload"]["missing_found"] == 3
    took.store.close()
    # another event's log, or a log this hub did not take over from: refused, nothing recorded
    other = EventStore(new.parent / "other.sqlite")
    other.close()
    assert cli.main(["redo", str(new), "--from", str(new.parent / "other.sqlite")]) == 2
    assert "another event's log" in capsys.readouterr().err


def test_a_hub_shown_a_proven_higher_term_fences_itself_and_lists_its_desk_actions_since_the_copy(split):
    primary, new, after, pid = split
    with pytest.raises(ValueError, match="without this event's hub proof"):
        primary.split.fence(2, "00" * 16, "a forger", after)
    with pytest.raises(ValueError, match="this hub's term is 1, not below 1"):
        primary.split.fence(1, primary.state.terms.proofs.proof(1), "a forger", after)
    assert primary.fenced is None and not [r for r in primary.store.events() if r["type"] == "fenced"]
    decided = primary.act("confirm", {"press_id": pid, "missing_found": 2}, who="Anna")
    actions = primary.split.fence(2, primary.state.terms.proofs.proof(2), "the hub that took over from this log's row #2", after)
    assert [a["id"] for a in actions] == [decided["id"]]
    assert primary.fenced and primary.fenced.startswith("the hub that took over from this log's row #2 holds "
                                                        "hub term 2, this hub's is 1")
    assert primary.split.fence(2, primary.state.terms.proofs.proof(2), "again", after) == actions     # asked again: the same
    assert len([r for r in primary.store.events() if r["type"] == "fenced"]) == 1
    lines = primary.split.fenced_lines()
    assert f"#{decided['id']} confirm" in lines[0] and "tabletimer redo" in lines[0]
    again = hub(primary.store.path.parent)                # the log read again: fenced
    assert again.fenced
    again.store.close()


def test_the_hub_that_took_over_keeps_the_old_desks_actions_and_redo_records_them_once(split, capsys):
    primary, new, after, pid = split
    decided = primary.act("confirm", {"press_id": pid, "missing_found": 2, "seen": 0}, who="Anna", why="counted")
    actions = primary.split.fence(2, primary.state.terms.proofs.proof(2), "the new hub", after)
    took = hub(new)
    assert took.term == 2
    with pytest.raises(ValueError, match="not a desk action"):
        took.split.store_split("http://primary:8765", 1, after, [dict(actions[0], source="board")])
    with pytest.raises(ValueError, match="not after row"):
        took.split.store_split("http://primary:8765", 1, after, [dict(actions[0], id=after)])
    row = took.split.store_split("http://primary:8765", 1, after, actions)
    assert row is not None and took.split.store_split("http://primary:8765", 1, after, actions) is None   # once
    (alert,) = [a for a in took.alerts() if a.startswith("SPLIT")]
    assert f"#{decided['id']} confirm" in alert and "tabletimer redo" in alert
    took.store.close()
    assert cli.main(["redo", str(new)]) == 0
    out = capsys.readouterr().out
    assert f"#{decided['id']} confirm" in out and "recorded as #" in out
    took = hub(new)
    (confirm,) = [r for r in took.store.events() if r["type"] == "confirm"]
    assert confirm["payload"]["missing_found"] == 2 and confirm["payload"]["who"] == "Anna"
    assert f"redone from the old primary's row #{decided['id']}" in confirm["payload"]["why"]
    assert not [a for a in took.alerts() if a.startswith("SPLIT")]
    took.store.close()
    assert cli.main(["redo", str(new)]) == 0 and "nothing to redo" in capsys.readouterr().out


def test_a_redone_decision_on_a_call_decided_here_since_is_a_conflict_never_a_replacement(split, capsys):
    primary, new, after, pid = split
    primary.act("confirm", {"press_id": pid, "missing_found": 2, "seen": 0}, who="Anna")
    actions = primary.split.fence(2, primary.state.terms.proofs.proof(2), "the new hub", after)
    took = hub(new)
    took.act("void", {"press_id": pid, "seen": 0}, who="Eva", why="false start")    # the new desk decided
    took.split.store_split("http://primary:8765", 1, after, actions)
    took.store.close()
    assert cli.main(["redo", str(new)]) == 0
    captured = capsys.readouterr()
    assert "CONFLICT, not recorded" in captured.out, captured
    took = hub(new)
    assert [r["type"] for r in took.store.events() if r["source"] == "operator"][-1] == "void"   # Eva's stands
    assert [a for a in took.alerts() if a.startswith("CONFLICT")]
    took.store.close()
