"""The headline blocks of the audit: the paper's flips, the hard flips and all flips, by name and members.

Below both the audit's inputs (:mod:`.sources` names the hard block of a build's own figures) and its scorers
(:mod:`.text_only`, :mod:`.untrained`), which read the inputs.
"""
from __future__ import annotations

from lgip_metric import stats

PAPER_BLOCK, HARD_BLOCK, ALL_BLOCK = "paper flips", "hard flips", "all flips"


def blocks(types) -> dict[str, list[str]]:
    """The headline blocks present among ``types``: the paper's flips, the hard flips, and all flips
    (unless those are one type, or exactly one of the other blocks)."""
    present = {str(t) for t in types}
    paper = [t for t in stats.CORE_TYPES if t in present and stats.DECLARED_TYPES[t] == stats.FLIP]
    hard = [t for t in stats.HARD_TYPES if t in present]
    named = {**({PAPER_BLOCK: paper} if paper else {}), **({HARD_BLOCK: hard} if hard else {})}
    every = sorted(present)
    same = len(every) == 1 or any(sorted(members) == every for members in named.values())
    return {**named, **({} if same else {ALL_BLOCK: every})}
