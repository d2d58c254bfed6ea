"""What a test needs from the machine, and the one rule for when it is
missing: outside CI the test is skipped with the install hint; under
CI=true (where .ci/run installs everything) it fails with the same hint.

Plain helpers (not a conftest): import with ``from needs import ...``.
"""

from __future__ import annotations

import os
import shutil

import pytest


def in_ci() -> bool:
    return os.environ.get("CI") == "true"


def missing(what: str, hint: str) -> None:
    """Skip (fail under CI=true): `what` is not on this machine; `hint` says how to get it."""
    msg = f"{what} is not installed ({hint})"
    if in_ci():
        pytest.fail(msg + "; under CI=true nothing installable is skipped")
    pytest.skip(msg)


def require_tool(name: str, hint: str) -> str:
    """The path of a command-line tool on PATH (or in /usr/sbin, /usr/bin)."""
    path = shutil.which(name) or next((p for p in (f"/usr/sbin/{name}", f"/usr/bin/{name}")
                                       if os.access(p, os.X_OK)), None)
    if path is None:
        missing(name, hint)
    assert path is not None
    return path


def require_account(name: str, hint: str) -> None:
    """A system account (one that a Debian package creates)."""
    import pwd
    try:
        pwd.getpwnam(name)
    except KeyError:
        missing(f"the {name!r} account", hint)
