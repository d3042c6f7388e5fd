"""Hard flips (``hard_object``, ``hard_color``, ``hard_count``): the paper's flips, plausible in context.

Each hard family takes its paper family's sites and candidates as they are (the object, colour and
count families' site detection, replacement lists and agreement edits: one substitution that
contradicts the caption and stays grammatical) and changes only which candidate is kept, one per
site, with the caption's statistics (:mod:`lgip_dataset.perturb.plausibility`, cross-fitted by image):

1. *fit*: the share of the site's context words attested with the replacement in COCO captions
   ("grazing" takes animals, "purple" is not attested for "horse"); candidates below ``MIN_FIT``
   are dropped;
2. *text-only balance*, as SugarCrepe's adversarial refinement: among the fitting candidates, one
   the bigram LM finds at least as likely as the caption (``lm_delta >= 0``) is taken at random
   (seeded); when there is none, the most likely one.

Each hard flip records ``plausibility``: its ``lm_delta``, ``context_fit``, the number of fitting
``candidates`` of its site and the context words the fit was measured on.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator

from lgip_dataset.perturb.context import CaptionContext
from lgip_dataset.perturb.families import colors, counts, objects
from lgip_dataset.perturb import plausibility
from lgip_dataset.perturb.plausibility import attached, context_words
from lgip_dataset.perturb.registry import register
from lgip_dataset.perturb.seeding import KeyedRandom
from lgip_dataset.perturb.variant import Variant

MIN_FIT = 0.3
MARGIN = 1.0  # candidates this much more likely than the caption (in nats) are preferred
# a site whose fitting candidates all read less likely than the caption by more than this is skipped;
# count words differ little in context, so a count flip must stay closer to the caption's likelihood
MAX_DROP = {"hard_object": 8.0, "hard_color": 8.0, "hard_count": 2.0}
VERSION = "1.0.0"


def _object_key(ctx: CaptionContext, replacement: str) -> str:
    return f"n:{ctx.lex.noun_forms[tuple(replacement.lower().split())].group}"


def _color_key(ctx: CaptionContext, replacement: str) -> str:
    return f"c:{ctx.lex.color_group[replacement.lower()]}"


def _count_key(ctx: CaptionContext, replacement: str) -> str:
    return f"k:{replacement.lower()}"


def _tokens_of(ctx: CaptionContext, span: tuple[int, int]) -> tuple[int, int]:
    """Token indices [first, end) covering the character span."""
    first = next(i for i, t in enumerate(ctx.tokens) if t.end > span[0])
    return first, sum(t.start < span[1] for t in ctx.tokens)


def _choose(ctx: CaptionContext, name: str, candidates: list[Variant], key: Callable, max_drop: float,
            rng: KeyedRandom) -> Variant | None:
    """The hard flip of one site (None when no candidate fits its context)."""
    if not candidates:
        return None
    scorer = attached(ctx)
    first, end = _tokens_of(ctx, candidates[0].span)
    kind = key(ctx, candidates[0].replacement)[0]
    context = context_words(ctx, first, end, kind)
    fitting = []
    for variant in candidates:
        fit = scorer.context_fit(key(ctx, variant.replacement), context)
        if fit >= MIN_FIT:
            fitting.append((variant, fit, scorer.lm_delta(ctx.text, variant.text)))
    if not fitting:
        return None
    likely = [c for c in fitting if c[2] >= MARGIN] or [c for c in fitting if c[2] >= 0.0]
    variant, fit, delta = likely[rng.randrange(0, len(likely))] if likely else max(fitting, key=lambda c: c[2])
    if delta < -max_drop:
        return None
    figures = {"lm_delta": round(delta, 6), "context_fit": round(fit, 6), "candidates": len(fitting),
               "context": list(context)}
    return dataclasses.replace(variant, family=name, type=name, plausibility=figures)


def hard_flip_provenance() -> dict:
    """How the hard flips were chosen, for a build's record: the rule's constants and the statistics."""
    return {"min_fit": MIN_FIT, "margin": MARGIN, "max_drop": MAX_DROP, **plausibility.provenance()}


def _hard(name: str, base: Callable, key: Callable) -> None:
    """Register the hard family ``name`` over the paper family ``base``'s sites."""

    @register(name, "flip", VERSION)
    def generate(ctx: CaptionContext, rng: KeyedRandom) -> list[Iterator[Variant]]:
        sites = [_choose(ctx, name, list(site), key, MAX_DROP[name], rng) for site in base(ctx, rng)]
        return [iter((v,)) for v in sites if v is not None]

    generate.__doc__ = f"One {name} flip per site of the {base.__module__.rsplit('.', 1)[1]} family that has a fitting candidate."


_hard("hard_object", objects.generate, _object_key)
_hard("hard_color", colors.generate, _color_key)
_hard("hard_count", counts.generate, _count_key)
