"""Object flips: a lexicon noun (or multiword noun) -> a noun of an unrelated object group."""
from __future__ import annotations

from collections.abc import Iterator

from lgip_dataset.perturb.context import CaptionContext, Unit
from lgip_dataset.perturb.edits import flip
from lgip_dataset.perturb.registry import register
from lgip_dataset.perturb.seeding import KeyedRandom, shuffled
from lgip_dataset.perturb.senses import is_object_noun, noun_number
from lgip_dataset.perturb.variant import Variant


def _site(ctx: CaptionContext, unit: Unit, rng: KeyedRandom) -> Iterator[Variant]:
    number = noun_number(ctx, unit)
    for group in shuffled(ctx.lex.object_targets[unit.form.group], rng):
        yield flip(ctx, "object", unit.start, unit.span, group.singular if number == "singular" else group.plural)


@register("object", "flip")
def generate(ctx: CaptionContext, rng: KeyedRandom) -> list[Iterator[Variant]]:
    """One site per object noun used as a noun; replacements keep its grammatical number."""
    return [_site(ctx, unit, rng) for unit in ctx.units.values() if is_object_noun(ctx, unit)]
