"""The output types: one variant of a caption, and all variants of one caption."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Variant:
    """A paraphrase or a flip of a caption.

    Flips record ``original`` (the matched word(s) as written in the caption), ``replacement`` (the
    inserted word(s)) and ``span`` = (start, end) of ``original`` in the caption. A flip may also
    change the article right before the span (a/an) and, for counts, the number of the counted noun;
    those agreement edits are outside ``span``. Paraphrases leave the three fields ``None``.
    """
    text: str
    kind: str  # "paraphrase" | "flip"
    family: str
    type: str
    original: str | None = None
    replacement: str | None = None
    span: tuple[int, int] | None = None


@dataclass(frozen=True)
class PerturbResult:
    caption: str
    paraphrases: list[Variant]
    flips: list[Variant]

    def to_dict(self) -> dict:
        """The JSON form printed by ``lgip perturb --json``."""
        return {
            "caption": self.caption,
            "paraphrases": [v.text for v in self.paraphrases],
            "flips": [{"text": v.text, "type": v.type, "original": v.original,
                       "replacement": v.replacement, "span": list(v.span)} for v in self.flips],
        }
