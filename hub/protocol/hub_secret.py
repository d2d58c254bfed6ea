"""The event's hub secret (`hub-secret` in the event folder, 0600): what only
the hub laptops hold -- the primary's folder and the standby's copy of it,
never a board (a board's key is in its config.json, which anyone with a USB
cable at a table can read).  What it proves (docs/protocol.md, "Hub terms"
and "The standby and its primary"):

- `TermProofs`: a hub's term.  A hash chain per event log (its event id):
  seed = HMAC(secret, "terms" + event id), the proof of term t is the seed
  hashed TERMS - t times (`link`), so hashing the proof of term t
  once gives the proof of term t - 1.  A board holds the proof of the term
  it follows (term 1's comes in every schedule) and takes a higher term
  only with a proof that hashes down to it; a hub checks a term a board
  reports, and a takeover row, by making the proof itself.  Nobody without
  the secret can make the proof of a term no hub has used yet.
- `HubAuth`: one hub laptop to the other over the console API.  A request
  carries a fresh nonce and an HMAC of it (the standby, the hub that took
  over: it holds the secret), and the answer an HMAC of its body and that
  nonce (the primary: it holds the secret too, and an answer made for
  another nonce, replayed, does not pass).  Neither sends the console's
  token: an impostor at the primary's address learns nothing it could use.

Pure but for the file (read_secret, ensure_secret).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from pathlib import Path

from ..event.folder.private_file import write_private

SECRET_FILE = "hub-secret"
TERMS = 64                        # the terms an event log's chain proves (1..TERMS: auth._TERMS)
PROOF_BYTES = 16                  # a term's proof: each step down, SHA-256's first 16 bytes (auth.proves)
NONCE_BYTES = 16
HEADER = "X-TableTimer-Hub"       # a hub's request: "<nonce hex>:<mac hex>"
PROOF_HEADER = "X-TableTimer-Proof"   # its answer's: "<mac hex>"


class SecretError(ValueError):
    """The secret file cannot be read or is not one."""


def secret_path(folder: str | Path) -> Path:
    return Path(folder).resolve() / SECRET_FILE


def read_secret(folder: str | Path) -> bytes | None:
    """The event folder's hub secret (None: the folder has none;
    SecretError: a file that is not one)."""
    path = secret_path(folder)
    try:
        text = path.read_text(encoding="ascii").strip()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as e:
        raise SecretError(f"cannot read the hub secret {path}: {getattr(e, 'strerror', None) or e}") from None
    try:
        key = bytes.fromhex(text)
    except ValueError:
        key = b""
    if len(key) != 32:
        raise SecretError(f"{path} is not a hub secret (64 hex digits): copy it again from the primary's "
                          "event folder")
    return key


def ensure_secret(folder: str | Path) -> tuple[bytes, bool]:
    """The event folder's hub secret, made now (0600 from its first byte)
    if it has none: (the secret, made now)."""
    key = read_secret(folder)
    if key is not None:
        return key, False
    write_private(secret_path(folder), secrets.token_hex(32) + "\n")
    key = read_secret(folder)
    assert key is not None
    return key, True


def link(p: bytes) -> bytes:
    """One step down the chain: the proof of the term below p's (what a
    board's auth.proves does, step by step)."""
    return hashlib.sha256(p).digest()[:PROOF_BYTES]


def _mac(secret: bytes, *parts: bytes) -> bytes:
    return hmac.new(secret, b"\n".join(parts), hashlib.sha256).digest()


class TermProofs:
    """The proofs of an event log's hub terms (1..TERMS), from the secret."""

    def __init__(self, secret: bytes, event_id: int) -> None:
        p = _mac(secret, b"terms", str(event_id).encode())[:PROOF_BYTES]
        chain = [p]                         # the proof of TERMS, then TERMS - 1, ... down to 1
        for _ in range(TERMS - 1):
            p = link(p)
            chain.append(p)
        self._hex = [c.hex() for c in reversed(chain)]     # [term 1's, term 2's, ...]

    def proof(self, term: int) -> str | None:
        """The proof of term (hex; None: no term this chain proves)."""
        return self._hex[term - 1] if type(term) is int and 1 <= term <= TERMS else None

    def proven(self, term: object, proof: object) -> bool:
        """Whether proof is term's (a term a hub holding the secret took)."""
        mine = self.proof(term) if type(term) is int else None
        return mine is not None and isinstance(proof, str) and hmac.compare_digest(mine, proof)


class HubAuth:
    """The hubs' proofs to each other on the console API (requests and
    answers): HMACs under keys made from the secret, one per direction, so
    that an answer can never pass for a request, nor the other way round."""

    def __init__(self, secret: bytes) -> None:
        self._asks = _mac(secret, b"hub request")
        self._answers = _mac(secret, b"hub answer")

    @staticmethod
    def nonce() -> str:
        return secrets.token_hex(NONCE_BYTES)

    def request_header(self, method: str, target: str, body: bytes = b"",
                       nonce: str | None = None) -> tuple[str, str]:
        """(nonce, the header's value) of a request (target: path and
        query; body: what it sends, if anything)."""
        nonce = nonce or self.nonce()
        return nonce, f"{nonce}:{self._request_mac(method, target, nonce, body)}"

    def request_nonce(self, method: str, target: str, header: str, body: bytes = b"") -> str | None:
        """The nonce of a request whose header proves a hub made it (None:
        it does not)."""
        nonce, _, mac = header.partition(":")
        if len(nonce) != 2 * NONCE_BYTES or not mac:
            return None
        return nonce if hmac.compare_digest(self._request_mac(method, target, nonce, body), mac) else None

    def _request_mac(self, method: str, target: str, nonce: str, body: bytes) -> str:
        return _mac(self._asks, method.encode(), target.encode(), nonce.encode(),
                    hashlib.sha256(body).hexdigest().encode()).hex()

    def answer_proof(self, nonce: str, body: bytes) -> str:
        """The proof header of an answer (its body) to the request of nonce."""
        return _mac(self._answers, nonce.encode(), body).hex()

    def answer_proven(self, nonce: str, body: bytes, proof: str | None) -> bool:
        return isinstance(proof, str) and hmac.compare_digest(self.answer_proof(nonce, body), proof)
