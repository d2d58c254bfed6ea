"""Write tests/durations.json from a whole-suite run's pytest --durations=0
lines, so the next parallel run starts its longest tests first
(tests/conftest.py):

    python3 tools/dev.py test --durations=0 -q > /tmp/run.log
    python3 tools/testing/durations.py /tmp/run.log

A test's seconds are its setup, call and teardown added; tests under a
second are left out (their order does not matter)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parents[2] / "tests" / "durations.json"
LINE = re.compile(r"^\s*([0-9.]+)s (?:setup|call|teardown)\s+tests/(\S+)\s*$")
AT_LEAST_S = 1.0


def durations(lines: list[str]) -> dict[str, float]:
    """test id from tests/ -> seconds, the longest first."""
    took: dict[str, float] = {}
    for line in lines:
        m = LINE.match(line)
        if m:
            took[m.group(2)] = took.get(m.group(2), 0.0) + float(m.group(1))
    kept = {k: round(v, 1) for k, v in took.items() if v >= AT_LEAST_S}
    return dict(sorted(kept.items(), key=lambda kv: (-kv[1], kv[0])))


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    got = durations(Path(argv[0]).read_text(encoding="utf-8", errors="replace").splitlines())
    if not got:
        print(f"no --durations lines in {argv[0]}: run the suite with --durations=0", file=sys.stderr)
        return 1
    OUT.write_text(json.dumps(got, indent=0) + "\n", encoding="utf-8")
    print(f"{OUT}: {len(got)} tests of a second or more, {sum(got.values()):.0f} s in all")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
