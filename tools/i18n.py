"""The catalogues' round trip with Babel's own tools (docs/operations.md, "Languages"):

    python tools/i18n.py extract     the template hub/i18n/locales/messages.pot from the sources
    python tools/i18n.py update      each language's .po brought up to the template (new
                                     entries empty, changed ones fuzzy: to be translated)
    python tools/i18n.py init LANG   a new language's .po (then add it to LANGUAGES in
                                     hub/i18n/catalogue.py)
    python tools/i18n.py compile     each .po compiled to a .mo in a scratch folder: the check
                                     `pybabel compile` makes (the hub compiles them in memory)

It runs `pybabel` (Babel, pinned in pyproject.toml) from this Python's environment.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOCALES = ROOT / "hub" / "i18n" / "locales"
POT = LOCALES / "messages.pot"
KEYWORDS = ["-k", "t", "-k", "n:1,2", "-k", "N_", "--no-default-keywords"]


def pybabel(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "babel.messages.frontend", *args], check=True, cwd=ROOT)


def extract_command(pot: Path = POT) -> list[str]:
    return ["extract", "-F", "hub/i18n/babel.cfg", *KEYWORDS, "--sort-by-file", "--omit-header",
            "--no-wrap", "-o", str(pot), "hub"]


def main(argv: list[str]) -> int:
    what = argv[0] if argv else ""
    if what == "extract":
        pybabel(*extract_command())
    elif what == "update":
        pybabel("update", "-i", str(POT), "-d", str(LOCALES), "--no-wrap", "--ignore-obsolete")
    elif what == "init" and len(argv) == 2:
        pybabel("init", "-i", str(POT), "-d", str(LOCALES), "-l", argv[1], "--no-wrap")
    elif what == "compile":
        with tempfile.TemporaryDirectory() as out:
            for po in sorted(LOCALES.glob("*/LC_MESSAGES/messages.po")):
                mo = Path(out) / (po.parent.parent.name + ".mo")
                pybabel("compile", "-i", str(po), "-o", str(mo), "--statistics")
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
