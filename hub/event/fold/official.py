"""Whether a round's results are official: the seam where issue 47's
official results plug in (a round's results made official by the desk, a
row of its log).  Until they exist no round's results are official, and a
round that takes its entrants from earlier rounds (`tabletimer advance`)
takes their results only when the desk says it takes them as they are
(`--as-they-are`, recorded in its plan's row)."""

from __future__ import annotations

from .competition import Competition


def is_official(comp: Competition) -> bool:
    """True once the round's results were made official (never yet: issue 47)."""
    del comp
    return False
