"""Hard flips (``hard_object``, ``hard_color``, ``hard_count``): the paper's flips, plausible in context.

Each hard family takes its paper family's sites and candidates as they are (the object, colour and
count families' site detection, replacement lists and agreement edits: one substitution that
contradicts the caption and stays grammatical) and changes only which candidate is kept, one per
site, with the caption's statistics (:mod:`lgip_dataset.perturb.plausibility`, cross-fitted by image):

1. *kin and slot fit*: candidates fall in ``TIERS``: a noun of the same COCO supercategory first,
   then another inanimate one; never a change between person, animal and thing (text alone gives
   "a table riding a horse" and "elephants sitting on a trolley" away), never a noun the caption
   already names. Every context word of the site (the words that govern or modify it: "grazing on",
   "serving the", "metallic") must take the replacement in the original's slot, as attested in COCO
   captions relative to the original (:meth:`Plausibility.fits`: "grazing" takes animals, "hanging
   on the" takes trees, not cameras; a colour must be attested for its noun, "purple horse" is not);
   a noun must also leave the whole caption about as typical of it as of the original
   (:meth:`Plausibility.typicality` at least ``MIN_TYPICALITY``), so that a word far from the slot
   still counts ("a baseball catcher ... ready to catch a frisbee", "riding a wave on top of a
   skateboard");
2. *text-only balance*, as SugarCrepe's adversarial refinement: in the first tier that has a
   candidate the bigram LM finds at least as likely as the caption (``lm_delta >= 0``), one of
   those is taken at random (seeded; those past ``MARGIN`` first); when no tier has one, the first
   tier's most likely candidate, unless it is ``MAX_DROP`` nats less likely than the caption.

Each hard flip records ``plausibility``: its ``lm_delta``, ``context_fit``, its ``tier``, the number
of ``candidates`` in the site's tiers and the context words the fit was measured on.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator

from lgip_dataset.perturb import plausibility
from lgip_dataset.perturb.context import CaptionContext
from lgip_dataset.perturb.families import colors, counts, objects
from lgip_dataset.perturb.plausibility import attached, caption_words, context_words
from lgip_dataset.perturb.registry import register
from lgip_dataset.perturb.seeding import KeyedRandom
from lgip_dataset.perturb.variant import Variant

# Candidate tiers per family, tried in order: (kin, least context words). For nouns kin 0 is the same
# COCO supercategory, kin 1 another inanimate one (colours and numbers are all kin 0); every tier asks
# for every context word to take the replacement in the original's slot, and for at least that many
# context words: a noun with nothing around it, or a thing of another kind fitted on one word, is
# too often absurd ("a pizza ... on a yellow traffic light", "the basket of the table").
TIERS = {"hard_object": ((0, 1), (1, 2)), "hard_color": ((0, 1),), "hard_count": ((0, 1),)}
# least caption typicality (nats, log P(caption words | replacement) - log P(... | original)) per family
MIN_TYPICALITY = {"hard_object": -3.5, "hard_color": None, "hard_count": None}
MARGIN = 1.0  # candidates this much more likely than the caption (in nats) are preferred
# a site whose fitting candidates all read less likely than the caption by more than this is skipped;
# count words differ little in context, so a count flip must stay closer to the caption's likelihood
MAX_DROP = {"hard_object": 8.0, "hard_color": 8.0, "hard_count": 1.5}
VERSION = "1.1.0"


ANIMATE = frozenset(("person", "animal"))  # COCO supercategories of things that act


def _object_key(ctx: CaptionContext, replacement: str) -> str:
    return f"n:{ctx.lex.noun_forms[tuple(replacement.lower().split())].group}"


def _color_key(ctx: CaptionContext, replacement: str) -> str:
    return f"c:{ctx.lex.color_group[replacement.lower()]}"


def _count_key(ctx: CaptionContext, replacement: str) -> str:
    return f"k:{replacement.lower()}"


def _object_kin(ctx: CaptionContext, variant: Variant, first: int, end: int) -> int | None:
    """0: same COCO supercategory ("dog" -> "cat", "man" -> "woman"); 1: another inanimate
    supercategory ("table" -> "bed"); None: a change between person, animal and thing ("table" ->
    "man", "people" -> "elephants": what people do is seldom what animals or things do, so text
    alone gives most of them away), or a noun the caption already names ("a man and woman" -> "a
    woman and woman")."""
    groups = ctx.lex.groups
    new_group = _object_key(ctx, variant.replacement)[2:]
    if any(u.form is not None and u.form.group == new_group for u in ctx.units.values()):
        return None
    old, new = groups[ctx.units[first].form.group].supercategory, groups[new_group].supercategory
    if old == new:
        return 0
    return None if old in ANIMATE or new in ANIMATE else 1


def _color_kin(ctx: CaptionContext, variant: Variant, first: int, end: int) -> int | None:
    """0, except a colour already named beside the site ("yellow and black" -> "yellow and yellow")."""
    near = {ctx.lex.color_group.get(t.low) for t in ctx.tokens[max(first - 3, 0):end + 3]}
    return None if ctx.lex.color_group[variant.replacement.lower()] in near else 0


def _count_kin(ctx: CaptionContext, variant: Variant, first: int, end: int) -> int | None:
    return 0


def _tokens_of(ctx: CaptionContext, span: tuple[int, int]) -> tuple[int, int]:
    """Token indices [first, end) covering the character span."""
    first = next(i for i, t in enumerate(ctx.tokens) if t.end > span[0])
    return first, sum(t.start < span[1] for t in ctx.tokens)


def _choose(ctx: CaptionContext, name: str, candidates: list[Variant], rng: KeyedRandom) -> Variant | None:
    """The hard flip of one site (None when no candidate fits its context)."""
    if not candidates:
        return None
    key, kin_of = KEYS[name], KIN[name]
    scorer = attached(ctx)
    first, end = _tokens_of(ctx, candidates[0].span)
    original = key(ctx, candidates[0].original)
    context = context_words(ctx, first, end, original[0])
    words, least_typical = caption_words(ctx, first, end), MIN_TYPICALITY[name]
    tiers: dict[int, list] = {}
    for variant in candidates:
        kin = kin_of(ctx, variant, first, end)
        if kin is None:
            continue
        target = key(ctx, variant.replacement)
        fit = scorer.context_fit(target, original, context)
        tier = next((t for t, (k, least) in enumerate(TIERS[name]) if k == kin and fit == 1.0 and len(context) >= least),
                    None)
        typical = scorer.typicality(target, original, words)
        if tier is not None and (least_typical is None or typical >= least_typical):
            tiers.setdefault(tier, []).append((variant, fit, scorer.lm_delta(ctx.text, variant.text), typical))
    ranked = [tiers[tier] for tier in sorted(tiers)]
    likely = next(([c for c in fitting if c[2] >= 0.0] for fitting in ranked if any(c[2] >= 0.0 for c in fitting)), None)
    if likely:  # the nearest tier that has a candidate reading at least as likely as the caption
        margin = [c for c in likely if c[2] >= MARGIN] or likely
        variant, fit, delta, typical = margin[rng.randrange(0, len(margin))]
    elif ranked:  # else the nearest tier's most likely candidate, unless far less likely than the caption
        variant, fit, delta, typical = max(ranked[0], key=lambda c: c[2])
        if delta < -MAX_DROP[name]:
            return None
    else:
        return None
    figures = {"lm_delta": round(delta, 6), "context_fit": round(fit, 6), "typicality": round(typical, 6),
               "candidates": sum(map(len, ranked)),
               "tier": next(t for t, fitting in tiers.items() if any(c[0] is variant for c in fitting)),
               "context": list(context)}
    return dataclasses.replace(variant, type=name, plausibility=figures)


def hard_flip_provenance() -> dict:
    """How the hard flips were chosen, for a build's record: the rule's constants and the statistics."""
    tiers = {name: [{"kin": kin, "least_context_words": least, "context_fit": 1.0} for kin, least in rules]
             for name, rules in TIERS.items()}
    return {"tiers": tiers, "min_typicality": MIN_TYPICALITY, "margin": MARGIN, "max_drop": MAX_DROP,
            **plausibility.provenance()}


def _hard(name: str, base: Callable) -> None:
    """Register the hard family ``name`` over the paper family ``base``'s sites."""

    @register(name, "flip", VERSION)
    def generate(ctx: CaptionContext, rng: KeyedRandom) -> list[Iterator[Variant]]:
        sites = [_choose(ctx, name, list(site), rng) for site in base(ctx, rng)]
        return [iter((v,)) for v in sites if v is not None]

    generate.__doc__ = f"One {name} flip per site of the {base.__module__.rsplit('.', 1)[1]} family that has a fitting candidate."


KEYS = {"hard_object": _object_key, "hard_color": _color_key, "hard_count": _count_key}
KIN = {"hard_object": _object_kin, "hard_color": _color_kin, "hard_count": _count_kin}
_hard("hard_object", objects.generate)
_hard("hard_color", colors.generate)
_hard("hard_count", counts.generate)
