"""Sites of the hard families beyond the paper families' own: a scene or place noun ("in a kitchen"
-> "in a bathroom", lexicon ``places.json``) and an indefinite article counting the subject ("A dog
is sleeping" -> "Two dogs are sleeping")."""
from __future__ import annotations

from collections.abc import Iterator

from lgip_dataset.perturb.agreement import present_verb_number
from lgip_dataset.perturb.context import CaptionContext
from lgip_dataset.perturb.edits import flip
from lgip_dataset.perturb.families.counts import CountSite, count_flip, counted_head, is_subject
from lgip_dataset.perturb.families.objects import object_sites
from lgip_dataset.perturb.places import place_sites
from lgip_dataset.perturb.text import tokenize
from lgip_dataset.perturb.variant import Variant

ARTICLE_COUNTS = ("two", "three")  # what "a"/"an" of a countable subject may become


def place_flips(ctx: CaptionContext) -> list[Iterator[Variant]]:
    """The flips of every place site (the article before it agreeing)."""
    return [iter([flip(ctx, "hard_object", site.first, ctx.span(site.first, site.end), target)
                  for target in site.targets]) for site in place_sites(ctx)]


def article_count_sites(ctx: CaptionContext) -> list[CountSite]:
    """"a"/"an" before a countable object noun that opens a subject and is its only mention (an
    object-flip site, so no coreference, partitive or compound use): a count of one."""
    if "article_count_sites" in ctx.memo:
        return ctx.memo["article_count_sites"]
    lex, sites = ctx.lex, []
    heads = {site.unit.end - 1: site for site in object_sites(ctx) if site.number == "singular"}
    for i, tok in enumerate(ctx.tokens):
        if tok.low not in ("a", "an") or not is_subject(ctx, i):
            continue
        head = counted_head(ctx, i + 1)
        site = heads.get(head[0]) if head is not None else None
        if site is None or lex.groups[site.unit.form.group].uncountable:
            continue
        if site.unit.span[1] < ctx.tokens[site.unit.end - 1].end:  # a possessor ("a man's hat")
            continue
        sites.append(CountSite(i, i + 1, 1, ARTICLE_COUNTS))
    ctx.memo["article_count_sites"] = sites
    return sites


def _agrees(ctx: CaptionContext, site: CountSite, variant: Variant) -> bool:
    """True when no singular present verb after the site is left as it was ("A boy playing tennis
    runs": the count family fixes only the verb it can tie to the subject)."""
    after = {t.low for t in ctx.tokens[site.end:] if present_verb_number(t.low) == "singular"}
    return not after & {t.low for t in tokenize(variant.text)}


def article_count_flips(ctx: CaptionContext) -> list[Iterator[Variant]]:
    """The count flips of every article count site (the count family's agreement edits), where
    every verb after it agrees."""
    return [(v for word in site.targets if (v := count_flip(ctx, site, word)) is not None and _agrees(ctx, site, v))
            for site in article_count_sites(ctx)]
