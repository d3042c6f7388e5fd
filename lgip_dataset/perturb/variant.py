"""The output types: one variant of a caption, and all variants of one caption."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Variant:
    """A paraphrase or a flip of a caption.

    Flips record ``original`` (the matched word(s) as written in the caption), ``replacement`` (the
    inserted word(s)) and ``span`` = (start, end) of ``original`` in the caption. A flip may also
    change the article right before the span (a/an) and, for counts, the number of the counted noun;
    those agreement edits are outside ``span``. Paraphrases leave the three fields ``None``.

    Multi-word flips (negation, binding, relation, scrambles) record the edited *region*: ``span``
    runs from the first to the last edited word of the caption, ``original`` is the caption's text
    there and ``replacement`` the variant's text of that region, so the variant is
    ``caption[:start] + replacement + caption[end:]`` (up to an a/an change right before ``span``).
    """
    text: str
    kind: str  # "paraphrase" | "flip"
    type: str  # the family that made it or the imported subset; kind and group: ``registry.variant_types()``
    original: str | None = None
    replacement: str | None = None
    span: tuple[int, int] | None = None
    # hard flips only: the figures the replacement was chosen by (lgip_dataset.perturb.families.hard)
    plausibility: dict | None = field(default=None, compare=False)


@dataclass(frozen=True)
class PerturbResult:
    caption: str
    paraphrases: list[Variant]
    flips: list[Variant]

    def to_dict(self, with_types: bool = False) -> dict:
        """The JSON form: paraphrases as strings and flips as objects; with ``with_types`` (the
        form ``lgip perturb --json`` prints) every item is an object with ``text`` and ``type``, flips
        also with ``original``, ``replacement`` and ``span`` (and hard flips, in both forms, with
        ``plausibility``)."""
        if with_types:
            paraphrases = [{"text": v.text, "type": v.type} for v in self.paraphrases]
        else:
            paraphrases = [v.text for v in self.paraphrases]
        return {
            "caption": self.caption,
            "paraphrases": paraphrases,
            "flips": [{"text": v.text, "type": v.type,
                       "original": v.original, "replacement": v.replacement, "span": list(v.span),
                       **({"plausibility": v.plausibility} if v.plausibility is not None else {})}
                      for v in self.flips],
        }
