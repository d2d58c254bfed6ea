"""TableTimer: timing and ranking for jigsaw-puzzle speed competitions.

The code lives in the repository's top-level folders (hub/, shared/, tools/),
installed under this package name; see pyproject.toml.
"""

from pathlib import Path

__version__ = "0.1.0"


def repo_root() -> Path:
    """The source tree (the package is installed in editable mode from it)."""
    import tabletimer.shared

    return Path(tabletimer.shared.__file__).resolve().parent.parent


def firmware_dir() -> Path:
    return repo_root() / "firmware"
