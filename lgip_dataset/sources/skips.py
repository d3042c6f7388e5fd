"""Counted, reported skips: every input row a build leaves out (or cleans) is recorded with its reason."""
from __future__ import annotations

from collections import Counter, defaultdict

MAX_EXAMPLES = 5


class SkipLog:
    """Counts skipped rows per reason and keeps the first few locations of each."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.examples: dict[str, list[str]] = defaultdict(list)

    def add(self, reason: str, where: str, detail: str = "", count: int = 1) -> None:
        self.counts[reason] += count
        if len(self.examples[reason]) < MAX_EXAMPLES:
            self.examples[reason].append(f"{where}: {detail}" if detail else where)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def as_dict(self) -> dict[str, dict]:
        """``{reason: {"count": n, "examples": [...]}}`` sorted by reason, for JSON and cards."""
        return {r: {"count": self.counts[r], "examples": list(self.examples[r])} for r in sorted(self.counts)}

    def lines(self, verb: str = "skipped") -> list[str]:
        """Human-readable summary lines, one per reason: ``"<verb> <count> × <reason> (e.g. ...)"``."""
        return [
            f"{verb} {info['count']:,} × {reason} (e.g. {info['examples'][0]})"
            for reason, info in self.as_dict().items()
        ]
