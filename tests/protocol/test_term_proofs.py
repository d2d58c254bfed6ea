"""Issue 44, item 3: one board's key must not fence a hub.  A board's key is
in its config.json (a USB cable at a table reads it); one status message
signed with it saying "term": 999 fenced the hub, for good (the row in the
log, the message retained by the broker).  A hub's term is proven now by a
hash chain made from the event's hub secret, which only hub laptops hold
(hub/protocol/hub_secret.py): a board reports the proof of the term it heard,
and the hub checks it.  A term without its proof is an alert, never a
fence, at once and when the log is read again; a proven one fences as
before.  Real SQLite, the hub's own service; no broker needed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tabletimer.hub.protocol import hub_protocol as H
from tabletimer.hub.protocol.hub_secret import TERMS, HubAuth, TermProofs, ensure_secret, read_secret
from tabletimer.hub.protocol.keys import BoardKeys
from tabletimer.hub.core.service import HubService
from tabletimer.hub.event.fold.competition import Competition
from tabletimer.hub.event.log.replica import log_term
from tabletimer.hub.event.log.store import EventStore
from tabletimer.hub.rules.formats import load_format
from tabletimer.shared import auth
from tabletimer.shared import protocol as P
from tabletimer.shared.auth import Signer

KEYS = {"T07": "07" * 32, "T08": "08" * 32}
SECRET = bytes(range(32))
T0 = 1_796_000_000_000


class Clock:
    def __init__(self) -> None:
        self.t = T0

    def now_ms(self) -> int:
        return self.t


def service(path: Path, secret: bytes | None = SECRET) -> HubService:
    return HubService(EventStore(path), BoardKeys(keys=KEYS), Competition(
        load_format("cz-championship-individuals"), [], [], auto_stations=True), Clock(), secret=secret)


def birth(svc: HubService, board: str, ctr: int, **fields) -> list:
    """A board's birth (status online) signed with its key, as the firmware
    (or whoever has the key) sends it."""
    msg = P.status_online(3, "0.3.0", 2)
    msg.update(fields)
    P.stamp(msg, ctr, 3)
    topic = P.board_topic(board, P.STATUS)
    return svc.handle(topic, Signer(KEYS[board]).sign(topic, P.encode(msg)), svc.clock.now_ms(), retained=False)


def test_the_chain_each_terms_proof_hashes_down_to_the_one_below_and_differs_per_event():
    proofs = TermProofs(SECRET, 613920551)
    p = [proofs.proof(t) for t in range(1, TERMS + 1)]
    assert len(set(p)) == TERMS and all(len(x) == 32 for x in p)
    for t in range(2, TERMS + 1):
        assert auth.proves(p[t - 1], 1, p[t - 2])          # what a board checks
    assert auth.proves(p[6], 6, p[0]) and not auth.proves(p[0], 1, p[1])
    assert proofs.proof(0) is None and proofs.proof(TERMS + 1) is None and proofs.proof(999) is None
    assert proofs.proven(2, p[1]) and not proofs.proven(3, p[1]) and not proofs.proven(2, None)
    assert TermProofs(SECRET, 613920552).proof(2) != p[1]                # another round's log: another chain
    assert TermProofs(bytes(32), 613920551).proof(2) != p[1]             # another secret


def test_the_secret_file_is_made_once_readable_by_its_owner_only(tmp_path):
    assert read_secret(tmp_path) is None
    secret, made = ensure_secret(tmp_path)
    assert made and len(secret) == 32 and (tmp_path / "hub-secret").stat().st_mode & 0o777 == 0o600
    assert ensure_secret(tmp_path) == (secret, False) and read_secret(tmp_path) == secret


def test_a_board_reporting_a_term_it_cannot_prove_is_an_alert_never_a_fence(tmp_path):
    svc = service(tmp_path / "events.sqlite")
    birth(svc, "T07", 1, term=999)                          # the message: no proof
    birth(svc, "T08", 1, term=2, hash=TermProofs(bytes(32), svc.event_id).proof(2))   # another secret's
    assert svc.fenced is None and svc.term == 1
    alerts = svc.alerts()
    assert not [a for a in alerts if a.startswith("FENCED")], alerts
    for board, term in (("T07", 999), ("T08", 2)):
        assert [a for a in alerts if a.startswith(f"board {board} reports hub term {term} without a hub's proof")
                and "somebody has the board's key" in a], alerts
    # its commands still go out (a fenced hub sends nothing): the board's schedule, numbered
    svc.start_round()
    assert svc.schedules(["T07"], force=True)
    svc.store.close()
    # the hub started again on that log: the rows are read back the same way
    again = service(tmp_path / "events.sqlite")
    assert again.fenced is None and again.term == 1
    assert [a for a in again.alerts() if "reports hub term 999 without a hub's proof" in a]
    # a takeover on it counts only proven terms: the next is 2, not 1000 (beyond any board's chain)
    assert log_term(again.store.events(), again.state.terms.proven) == 1
    again.store.close()


def test_a_board_reporting_a_proven_higher_term_fences_the_hub_as_before(tmp_path):
    svc = service(tmp_path / "events.sqlite")
    p2 = svc.state.terms.proofs.proof(2)
    birth(svc, "T07", 1, term=2, hash=p2)
    assert svc.fenced and svc.fenced.startswith("board T07 has seen hub term 2, this hub's is 1")
    assert log_term(svc.store.events(), svc.state.terms.proven) == 2   # a takeover here (the way back) records term 3
    svc.store.close()
    again = service(tmp_path / "events.sqlite")
    assert again.fenced                                     # read back: fenced again (it is a real takeover)
    again.store.close()
    # without the secret (a remote console, a hall's pages): terms are not judged there
    blind = service(tmp_path / "events.sqlite", secret=None)
    assert blind.fenced is None and not [a for a in blind.alerts() if "hub term" in a]
    blind.store.close()


def test_a_term_of_the_events_other_round_is_neither_a_fence_nor_an_alert(tmp_path):
    """A board that heard a takeover in the round before (its log's own
    chain) says so in its birth to the next round's hub before it has that
    round's schedule: that round's term, not this one's."""
    svc = service(tmp_path / "events.sqlite")
    svc.state.other_rounds = {613920551: tmp_path / "round-1.sqlite"}
    birth(svc, "T07", 1, term=2, hash=TermProofs(SECRET, 613920551).proof(2))
    assert svc.fenced is None and not [a for a in svc.alerts() if "hub term" in a]
    svc.store.close()


