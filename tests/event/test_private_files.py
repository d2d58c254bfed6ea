"""Files with secrets (issue 15, item 4): readable by the owner only from
the first byte, whatever the umask -- never written readable and chmod-ed
after -- and replaced atomically."""
from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from tabletimer.hub.event.folder import private_file
from tabletimer.hub.protocol.keys import BoardKeys
from tabletimer.hub.fleet.simulator import SimBoard


@pytest.fixture
def open_umask():
    old = os.umask(0o022)          # files readable by all unless made otherwise
    yield
    os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def modes_while_written(monkeypatch) -> list[int]:
    """The mode of every file as its text goes in (f.write inside
    write_private, or Path.write_text): what another user could read then."""
    seen: list[int] = []
    real_fdopen = os.fdopen

    def fdopen(fd, *a, **kw):
        seen.append(stat.S_IMODE(os.fstat(fd).st_mode))
        return real_fdopen(fd, *a, **kw)
    monkeypatch.setattr(private_file.os, "fdopen", fdopen)
    real_write_text = Path.write_text

    def write_text(self, *a, **kw):
        r = real_write_text(self, *a, **kw)
        seen.append(mode(self))
        return r
    monkeypatch.setattr(Path, "write_text", write_text)
    return seen


def test_the_keys_file_is_never_readable_by_others(tmp_path, open_umask, monkeypatch):
    seen = modes_while_written(monkeypatch)
    keys = BoardKeys(tmp_path / "keys.json")
    keys.ensure("T01")
    assert mode(tmp_path / "keys.json") == 0o600
    assert seen and all(m == 0o600 for m in seen), [oct(m) for m in seen]
    assert not list(tmp_path.glob("*.tmp"))


def test_a_simulated_boards_configuration_with_its_key_is_the_owners_only(tmp_path, open_umask):
    sim = SimBoard("T02", "127.0.0.1", 1, tmp_path, key="ab" * 32)
    try:
        sim.start()
        cfg = tmp_path / "T02" / "config.json"
        assert json.loads(cfg.read_text())["key"] == "ab" * 32
        assert mode(cfg) == 0o600
    finally:
        sim.kill()


def test_write_private_replaces_a_readable_file_and_a_left_over_tmp(tmp_path, open_umask):
    p = tmp_path / "secret"
    p.write_text("old")
    os.chmod(p, 0o644)
    (tmp_path / "secret.tmp").write_text("left over")
    os.chmod(tmp_path / "secret.tmp", 0o666)
    private_file.write_private(p, "new")
    assert p.read_text() == "new" and mode(p) == 0o600
    assert not (tmp_path / "secret.tmp").exists()
