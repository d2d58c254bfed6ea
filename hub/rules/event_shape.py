"""The rounds of an event of the World Jigsaw Puzzle Championship's shape
(`tabletimer round add-wjpc`), pure: first-round groups, two semi-finals
(or none) and a final, each later round with its `[advancement]` table
(advancement_rule.py).  The WJPC 2024 individuals, as the organizers
described them: six groups; the fastest of each country plus the next best
by classification go to two semi-finals (up to 60 of each group), which
send the best of each country plus the next best to a 180-person final.

Our per_country counts across all of a round's sources: a semi-final fed by
three groups guarantees a place to the best of each country over the
three, where the WJPC guarantees one to the best of each country in each
group (the others of the country may still come as the next best).  The
semi-finals take the groups in order: semi-1 the first half, semi-2 the
rest."""

from __future__ import annotations

import string
from dataclasses import dataclass

from .advancement_rule import AdvancementRule, parse_rule

MAX_GROUPS = 26
SEMIS = (0, 2)
PER_GROUP = 60           # the WJPC: up to 60 of each group go to the semi-finals
FINAL = 180              # the WJPC: a 180-person final


class ShapeError(ValueError):
    """An event shape that cannot be made; the text says what to do."""


@dataclass(frozen=True)
class ShapeRound:
    name: str
    rule: dict | None               # its [advancement] table (None: a first-round group)

    @property
    def advancement(self) -> AdvancementRule | None:
        return parse_rule(self.rule) if self.rule is not None else None

    def toml(self) -> str:
        """Its [advancement] table as format.toml says it ("" for a group)."""
        if self.rule is None:
            return ""
        r = self.rule
        sources = ", ".join(f'"{s}"' for s in r["from"])
        return (f"\n[advancement]                      # the WJPC's rule: the best of each country, then the "
                f"next best\nfrom = [{sources}]\nper_country = {r['per_country']}\ntotal = {r['total']}\n"
                f"ties = \"{r['ties']}\"                      # entrants tied at the cut: the desk decides\n")


def group_names(groups: int) -> list[str]:
    return [f"group-{string.ascii_lowercase[i]}" for i in range(groups)]


def wjpc_rounds(groups: int = 6, semis: int = 2, per_group: int = PER_GROUP, final: int = FINAL,
                per_country: int = 1) -> list[ShapeRound]:
    """The rounds, in the order they run: group-a ..., semi-1, semi-2
    (semis = 2), final.  A semi-final's total is per_group for each of its
    groups; the final's is `final`."""
    if not 1 <= groups <= MAX_GROUPS:
        raise ShapeError(f"--groups {groups}: 1 to {MAX_GROUPS} first-round groups (group-a ...)")
    if semis not in SEMIS:
        raise ShapeError(f"--semis {semis}: 2 (two semi-finals, as the WJPC) or 0 (the groups feed the final)")
    if semis and groups < 2:
        raise ShapeError("two semi-finals need at least two groups: --groups 2 or more, or --semis 0")
    for what, n in (("--per-group", per_group), ("--final", final), ("--per-country", per_country)):
        if not 1 <= n <= 10_000:
            raise ShapeError(f"{what} {n}: a whole number 1..10000")
    names = group_names(groups)
    out = [ShapeRound(g, None) for g in names]
    feeds = names
    if semis:
        half = (groups + 1) // 2
        parts = [names[:half], names[half:]]
        semi = [f"semi-{i}" for i in (1, 2)]
        out += [ShapeRound(s, {"from": p, "per_country": per_country, "total": per_group * len(p), "ties": "desk"})
                for s, p in zip(semi, parts)]
        feeds = semi
    out.append(ShapeRound("final", {"from": feeds, "per_country": per_country, "total": final, "ties": "desk"}))
    for r in out:
        r.advancement        # (checked as the format will read it)
    return out