def test_a_takeover_row_without_its_proof_is_not_this_hubs_term(tmp_path):
    store = EventStore(tmp_path / "events.sqlite")
    proofs = TermProofs(SECRET, store.event_id)
    store.append("hub", "takeover", {"term": 5}, T0)                           # no proof: an older log's, a forger's
    store.append("hub", "takeover", {"term": 2, "hash": proofs.proof(2)}, T0)    # `tabletimer takeover`'s
    store.close()
    svc = service(tmp_path / "events.sqlite")
    assert svc.term == 2 and svc.fenced is None
    assert [a for a in svc.alerts() if a.startswith("log row #1") and "takeover to term 5 without" in a]
    # its commands carry the term and its proof; its schedules too (term 1's hub: its anchor)
    svc.start_round()
    (sched,) = svc.schedules(["T07"], force=True)
    body = json.loads(Signer(KEYS["T07"]).open(sched.topic, sched.payload))
    assert body["term"] == 2 and body["hash"] == proofs.proof(2)
    svc.store.close()


def test_a_hubs_schedule_carries_its_terms_proof_and_a_birth_with_a_garbled_one_is_refused(tmp_path):
    svc = service(tmp_path / "events.sqlite")
    svc.start_round()
    (sched,) = svc.schedules(["T07"], force=True)
    body = json.loads(Signer(KEYS["T07"]).open(sched.topic, sched.payload))
    assert "term" not in body and body["hash"] == svc.state.terms.proofs.proof(1)
    before = len(svc.store.events())
    birth(svc, "T07", 1, term=2, hash="not a proof")
    assert svc.counts.rejected["malformed"] == 1 and len(svc.store.events()) == before
    with pytest.raises(P.ProtocolError):
        H.check_board_message(dict(P.status_online(1, "0.3.0", 1, term=2), hash="AB" * 16, ctr=1, bt=1))
    svc.store.close()


def test_hubs_prove_themselves_to_each_other_and_an_answer_is_bound_to_its_request():
    a, b, other = HubAuth(SECRET), HubAuth(SECRET), HubAuth(bytes(32))
    nonce, header = a.request_header("GET", "/rows?after=3")
    assert b.request_nonce("GET", "/rows?after=3", header) == nonce
    assert b.request_nonce("GET", "/rows?after=4", header) is None        # another request
    assert b.request_nonce("POST", "/rows?after=3", header) is None
    assert other.request_nonce("GET", "/rows?after=3", header) is None    # another event's (or no) secret
    assert b.request_nonce("GET", "/rows?after=3", "junk") is None
    proof = b.answer_proof(nonce, b'{"rows": []}')
    assert a.answer_proven(nonce, b'{"rows": []}', proof)
    assert not a.answer_proven(nonce, b'{"rows": [1]}', proof)              # altered
    assert not a.answer_proven(a.nonce(), b'{"rows": []}', proof)          # replayed for another request
    assert not a.answer_proven(nonce, b'{"rows": []}', None)
    assert not other.answer_proven(nonce, b'{"rows": []}', other.answer_proof(a.nonce(), b""))
    # an answer is never a request's proof (keys per direction)
    assert b.request_nonce("GET", "/rows?after=3", f"{nonce}:{proof}") is None
