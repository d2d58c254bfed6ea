"""The type checker (mypy, pinned in pyproject's dev extras) is clean on
hub/ and shared/ as the installed package sees them (tools/testing/
typecheck.py: a package tree of links, pyproject's [tool.mypy] settings).
A new type error anywhere in the hub fails the suite, and so CI."""

from __future__ import annotations

from tabletimer.tools.testing import typecheck


def test_mypy_finds_no_error_in_the_hub_and_shared():
    done = typecheck.run()
    assert done.returncode == 0 and "Success: no issues found" in done.stdout, \
        f"mypy on hub/ and shared/ (tools/testing/typecheck.py):\n{done.stdout}{done.stderr}"


def test_the_check_can_fail(tmp_path, monkeypatch):
    """A module with a type error is reported, by its repository path (the
    check reads the tree it is given: a small tree of the same parts, with
    one module holding an error; the whole tree again cost a second full
    mypy run, 12 s of the suite's CPU on 2026-12-06, for the same proof)."""
    import shutil

    from tabletimer import repo_root

    src = tmp_path / "src"
    for part in ("hub", "hub/rules", "shared", "tools"):
        (src / part).mkdir(parents=True)
        (src / part / "__init__.py").write_text("")
    shutil.copy(repo_root() / "pyproject.toml", src / "pyproject.toml")
    (src / "tabletimer").mkdir()
    shutil.copy(repo_root() / "tabletimer" / "__init__.py", src / "tabletimer" / "__init__.py")
    (src / "hub" / "rules" / "type_probe.py").write_text('x: int = "not a number"\n')
    (src / "hub" / "rules" / "typed_fine.py").write_text('y: int = 3\n')
    monkeypatch.setattr(typecheck, "ROOT", src)
    done = typecheck.run()
    assert done.returncode != 0 and "hub/rules/type_probe.py:1: error: Incompatible types in assignment" \
        in done.stdout, done.stdout
    assert "typed_fine" not in done.stdout and "Found 1 error in 1 file" in done.stdout, done.stdout
