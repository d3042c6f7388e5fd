"""Building a flip: one substitution plus its agreement edits (article a/an, counted noun number)."""
from __future__ import annotations

from lgip_dataset.perturb.agreement import indefinite_article
from lgip_dataset.perturb.context import CaptionContext
from lgip_dataset.perturb.variant import Variant

Edit = tuple[int, int, str]  # replace text[start:end] by the string


def apply_edits(text: str, edits: list[Edit]) -> str:
    """``text`` with non-overlapping edits applied."""
    for start, end, new in sorted(edits, reverse=True):
        text = text[:start] + new + text[end:]
    return text


def article_edit(ctx: CaptionContext, first: int, new_phrase: str) -> list[Edit]:
    """Fix "a"/"an" right before token ``first`` when ``new_phrase`` now follows it."""
    art = ctx.prev_word(first)
    if art is None or art.low not in ("a", "an"):
        return []
    wanted = indefinite_article(new_phrase)
    if wanted == art.low:
        return []
    return [(art.start, art.end, ctx.cased(first - 1, art.text, wanted))]


def flip(ctx: CaptionContext, family: str, first: int, span: tuple[int, int], replacement: str,
         agreement: list[Edit] = ()) -> Variant:
    """The flip that replaces ``span`` (starting at token ``first``) by ``replacement``, cased like
    the original, fixing the article before it, plus any extra ``agreement`` edits outside the span."""
    s, e = span
    original = ctx.text[s:e]
    new = ctx.cased(first, original, replacement)
    edits = [(s, e, new), *article_edit(ctx, first, new), *agreement]
    return Variant(apply_edits(ctx.text, edits), "flip", family, original, new, (s, e))


def region_flip(ctx: CaptionContext, family: str, span: tuple[int, int], edits: list[Edit]) -> Variant:
    """A multi-word flip: ``edits`` inside ``span`` plus at most an a/an article edit before it.

    ``original`` is the caption's text of ``span`` and ``replacement`` that region's text in the
    variant, so ``text == caption[:start] + replacement + caption[end:]`` up to the article.
    """
    s, e = span
    text = apply_edits(ctx.text, edits)
    before = sum(len(new) - (b - a) for a, b, new in edits if b <= s)
    inside = sum(len(new) - (b - a) for a, b, new in edits if a >= s and b <= e)
    replacement = text[s + before:e + before + inside]
    return Variant(text, "flip", family, ctx.text[s:e], replacement, (s, e))
