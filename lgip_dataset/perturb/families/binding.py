"""Attribute-binding flips (SNARE "attribute ownership"): two attribute-noun pairs exchange their
attributes, same bag of words: "a red car and a white truck" -> "a white car and a red truck".

Attributes are colors in color use and the listed attribute adjectives (``probes.json``); only two
attributes of one category swap (color with color, size with size: not "a young child with a
blue toothbrush" -> "a blue child with a young toothbrush"). Not swapped: equal attributes or two
colors of one color group, a color of a person noun, and two nouns of one object group ("a red car and a white car" means
the same after the swap). Articles before both attributes
agree with the attribute now after them ("an orange cat and a red bus" -> "a red cat and an
orange bus"). The span runs from the first attribute to the second.
"""
from __future__ import annotations

from collections.abc import Iterator
from itertools import combinations

from lgip_dataset.perturb.context import CaptionContext, Unit
from lgip_dataset.perturb.edits import article_edit, region_flip
from lgip_dataset.perturb.phrases import attribute_category, attribute_pairs
from lgip_dataset.perturb.registry import register
from lgip_dataset.perturb.seeding import KeyedRandom, single_sites
from lgip_dataset.perturb.variant import Variant


def _sense(ctx: CaptionContext, i: int) -> str:
    low = ctx.tokens[i].low
    return ctx.lex.color_group.get(low, low)


def _swappable(ctx: CaptionContext, i: int, j: int, nouns: tuple[Unit, Unit]) -> bool:
    category = attribute_category(ctx, i)
    if category != attribute_category(ctx, j) or _sense(ctx, i) == _sense(ctx, j):
        return False
    people = any(ctx.lex.groups[u.form.group].supercategory == "person" for u in nouns)
    return not (category == "color" and people)  # never a color onto a person ("a yellow woman")


def _swap(ctx: CaptionContext, i: int, j: int) -> Variant:
    a, b = ctx.tokens[i], ctx.tokens[j]
    new_a, new_b = ctx.cased(i, a.text, b.low), ctx.cased(j, b.text, a.low)
    edits = [(a.start, a.end, new_a), (b.start, b.end, new_b),
             *article_edit(ctx, i, new_a), *article_edit(ctx, j, new_b)]
    return region_flip(ctx, "binding", (a.start, b.end), edits)


@register("binding", "flip", version="1.1.0")
def generate(ctx: CaptionContext, rng: KeyedRandom) -> list[Iterator[Variant]]:
    """One site per two attribute-noun pairs with different attributes and unrelated nouns."""
    swaps = [_swap(ctx, i, j) for (i, u), (j, w) in combinations(attribute_pairs(ctx), 2)
             if u.form.group != w.form.group and _swappable(ctx, i, j, (u, w))]
    return single_sites(swaps, rng)
