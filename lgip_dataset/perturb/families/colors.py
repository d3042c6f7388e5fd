"""Color flips: a color word used as a color -> a clearly different color."""
from __future__ import annotations

from collections.abc import Iterator

from lgip_dataset.perturb.context import CaptionContext
from lgip_dataset.perturb.edits import flip
from lgip_dataset.perturb.registry import register
from lgip_dataset.perturb.seeding import KeyedRandom, shuffled
from lgip_dataset.perturb.senses import is_color_use
from lgip_dataset.perturb.variant import Variant


def _site(ctx: CaptionContext, i: int, rng: KeyedRandom) -> Iterator[Variant]:
    for color in shuffled(ctx.lex.color_targets[ctx.lex.color_group[ctx.tokens[i].low]], rng):
        yield flip(ctx, "color", i, ctx.span(i, i + 1), color)


@register("color", "flip")
def generate(ctx: CaptionContext, rng: KeyedRandom) -> list[Iterator[Variant]]:
    """One site per color word in color use."""
    return [_site(ctx, i, rng) for i, tok in enumerate(ctx.tokens)
            if tok.low in ctx.lex.color_group and is_color_use(ctx, i)]
